"""Benchmark 1: the per-feed parse path vs fastfeedparser, feedparser and the lxml floor.

One process, all 198 feeds of ``shared/corpus/benchmark_feeds`` held in memory, several rounds per
contender, median throughput in MB/s (10^6 bytes per second). "Ours" is the full per-feed path the
crawl runs: ``pipelines.feed.process_document`` (parse, tally, profile checks, table rows) and then
one Arrow record batch per table built from a round's rows with the declared schemas, as
``pipelines.dataset.commits.DatasetWriter`` does before writing Parquet. A cProfile of one round of ours
shows where the time goes.

    python benchmarks/bench_parse.py [--rounds 5] [--feedparser-rounds 1]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import CORPUS, md_table, median

FEEDS_DIR = CORPUS / "benchmark_feeds"


@dataclass(slots=True)
class Contender:
    name: str
    what: str
    rounds: list[float] = field(default_factory=list)  # seconds per round
    failures: int = 0

    def mbps(self, total_bytes: int) -> float:
        return total_bytes / median(self.rounds) / 1e6


@dataclass(slots=True)
class ParseResult:
    files: int
    total_bytes: int
    contenders: list[Contender]
    profile: list[tuple[str, int, float, float]]  # (function, calls, tottime, cumtime)
    profile_total: float
    rows: dict[str, int]
    targets: list[tuple[str, str, bool]]  # (target, measured, met)
    markdown: str = ""


def load_feeds() -> list[tuple[str, bytes]]:
    if not FEEDS_DIR.is_dir():
        raise SystemExit(f"benchmark feeds not found at {FEEDS_DIR}")
    return [(p.name, p.read_bytes()) for p in sorted(FEEDS_DIR.iterdir()) if p.is_file() and p.name != "manifest.tsv"]


def bench_document(url: str, body: bytes) -> Any:
    """The FeedDocument the crawl would make for a feed fetched from ``url`` (built inside the timed
    loops: the crawl builds one per response too)."""
    from schemas.items import FeedDocument

    return FeedDocument(
        url=url,
        final_url=url,
        status=200,
        headers={"content-type": "application/rss+xml"},
        body=body,
        discovered_via="url",
        source=None,
        depth=0,
    )


def make_ours(feeds: list[tuple[str, bytes]]) -> tuple[Callable[[], int], Callable[[], dict[str, int]]]:
    import pyarrow as pa

    from pipelines.feed import process_document
    from schemas.tables import TABLES, arrow_schema

    schemas = {t: arrow_schema(t) for t in TABLES}
    docs = [
        (f"https://bench.example/{name}", body) for name, body in feeds
    ]  # FeedDocument is built inside the timed loop: the crawl builds one per response too
    last_rows: dict[str, int] = {}

    def one_round() -> int:
        tables: dict[str, list[dict[str, object]]] = {t: [] for t in TABLES}
        for url, body in docs:
            rows = process_document(bench_document(url, body))
            for table, table_rows in rows.rows.items():
                tables[table].extend(table_rows)
        batches = {t: pa.RecordBatch.from_pylist(r, schema=schemas[t]) for t, r in tables.items() if r}
        last_rows.clear()
        last_rows.update({t: b.num_rows for t, b in batches.items()})
        return 0

    return one_round, lambda: dict(last_rows)


def make_pooled(feeds: list[tuple[str, bytes]], workers: int) -> tuple[Callable[[], int], Callable[[], None]]:
    """Ours through the crawl's document pool: ``workers`` processes, driven from one event loop as the
    crawl's reactor thread drives them, with every feed of a round asked for at once (the pool's
    back-pressure hands them out as workers come free).

    The rows come back to this process, items, element_usage and conformance as Arrow record batches
    built in the workers, and become one Arrow table per table here as the crawl's dataset writer makes
    them. Returns one round and a function that stops the pool.
    """
    import asyncio

    from pipelines.dataset.commits import arrow_table
    from pipelines.document.jobs import Job, Lost, Parsed
    from pipelines.document.pool import DocumentPool
    from schemas.tables import TABLES, Encoded

    pool = DocumentPool(workers, timeout=120)
    loop = asyncio.new_event_loop()
    docs = [(f"https://bench.example/{name}", body) for name, body in feeds]

    async def answers() -> list[Parsed | Lost]:
        return await asyncio.gather(*(pool.run(Job(bench_document(url, body))) for url, body in docs))

    def one_round() -> int:
        tables: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
        encoded: dict[str, list[Encoded]] = {t: [] for t in TABLES}
        failures = 0
        for answer in loop.run_until_complete(answers()):
            if isinstance(answer, Lost):
                failures += 1
                continue
            for table, table_rows in answer.rows.rows.items():
                tables[table].extend(table_rows)
            for table, batch in answer.rows.encoded.items():
                encoded[table].append(batch)
        for t in TABLES:
            if tables[t] or encoded[t]:
                arrow_table(t, tables[t], encoded[t])
        return failures

    def stop() -> None:
        loop.run_until_complete(pool.close())
        loop.close()

    return one_round, stop


def make_simple(fn: Callable[[bytes], object], feeds: list[tuple[str, bytes]]) -> Callable[[], int]:
    bodies = [b for _, b in feeds]

    def one_round() -> int:
        failures = 0
        for body in bodies:
            try:
                fn(body)
            except Exception:
                failures += 1
        return failures

    return one_round


def time_rounds(contender: Contender, one_round: Callable[[], int], rounds: int) -> None:
    one_round()  # warm-up: imports, caches, lazily compiled tables
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        contender.failures = one_round()
        contender.rounds.append(time.perf_counter() - start)


def profile_round(one_round: Callable[[], int], top: int = 15) -> tuple[list[tuple[str, int, float, float]], float]:
    prof = cProfile.Profile()
    prof.enable()
    one_round()
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    entries = []
    raw = stats.stats  # type: ignore[attr-defined]
    for (filename, line, func), (_cc, nc, tt, ct, _callers) in raw.items():
        where = Path(filename).name if filename not in ("~", "") else ""
        label = f"{where}:{line}({func})" if where else func
        # the module's path in the project (pipelines/document/feedparse/read.py): from the last package folder named
        at = max(filename.rfind(marker) for marker in ("/pipelines/", "/crawler/", "/schemas/"))
        if at >= 0:
            label = f"{filename[at + 1 :]}:{line}({func})"
        entries.append((label, nc, tt, ct))
    entries.sort(key=lambda e: e[2], reverse=True)
    return entries[:top], stats.total_tt  # type: ignore[attr-defined]


def run(rounds: int = 5, feedparser_rounds: int = 1) -> ParseResult:
    from lxml import etree

    feeds = load_feeds()
    total = sum(len(b) for _, b in feeds)
    ours_round, ours_rows = make_ours(feeds)

    import fastfeedparser
    import feedparser

    from pipelines.document.checks import RULES

    contenders = [
        (
            Contender("lxml etree.fromstring (floor)", "build the tree only"),
            make_simple(etree.fromstring, feeds),
            rounds,
        ),
        (Contender("fastfeedparser.parse", "parse to a dict"), make_simple(fastfeedparser.parse, feeds), rounds),
        (
            Contender("feedcensus full path", f"parse + tally + {len(RULES)} checks + rows + Arrow batches"),
            ours_round,
            rounds,
        ),
        (
            Contender("feedparser.parse", "parse to a dict (sanitizes HTML)"),
            make_simple(feedparser.parse, feeds),
            feedparser_rounds,
        ),
    ]
    results = []
    for contender, fn, n in contenders:
        print(f"  timing {contender.name} ({n} rounds)...", file=sys.stderr, flush=True)
        time_rounds(contender, fn, n)
        results.append(contender)
    # The all-cores figure: the same path through the crawl's document pool, one worker per core.
    from pipelines.document.jobs import default_workers

    cores = default_workers() + 1
    pooled, stop = make_pooled(feeds, cores)
    try:
        contender = Contender(
            f"feedcensus full path, {cores} worker processes", f"the same, in the crawl's document pool ({cores} cores)"
        )
        print(f"  timing {contender.name} ({rounds} rounds)...", file=sys.stderr, flush=True)
        time_rounds(contender, pooled, rounds)
        results.insert(3, contender)
    finally:
        stop()
    profile, profile_total = profile_round(ours_round)
    by_name = {c.name: c for c in results}
    ours = by_name["feedcensus full path"].mbps(total)
    ffp = by_name["fastfeedparser.parse"].mbps(total)
    fp = by_name["feedparser.parse"].mbps(total)
    targets = [
        ("ours >= 0.5x fastfeedparser", f"{ours / ffp:.2f}x", ours / ffp >= 0.5),
        ("ours >= 25x feedparser", f"{ours / fp:.1f}x", ours / fp >= 25),
    ]
    result = ParseResult(len(feeds), total, results, profile, profile_total, ours_rows(), targets)
    result.markdown = render(result)
    return result


def render(r: ParseResult) -> str:
    ffp = next(c for c in r.contenders if c.name == "fastfeedparser.parse").mbps(r.total_bytes)
    fp = next(c for c in r.contenders if c.name == "feedparser.parse").mbps(r.total_bytes)
    rows = []
    for c in r.contenders:
        speed = c.mbps(r.total_bytes)
        rows.append(
            [
                c.name,
                c.what,
                len(c.rounds),
                f"{median(c.rounds) * 1000:.0f}",
                f"{speed:.1f}",
                f"{speed / ffp:.2f}x",
                f"{speed / fp:.1f}x",
                c.failures,
            ]
        )
    table = md_table(
        ["contender", "work", "rounds", "median ms/round", "MB/s", "vs fastfeedparser", "vs feedparser", "raised"], rows
    )
    targets = md_table(["target", "measured", "met"], [[t, m, "yes" if ok else "**NO**"] for t, m, ok in r.targets])
    prof = md_table(
        ["function", "calls", "tottime s", "cumtime s", "share of round"],
        [[f"`{f}`", n, f"{tt:.3f}", f"{ct:.3f}", f"{tt / r.profile_total:.0%}"] for f, n, tt, ct in r.profile],
    )
    rows_line = ", ".join(f"{t} {n:,}" for t, n in sorted(r.rows.items()))
    by_name = {c.name: c for c in r.contenders}
    budget = 2 * median(by_name["fastfeedparser.parse"].rounds)
    floor = median(by_name["lxml etree.fromstring (floor)"].rounds)
    ours = median(by_name["feedcensus full path"].rounds)
    budget_line = (
        f"At 0.5x fastfeedparser a round would have to take at most {budget * 1000:.0f} ms; building the lxml "
        f"trees alone takes {floor * 1000:.0f} ms ({floor / budget:.0%} of that budget), ours takes {ours * 1000:.0f} ms."
    )
    return (
        f"{r.files} feeds, {r.total_bytes / 1e6:.1f} MB, in memory; one process; median of the rounds shown "
        f"(one warm-up round first, not counted). feedparser is over 50x slower than the rest, so it gets fewer rounds.\n\n"
        f"{table}\n\n{targets}\n\n{budget_line}\n\n"
        f"Rows one round of ours produces (then turned into Arrow record batches): {rows_line}.\n\n"
        f"Where the time goes: cProfile of one round of ours (total {r.profile_total:.2f} s under the profiler, "
        f"which inflates Python-level calls), top {len(r.profile)} functions by own time:\n\n{prof}\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--feedparser-rounds", type=int, default=1)
    args = parser.parse_args(argv)
    result = run(args.rounds, args.feedparser_rounds)
    print(result.markdown)


if __name__ == "__main__":
    main()
