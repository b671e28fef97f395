"""Benchmark 7a: what WARC capture (``crawl --warc``) costs a crawl.

The generated loopback web of benchmark 2 (``loopweb.py``): N sites, a home page advertising one
feed each. ``feedcensus crawl --seeds`` over the home pages, politeness off, the project's own
concurrency, run without and with ``--warc``, alternating (plain, warc, warc, plain, ...) so that
load from other processes hits both alike. Reported: wall time, CPU seconds, responses per minute
(counted by the server), peak RSS, the WARC bytes written per MB received, and the same-run ratios.

    python benchmarks/bench_capture.py [--sites 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from bench_crawl import CONCURRENCY, CRAWL_DIR, POLITENESS_OFF, Run, Web, measure, settings_args, write_inputs
from common import FEEDCENSUS, md_table, median


@dataclass(slots=True)
class Pair:
    plain: Run
    warc: Run
    warc_bytes: int
    received_bytes: float  # as counted by the server


def run_one(web: Web, sites: int, seeds: Path, *, warc: bool) -> tuple[Run, int, float]:
    base = CRAWL_DIR / f"capture-n{sites}"
    out, folder = base / "out", base / "warc"
    for d in (out, folder):
        shutil.rmtree(d, ignore_errors=True)
    argv = [FEEDCENSUS, "crawl", "--seeds", str(seeds), "--out", str(out), "--no-reflexive", "--log-level", "WARNING"]
    if warc:
        argv += ["--warc", str(folder)]
    run = measure(web, "ours+warc" if warc else "ours", sites, argv + settings_args({**POLITENESS_OFF, **CONCURRENCY}))
    received = float(web.stats().get("bytes", 0))
    written = sum(p.stat().st_size for p in folder.glob("*.warc.gz")) if warc else 0
    shutil.rmtree(base, ignore_errors=True)
    return run, written, received


def run(sites: int, repeats: int) -> list[Pair]:
    web = Web(sites)
    pairs = []
    try:
        seeds, _ = write_inputs(web, sites)
        for n in range(repeats):
            order = (False, True) if n % 2 == 0 else (True, False)
            got = {warc: run_one(web, sites, seeds, warc=warc) for warc in order}
            plain, _, received = got[False]
            warc_run, written, _ = got[True]
            pairs.append(Pair(plain, warc_run, written, received))
    finally:
        web.stop()
    return pairs


def markdown(pairs: list[Pair], sites: int) -> str:
    rows = []
    for n, p in enumerate(pairs, 1):
        for r in (p.plain, p.warc):
            rows.append(
                [
                    n,
                    r.crawler,
                    f"{r.m.wall:.1f}",
                    f"{r.m.cpu:.1f}",
                    f"{r.per_min:,.0f}",
                    f"{r.m.max_rss_mib:.0f}",
                    r.feeds,
                    f"{p.warc_bytes / 1e6:.1f}" if r is p.warc else "-",
                    f"{r.load_before:.1f} / {r.load_after:.1f}",
                    "yes" if r.valid else "NO",
                ]
            )
    valid = [p for p in pairs if p.plain.valid and p.warc.valid]
    rate = median([p.warc.per_min / p.plain.per_min for p in valid]) if valid else float("nan")
    cpu = median([p.warc.m.cpu / p.plain.m.cpu for p in valid]) if valid else float("nan")
    ratio = median([p.warc_bytes / p.received_bytes for p in valid if p.received_bytes]) if valid else float("nan")
    table = md_table(
        [
            "pair",
            "run",
            "wall s",
            "CPU s",
            "responses/min",
            "peak RSS MiB",
            "feeds",
            "WARC MB",
            "load before / after",
            "valid",
        ],
        rows,
    )
    return (
        f"{sites:,} sites ({2 * sites:,} responses), each run into a fresh dataset (and WARC folder); runs alternate.\n\n"
        f"{table}\n\n"
        f"With `--warc` / without, median of {len(valid)} pairs: rate {rate:.2f}x, CPU {cpu:.2f}x; "
        f"WARC bytes written per byte the server sent: {ratio:.2f}.\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    pairs = run(args.sites, args.repeats)
    print(markdown(pairs, args.sites))
    if not all(p.plain.valid and p.warc.valid for p in pairs):
        sys.exit(1)


if __name__ == "__main__":
    main()
