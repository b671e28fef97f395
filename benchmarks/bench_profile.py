"""Benchmark 8: where the reactor thread's time goes, with the per-feed work in the crawling process and in workers.

``feedcensus crawl`` over the generated loopback web (``loopweb.py``, as in benchmark 2) under
``cProfile``, which sees the main thread only: the reactor thread, where Scrapy's engine, the spider,
the middlewares and the pipelines run. Two runs of the same code: ``FEEDCENSUS_WORKERS=0`` (the
per-feed path on the reactor thread, as before the document pool) and the default pool. For each,
the top functions by own time and the share of the profiled time of the project's own code.

    python benchmarks/bench_profile.py [--sites 3000] [--top 15]
"""

from __future__ import annotations

import argparse
import pstats
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import bench_crawl
from common import PYTHON, REPO, WORK, md_table

PROFILE_DIR = WORK / "profile"
OWN = ("/crawler/", "/pipelines/", "/schemas/")


@dataclass(slots=True)
class Profiled:
    label: str
    total: float  # seconds of profiled time (main thread, inflated by the profiler)
    top: list[tuple[str, int, float, float]]  # (function, calls, tottime, cumtime)
    own: float  # own time of the project's functions
    by_part: dict[str, float]  # cumulative time of a few entry points of ours
    summary: str  # the crawl's summary lines


#: Entry points of ours whose cumulative time is reported (the reactor-side cost of each part).
PARTS = {
    "FeedPipeline.process_item": ("pipelines/feed.py", "process_item"),
    "autodiscovery middleware": ("crawler/middlewares/autodiscovery.py", "process_spider_output_async"),
    "CensusSpider.parse": ("crawler/spiders/census.py", "parse"),
    "ParquetPipeline.process_item": ("crawler/extensions/dataset.py", "process_item"),
}


def _label(filename: str, line: int, func: str) -> str:
    if any(marker in filename for marker in OWN) and filename.startswith(str(REPO)):
        return f"{Path(filename).relative_to(REPO)}:{line}({func})"
    if "site-packages/" in filename:
        return f"{filename.split('site-packages/')[1]}:{line}({func})"
    return f"{Path(filename).name}:{line}({func})" if filename not in ("~", "") else func


def read_profile(path: Path, label: str, summary: str, top: int) -> Profiled:
    stats = pstats.Stats(str(path))
    raw = stats.stats  # type: ignore[attr-defined]
    entries = [(_label(f, ln, fn), nc, tt, ct) for (f, ln, fn), (_cc, nc, tt, ct, _callers) in raw.items()]
    entries.sort(key=lambda e: e[2], reverse=True)
    own = sum(tt for (f, _ln, _fn), (_cc, _nc, tt, _ct, _c) in raw.items() if any(m in f for m in OWN))
    parts: dict[str, float] = {}
    for name, (where, func) in PARTS.items():
        parts[name] = max(
            (ct for (f, _ln, fn), (_cc, _nc, _tt, ct, _c) in raw.items() if f.endswith(where) and fn == func),
            default=0.0,
        )
    return Profiled(label, stats.total_tt, entries[:top], own, parts, summary)  # type: ignore[attr-defined]


def profile_crawl(web: bench_crawl.Web, sites: int, workers: str, top: int) -> Profiled:
    seeds, _ = bench_crawl.write_inputs(web, sites)
    out = PROFILE_DIR / f"out-{workers}"
    shutil.rmtree(out, ignore_errors=True)
    PROFILE_DIR.mkdir(parents=True, exist_ok=True)
    prof = PROFILE_DIR / f"crawl-workers-{workers}.prof"
    settings = {**bench_crawl.POLITENESS_OFF, **bench_crawl.CONCURRENCY, "FEEDCENSUS_WORKERS": workers}
    argv = [PYTHON, "-m", "cProfile", "-o", str(prof), "-m", "crawler.cli", "crawl", "--seeds", str(seeds)]
    argv += ["--out", str(out), "--no-reflexive", "--log-level", "WARNING", *bench_crawl.settings_args(settings)]
    web.reset()
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    shutil.rmtree(out, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"profiled crawl failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    summary = "\n".join(line for line in proc.stderr.splitlines() if line.startswith(("feeds:", "workers:")))
    label = (
        "per-feed work on the reactor thread (FEEDCENSUS_WORKERS=0)"
        if workers == "0"
        else f"document pool (FEEDCENSUS_WORKERS={workers})"
    )
    return read_profile(prof, label, summary, top)


def markdown(runs: list[Profiled], sites: int) -> str:
    parts = md_table(
        ["part (cumulative, reactor thread)", *[p.label for p in runs]],
        [[name, *[f"{p.by_part[name]:.2f} s ({p.by_part[name] / p.total:.0%})" for p in runs]] for name in PARTS]
        + [["all the project's own functions (own time)", *[f"{p.own:.2f} s ({p.own / p.total:.0%})" for p in runs]]]
        + [["profiled total", *[f"{p.total:.2f} s" for p in runs]]],
    )
    blocks = [
        f"`feedcensus crawl` of {sites:,} sites of the generated web (benchmark 2's settings) under cProfile, "
        "which sees the reactor (main) thread only and inflates Python-level calls; the same code, run twice.\n",
        parts,
    ]
    for p in runs:
        rows = [[f"`{fn}`", calls, f"{tt:.3f}", f"{ct:.3f}", f"{tt / p.total:.1%}"] for fn, calls, tt, ct in p.top]
        blocks.append(f"\nTop functions by own time, {p.label} ({p.summary.replace(chr(10), '; ')}):\n")
        blocks.append(md_table(["function", "calls", "tottime s", "cumtime s", "share"], rows))
    return "\n".join(blocks) + "\n"


def run(sites: int = 3000, top: int = 15) -> str:
    web = bench_crawl.Web(sites)
    try:
        runs = [profile_crawl(web, sites, w, top) for w in ("0", "auto")]
    finally:
        web.stop()
    runs[1].label = "document pool (FEEDCENSUS_WORKERS=auto)"
    return markdown(runs, sites)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=3000)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    print(run(args.sites, args.top))


if __name__ == "__main__":
    main()
