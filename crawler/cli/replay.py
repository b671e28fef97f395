"""``feedcensus replay``: the census run over WARC files instead of the network (docs/archives.md).

Before anything runs, every WARC file is read once into an index (``crawler/archive/read.py``): a
file that is missing, unreadable or not a WARC is one line and exit code 2. The inputs are the
archive's own (``crawler/archive/inputs.py``) unless ``--seeds``, ``--opml`` or ``--url`` are
given; those are then looked up inside the archive. The crawl itself is ``crawl``'s, with the
download handlers and the resolver of ``crawler/handlers/warc.py`` in place of the network, and
without the waits that only spare a live server (AutoThrottle, the retry backoff).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from crawler.cli.crawl import check_given_inputs, crawl, report_end, start_frontier
from crawler.cli.errors import fail
from crawler.cli.options import checked_settings, crawl_settings, project_settings

#: The replay's download handler, for both schemes.
HANDLER = "crawler.handlers.warc.WarcReplayHandler"
#: What a replay changes besides the handlers (a -s given on the command line still wins).
REPLAY_SETTINGS: dict[str, Any] = {
    "DOWNLOAD_HANDLERS": {"http": HANDLER, "https": HANDLER},
    "TWISTED_DNS_RESOLVER": "crawler.handlers.warc.ArchiveResolver",
    # No server to spare: no AutoThrottle, no wait before a retry (the retried attempts are archived).
    "AUTOTHROTTLE_ENABLED": False,
    "DOWNLOAD_DELAY": 0,
    "FEEDCENSUS_RETRY_BACKOFF_BASE": 0.0,
    "FEEDCENSUS_RETRY_AFTER_MAX": 0.0,
}


def load_index(patterns: list[str]) -> Any:
    """The index of the WARC files named; one line and exit 2 when one cannot be used."""
    from crawler.archive.read import ArchiveError, build_index, find_files

    try:
        return build_index(find_files(patterns))
    except ArchiveError as exc:
        raise fail(str(exc)) from None


def replay_inputs(index: Any) -> tuple[list[str], list[tuple[str, list[str]]], list[str], list[str]]:
    """The inputs of the crawl that wrote the archive: its seeds files (still on disk), seed lists (named
    by the file they came from, which is gone), OPML inputs and URLs."""
    from crawler.archive.inputs import archive_inputs

    inputs = archive_inputs(index)
    if not inputs.count:
        raise fail("nothing to replay: the archives hold no response record (or no input request)")
    for source, urls in inputs.seed_lists:
        print(f"feedcensus replay: {len(urls)} seeds of {source or '(unnamed)'} from the archive", file=sys.stderr)
    return list(inputs.seed_files), list(inputs.seed_lists), inputs.opml, inputs.urls


def replay_settings(index: Any, settings: Any) -> dict[str, Any] | None:
    """The replay's settings: its handlers, and the request settings the crawl ran with as its warcinfo
    record says (a flag or ``-s`` of the replay's command line, applied after, still wins). Those
    settings, or None when the archive does not record them."""
    from crawler.archive.warc import recorded_settings

    settings.set("FEEDCENSUS_REPLAY", index, priority="cmdline")
    for name, value in REPLAY_SETTINGS.items():
        settings.set(name, value, priority="cmdline")
    robots = index.info.get("robots")
    if robots in ("obey", "ignore"):  # as the crawl did (archives older than the settings field say only this)
        settings.set("ROBOTSTXT_OBEY", robots == "obey", priority="cmdline")
    recorded = recorded_settings(index.info)
    for name, value in (recorded or {}).items():
        settings.set(name, value, priority="cmdline")
    return recorded


def shown_setting(name: str, value: Any) -> str:
    """A setting as the command line gives it: its flag where one sets it (``--no-reflexive``), else ``-s``."""
    from crawler.cli.options import FLAG_SETTINGS

    for flag, (setting, flag_value) in FLAG_SETTINGS.items():
        if setting == name and flag_value == value and flag != "follow_body_links":
            return "--" + flag.replace("_", "-")
    if isinstance(value, bool):
        shown = str(value).lower()
    elif isinstance(value, list):
        shown = ",".join(str(v) for v in value)
    else:
        shown = f"{value:g}" if isinstance(value, float) else str(value)
    return f"-s {name}={shown}"


def given_here(args: argparse.Namespace) -> set[str]:
    """The settings the replay's own command line sets (its flags and ``-s``): they win over the archive's."""
    from crawler.cli.options import FLAG_SETTINGS, INTERVAL_SETTINGS

    names = {setting for flag, (setting, _) in FLAG_SETTINGS.items() if getattr(args, flag, False)}
    names |= {setting for option, setting in INTERVAL_SETTINGS.items() if getattr(args, option, None)}
    return names | {kv.partition("=")[0] for kv in args.set or []}


def options_line(recorded: dict[str, Any] | None, defaults: Any, given: set[str]) -> str:
    """What the terminal says about the options the replay took from the archive."""
    from crawler.archive.warc import request_settings

    if recorded is None:
        return (
            "feedcensus replay: the archive does not say how the crawl ran (written before its warcinfo record "
            "kept the options): replaying with the default options and those given here"
        )
    default = request_settings(defaults)
    differ = {name: value for name, value in sorted(recorded.items()) if default.get(name) != value}
    taken = [shown_setting(n, v) for n, v in differ.items()]
    overridden = sorted(n for n in recorded if n in given)
    line = "feedcensus replay: the crawl's options, from its warcinfo record: " + (
        " ".join(taken) if taken else "the defaults"
    )
    if overridden:
        line += f"; given here instead: {', '.join(overridden)}"
    return line


def describe(index: Any) -> str:
    files = len(index.files)
    return f"{index.records} records in {files} file{'s' if files != 1 else ''}, {index.bytes / 1e6:.1f} MB"


def cmd_replay(args: argparse.Namespace) -> int:
    settings = checked_settings(args)
    if args.warc:
        raise fail("--warc: a replay writes no archive (its rows point at the records it replays)")
    if not args.out:
        raise fail("--out is required")
    index = load_index(args.archives)
    for where in sorted(index.cut, key=lambda w: (w.filename, w.offset)):
        print(
            f"feedcensus replay: {where.filename}: the record at {where.offset} is cut short; its URL is recorded "
            "as network_error",
            file=sys.stderr,
        )
    for name in index.unclosed:
        print(
            f"feedcensus replay: {name} ends without its closing record: it was cut after its last whole record "
            "(a crash, a copy interrupted) or is still being written, and what came after is not in it",
            file=sys.stderr,
        )
    if args.seeds or args.opml or args.url:
        check_given_inputs(args, settings)
    print(f"feedcensus replay: {describe(index)}", file=sys.stderr)
    recorded = replay_settings(index, settings)
    print(options_line(recorded, project_settings(), given_here(args)), file=sys.stderr)
    settings = crawl_settings(args, settings)
    if args.frontier:
        start_frontier(args.frontier, settings, replay=list(args.archives))
    lists: list[tuple[str, list[str]]] = []
    if args.seeds or args.opml or args.url:
        seeds, opml, urls = list(args.seeds or []), list(args.opml or []), list(args.url or [])
    else:
        seeds, lists, opml, urls = replay_inputs(index)
    result = crawl(args, settings, seeds=seeds, opml=opml, urls=urls, seed_lists=lists)
    stats = result.stats
    served = (
        f"replay: {stats.get('feedcensus/replay/records', 0)} records served, "
        f"{stats.get('feedcensus/outcome/not_archived', 0)} URLs not in the archive"
    )
    return report_end(result, args, settings, "replay", extra=served)
