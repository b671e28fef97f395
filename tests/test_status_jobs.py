"""``feedcensus status`` without ``--job``: every job on a real Redis frontier, one line each.

The jobs are put on the frontier with the frontier's own API (crawler/frontier/), as a coordinator and its
workers would: one still seeding, one seeded that no worker has joined, one running, one finished. Before,
``status`` refused to run without ``--job`` (argparse's usage error, exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.frontier import Frontier
from tests.conftest import run_cli
from tests.redisserver import RedisServer


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


def put_jobs(url: str) -> None:
    seeding = Frontier.connect(url, "seeding")
    seeding.share_hosts(["a.example"])  # the coordinator's first step
    seeding.push("http://a.example/", "x", fingerprint="fp")
    seeded = Frontier.connect(url, "seeded")
    seeded.share_hosts(["b.example"])
    seeded.push("http://b.example/1", "x", fingerprint="fp1")
    seeded.push("http://b.example/2", "x", fingerprint="fp2")
    seeded.mark_seeded()
    running = Frontier.connect(url, "2026:running", worker="w1")  # a job id may hold a colon
    running.register()
    running.push("http://c.example/", "x", fingerprint="fp")
    running.mark_seeded()
    Frontier.connect(url, "2026:running", worker="w2").register()
    finished = Frontier.connect(url, "finished")
    finished.share_hosts(["d.example"])
    finished.mark_seeded()
    finished.finish()
    for frontier in (seeding, seeded, running, finished):
        frontier.close()


def test_status_without_job_lists_every_job(redis: RedisServer) -> None:
    empty = run_cli("status", "--frontier", redis.url)
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.strip() == f"no job on the frontier {redis.url}"

    put_jobs(redis.url)
    proc = run_cli("status", "--frontier", redis.url)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    head, *lines = proc.stdout.strip().splitlines()
    assert head == f"4 jobs on the frontier {redis.url}"
    rows = {line.split()[0]: line.split()[1:] for line in lines}
    assert rows == {
        "2026:running": ["running", "queued", "1", "in", "flight", "0", "workers", "2"],
        "finished": ["finished", "queued", "0", "in", "flight", "0", "workers", "0"],
        "seeded": ["seeded", "queued", "2", "in", "flight", "0", "workers", "0"],
        "seeding": ["seeding", "queued", "1", "in", "flight", "0", "workers", "0"],
    }

    data = json.loads(run_cli("status", "--frontier", redis.url, "--json").stdout)
    assert [(j["job"], j["job_state"], j["queued"], len(j["workers"])) for j in data["jobs"]] == [
        ("2026:running", "running", 1, 2),
        ("finished", "finished", 0, 0),
        ("seeded", "seeded", 2, 0),
        ("seeding", "seeding", 1, 0),
    ]
    # --job still shows one job in full.
    one = run_cli("status", "--frontier", redis.url, "--job", "2026:running")
    assert one.returncode == 0 and "job 2026:running on" in one.stdout and "w1" in one.stdout, one.stderr


def test_status_without_job_on_an_unreachable_frontier_is_one_line(redis: RedisServer) -> None:
    url = redis.url
    redis.stop()
    proc = run_cli("status", "--frontier", url)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
