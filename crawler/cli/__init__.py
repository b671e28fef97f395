"""The ``feedcensus`` command line.

    feedcensus crawl [--seeds FILE]... [--opml FILE_OR_URL]... [--url URL]... --out DIR [--resume DIR] [--frontier URL]
    feedcensus replay WARC_OR_GLOB... --out DIR [--seeds FILE]... [--opml FILE_OR_URL]... [--url URL]...
    feedcensus commoncrawl --index FILE_OR_GLOB [--where SQL] [--pages N] [--archive-base URL] --out DIR
    feedcensus commoncrawl --index FILE_OR_GLOB --sites TOP_CSV [--pages N] [--live [--guess]] --out DIR
    feedcensus worker --frontier REDIS_URL --job JOB --out DIR
    feedcensus status --frontier REDIS_URL --job JOB [--json]
    feedcensus due DIR [--json] [--at TIME]
    feedcensus changes DIR [--job ID] [--since JOB] [--json]
    feedcensus survey DIR [--job ID] [--since JOB] [--format rss|atom|rdf] [--out REPORT_DIR [--print]]
    feedcensus compact DIR [--job ID]
    feedcensus lint [--json] FILE_OR_URL...
    feedcensus discover [--json] [--base-url URL] URL_OR_FILE...
    feedcensus rules [--json]
    feedcensus demo [--out DIR]
    feedcensus --version

Bad input gives one line on stderr and exit code 2, never a traceback.
``crawl`` exits 0 when it ran, 1 when it fetched nothing usable, 2 on bad
usage or unusable inputs, 3 when its data could not all be written and 130
when interrupted, 4 when a distributed crawl lost its frontier (``crawler.cli.errors``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import Any

from crawler.cli.commoncrawl import cmd_commoncrawl
from crawler.cli.crawl import cmd_crawl
from crawler.cli.datasets import cmd_changes, cmd_compact, cmd_due, cmd_survey
from crawler.cli.demo import cmd_demo
from crawler.cli.distributed import cmd_status, cmd_worker
from crawler.cli.documents import cmd_discover, cmd_lint, cmd_rules
from crawler.cli.errors import EXIT_INTERRUPTED, EXIT_USAGE, CliError, is_arrow_error
from crawler.cli.replay import cmd_replay

__all__ = ["build_parser", "main"]


def schedule_options(p: argparse.ArgumentParser) -> None:
    """The options of the feed schedule, the same for ``crawl`` and ``due`` (docs/scheduling.md)."""
    p.add_argument(
        "--ignore-hints",
        action="store_true",
        help="every known feed is due now, whatever ttl, skipHours, Cache-Control... say (still fetched conditionally)",
    )
    p.add_argument(
        "--min-interval",
        metavar="DURATION",
        help="never fetch a known feed more often than this, whatever it asks (e.g. 30m; default 5m)",
    )
    p.add_argument(
        "--max-interval",
        metavar="DURATION",
        help="never leave a known feed longer than this, whatever it asks (e.g. 12h; default 24h)",
    )


def crawl_options(
    p: argparse.ArgumentParser,
    job_flags: tuple[str, ...] = ("--job-id",),
    job_help: str = "partition name of this run: no / \\ %% or control characters (default: UTC start time)",
) -> None:
    """What a crawl process is told besides its inputs: the same for ``crawl`` and ``worker``."""
    p.add_argument("--out", metavar="DIR", help="dataset root: a path or a URI such as s3://bucket/prefix (required)")
    p.add_argument(*job_flags, dest="job_id", help=job_help)
    p.add_argument(
        "--no-reflexive", action="store_true", help="do not fetch channel pages to verify they advertise the feed"
    )
    p.add_argument(
        "--no-pages", action="store_true", help="do not fetch htmlUrl pages of OPML outlines that have an xmlUrl"
    )
    p.add_argument(
        "--guess",
        action="store_true",
        help="when a page advertises nothing, try common feed paths and feed-looking links",
    )
    p.add_argument(
        "--follow-body-links",
        action="store_true",
        help="follow autodiscovery links found in <body> too (the default; kept for old scripts)",
    )
    p.add_argument(
        "--head-only",
        action="store_true",
        help="follow only the autodiscovery links in <head>, as the specs say (body links are still recorded)",
    )
    p.add_argument(
        "--allow-private-networks", action="store_true", help="let URLs found in content reach private addresses"
    )
    schedule_options(p)
    p.add_argument(
        "--warc",
        metavar="DIR",
        help="also write every response and its request to gzip'd WARC 1.1 files in DIR (docs/archives.md)",
    )
    p.add_argument(
        "--refetch",
        action="store_true",
        help="fetch and parse every feed anew: no validators, no hints, nothing carried forward",
    )
    p.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="what the terminal (and --log-file) shows; default: warnings and errors on the terminal, INFO in the file",
    )
    p.add_argument("--log-file", metavar="FILE", help="append the whole log (Scrapy's settings, stats...) to FILE")
    p.add_argument("-s", "--set", action="append", metavar="NAME=VALUE", help="override a Scrapy or feedcensus setting")


def frontier_option(p: argparse.ArgumentParser, what: str, workers: str, note: str) -> None:
    """``--frontier``: a job's command that shares ``what`` with ``workers`` on a Redis frontier."""
    p.add_argument(
        "--frontier",
        metavar="REDIS_URL",
        help=f"share {what} with {workers} processes on a Redis frontier, redis://[USER@]HOST:PORT/DB "
        f"(the password from FEEDCENSUS_REDIS_PASSWORD; {note})",
    )


