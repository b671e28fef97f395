"""A host that says "slow down" is slowed for the whole job, not only by the worker that heard it (issue #41).

A coordinator and a worker share a Redis frontier; one host serves 200 feeds (0.2 s each) and answers its 40th request
with 429 and ``Retry-After: 6``. The server logs when each request arrives. The worker that gets the 429 puts the
pause in the frontier; the other reads it with its next heartbeat (0.5 s here), so past that and a margin no
request reaches the host inside the window. Before, only the process that got the 429 paused: the other went on.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from crawler.demo.routes import Entry, Route, Web
from tests.conftest import QUICK_CRAWL, TimedServer, read_table
from tests.redisserver import RedisServer, redis_server
from tests.test_distributed import start

__all__ = ["redis_server"]  # the fixture, imported for the test below

RETRY_AFTER = 6
HEARTBEAT = 0.5
FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://example.org/</link>'
    b"<description>d</description></channel></rss>"
)
SETTINGS = [
    *QUICK_CRAWL, "-s", f"FEEDCENSUS_FRONTIER_HEARTBEAT={HEARTBEAT}", "-s", "ROBOTSTXT_OBEY=False",
    "-s", "RETRY_TIMES=0", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=4", "--no-reflexive", "--log-level", "WARNING",
    # The host's budget (4 at once for the job) is shared by both processes: each starts 2 at most.
    "-s", "CONCURRENT_REQUESTS=2",
]  # fmt: skip


class RefusesOnce(Web):
    """A Web that answers the 40th request with 429 and ``Retry-After``, whichever feed it asks for: both
    processes are fetching the host by then, whatever order the frontier hands the feeds out in."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after
        self.seen = 0
        self.refused: tuple[float, str] | None = None
        self._lock = threading.Lock()
        headers = {"Content-Type": "text/plain", "Retry-After": str(RETRY_AFTER)}
        self._refusal = Route(status=429, body=b"slow down", headers=headers)

    def match(self, host: str, target: str) -> Entry | None:
        entry = super().match(host, target)
        with self._lock:
            self.seen += 1
            if entry is None or self.refused is not None or self.seen < self.after:
                return entry
            self.refused = (time.monotonic(), target)
        return Entry(self._refusal, entry.modified)


def test_a_429_pauses_its_host_for_every_worker_of_the_job(redis_server: RedisServer, tmp_path: Path) -> None:
    web = RefusesOnce(after=40)
    feeds = [f"/f{n}.xml" for n in range(200)]
    for path in feeds:
        web.add(path, Route(FEED, headers={"Content-Type": "application/rss+xml"}, delay=0.2))
    out = tmp_path / "out"
    with TimedServer(web) as server:
        urls = [a for p in feeds for a in ("--url", server.url_for(p))]
        worker = start("worker", "--frontier", redis_server.url, "--job", "j", "--out", str(out), *SETTINGS)
        coordinator = start(
            "crawl", *urls, "--out", str(out), "--job-id", "j", "--frontier", redis_server.url, *SETTINGS
        )
        _, err_c = coordinator.communicate(timeout=240)
        _, err_w = worker.communicate(timeout=240)
        log = list(server.log)
    assert coordinator.returncode == 0, err_c[-3000:]
    assert worker.returncode in (0, 1), err_w[-3000:]
    assert "Traceback" not in err_c + err_w
    assert web.refused is not None
    first_429, refused = web.refused
    inside = [
        (round(t - first_429, 2), target)
        for t, target in log
        if first_429 + HEARTBEAT + 1.0 < t < first_429 + RETRY_AFTER - 0.5
    ]
    assert inside == [], (inside, [(round(t - first_429, 2), target) for t, target in log])
    # Both processes took part, nothing else was refused or dropped, and the host was asked again after its window.
    workers = read_table(out, "workers").to_pylist()
    assert len(workers) == 2 and all(w["requests"] for w in workers), workers
    outcomes = {str(r["url"]).rsplit("/", 1)[-1]: r["outcome"] for r in read_table(out, "fetch_log").to_pylist()}
    assert outcomes.pop(refused.lstrip("/")) == "http_error"
    assert set(outcomes.values()) == {"feed"} and len(outcomes) == len(feeds) - 1, outcomes
    assert any(t >= first_429 + RETRY_AFTER - 0.5 for t, _ in log)
