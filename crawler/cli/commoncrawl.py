"""``feedcensus commoncrawl``: the census over the feed records of a web archive, chosen by its index.

The index rows (``--index``: a Parquet or CSV export of Common Crawl's columnar index, one file or
a glob; ``--where`` narrows them) are read before anything runs (``crawler/archive/ccindex.py``):
a file that cannot be read or lacks a column is one line and exit code 2. Each row is then one
Range request for its record under ``--archive-base`` (Common Crawl's public endpoint by default):
``crawler/spiders/archive.py`` and ``crawler/middlewares/archived.py``. docs/common-crawl.md says
how to choose the rows and what a full crawl costs.

A census of listed sites (``--sites top.csv``: ``rank,domain`` lines, the Tranco top list's shape)
reads, per listed site, its home page record and up to ``--pages`` more HTML records, and up to 10
of its feed records (``crawler/archive/sites.py``), and records each listed site the index holds no
page of. ``--live`` fetches the feeds the archived pages advertise (``--guess``: and the usual
guesses where a page advertises none) from the live web, as a crawl does (network guard,
robots.txt, politeness per host); without it their links are recorded only.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from crawler.cli.crawl import crawl, report_end, start_frontier
from crawler.cli.errors import fail
from crawler.cli.options import checked_settings, crawl_settings
from crawler.fetch.words import counted

#: What the census over an archive changes (a -s given on the command line still wins).
ARCHIVE_SETTINGS: dict[str, Any] = {
    # The archive is the web here: a page's feed links are recorded, not fetched live.
    "FEEDCENSUS_FOLLOW_LINKS": False,
    # A feed's channel page is not in the selection: reflexive autodiscovery would fetch it live.
    "FEEDCENSUS_REFLEXIVE": False,
}


#: What every worker of a distributed census over an archive must be given (a worker runs the census
#: spider with its own settings: nothing else tells it the job is an archive's).


def read_site_rows(args: argparse.Namespace) -> tuple[list[Any], list[Any]]:
    """The records of the listed sites (``--sites``) and the sites the index holds no page of."""
    from crawler.archive.ccindex import IndexRowsError
    from crawler.archive.sites import read_sites, select_sites

    try:
        sites, skipped = read_sites(args.sites)
    except OSError as exc:
        raise fail(f"--sites {args.sites}: {exc.strerror or exc}") from None
    if not sites:
        raise fail(f"--sites {args.sites}: no line is rank,domain (the Tranco list's shape, e.g. 1,example.com)")
    if skipped:
        print(
            f"feedcensus commoncrawl: {args.sites}: {skipped} lines that are not rank,domain left out", file=sys.stderr
        )
    try:
        chosen = select_sites(args.index, sites, pages=args.pages, where=args.where)
    except IndexRowsError as exc:
        raise fail(str(exc)) from None
    with_pages = chosen.listed - len(chosen.missing)
    print(
        f"sites: {counted(chosen.listed, 'listed site')}, {with_pages} with an archived page, "
        f"{len(chosen.missing)} without",
        file=sys.stderr,
    )
    return chosen.rows, chosen.missing


def read_rows(args: argparse.Namespace) -> list[Any]:
    from crawler.archive.ccindex import IndexRowsError, read_index

    try:
        chosen = read_index(args.index, pages=args.pages, where=args.where)
    except IndexRowsError as exc:
        raise fail(str(exc)) from None
    if chosen.unusable:
        print(
            f"feedcensus commoncrawl: {args.index}: {chosen.unusable} feed rows left out (no URL or file name, "
            "or an offset or length that is not a whole number)",
            file=sys.stderr,
        )
    if not any(row.kind == "feed" for row in chosen.rows):
        raise fail(f"{args.index}: no row of the index is a usable feed record (or matches --where)")
    return chosen.rows


def check_base(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise fail(f"--archive-base {url}: not an http(s) URL")
    return url


def cmd_commoncrawl(args: argparse.Namespace) -> int:
    from crawler.spiders.archive import ArchiveSpider

    settings = checked_settings(args)
    if not args.out:
        raise fail("--out is required")
    if args.warc:
        raise fail("--warc: the census over an archive writes no archive (its rows name the records it read)")
    if args.pages < 0:
        raise fail("--pages takes a count of 0 or more")
    if args.live and not args.sites:
        raise fail("--live needs --sites: the live fetches are of the feeds the listed sites' archived pages advertise")
    base = check_base(args.archive_base)
    missing: list[Any] = []
    if args.sites:
        rows, missing = read_site_rows(args)
    else:
        rows = read_rows(args)
    for name, value in ARCHIVE_SETTINGS.items():
        settings.set(name, value, priority="project")
    if args.live:  # the archived pages' feed links are fetched live: a crawl's politeness and guard apply
        settings.set("FEEDCENSUS_FOLLOW_LINKS", True, priority="project")
    args.resume = None
    settings = crawl_settings(args, settings)
    if args.frontier:
        start_frontier(args.frontier, settings)
    feeds = sum(1 for r in rows if r.kind == "feed")
    print(
        f"archive records: {counted(feeds, 'feed')}, {counted(len(rows) - feeds, 'page')}, from {base}", file=sys.stderr
    )
    result = crawl(
        args, settings, spider=ArchiveSpider, records=rows, archive_base=base, missing=missing, sites_source=args.sites
    )
    return report_end(result, args, settings, "commoncrawl")
