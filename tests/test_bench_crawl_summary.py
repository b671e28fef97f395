"""The crawl benchmark reads the document workers' CPU and memory off the crawl's summary line
(``benchmarks/bench_crawl.py``: ``WORKERS_LINE``). When the line's wording changed ("1 process(es)" became
"1 process"), the benchmark silently stopped splitting the crawl's CPU from the workers'. The line the
crawl prints, for one worker and for several, must still be read."""

from __future__ import annotations

import sys

import pytest

from crawler.extensions.progress import workers_line
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_crawl


@pytest.mark.parametrize("processes", [1, 3])
def test_the_benchmark_reads_the_workers_line_the_crawl_prints(processes: int) -> None:
    line = workers_line(
        {
            "feedcensus/workers/processes": processes,
            "feedcensus/workers/documents": 10000,
            "feedcensus/workers/cpu_seconds": 23.94,
            "feedcensus/workers/peak_rss_mb": 94.2,
        }
    )
    found = bench_crawl.WORKERS_LINE.search(line)
    assert found is not None, line
    assert found.groups() == (str(processes), "23.9", "94")
