"""A replay on many cores: ``replay --frontier`` queues the archive's inputs, ``worker --replay`` joins.

The demo web is crawled once with ``--warc`` (its server stopped before the replays). One replay
alone and one shared by a coordinator and a worker on a real Redis must give the same rows: each
URL fetched (served) once between the two processes, the same feeds and fetch_log outcomes.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import (
    QUICK_CRAWL,
    REPO,
    demo_seeds_file,
    feed_ends,
    fetch_outcomes,
    processes_that_wrote,
    read_table,
    run_cli,
)
from tests.redisserver import RedisServer

QUICK = [*QUICK_CRAWL, "-s", "FEEDCENSUS_FRONTIER_HEARTBEAT=0.5", "--no-reflexive"]


def test_a_replay_shared_by_two_processes_writes_what_one_writes(tmp_path: Path) -> None:
    from crawler.demo.webserver import serve_demo

    server = serve_demo()
    try:
        proc = run_cli(
            "crawl", "--seeds", str(demo_seeds_file(tmp_path, server)), "--out", str(tmp_path / "live"),
            "--warc", str(tmp_path / "warc"), *QUICK,
        )  # fmt: skip
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    archives = str(tmp_path / "warc" / "*.warc.gz")

    alone = tmp_path / "alone"
    proc = run_cli("replay", archives, "--out", str(alone), "--job-id", "r", *QUICK)
    assert proc.returncode == 0, proc.stderr[-2000:]

    shared = tmp_path / "shared"
    with RedisServer(tmp_path / "redis") as redis:
        coordinator = subprocess.Popen(
            [sys.executable, "-m", "crawler.cli", "replay", archives, "--out", str(shared), "--job-id", "r",
             "--frontier", redis.url, *QUICK],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert coordinator.stderr is not None
        join = next(line for line in coordinator.stderr if "more workers join with" in line)
        command = shlex.split(join.split("more workers join with feedcensus ", 1)[1])
        assert "--replay" not in command  # the job's archives travel with it, as its settings do
        worker = subprocess.run(
            [sys.executable, "-m", "crawler.cli", *command, *QUICK],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        coordinator.communicate(timeout=300)
    assert coordinator.returncode == 0, "coordinator failed"
    assert worker.returncode == 0, worker.stderr[-2000:]

    assert fetch_outcomes(shared) == fetch_outcomes(alone)

    def feeds(out: Path) -> dict[str, Any]:  # by the URL each ended at: see conftest.RACED_OUTCOMES
        ends = feed_ends(out)
        rows = read_table(out, "feeds").to_pylist()
        return {ends[r["url"]]: (r["format"], r["item_count"], r["content_hash"]) for r in rows}

    assert feeds(shared) == feeds(alone)
    assert all(r["warc_filename"] for r in read_table(shared, "feeds").to_pylist())  # served from the archive
    assert len(read_table(shared, "workers").to_pylist()) == processes_that_wrote(worker.stderr)