def installed_version() -> str:
    """The version of the installed ``feedcensus`` distribution (its package metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("feedcensus")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e . gives it)"


class VersionAction(argparse.Action):
    """``--version``: the version on stdout, exit 0. Looked up only when asked (importlib.metadata costs ~0.1 s)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        print(f"feedcensus {installed_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="feedcensus", description="Find, crawl and measure RSS and Atom feeds.")
    p.add_argument("--version", action=VersionAction, help="print the installed version and exit")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("crawl", help="crawl seed sites, OPML lists and URLs into Parquet datasets")
    c.add_argument("--seeds", action="append", metavar="FILE", help="file of site URLs, one per line (repeatable)")
    c.add_argument("--opml", action="append", metavar="FILE_OR_URL", help="OPML subscription list (repeatable)")
    c.add_argument("--url", action="append", metavar="URL", help="a feed, page or OPML URL (repeatable)")
    crawl_options(c)
    frontier_option(
        c, "this crawl", "`feedcensus worker`", "docs/distributed.md; the inputs go into it, this process crawls too"
    )
    c.add_argument(
        "--resume",
        metavar="DIR",
        help="state folder: a crawl run with it can be resumed after a crash, kill or Ctrl-C "
        "with only --resume DIR (it keeps the job, output, inputs and every option)",
    )
    c.set_defaults(func=cmd_crawl)

    rp = sub.add_parser(
        "replay", help="run the census over WARC files instead of the network (docs/archives.md, Replay)"
    )
    rp.add_argument("archives", nargs="+", metavar="WARC_OR_GLOB", help="WARC files, or globs such as 'warc/*.warc.gz'")
    rp.add_argument(
        "--seeds",
        action="append",
        metavar="FILE",
        help="instead of the archive's own inputs: a seeds file (repeatable)",
    )
    rp.add_argument(
        "--opml", action="append", metavar="FILE_OR_URL", help="instead of the archive's own inputs: an OPML list"
    )
    rp.add_argument(
        "--url", action="append", metavar="URL", help="instead of the archive's own inputs: a URL in the archive"
    )
    crawl_options(rp)
    frontier_option(rp, "the replay", "`feedcensus worker --replay`", "one core each")
    rp.set_defaults(func=cmd_replay)

    cc = sub.add_parser(
        "commoncrawl",
        help="run the census over the feed records an archive index names, fetched by Range request "
        "(docs/common-crawl.md)",
    )
    cc.add_argument(
        "--index",
        required=True,
        metavar="FILE_OR_GLOB",
        help="rows of the archive's columnar index (Parquet or CSV): url, warc_filename, warc_record_offset, "
        "warc_record_length, and content_mime_detected or content_mime_type to pick the feeds",
    )
    cc.add_argument(
        "--where", metavar="SQL", help="a condition on the index's columns (DuckDB SQL), e.g. \"url_host_tld = 'de'\""
    )
    cc.add_argument(
        "--pages",
        type=int,
        default=0,
        metavar="N",
        help="also N HTML page records (a fixed sample) for autodiscovery; with --sites, N per site besides its home page",
    )
    cc.add_argument(
        "--sites",
        metavar="CSV",
        help="a census of these sites (rank,domain lines, as the Tranco list): per site its home page, --pages more "
        "pages and its feed records, by the index's url_host_registered_domain",
    )
    cc.add_argument(
        "--live",
        action="store_true",
        help="with --sites: fetch the feeds the archived pages advertise from the live web (robots.txt, politeness, "
        "the network guard apply)",
    )
    cc.add_argument(
        "--archive-base",
        default="https://data.commoncrawl.org/",
        metavar="URL",
        help="where the WARC files are (default: Common Crawl's public endpoint)",
    )
    crawl_options(cc)
    frontier_option(cc, "the records", "`feedcensus worker`", "docs/common-crawl.md")
    cc.set_defaults(func=cmd_commoncrawl)

    w = sub.add_parser("worker", help="join a distributed crawl: take requests from its frontier until the job ends")
    w.add_argument(
        "--frontier",
        metavar="REDIS_URL",
        required=True,
        help="the job's Redis frontier (the password from FEEDCENSUS_REDIS_PASSWORD)",
    )
    crawl_options(w, ("--job", "--job-id"), "the job to join (as `feedcensus crawl --frontier` named it)")
    w.add_argument(
        "--replay",
        action="append",
        metavar="WARC_OR_GLOB",
        help="join a `feedcensus replay --frontier` job: serve responses from these WARC files (repeatable)",
    )
    w.add_argument(
        "--wait",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for the job to start on the frontier (workers may start first; default 60)",
    )
    w.set_defaults(func=cmd_worker)

    st = sub.add_parser(
        "status", help="a distributed job's queue, in-flight requests and workers; without --job, every job listed"
    )
    st.add_argument("--frontier", metavar="REDIS_URL", required=True)
    st.add_argument("--job", help="the job to show (default: list every job on the frontier, one line each)")
    st.add_argument("--json", action="store_true", help="one JSON object")
    st.set_defaults(func=cmd_status)

    s = sub.add_parser("survey", help="print the element-usage survey of a dataset")
    s.add_argument("dir")
    s.add_argument("--job", help="job id (default: the latest run)")
    s.add_argument(
        "--format", default="rss", choices=["rss", "atom", "rdf"], help="which feeds the element tables count"
    )
    s.add_argument(
        "--out",
        metavar="REPORT_DIR",
        help="write the report there as Markdown, HTML and CSV, and list the files instead of printing the Markdown",
    )
    s.add_argument("--print", action="store_true", help="with --out, print the Markdown too")
    s.add_argument(
        "--since",
        metavar="JOB",
        help="also report what changed since this earlier job (with --out: also written as changes.md)",
    )
    s.set_defaults(func=cmd_survey)

    ch = sub.add_parser("changes", help="what changed between two runs: feeds new and gone, elements, rules, items")
    ch.add_argument("dir")
    ch.add_argument("--job", help="the later run (default: the latest)")
    ch.add_argument("--since", metavar="JOB", help="the earlier run (default: the run before --job)")
    ch.add_argument("--json", action="store_true", help="one JSON object with every section")
    ch.set_defaults(func=cmd_changes)

    due = sub.add_parser("due", help="when each known feed of a dataset is next due, and why")
    due.add_argument("dir")
    due.add_argument("--json", action="store_true", help="one JSON object per feed per line")
    schedule_options(due)
    due.add_argument(
        "--at", metavar="ISO_TIME", help="evaluate at this time instead of now (e.g. 2026-11-22T22:00:00Z)"
    )
    due.set_defaults(func=cmd_due)

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
    d.add_argument("--json", action="store_true", help="one JSON object per page per line, every field of each link")
    d.add_argument(
        "--base-url",
        metavar="URL",
        help="the page's URL, to resolve relative links against (for local files: without it they stay relative)",
    )
    d.add_argument("sources", nargs="+", metavar="URL_OR_FILE")
    d.set_defaults(func=cmd_discover)

    r = sub.add_parser("rules", help="list the RSS Best Practices Profile rules")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_rules)

    demo = sub.add_parser(
        "demo", help="serve the bundled sample web on 127.0.0.1, crawl it and write the survey as an HTML report"
    )
    demo.add_argument("--out", default="demo-out", metavar="DIR")
    demo.add_argument("--job-id")
    demo.add_argument(
        "--log-level",
        default="ERROR",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="default ERROR: the demo web's dead ends are deliberate, and recorded in fetch_log",
    )
    demo.set_defaults(func=cmd_demo)
    return p


#: The commands that only read a dataset: a file of it pyarrow cannot read is their one-line error.
READING_COMMANDS = frozenset({"survey", "changes", "due", "compact"})


def seconds(value: str) -> float:
    """A ``--wait`` value: a finite number of seconds, 0 or more (``nan`` waited forever)."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number >= 0):
        raise argparse.ArgumentTypeError(f"takes a number of seconds, 0 or more, not {value!r}")
    return number


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"feedcensus {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"feedcensus {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if args.command not in READING_COMMANDS or not is_arrow_error(exc):
            raise
        # A command reading a dataset met a file pyarrow cannot read: which one, on one line.
        print(f"feedcensus {args.command}: cannot read the dataset: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_USAGE
