"""Benchmark 4: ``feed-survey-opml`` (PyPI ``feed-survey``) vs ``feedcensus crawl --opml`` on one OPML list.

The list names the N sites of the generated loopback web (``xmlUrl`` = the feed, ``htmlUrl`` = the
home page). feed-survey is installed into its own virtualenv under ``benchmarks/.work/peer`` (never
into the project's), at the first run. Both tools fetch the pages and the feeds; politeness is off
for ours (the peer has none), concurrency 32 for both.

    python benchmarks/bench_peer.py [--sites 1000]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

from bench_crawl import CONCURRENCY, POLITENESS_OFF, Web, settings_args
from common import FEEDCENSUS, WORK, Measured, md_table, run_measured, tail

PEER_VENV = WORK / "peer"
PEER_BIN = PEER_VENV / "bin" / "feed-survey-opml"
PEER_DIR = WORK / "peer-run"

#: What feedcensus records that the peer's report has no equivalent for (checked against its report).
CANNOT = [
    "per-item rows (guid, link, title, author, categories, enclosure, raw and parsed dates, date form): the peer keeps aggregate counters only",
    "the element tally per feed at channel and item scope with items_with counts and attributes (`element_usage`): the peer counts extension elements across feeds",
    "RSS Best Practices Profile conformance: 65 rules with severities, counts and examples per feed (`conformance`)",
    "autodiscovery links judged against both the RSS and the Atom autodiscovery specs, with reasons (`links`)",
    "reflexive discovery: whether the page a feed's channel links to advertises that feed",
    "a fetch log row for every URL (outcome, status, bytes, error, source, depth) and the USM Content-Type check per feed",
    "Parquet datasets partitioned by run, queryable with DuckDB; the peer writes an HTML and a Markdown report",
]


@dataclass(slots=True)
class PeerResult:
    install_error: str | None = None
    peer: Measured | None = None
    peer_parsed: int | None = None
    peer_checked: int | None = None
    peer_discovery: str = ""
    ours: Measured | None = None
    ours_feeds: int | None = None
    ours_links: int | None = None
    server: dict[str, float] = field(default_factory=dict)
    markdown: str = ""


def ensure_peer() -> str | None:
    """Install feed-survey into its own venv; None when ready, else the exact error."""
    if PEER_BIN.exists():
        return None
    shutil.rmtree(PEER_VENV, ignore_errors=True)
    venv.EnvBuilder(with_pip=True).create(PEER_VENV)
    proc = subprocess.run(
        [str(PEER_VENV / "bin" / "pip"), "install", "--quiet", "feed-survey"], capture_output=True, text=True
    )
    if proc.returncode != 0 or not PEER_BIN.exists():
        return f"pip install feed-survey failed (exit {proc.returncode}): {tail(proc.stderr, 5)}"
    return None


def write_opml(web: Web, sites: int, path: Path) -> None:
    rows = "".join(
        f'<outline type="rss" text="Site {i}" xmlUrl={quoteattr(web.feed(i))} htmlUrl={quoteattr(web.home(i))}/>\n'
        for i in range(sites)
    )
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0"><head><title>benchmark web</title></head><body>\n'
        + rows
        + "</body></opml>\n"
    )


def peer_version() -> str:
    proc = subprocess.run([str(PEER_VENV / "bin" / "pip"), "show", "feed-survey"], capture_output=True, text=True)
    found = re.search(r"^Version: (.+)$", proc.stdout, re.M)
    return found.group(1) if found else "?"


def run(sites: int = 1000) -> PeerResult:
    result = PeerResult()
    result.install_error = ensure_peer()
    shutil.rmtree(PEER_DIR, ignore_errors=True)
    PEER_DIR.mkdir(parents=True)
    opml = PEER_DIR / "list.opml"
    web = Web(sites)
    try:
        write_opml(web, sites, opml)
        if result.install_error is None:
            print(f"  feed-survey-opml on {sites} sites ...", file=sys.stderr, flush=True)
            web.reset()
            report = PEER_DIR / "report.html"
            result.peer = run_measured([str(PEER_BIN), str(opml), "-o", str(report), "--concurrency", "32"])
            out = result.peer.stdout + result.peer.stderr
            found = re.search(r"Done: (\d+) feed URLs checked, (\d+) parsed", out)
            if found:
                result.peer_checked, result.peer_parsed = int(found.group(1)), int(found.group(2))
            md = report.with_suffix(".md")
            if md.exists():
                line = re.search(r"\| Pages with feed links\s*\|\s*([^|]+?)\s*\|", md.read_text())
                result.peer_discovery = line.group(1) if line else ""
            result.server["peer"] = web.stats()["requests"]
            print(f"    {result.peer.wall:.1f} s, exit {result.peer.returncode}", file=sys.stderr, flush=True)
        print(f"  feedcensus crawl --opml on {sites} sites ...", file=sys.stderr, flush=True)
        web.reset()
        out_dir = PEER_DIR / "ours"
        argv = [FEEDCENSUS, "crawl", "--opml", str(opml), "--out", str(out_dir), "--log-level", "WARNING"]
        result.ours = run_measured(argv + settings_args({**POLITENESS_OFF, **CONCURRENCY}))
        result.server["ours"] = web.stats()["requests"]
        found = re.search(r"feeds: (\d+)", result.ours.stderr)
        result.ours_feeds = int(found.group(1)) if found else None
        found = re.search(r"\((\d+) advertising feeds", result.ours.stderr)
        result.ours_links = int(found.group(1)) if found else None
        print(f"    {result.ours.wall:.1f} s, exit {result.ours.returncode}", file=sys.stderr, flush=True)
    finally:
        web.stop()
    result.markdown = render(result, sites)
    return result


def render(r: PeerResult, sites: int) -> str:
    if r.install_error is not None:
        head = f"feed-survey could not be installed, so only our side ran. The exact error:\n\n```\n{r.install_error}\n```\n\n"
    else:
        head = f"feed-survey {peer_version()} in its own venv (`benchmarks/.work/peer`), run offline against 127.0.1.x.\n\n"
    rows = []
    if r.peer is not None:
        ok = r.peer.returncode == 0
        rows.append(
            [
                "feed-survey-opml --concurrency 32",
                f"{r.peer.wall:.1f}",
                f"{r.peer.cpu:.1f}",
                f"{r.peer.max_rss_mib:.0f}",
                int(r.server.get("peer", 0)),
                r.peer_parsed if ok else f"failed (exit {r.peer.returncode})",
                r.peer_discovery or "-",
            ]
        )
    if r.ours is not None:
        rows.append(
            [
                "feedcensus crawl --opml (robots, autothrottle off; reflexive on)",
                f"{r.ours.wall:.1f}",
                f"{r.ours.cpu:.1f}",
                f"{r.ours.max_rss_mib:.0f}",
                int(r.server.get("ours", 0)),
                r.ours_feeds if r.ours.returncode == 0 else f"failed (exit {r.ours.returncode})",
                f"{r.ours_links} pages" if r.ours_links is not None else "-",
            ]
        )
    table = md_table(
        ["tool", "wall s", "CPU s", "peak RSS MiB", "requests served", "feeds parsed", "pages with feed links found"],
        rows,
    )
    errors = ""
    if r.peer is not None and r.peer.returncode != 0:
        errors = (
            f"\nfeed-survey-opml failed; the end of its output:\n\n```\n{tail(r.peer.stdout + r.peer.stderr)}\n```\n"
        )
    cannot = "\n".join(f"- {c}" for c in CANNOT)
    return (
        f"{head}OPML list of the {sites:,} sites of the generated web (xmlUrl + htmlUrl each).\n\n{table}\n{errors}\n"
        f"What feedcensus produces that feed-survey cannot:\n\n{cannot}\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=1000)
    args = parser.parse_args(argv)
    print(run(args.sites).markdown)


if __name__ == "__main__":
    main()
