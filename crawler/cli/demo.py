"""``feedcensus demo``: the bundled demo web served on 127.0.0.1, crawled, and its survey printed."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.cli.crawl import crawl, exit_status, print_summary
from crawler.cli.errors import (
    EXIT_OK,
    fail,
)
from crawler.cli.options import FLAG_SETTINGS, crawl_settings

if TYPE_CHECKING:
    pass


# --- demo ------------------------------------------------------------------------------------

DEAD_ENDS = (
    "the demo web has dead ends on purpose (crawler/demo/web/README.md): a 500, a 404, a 410, a redirect loop,\n"
    "HTML served as RSS and a feed robots.txt denies (the errors below), and an OPML list that is not well-formed"
)


def demo_report(out: str, job: str) -> Path:
    """The survey of the demo's job as a report folder; the path of its HTML page."""
    from crawler.report.survey import run
    from crawler.report.views import SurveyError

    report = Path(out) / "report"
    try:
        run(out, job=job, report_dir=str(report))
    except SurveyError as exc:
        raise fail(str(exc)) from None
    index = report / "index.html"
    if not index.exists():  # the survey names its page survey.html; the demo's report opens at index.html
        shutil.copyfile(report / "survey.html", index)
    return index


def cmd_demo(args: argparse.Namespace) -> int:
    from crawler.demo.folder import read_demo_web, start_demo_web, write_demo_web
    from crawler.demo.webserver import demo_seeds

    out = args.out
    work = Path(out)
    # The folder remembers the port and the demo day of its first demo: a second demo into it is a
    # re-crawl of the same URLs and bytes (crawler/demo/folder.py).
    remembered, unusable = read_demo_web(work)
    server, web, taken = start_demo_web(remembered)
    with server:
        seeds_file = work / "demo-seeds.txt"
        try:
            work.mkdir(parents=True, exist_ok=True)
            seeds_file.write_text("\n".join(demo_seeds(server.url)) + "\n", encoding="utf-8")
            write_demo_web(work, web)
        except OSError as exc:  # a file in the way, a read-only disk...
            raise fail(f"--out {out}: cannot write there: {exc.strerror or exc}") from None
        again = ""
        if remembered is not None and not taken:  # its dates are the first demo's: say so, they may be old by now
            again = f", as for the earlier demo into {out} (a re-crawl; dated for {web.day}, a new --out for today)"
        print(f"demo web serving at {server.url}{again}", file=sys.stderr)
        print(DEAD_ENDS, file=sys.stderr)
        for note in (unusable, taken):
            if note:
                print(f"feedcensus demo: {note}", file=sys.stderr)
        ns = argparse.Namespace(
            out=out,
            job_id=args.job_id,
            resume=None,
            log_level=args.log_level,
            log_file=None,
            set=["AUTOTHROTTLE_ENABLED=False", "ROBOTSTXT_OBEY=True", "CONCURRENT_REQUESTS_PER_DOMAIN=8"],
            **dict.fromkeys(FLAG_SETTINGS, False),
        )
        settings = crawl_settings(ns)
        result = crawl(ns, settings, seeds=[str(seeds_file)])
        print_summary(result, settings)
    code, line = exit_status(result, ns, settings)
    if line:
        print(f"feedcensus demo: {' '.join(line.split())}", file=sys.stderr)
        return code
    report = demo_report(out, settings.get("FEEDCENSUS_JOB_ID"))
    print(f"dataset: {out}")
    print(f"report: {report}")
    return EXIT_OK
