"""One politeness budget per host for the whole job, held across processes (issue #41).

A coordinator and two workers share a Redis frontier and crawl feeds on one loopback host; the server
logs when each request arrives. Before, each process had its own budget: with three processes the host
got three requests in flight at once and gaps of a few milliseconds between them. Now every request
taken holds a slot of its host in Redis until its response is in (crawler/frontier/scheduler.py), so
the host sees what one process would give it.
"""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

from crawler.demo.routes import Route, Web
from tests.conftest import QUICK_CRAWL, TimedServer, read_table
from tests.redisserver import RedisServer, redis_server
from tests.test_distributed import start

__all__ = ["redis_server"]  # the fixture, imported for the tests below

FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://example.org/</link>'
    b"<description>d</description></channel></rss>"
)
BASE = [
    *QUICK_CRAWL, "-s", "FEEDCENSUS_FRONTIER_HEARTBEAT=0.5", "-s", "RETRY_TIMES=0", "-s", "RANDOMIZE_DOWNLOAD_DELAY=False",
    "--no-reflexive", "--log-level", "WARNING",
]  # fmt: skip


def feeds_web(n: int, delay: float) -> tuple[Web, list[str]]:
    web = Web()
    paths = [f"/f{i}.xml" for i in range(n)]
    for path in paths:
        web.add(path, Route(FEED, headers={"Content-Type": "application/rss+xml"}, delay=delay))
    web.add("/robots.txt", Route(b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"}))
    return web, paths


def crawl_three(redis: RedisServer, out: Path, server: TimedServer, paths: list[str], settings: list[str]) -> None:
    """A coordinator and two workers crawl ``paths`` as one job; each exits 0."""
    urls = [a for p in paths for a in ("--url", server.url_for(p))]
    procs = [
        start("worker", "--frontier", redis.url, "--job", "j", "--out", str(out), *settings),
        start("worker", "--frontier", redis.url, "--job", "j", "--out", str(out), *settings),
        start("crawl", *urls, "--out", str(out), "--job-id", "j", "--frontier", redis.url, *settings),
    ]
    results: list[tuple[subprocess.Popen[str], str]] = []
    for proc in reversed(procs):
        _, err = proc.communicate(timeout=300)
        results.append((proc, err))
    for proc, err in results:
        assert proc.returncode == 0, err[-3000:]
        assert "Traceback" not in err, err[-3000:]
    outcomes = [r["outcome"] for r in read_table(out, "fetch_log").to_pylist() if r["url"].endswith(".xml")]
    assert sorted(outcomes) == ["feed"] * len(paths), outcomes


def test_three_processes_keep_the_delay_between_requests_to_a_host(redis_server: RedisServer, tmp_path: Path) -> None:
    """DOWNLOAD_DELAY=0.25 with one request at a time: no two requests to the host start closer than half the
    delay (Scrapy's own randomised delay may go that low), whichever process sends them, and robots.txt is
    read once. Before: gaps of a few milliseconds once the three processes all had requests, and one
    robots.txt per process."""
    web, paths = feeds_web(48, delay=0.05)
    settings = [*BASE, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", "DOWNLOAD_DELAY=0.25"]
    with TimedServer(web) as server:
        crawl_three(redis_server, tmp_path / "out", server, paths, settings)
        log = sorted(server.log)
    feeds = [t for t, target in log if target.endswith(".xml")]
    assert len(feeds) == len(paths)
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(feeds)]
    assert min(gaps) >= 0.125, gaps
    workers = read_table(tmp_path / "out", "workers").to_pylist()
    assert len(workers) == 3 and sum(w["requests"] for w in workers) >= len(paths), workers
    # robots.txt read once for the job, with one row, however many processes asked the host
    assert [target for _, target in log].count("/robots.txt") == 1
    fetch_log = read_table(tmp_path / "out", "fetch_log").to_pylist()
    assert sum(1 for r in fetch_log if r["url"].endswith("/robots.txt")) == 1
    # (Which process fetches is the frontier's choice: here one often holds the host's one slot throughout.)


def test_three_processes_hold_the_concurrency_per_host(redis_server: RedisServer, tmp_path: Path) -> None:
    """CONCURRENT_REQUESTS_PER_DOMAIN=2, no delay, each response 0.2 s, and each process holds one request
    at a time (CONCURRENT_REQUESTS=1): two processes must share the host's budget, and the third must not
    add a request to it. Three arrivals within 0.18 s would be three at once. Before: three at once."""
    web, paths = feeds_web(80, delay=0.2)
    settings = [
        *BASE,
        "-s",
        "CONCURRENT_REQUESTS_PER_DOMAIN=2",
        "-s",
        "DOWNLOAD_DELAY=0",
        "-s",
        "CONCURRENT_REQUESTS=1",
    ]
    with TimedServer(web) as server:
        crawl_three(redis_server, tmp_path / "out", server, paths, settings)
        log = sorted(server.log)
    feeds = [t for t, target in log if target.endswith(".xml")]
    assert len(feeds) == len(paths)
    at_once = max(sum(1 for s in feeds if t - 0.18 < s <= t) for t in feeds)
    assert at_once <= 2, [round(t - feeds[0], 2) for t in feeds]
    assert at_once == 2  # the budget is used, not only held
    workers = read_table(tmp_path / "out", "workers").to_pylist()
    assert sum(1 for w in workers if w["requests"]) >= 2, workers  # by two processes at least


def test_a_worker_runs_with_the_jobs_settings_and_refuses_its_own_that_contradict(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A worker joins with --frontier, --job and --out alone; a -s that contradicts the job is one line, exit 2."""
    from crawler.frontier import Frontier
    from tests.conftest import run_cli

    frontier = Frontier.connect(redis_server.url, "j", "coordinator")
    frontier.share_settings({"DOWNLOAD_DELAY": "0.5", "ROBOTSTXT_OBEY": False})
    frontier.register()
    frontier.share_hosts([])
    out = str(tmp_path / "out")
    for given, named in (
        (["-s", "DOWNLOAD_DELAY=2"], "DOWNLOAD_DELAY"),
        (["-s", "AUTOTHROTTLE_ENABLED=False"], "AUTOTHROTTLE_ENABLED"),
    ):
        proc = run_cli("worker", "--frontier", redis_server.url, "--job", "j", "--out", out, *given, timeout=60)
        assert proc.returncode == 2, proc.stderr[-2000:]
        [line] = proc.stderr.strip().splitlines()
        assert named in line and "job j runs with" in line, line
    frontier.close()
