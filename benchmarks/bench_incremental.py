"""5. What a re-crawl costs: the same 198 feeds crawled three times into one dataset.

The 198 corpus feeds are served on 127.0.0.1 by the demo web server (``crawler/demo/webserver.py``),
three in four with validators (a strong ETag and a Last-Modified; a matching conditional GET gets a
304) and one in four without (as many real servers): those are downloaded in full every time, and
only their body hash tells that nothing changed. An OPML list names them all.

- run 1: the first crawl (an empty dataset);
- run 2: ``--ignore-hints``: every feed is due, so every one is asked for again, conditionally;
- run 3: the default schedule: only the feeds whose hints (ttl, sy:updatePeriod, Cache-Control...)
  or own item rate say they are due are fetched; the others are recorded as ``not_due``.

Counted per run, from the server and the dataset: requests the server answered, body bytes
received (``fetch_log.bytes``), feeds parsed (``feeds.changed``), items rows written, and the
outcomes; wall time of the crawl process.

    python benchmarks/bench_incremental.py
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

from common import CORPUS, FEEDCENSUS, WORK, md_table

FEEDS_DIR = CORPUS / "benchmark_feeds"
#: One feed in this many is served without validators.
NO_VALIDATORS_EVERY = 4


@dataclass
class RunCounts:
    name: str
    seconds: float
    requests: int
    bytes: int
    parsed: int
    items: int
    outcomes: dict[str, int] = field(default_factory=dict)


def serve(feeds: list[Path]) -> tuple[object, list[str]]:
    from crawler.demo.routes import Route, Web
    from crawler.demo.webserver import WebServer

    web = Web()
    paths = []
    for i, feed in enumerate(feeds):
        path = f"/f/{feed.name}.xml"
        web.add(
            path,
            Route(
                feed.read_bytes(),
                headers={"Content-Type": "application/xml"},
                validators=i % NO_VALIDATORS_EVERY != 0,
            ),
        )
        paths.append(path)
    server = WebServer(web).start()
    return server, [server.url_for(p) for p in paths]


def write_opml(urls: list[str], path: Path) -> Path:
    outlines = "\n".join(f"<outline type='rss' text='f{i}' xmlUrl={quoteattr(u)}/>" for i, u in enumerate(urls))
    path.write_text(f"<?xml version='1.0'?><opml version='2.0'><head/><body>{outlines}</body></opml>\n")
    return path


def crawl(opml: Path, out: Path, job: str, *flags: str) -> float:
    argv = [FEEDCENSUS, "crawl", "--opml", str(opml), "--out", str(out), "--job-id", job, "--no-reflexive"]
    argv += ["-s", "AUTOTHROTTLE_ENABLED=False", "-s", "ROBOTSTXT_OBEY=False", *flags]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"crawl {job} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return time.monotonic() - started


def counts(out: Path, job: str, name: str, seconds: float, requests: int) -> RunCounts:
    import duckdb

    con = duckdb.connect()
    log = f"read_parquet('{out}/fetch_log/job_id={job}/*.parquet')"
    feeds = f"read_parquet('{out}/feeds/job_id={job}/*.parquet')"
    items = list((out / "items" / f"job_id={job}").glob("*.parquet"))
    outcomes = dict(con.execute(f"SELECT outcome, count(*) FROM {log} GROUP BY 1 ORDER BY 1").fetchall())
    (body,) = con.execute(f"SELECT coalesce(sum(bytes), 0) FROM {log}").fetchone() or (0,)
    (parsed,) = con.execute(f"SELECT count(*) FILTER (WHERE changed) FROM {feeds}").fetchone() or (0,)
    n_items = 0
    if items:
        (n_items,) = con.execute(
            f"SELECT count(*) FROM read_parquet('{out}/items/job_id={job}/*.parquet')"
        ).fetchone() or (0,)
    return RunCounts(name, seconds, requests, int(body), int(parsed), int(n_items), outcomes)


def run() -> tuple[list[RunCounts], str]:
    feeds = sorted(p for p in FEEDS_DIR.iterdir() if p.is_file() and p.name != "manifest.tsv")
    work = WORK / "incremental"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    server, urls = serve(feeds)
    opml = write_opml(urls, work / "feeds.opml")
    out = work / "out"
    runs: list[RunCounts] = []
    try:
        for job, name, flags in (
            ("r1", "1: first crawl", ()),
            ("r2", "2: again, --ignore-hints (all due)", ("--ignore-hints",)),
            ("r3", "3: again, default schedule", ()),
        ):
            server.reset_hits()  # type: ignore[attr-defined]
            seconds = crawl(opml, out, job, *flags)
            hits: collections.Counter[str] = server.hits  # type: ignore[attr-defined]
            requests = sum(n for path, n in hits.items() if path.startswith("/f/"))
            runs.append(counts(out, job, name, seconds, requests))
    finally:
        server.stop()  # type: ignore[attr-defined]
    return runs, markdown(runs, len(feeds))


def markdown(runs: list[RunCounts], n: int) -> str:
    with_validators = n - len(range(0, n, NO_VALIDATORS_EVERY))
    rows = [
        [
            r.name,
            f"{r.seconds:.1f}",
            r.requests,
            f"{r.bytes / 1e6:.2f}",
            r.parsed,
            r.items,
            ", ".join(f"{k} {v}" for k, v in r.outcomes.items()),
        ]
        for r in runs
    ]
    table = md_table(["run", "wall s", "feed requests", "MB received", "feeds parsed", "items rows", "outcomes"], rows)
    first, again = runs[0], runs[1]
    return (
        f"{n} corpus feeds on 127.0.0.1, {with_validators} served with validators, {n - with_validators} without; "
        "one dataset, three runs back to back.\n\n"
        + table
        + f"\n\nRun 2 against run 1: {again.bytes / max(first.bytes, 1):.1%} of the bytes, "
        f"{again.parsed} of {first.parsed} feeds parsed, {again.items} item rows instead of {first.items}. "
        "Feeds that send validators cost a 304 and no parse; the others are downloaded in full "
        "and recognised as unchanged by their hash, so not parsed either.\n"
    )


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    _, text = run()
    print(text)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
