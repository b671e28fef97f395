"""The peer survey (``feed-survey-opml``, PyPI ``feed-survey`` 0.1.2) and ``feedcensus survey`` side by side.

One OPML list, two tools, figure by figure (issue #16). The list names:

* the first ``sites`` sites of the generated loopback web (``loopweb.py``, its own process, sites on
  127.0.1.x): ``xmlUrl`` = the site's feed, ``htmlUrl`` = its home page, which advertises that feed;
* ``corpus`` real feeds of ``../shared/corpus/benchmark_feeds`` (read from there, never copied), served
  by :class:`crawler.demo.webserver.WebServer` on 127.0.2.x (one host per ten feeds), each with a
  small home page advertising it the ways real pages do: ``rel="alternate"``, ``rel="feed"``, both
  tokens on one link, and, on every seventh page, also one small channel in both formats (an RSS
  and Atom pair with the same link and title); every eleventh page advertises
  nothing, every thirteenth feed URL answers 404. The twin feeds are listed as well (the peer reads
  only the feeds of its list, and finds a pair only among feeds it has read).

The peer runs as its own command line (``feed-survey-opml``, through :func:`peer_main`, which only
keeps the report's figures as data: ``feed_survey.report.context.build_report_stats`` of the context
its renderer is given). We crawl the same list (``feedcensus crawl --opml``, reflexive discovery and
politeness off, as the peer has neither) and run ``feedcensus survey``; :func:`compare` then pairs
every figure of the peer with ours (:data:`FIGURES`), and says, where they differ, why (the reasons
are written in ``docs/survey-breadth.md``).

    python benchmarks/bench_peer_survey.py [--sites 200] [--corpus 60] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CORPUS = REPO.parent / "shared" / "corpus" / "benchmark_feeds"
sys.path[:0] = [p for p in (str(BENCH), str(REPO)) if p not in sys.path]

import loopweb  # noqa: E402  (a sibling script, not a package)

from crawler.demo.routes import Route, Web  # noqa: E402
from crawler.demo.webserver import WebServer  # noqa: E402

#: Loopback addresses the loopback web's sites are spread over (127.0.1.1 ...).
LOOP_HOSTS = 40
#: Corpus feeds per 127.0.2.x host.
CORPUS_PER_HOST = 10
MEDIA = {"RSS 2.0": "application/rss+xml", "Atom 1.0": "application/atom+xml", "RSS 1.0": "application/rdf+xml"}
CRAWL_SETTINGS = ("ROBOTSTXT_OBEY=False", "AUTOTHROTTLE_ENABLED=False", "CONCURRENT_REQUESTS_PER_DOMAIN=16")


# --- the web ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outline:
    feed: str
    page: str


def corpus_files(n: int) -> list[tuple[str, str]]:
    """(file name, manifest format) of ``n`` corpus feeds spread evenly over the manifest (name order)."""
    with (CORPUS / "manifest.tsv").open(encoding="utf-8") as fh:
        rows = sorted(csv.DictReader(fh, delimiter="\t"), key=lambda r: r["local_file"])
    step = max(1, len(rows) // max(n, 1))
    return [(Path(r["local_file"]).name, r["format"]) for r in rows][::step][:n]


def _link(rel: str, media: str, href: str, title: str = "feed") -> str:
    return f'<link rel="{rel}" type="{media}" title="{title}" href="{href}">'


def corpus_page(k: int, feed: str, media: str) -> tuple[bytes, list[tuple[str, bytes, str]]]:
    """The home page of corpus feed ``k`` and any extra feed routes it advertises (path, body, type)."""
    extra: list[tuple[str, bytes, str]] = []
    if k % 11 == 10:
        links = ""
    else:
        rel = ("alternate", "feed", "alternate feed")[k % 3]
        links = _link(rel, media, feed)
    generator = '<meta name="generator" content="WordPress 6.4">' if k % 4 == 0 else ""
    markers = '<script src="/wp-includes/js/x.js"></script>' if k % 4 == 0 else ""
    if k % 7 == 3:
        # One channel in both formats, at two more URLs: an RSS and Atom pair (same link, same title).
        for path, body, ctype in ((f"/c{k}/twin.rss", twin_rss(k), "application/rss+xml"),
                                  (f"/c{k}/twin.atom", twin_atom(k), "application/atom+xml")):  # fmt: skip
            links += _link("alternate", ctype, path, "twin")
            extra.append((path, body.encode(), ctype))
    html = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Site {k}</title>{generator}{links}'
        f"</head><body><p>site {k}</p>{markers}</body></html>"
    )
    return html.encode(), extra


def twin_rss(k: int) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Twin {k}</title><link>http://twin.example/{k}/</link><description>twin</description>"
        f"<item><title>Twin post {k}</title><link>http://twin.example/{k}/p</link></item></channel></rss>"
    )


def twin_atom(k: int) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f'<title>Twin {k}</title><link rel="alternate" href="http://twin.example/{k}/"/><id>urn:twin:{k}</id>'
        "<updated>2025-10-01T00:00:00Z</updated>"
        f'<entry><title>Twin post {k}</title><link href="http://twin.example/{k}/p"/><id>urn:twin:{k}:p</id>'
        "<updated>2025-10-01T00:00:00Z</updated></entry></feed>"
    )


@contextlib.contextmanager
def loopback_web(sites: int, corpus: int, work: Path) -> Iterator[list[Outline]]:
    """Serve the loopback web and the corpus sample; yield the OPML outlines naming them."""
    ready = work / "loopweb.ready"
    ready.unlink(missing_ok=True)
    loop = subprocess.Popen(
        [
            sys.executable,
            str(BENCH / "loopweb.py"),
            "--sites",
            str(sites),
            "--hosts",
            str(LOOP_HOSTS),
            "--ready",
            str(ready),
        ],
        stderr=subprocess.DEVNULL,
    )
    servers: list[WebServer] = []
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() or not ready.read_text():
            if loop.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("loopweb did not start")
            time.sleep(0.05)
        port = int(json.loads(ready.read_text())["port"])
        outlines = [
            Outline(loopweb.feed_url(i, LOOP_HOSTS, port), loopweb.home_url(i, LOOP_HOSTS, port)) for i in range(sites)
        ]
        web = Web()
        files = corpus_files(corpus)
        hosts = [f"127.0.2.{1 + h}" for h in range((len(files) + CORPUS_PER_HOST - 1) // CORPUS_PER_HOST)]
        servers = [WebServer(web, host=h).start() for h in hosts]
        for k, (name, fmt) in enumerate(files):
            server = servers[k // CORPUS_PER_HOST]
            media = MEDIA.get(fmt, "application/xml")
            feed = f"/c{k}/feed"
            if k % 13 != 12:
                body = (CORPUS / name).read_bytes()
                web.add(f"{server.host}{feed}", Route(body=body, headers={"Content-Type": media}))
            page, extra = corpus_page(k, feed, media)
            web.add(f"{server.host}/c{k}", Route(body=page, headers={"Content-Type": "text/html; charset=utf-8"}))
            outlines.append(Outline(server.url_for(feed), server.url_for(f"/c{k}")))
            for path, body, ctype in extra:
                # listed too: the peer only reads the feeds of its list, and needs both of a pair
                web.add(f"{server.host}{path}", Route(body=body, headers={"Content-Type": ctype}))
                outlines.append(Outline(server.url_for(path), server.url_for(f"/c{k}")))
        yield outlines
    finally:
        for server in servers:
            server.stop()
        loop.terminate()
        try:
            loop.wait(10)
        except subprocess.TimeoutExpired:
            loop.kill()
            loop.wait()


def write_opml(outlines: list[Outline], path: Path) -> Path:
    rows = "".join(
        f'<outline type="rss" text="site {n}" xmlUrl={quoteattr(o.feed)} htmlUrl={quoteattr(o.page)}/>\n'
        for n, o in enumerate(outlines)
    )
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0"><head><title>loopback web</title></head><body>\n'
        + rows
        + "</body></opml>\n",
        encoding="utf-8",
    )
    return path


# --- the two tools ---------------------------------------------------------------------------


def peer_main(argv: list[str], figures_json: Path) -> None:
    """Run ``feed-survey-opml ARGV`` in this process and write its report's figures to ``figures_json``.

    The CLI runs unchanged; its Markdown renderer is wrapped only to keep the report context it is
    given, whose figures ``build_report_stats`` returns as a dict (plus the discovery summary, the
    quality summary and the cadence CDF, which that dict leaves out).
    """
    from feed_survey import opml
    from feed_survey.emr.stats_wire import json_safe
    from feed_survey.report import render
    from feed_survey.report.context import build_report_stats

    kept: dict[str, Any] = {}
    original = getattr(render, "render_report_markdown")  # noqa: B009 (not re-exported for mypy)

    def keep(context: Any) -> Any:
        kept["context"] = context
        return original(context)

    setattr(render, "render_report_markdown", keep)  # noqa: B010
    sys.argv = ["feed-survey-opml", *argv]
    try:
        opml.main()
    finally:
        setattr(render, "render_report_markdown", original)  # noqa: B010
    ctx = kept["context"]
    figures = build_report_stats(ctx)
    d = ctx.discovery
    figures["discovery_pages_with_duplicates"] = d.pages_with_duplicates
    figures["discovery_multi_feed_pages"] = d.multi_feed_pages_total
    figures["discovery_duplicate_format_pairs"] = d.duplicate_format_pairs
    figures["discovery_per_page_hist"] = d.per_page_hist
    figures["quality"] = ctx.quality
    figures["feed_recency_cdf"] = ctx.feed_recency_cdf
    figures["entry_recency_cdf"] = ctx.entry_recency_cdf
    figures["n_zero_entry"] = ctx.n_zero_entry
    figures_json.write_text(json.dumps(json_safe(figures), indent=1, default=str), encoding="utf-8")


def run_peer(opml: Path, work: Path) -> dict[str, Any]:
    """The peer's figures on ``opml`` (its CLI in a fresh interpreter)."""
    out = work / "peer.figures.json"
    (work / "peer").mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [
            sys.executable,
            __file__,
            "--peer",
            str(opml),
            str(out),
            "-o",
            str(work / "peer" / "report.html"),
            "--concurrency",
            "16",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"feed-survey-opml failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return dict(json.loads(out.read_text(encoding="utf-8")))


def run_ours(opml: Path, work: Path) -> Path:
    """Crawl ``opml`` and survey it; return the report folder (one CSV per table)."""
    out, report = work / "ours", work / "report"
    settings = [a for s in CRAWL_SETTINGS for a in ("-s", s)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cli = [sys.executable, "-m", "crawler.cli"]
    crawl = [*cli, "crawl", "--opml", str(opml), "--out", str(out), "--no-reflexive", "--log-level", "WARNING"]
    for argv in ([*crawl, *settings], [*cli, "survey", str(out), "--out", str(report)]):
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=300, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[3:5])} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return report


