"""The ``feedcensus`` command line.

    feedcensus crawl [--seeds FILE]... [--opml FILE_OR_URL]... [--url URL]... --out DIR
    feedcensus survey DIR [--job ID] [--format rss|atom|rdf] [--out REPORT_DIR]
    feedcensus compact DIR [--job ID]
    feedcensus lint [--json] FILE_OR_URL...
    feedcensus discover [--json] [--base-url URL] URL_OR_FILE...
    feedcensus rules [--json]
    feedcensus demo [--out DIR]

Bad input gives one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

EXIT_USAGE = 2
#: The crawl ran but its data could not all be written (what was committed before stays readable).
EXIT_DATASET = 3
#: The most ``lint`` and ``discover`` read of one document.
FETCH_LIMIT = 32 * 1024 * 1024


class CliError(Exception):
    """One line for stderr; exit code 2."""


def fail(message: str) -> CliError:
    return CliError(" ".join(str(message).split()))


# --- reading inputs ----------------------------------------------------------------


def read_source(source: str, timeout: float = 30.0) -> tuple[bytes, str, dict[str, str]]:
    """(body, url, headers) of a local file or an http(s) URL."""
    if source.startswith(("http://", "https://")):
        req = urllib.request.Request(source, headers={"User-Agent": "feedcensus-lint/0.1"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                body = resp.read(FETCH_LIMIT + 1)
                if len(body) > FETCH_LIMIT:
                    raise fail(f"{source}: larger than {FETCH_LIMIT} bytes")
                return body, resp.geturl(), {k.lower(): v for k, v in resp.headers.items()}
        except urllib.error.HTTPError as exc:
            raise fail(f"{source}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise fail(f"{source}: {getattr(exc, 'reason', exc)}") from None
    if "://" in source and not source.startswith("file://"):
        raise fail(f"{source}: only local files and http(s) URLs can be read")
    path = Path(source[7:] if source.startswith("file://") else source)
    try:
        return path.read_bytes(), path.resolve().as_uri(), {}
    except OSError as exc:
        raise fail(f"{source}: {exc.strerror or exc}") from None


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


# --- commands -----------------------------------------------------------------------


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
    if settings.getpriority("USER_AGENT") < settings.getpriority("FEEDCENSUS_CONTACT_URL"):
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


def cmd_survey(args: argparse.Namespace) -> int:
    from crawler.report.survey import SurveyError, run
    from schemas.tables import SchemaVersionError

    try:
        markdown = run(args.dir, job=args.job, fmt=args.format, report_dir=args.out)
    except (SurveyError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    print(markdown)
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    from pipelines.dataset.compact import CompactError, compact_dataset
    from schemas.tables import SchemaVersionError

    try:
        result = compact_dataset(args.dir, job=args.job, force=args.force)
    except (CompactError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    print(result)
    return 0


def lint_document(source: str, body: bytes, url: str, headers: dict[str, str]) -> dict[str, Any]:
    from pipelines.document.checks import check_feed
    from pipelines.document.feedparse import parse_feed

    parsed = parse_feed(body, url, headers)
    findings = []
    if parsed.root is not None:
        findings = check_feed(parsed.root, format=parsed.format, version=parsed.version, body=body)
    return {
        "source": source,
        "format": parsed.format,
        "version": parsed.version,
        "well_formed": parsed.well_formed,
        "error": parsed.error,
        "encoding": parsed.encoding,
        "title": parsed.title,
        "item_count": len(parsed.items),
        "channel_elements": [u.element for u in parsed.usage if u.scope == "channel"],
        "item_elements": {u.element: u.items_with for u in parsed.usage if u.scope == "item"},
        "usage": [
            {"scope": u.scope, "element": u.element, "count": u.count, "items_with": u.items_with, "defined": u.defined}
            for u in parsed.usage
        ],
        "findings": [
            {"rule": f.rule, "severity": f.severity, "scope": f.scope, "count": f.count, "example": f.example}
            for f in findings
        ],
    }


def print_lint(result: dict[str, Any]) -> None:
    print(
        f"{result['source']}: {result['format']} {result['version'] or ''} "
        f"{'well-formed' if result['well_formed'] else 'NOT well-formed'}, {result['item_count']} items"
        + (f" ({result['error']})" if result["error"] else "")
    )
    print("  channel: " + ", ".join(result["channel_elements"]))
    print("  items:   " + ", ".join(f"{k} ({v})" for k, v in result["item_elements"].items()))
    for f in result["findings"]:
        print(f"  {f['severity']:7} {f['rule']} x{f['count']}: {f['example'] or ''}")


def parse_headers(values: Sequence[str] | None) -> dict[str, str]:
    headers = {}
    for value in values or []:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise fail(f"--header takes 'Name: value', not {value!r}")
        headers[name.strip().lower()] = content.strip()
    return headers


class Sources:
    """Reads each input of a command in turn; one that cannot be read is a line on stderr and exit code 2."""

    def __init__(self, command: str, sources: Sequence[str]) -> None:
        self.command = command
        self.sources = sources
        self.code = 0

    def __iter__(self) -> Iterator[tuple[str, bytes, str, dict[str, str]]]:
        for source in self.sources:
            try:
                body, url, headers = read_source(source)
            except CliError as exc:
                print(f"feedcensus {self.command}: {exc}", file=sys.stderr)
                self.code = EXIT_USAGE
                continue
            yield source, body, url, headers


def cmd_lint(args: argparse.Namespace) -> int:
    extra_headers = parse_headers(args.header)
    sources = Sources("lint", args.sources)
    for source, body, url, headers in sources:
        result = lint_document(source, body, url, {**headers, **extra_headers})
        if args.json:
            print(json.dumps(result, ensure_ascii=False, default=str))
        else:
            print_lint(result)
    return sources.code


def cmd_discover(args: argparse.Namespace) -> int:
    from crawler.fetch.discovery import discover
    from schemas.items import LINK_FIELDS

    sources = Sources("discover", args.sources)
    for source, body, url, headers in sources:
        links = discover(body, args.base_url or url, headers, follow_body=True)
        if args.json:
            print(
                json.dumps(
                    {"page": source, "links": [{f: getattr(link, f) for f in LINK_FIELDS} for link in links]},
                    ensure_ascii=False,
                )
            )
        else:
            print(f"{source}: {len(links)} feed link(s)")
            for link in links:
                verdict = f"rss={'ok' if link.conforms_rss else 'no'} atom={'ok' if link.conforms_atom else 'no'}"
                print(
                    f"  {link.position}. {link.href or link.href_raw} [{link.type}] {verdict} {' '.join(link.reasons)}"
                )
    return sources.code


def cmd_rules(args: argparse.Namespace) -> int:
    from pipelines.document.checks import RULES

    for rule in RULES.values():
        if args.json:
            print(
                json.dumps(
                    {
                        "id": rule.id,
                        "severity": rule.severity,
                        "section": rule.section,
                        "w3c": rule.w3c,
                        "title": rule.title,
                    }
                )
            )
        else:
            print(f"{rule.id:40} {rule.severity:7} §{rule.section:6} {rule.w3c or '':28} {rule.title}")
    return 0


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="feedcensus", description="Find, crawl and measure RSS and Atom feeds.")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("crawl", help="crawl seed sites, OPML lists and URLs into Parquet datasets")
    c.add_argument("--seeds", action="append", metavar="FILE", help="file of site URLs, one per line (repeatable)")
    c.add_argument("--opml", action="append", metavar="FILE_OR_URL", help="OPML subscription list (repeatable)")
    c.add_argument("--url", action="append", metavar="URL", help="a feed, page or OPML URL (repeatable)")
    c.add_argument("--out", metavar="DIR", help="dataset root: a path or a URI such as s3://bucket/prefix (required)")
    c.add_argument("--job-id", help="partition name of this run (default: UTC start time)")
    c.add_argument(
        "--no-reflexive", action="store_true", help="do not fetch channel pages to verify they advertise the feed"
    )
    c.add_argument(
        "--no-pages", action="store_true", help="do not fetch htmlUrl pages of OPML outlines that have an xmlUrl"
    )
    c.add_argument(
        "--guess",
        action="store_true",
        help="when a page advertises nothing, try common feed paths and feed-looking links",
    )
    c.add_argument("--follow-body-links", action="store_true", help="also follow autodiscovery links found in <body>")
    c.add_argument(
        "--allow-private-networks", action="store_true", help="let URLs found in content reach private addresses"
    )
    c.add_argument(
        "--resume", metavar="DIR", help="state folder: a crawl run with it can be resumed after a crash or kill"
    )
    c.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    c.add_argument("-s", "--set", action="append", metavar="NAME=VALUE", help="override a Scrapy or feedcensus setting")
    c.set_defaults(func=cmd_crawl)

    s = sub.add_parser("survey", help="print the element-usage survey of a dataset")
    s.add_argument("dir")
    s.add_argument("--job", help="job id (default: the latest run)")
    s.add_argument(
        "--format", default="rss", choices=["rss", "atom", "rdf"], help="which feeds the element tables count"
    )
    s.add_argument("--out", metavar="REPORT_DIR", help="also write the report as Markdown, CSV and HTML there")
    s.set_defaults(func=cmd_survey)

    k = sub.add_parser("compact", help="merge the small Parquet files of finished runs into larger ones, atomically")
    k.add_argument("dir")
    k.add_argument("--job", help="compact only this run (default: every run)")
    k.add_argument(
        "--force", action="store_true", help="also compact partitions a crawl is still writing (marked .running)"
    )
    k.set_defaults(func=cmd_compact)

    lint = sub.add_parser("lint", help="parse documents without crawling and print format, tally and findings")
    lint.add_argument("--json", action="store_true", help="one JSON object per document per line")
    lint.add_argument(
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="an HTTP header the documents are read with, e.g. 'Content-Type: text/xml; charset=koi8-r'",
    )
    lint.add_argument("sources", nargs="+", metavar="FILE_OR_URL")
    lint.set_defaults(func=cmd_lint)

    d = sub.add_parser("discover", help="list the feeds a page advertises, judged against both specs")
    d.add_argument("--json", action="store_true")
    d.add_argument("--base-url", help="URL to resolve relative links against (for local files)")
    d.add_argument("sources", nargs="+", metavar="URL_OR_FILE")
    d.set_defaults(func=cmd_discover)

    r = sub.add_parser("rules", help="list the RSS Best Practices Profile rules")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_rules)

    demo = sub.add_parser("demo", help="serve the bundled sample web on 127.0.0.1, crawl it and print the survey")
    demo.add_argument("--out", default="demo-out", metavar="DIR")
    demo.add_argument("--job-id")
    demo.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    demo.set_defaults(func=cmd_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"feedcensus {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("feedcensus: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
