"""Benchmark 9: cores and document workers (issue 15). Benchmark 2's crawl (``bench_crawl.py``) with 0, 1 and
2 document workers, on one core and on two (``taskset``).

    python benchmarks/run_all.py --only scaling
"""

from __future__ import annotations

import shutil

from bench_crawl import CONCURRENCY, CRAWL_DIR, POLITENESS_OFF, Web, measure, settings_args, write_inputs
from common import FEEDCENSUS, md_table

#: (cores the crawl may use, FEEDCENSUS_WORKERS) for the scaling table.
SCALING = [("0", "0"), ("0", "1"), ("0,1", "0"), ("0,1", "1"), ("0,1", "2")]


def scaling(sites: int) -> str:
    """The same crawl with 0, 1 and 2 document workers, on one core and on two (``taskset``): Markdown."""
    web = Web(sites)
    rows: list[list[object]] = []
    base: float | None = None
    try:
        seeds, _ = write_inputs(web, sites)
        for cores, workers in SCALING:
            out = CRAWL_DIR / f"n{sites}" / "out-scaling"
            shutil.rmtree(out, ignore_errors=True)
            settings = {**POLITENESS_OFF, **CONCURRENCY, "FEEDCENSUS_WORKERS": workers}
            argv = ["taskset", "-c", cores, FEEDCENSUS, "crawl", "--seeds", str(seeds), "--out", str(out)]
            argv += ["--no-reflexive", "--log-level", "WARNING", *settings_args(settings)]
            r = measure(web, f"ours-w{workers}", sites, argv)
            shutil.rmtree(out, ignore_errors=True)
            base = base or r.per_min
            rows.append(
                [
                    len(cores.split(",")),
                    workers,
                    f"{r.per_min:,.0f}" if r.valid else "INVALID",
                    f"{r.per_min / base:.2f}x",
                    f"{r.crawl_cpu:.1f}",
                    f"{r.worker_cpu:.1f}",
                    f"{r.cpu / r.responses * 1000:.2f}" if r.responses else "-",
                    f"{r.m.max_rss_mib:.0f}" + (f" + {r.workers} x {r.worker_rss_mib:.0f}" if r.workers else ""),
                    f"{r.load_before:.1f} / {r.load_after:.1f}",
                ]
            )
    finally:
        web.stop()
    headers = [
        "cores",
        "workers",
        "responses/min",
        "vs 1 core, 0 workers",
        "crawl process CPU s",
        "workers CPU s",
        "CPU ms/response (all)",
        "peak RSS MiB (crawl + workers)",
        "load avg before / after",
    ]
    return f"{sites:,} sites, benchmark 2's web and settings, one run each.\n\n" + md_table(headers, rows) + "\n"