# --- the comparison --------------------------------------------------------------------------


def our_figures(report: Path) -> dict[str, Any]:
    """Every breadth measure of our survey, by its key (the CSVs of the breadth tables)."""
    from crawler.report.breadth import read_measures

    return read_measures(report)


@dataclass(frozen=True, slots=True)
class Compared:
    figure: str
    ours_key: str
    ours: Any
    theirs: Any
    same: bool
    reason: str


def compare(peer: dict[str, Any], ours: dict[str, Any]) -> list[Compared]:
    """Pair every peer figure with ours (:data:`crawler.report.breadth.PEER_FIGURES`).

    A figure that is a table on both sides is paired with our table by name (``same`` is then
    whether we have that table); a number is the same when both round to the peer's one decimal.
    """
    from crawler.report.breadth import PEER_FIGURES, peer_value

    rows = []
    for fig in PEER_FIGURES:
        theirs = peer_value(peer, fig.peer)
        mine = ours.get(fig.ours)
        same = mine is not None if fig.ours.startswith("table:") else _same(mine, theirs)
        rows.append(Compared(fig.peer, fig.ours, mine, theirs, same, "" if same else fig.reason))
    return rows


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(float(a) - float(b)) <= 0.051  # the peer rounds to one decimal
    return bool(a == b)


