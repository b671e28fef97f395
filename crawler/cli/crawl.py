"""``feedcensus crawl`` and ``feedcensus demo``: settings from the command line, the crawl, its summary."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crawler.cli.errors import EXIT_DATASET, fail


def check_seeds_file(path: str) -> None:
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise fail(f"cannot read seeds file {path}: {exc.strerror or exc}") from None


def check_local_opml(path: str) -> None:
    from crawler.fetch.opml import parse_opml

    try:
        body = Path(path).read_bytes()
    except OSError as exc:
        raise fail(f"cannot read OPML file {path}: {exc.strerror or exc}") from None
    doc = parse_opml(body, Path(path).resolve().as_uri())
    if not doc.ok:
        raise fail(f"{path}: {doc.error}")


def crawl_settings(args: argparse.Namespace) -> Any:
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "crawler.settings")
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.set("FEEDCENSUS_OUT", args.out, priority="cmdline")
    from pipelines.writer import default_job_id

    # Named here, not when the writer opens, so the summary and a resume state can say it.
    settings.set("FEEDCENSUS_JOB_ID", args.job_id or default_job_id(), priority="cmdline")
    if args.no_reflexive:
        settings.set("FEEDCENSUS_REFLEXIVE", False, priority="cmdline")
    if args.no_pages:
        settings.set("FEEDCENSUS_OPML_PAGES", False, priority="cmdline")
    if args.guess:
        settings.set("FEEDCENSUS_GUESS", True, priority="cmdline")
    if args.follow_body_links:
        settings.set("FEEDCENSUS_FOLLOW_BODY_LINKS", True, priority="cmdline")
    if args.allow_private_networks:
        settings.set("FEEDCENSUS_ALLOW_PRIVATE_NETWORKS", True, priority="cmdline")
    if args.resume:
        settings.set("FEEDCENSUS_RESUME_DIR", args.resume, priority="cmdline")
    if args.log_level:
        settings.set("LOG_LEVEL", args.log_level, priority="cmdline")
    for kv in args.set or []:
        key, sep, value = kv.partition("=")
        if not sep:
            raise fail(f"-s takes NAME=VALUE, not {kv!r}")
        settings.set(key, value, priority="cmdline")
    if (settings.getpriority("USER_AGENT") or 0) < (settings.getpriority("FEEDCENSUS_CONTACT_URL") or 0):
        # The User-Agent names the contact URL in force, also one set with -s.
        settings.set("USER_AGENT", user_agent(settings.get("FEEDCENSUS_CONTACT_URL")), priority="cmdline")
    return settings


def user_agent(contact_url: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("feedcensus")
    except PackageNotFoundError:
        ours = "dev"
    return f"feedcensus/{ours} (+{contact_url})"


def run_crawl(
    settings: Any, *, seeds: Sequence[str] = (), opml: Sequence[str] = (), urls: Sequence[str] = ()
) -> dict[str, Any]:
    """Run the census spider to the end; return its final stats."""
    from scrapy.crawler import CrawlerProcess

    from crawler.spiders.census import CensusSpider

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(CensusSpider)
    failures: list[Any] = []
    process.crawl(crawler, seeds=list(seeds), opml=list(opml), url=list(urls)).addErrback(failures.append)
    process.start()
    if failures:
        exc = failures[0].value
        from pipelines.writer import DatasetError

        if isinstance(exc, DatasetError):
            raise fail(str(exc))
        raise fail(f"the crawl could not run: {type(exc).__name__}: {exc}")
    return crawler.stats.get_stats() if crawler.stats else {}


def resume_args(args: argparse.Namespace) -> None:
    """With --resume: a new folder records this run; an existing one fixes job, output and inputs."""
    from crawler.extensions.resume import ResumeError, read_state, write_state
    from pipelines.writer import default_job_id

    try:
        state = read_state(args.resume)
    except ResumeError as exc:
        raise fail(str(exc)) from None
    if state is None:
        if not args.out:
            raise fail("--out is required")
        args.job_id = args.job_id or default_job_id()
        write_state(
            args.resume,
            {
                "job_id": args.job_id,
                "out": args.out,
                "seeds": args.seeds or [],
                "opml": args.opml or [],
                "url": args.url or [],
            },
        )
        return
    if args.job_id and args.job_id != state["job_id"]:
        raise fail(f"{args.resume} holds job {state['job_id']}, not {args.job_id}")
    if args.out and args.out != state["out"]:
        raise fail(f"{args.resume} writes to {state['out']}, not {args.out}")
    if (args.seeds or args.opml or args.url) and [args.seeds or [], args.opml or [], args.url or []] != [
        state["seeds"],
        state["opml"],
        state["url"],
    ]:
        raise fail(f"{args.resume} was started with other inputs; resume it without giving inputs")
    args.job_id, args.out = state["job_id"], state["out"]
    args.seeds, args.opml, args.url = state["seeds"], state["opml"], state["url"]
    print(f"resuming job {args.job_id} into {args.out}", file=sys.stderr)


def cmd_crawl(args: argparse.Namespace) -> int:
    if args.resume:
        resume_args(args)
    if not args.out:
        raise fail("--out is required")
    if not (args.seeds or args.opml or args.url):
        raise fail("nothing to crawl: give --seeds FILE, --opml FILE_OR_URL or --url URL")
    for path in args.seeds or []:
        check_seeds_file(path)
    for item in args.opml or []:
        if "://" not in item or item.startswith("file://"):
            check_local_opml(item[7:] if item.startswith("file://") else item)
    settings = crawl_settings(args)
    stats = run_crawl(settings, seeds=args.seeds or [], opml=args.opml or [], urls=args.url or [])
    print_summary(stats, settings)
    error = stats.get("feedcensus/dataset_error")
    if error:
        lost = stats.get("feedcensus/rows_lost", 0)
        print(f"feedcensus crawl: {error}; {lost} rows were not written", file=sys.stderr)
        return EXIT_DATASET
    return 0


def print_summary(stats: dict[str, Any], settings: Any) -> None:
    from crawler.extensions.progress import summary_lines

    job = settings.get("FEEDCENSUS_JOB_ID")
    for line in summary_lines(stats, settings.get("FEEDCENSUS_OUT"), job):
        print(line, file=sys.stderr)


def cmd_demo(args: argparse.Namespace) -> int:
    from crawler.demo.webserver import demo_seeds, serve_demo

    out = args.out
    with serve_demo() as server:
        work = Path(out)
        work.mkdir(parents=True, exist_ok=True)
        seeds_file = work / "demo-seeds.txt"
        seeds_file.write_text("\n".join(demo_seeds(server.url)) + "\n", encoding="utf-8")
        print(f"demo web serving at {server.url}", file=sys.stderr)
        ns = argparse.Namespace(
            out=out,
            job_id=args.job_id,
            no_reflexive=False,
            no_pages=False,
            guess=False,
            follow_body_links=False,
            allow_private_networks=False,
            resume=None,
            log_level=args.log_level,
            set=["AUTOTHROTTLE_ENABLED=False", "ROBOTSTXT_OBEY=True", "CONCURRENT_REQUESTS_PER_DOMAIN=8"],
        )
        settings = crawl_settings(ns)
        stats = run_crawl(settings, seeds=[str(seeds_file)])
        print_summary(stats, settings)
    from crawler.report.survey import SurveyError, run

    try:
        print(run(out, job=args.job_id))
    except SurveyError as exc:
        raise fail(str(exc)) from None
    return 0
