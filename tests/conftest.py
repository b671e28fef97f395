"""Shared fixtures: the shared corpus, the demo web server, running the CLI for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from crawler.demo.routes import Web
from crawler.demo.webserver import WebServer

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def demo_server() -> Iterator[object]:
    from crawler.demo.webserver import serve_demo

    server = serve_demo()
    try:
        yield server
    finally:
        server.stop()


class TimedServer(WebServer):
    """A demo WebServer that also logs every request's target with the (monotonic) time it arrived:
    politeness measured from the server's side."""

    def __init__(self, web: Web, host: str = "127.0.0.1") -> None:
        super().__init__(web, host=host)
        self.log: list[tuple[float, str]] = []
        self._log_lock = threading.Lock()

    def _hit(self, target: str) -> None:
        super()._hit(target)
        with self._log_lock:
            self.log.append((time.monotonic(), target))


#: Settings every test crawl passes: no AutoThrottle delays, and a retry waits 0.05 s, then 0.1 s, instead of 1 s and
#: 2 s (the demo web's /broken-g/ answers 500 to all three tries). test_retry.py tests the waits' arithmetic, and
#: test_hostile_crawl.py that a crawl waits as long as Retry-After says (longer than these waits).
QUICK_CRAWL = ("-s", "AUTOTHROTTLE_ENABLED=False", "-s", "FEEDCENSUS_RETRY_BACKOFF_BASE=0.05")


def demo_seeds_file(work: Path, server: object) -> Path:
    """A seeds file listing the demo web's seed URLs on ``server``."""
    from crawler.demo.webserver import demo_seeds

    seeds = work / "seeds.txt"
    seeds.write_text("\n".join(demo_seeds(server.url)) + "\n", encoding="utf-8")  # type: ignore[attr-defined]
    return seeds


def crawl_demo(work: Path, server: object, job_id: str, *args: str) -> Path:
    """Crawl the demo web on ``server`` into ``work/out`` as job ``job_id``; return the dataset root."""
    out = work / "out"
    proc = run_cli(
        "crawl", "--seeds", str(demo_seeds_file(work, server)), "--out", str(out), "--job-id", job_id,
        *QUICK_CRAWL, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8", *args,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return out


def run_cli(
    *args: str, timeout: float = 300, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``feedcensus ARGS`` in a fresh interpreter, as a user would."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "crawler.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd or REPO,
        env=full_env,
        check=False,
    )


def run_cli_peak_rss(*args: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], float]:
    """Like :func:`run_cli`, and the peak RSS in MiB of that process alone (``wait4``, not all children so far)."""
    import threading

    full_env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "crawler.cli", *args]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=full_env)
    out: dict[str, str] = {}
    readers = [
        threading.Thread(target=lambda name=name, pipe=pipe: out.__setitem__(name, pipe.read()))
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    for reader in readers:
        reader.join()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    done = subprocess.CompletedProcess(argv, proc.returncode, out.get("stdout", ""), out.get("stderr", ""))
    return done, usage.ru_maxrss / 1024


def copy_dataset(src: Path, dest: Path) -> Path:
    """A copy of the dataset at ``src`` at ``dest`` (so a test can change it without touching a shared one)."""
    shutil.copytree(src, dest)
    return dest


#: What ``feedcensus worker`` prints when it starts on a job already finished (it writes nothing then).
LATE_WORKER = "is finished: nothing to do"


def processes_that_wrote(*worker_logs: str) -> int:
    """The ``workers`` rows a job of a coordinator and these workers has: one a process, none for a worker
    that started once the coordinator had finished the job (on a busy machine a small job can end first)."""
    return 1 + sum(LATE_WORKER not in log for log in worker_logs)


def read_table(out: Path | str, table: str) -> pa.Table:
    """A table of a dataset read back with pyarrow, hive partitions included."""
    return ds.dataset(Path(out) / table, format="parquet", partitioning="hive").to_table()


#: Two URLs can reach one feed (the demo's OPML lists /blog-a/rss, which redirects to the /blog-a/feed.xml
#: its page advertises): the one requested first is the feed, the other a duplicate. In one process the
#: order is fixed; in a job shared by several it is a race between them (seen in a full suite run on
#: 2026-11-24). So shared and lone runs compare feeds and duplicates by the URL they end at.
RACED_OUTCOMES = ("feed", "duplicate")


def fetch_outcomes(out: Path) -> Counter[tuple[str, str]]:
    """(url, outcome) of every fetch_log row but robots.txt fetches (each process of a shared job asks
    for its own), a feed or duplicate by the URL it ended at (:data:`RACED_OUTCOMES`)."""
    return Counter(
        ((r["final_url"] or r["url"]) if r["outcome"] in RACED_OUTCOMES else r["url"], r["outcome"])
        for r in read_table(out, "fetch_log").to_pylist()
        if r["outcome"] != "robots"
    )


def feed_ends(out: Path) -> dict[str, str]:
    """Each feed's requested URL -> the URL it ended at (:data:`RACED_OUTCOMES`)."""
    return {r["url"]: r["final_url"] or r["url"] for r in read_table(out, "feeds").to_pylist()}


def feed_row(url: str, at: object, **extra: object) -> dict[str, Any]:
    """A minimal ``feeds`` row of a well-formed RSS 2.0 feed fetched at ``at``, for datasets written by hand."""
    row: dict[str, Any] = {
        "url": url, "final_url": url, "status": 200, "format": "rss", "version": "2.0", "well_formed": True,
        "item_count": 0, "discovered_via": "url", "bytes": 100, "fetched_at": at,
    }  # fmt: skip
    row.update(extra)
    return row


def assert_usage_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    """A command refused its input the way every feedcensus command does: one line on stderr, exit 2."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert proc.stdout == ""