def markdown(rows: list[Compared]) -> str:
    def fmt(v: Any) -> str:
        if v is None:
            return ""
        return (f"{v:.2f}" if isinstance(v, float) else str(v)).replace("|", "\\|")

    lines = ["| peer figure | our measure | ours | peer | same? / reason |", "|---|---|---:|---:|---|"]
    for r in rows:
        verdict = ("table" if r.ours_key.startswith("table:") else "same") if r.same else r.reason
        lines.append(f"| {r.figure} | {r.ours_key} | {fmt(r.ours)} | {fmt(r.theirs)} | {verdict} |")
    return "\n".join(lines) + "\n"


def side_by_side(sites: int, corpus: int, work: Path) -> list[Compared]:
    work.mkdir(parents=True, exist_ok=True)
    with loopback_web(sites, corpus, work) as outlines:
        opml = write_opml(outlines, work / "list.opml")
        peer = run_peer(opml, work)
        report = run_ours(opml, work)
    return compare(peer, our_figures(report))


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--peer"]:
        peer_main([args[1], *args[3:]], Path(args[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--corpus", type=int, default=60)
    parser.add_argument("--out", type=Path, default=BENCH / ".work" / "peer-survey")
    ns = parser.parse_args(args)
    rows = side_by_side(ns.sites, ns.corpus, ns.out)
    text = markdown(rows)
    (ns.out / "side-by-side.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
