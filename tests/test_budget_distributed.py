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
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crawler.demo.routes import Entry, Route, Web
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


def run_three(redis: RedisServer, out: Path, urls: list[str], settings: list[str]) -> None:
    """A coordinator and two workers crawl ``urls`` (``--url`` arguments) as job ``j``; each exits 0."""
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


def crawl_alone(redis: RedisServer, out: Path, urls: list[str], settings: list[str]) -> str:
    """One ``crawl --frontier`` of ``urls`` as job ``j``, no worker beside it; it exits 0. Its stderr."""
    crawl = start("crawl", *urls, "--out", str(out), "--job-id", "j", "--frontier", redis.url, *settings)
    _, err = crawl.communicate(timeout=300)
    assert crawl.returncode == 0, err[-3000:]
    return err


@contextmanager
def serving(servers: list[TimedServer]) -> Iterator[None]:
    for server in servers:
        server.start()
    try:
        yield
    finally:
        for server in servers:
            server.stop()


def crawl_three(redis: RedisServer, out: Path, server: TimedServer, paths: list[str], settings: list[str]) -> None:
    """A coordinator and two workers crawl ``paths`` as one job; each exits 0 and every feed is recorded."""
    run_three(redis, out, [a for p in paths for a in ("--url", server.url_for(p))], settings)
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


def test_the_jobs_settings_are_read_without_scrapys_deprecation_warnings() -> None:
    """The settings a job shares with its workers are those that differ from the project's, every name read.
    Reading them with Scrapy's ``get`` warned about DNS_RESOLVER (deprecated) in every ``crawl --frontier``."""
    from crawler.cli.jobsettings import job_settings
    from crawler.cli.options import project_settings

    settings = project_settings()
    settings.set("DOWNLOAD_DELAY", 2.5, priority="cmdline")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shared = job_settings(settings, project_settings())
    assert shared == {"DOWNLOAD_DELAY": 2.5}


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


def short_gaps(log: list[tuple[float, str]], delay: float) -> list[tuple[float, str, str]]:
    """The pairs of arrivals at one host closer than half ``delay``: (gap, earlier target, later target)."""
    ordered = sorted(log)
    return [(round(b[0] - a[0], 3), a[1], b[1]) for a, b in itertools.pairwise(ordered) if b[0] - a[0] < delay / 2]


def test_three_processes_keep_a_crawl_delay_learned_at_a_hand_over(redis_server: RedisServer, tmp_path: Path) -> None:
    """Three hosts whose robots.txt says ``Crawl-delay: 1`` (the job's delay is 0.1 s), each answered in 0.3 s:
    while one worker fetches robots.txt, the host's second request has been handed out (to that worker or
    another), and it waits for robots.txt. No arrival at a host, robots.txt included, may come within half
    the Crawl-delay of another. Before: the request that waited for robots.txt in the worker fetching it
    started as soon as robots.txt was in (0.3 s after it), and one that waited in another worker reserved
    its start with the job's 0.1 s, not the Crawl-delay (0.1 s after the first)."""
    hosts = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
    servers = []
    for host in hosts:
        web, paths = feeds_web(6, delay=0.05)
        robots = Route(b"User-agent: *\nCrawl-delay: 1\n", headers={"Content-Type": "text/plain"}, delay=0.3)
        web.add("/robots.txt", robots)
        servers.append(TimedServer(web, host=host))
    settings = [
        *BASE, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2", "-s", "DOWNLOAD_DELAY=0.1", "-s", "FEEDCENSUS_FRONTIER_PREFETCH=4",
    ]  # fmt: skip
    out = tmp_path / "out"
    with serving(servers):  # started first: a server's URLs name its port
        urls = [a for s in servers for p in paths for a in ("--url", s.url_for(p))]
        run_three(redis_server, out, urls, settings)
    outcomes = [r["outcome"] for r in read_table(out, "fetch_log").to_pylist() if r["url"].endswith(".xml")]
    assert sorted(outcomes) == ["feed"] * (len(urls) // 2), outcomes
    for server in servers:
        log = list(server.log)
        assert [target for _, target in log].count("/robots.txt") == 1
        assert len(log) == len(paths) + 1
        assert short_gaps(log, 1.0) == [], (server.host, [(round(t - log[0][0], 3), x) for t, x in sorted(log)])


class RefusesOnce(Web):
    """A Web that answers its ``after``-th feed request with 429 and ``Retry-After``."""

    def __init__(self, after: int, retry_after: int) -> None:
        super().__init__()
        self.after = after
        self.seen = 0
        self.refused: float | None = None
        self._lock = threading.Lock()
        headers = {"Content-Type": "text/plain", "Retry-After": str(retry_after)}
        self._refusal = Route(status=429, body=b"slow down", headers=headers)

    def match(self, host: str, target: str) -> Entry | None:
        entry = super().match(host, target)
        with self._lock:
            if entry is None or not target.endswith(".xml"):
                return entry
            self.seen += 1
            if self.refused is not None or self.seen < self.after:
                return entry
            self.refused = time.monotonic()
        return Entry(self._refusal, entry.modified)


def test_three_processes_keep_the_delay_when_a_retry_after_pause_ends(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A host answers its 12th feed request with 429 and ``Retry-After: 2``; two requests at a time, 0.4 s apart
    (each answered in 0.6 s, so a worker holds requests of the host when the pause comes). When the pause ends,
    every worker holding requests of the host would send them at once: no two arrivals may come closer than
    half the delay, and at most one (already handed out) inside the window. Before: the requests one worker
    held in its download slot all started at the pause's end, one reserved start for all of them."""
    web = RefusesOnce(after=12, retry_after=2)
    paths = [f"/f{i}.xml" for i in range(30)]
    for path in paths:
        web.add(path, Route(FEED, headers={"Content-Type": "application/rss+xml"}, delay=0.6))
    settings = [
        *BASE, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2", "-s", "DOWNLOAD_DELAY=0.4", "-s", "ROBOTSTXT_OBEY=False",
        "-s", "FEEDCENSUS_FRONTIER_PREFETCH=4",
    ]  # fmt: skip
    out = tmp_path / "out"
    with TimedServer(web) as server:
        run_three(redis_server, out, [a for p in paths for a in ("--url", server.url_for(p))], settings)
        log = sorted(server.log)
    assert web.refused is not None
    relative = [(round(t - web.refused, 3), target) for t, target in log]
    assert short_gaps(log, 0.4) == [], relative
    inside = [t for t, _ in log if web.refused + 0.01 < t < web.refused + 2 - 0.05]
    assert len(inside) <= 1, relative
    outcomes = [r["outcome"] for r in read_table(out, "fetch_log").to_pylist() if r["url"].endswith(".xml")]
    assert outcomes.count("feed") == len(paths) - 1, outcomes


def test_a_start_ticket_is_used_once_and_only_while_fresh() -> None:
    """The starts a take reserved, as the downloader keeps them (crawler/downloader.py): a ticket lets one
    request of its host start, within the slack after it was reserved and not before; a stale one is
    gone; reading robots.txt drops a host's tickets; tickets of many hosts are swept, not kept."""
    from crawler.downloader import TICKET_MAX_AGE, TICKET_SWEEP, StartTickets

    tickets = StartTickets()
    tickets.add("a", 10.0)
    tickets.add("a", 10.2)
    assert tickets.use("a", 10.1, slack=0.25) and len(tickets) == 1  # the older fresh one, used up
    assert tickets.use("a", 10.3, slack=0.25) and not tickets.use("a", 10.3, slack=0.25)
    tickets.add("b", 10.0)
    assert not tickets.use("b", 10.3, slack=0.25) and len(tickets) == 0  # stale: gone, a start is reserved instead
    tickets.add("c", 12.0)  # a start reserved ahead: not before its time
    assert not tickets.use("c", 11.5, slack=0.25) and tickets.use("c", 11.995, slack=0.25)
    tickets.add("d", 10.0)
    tickets.drop("d")
    assert not tickets.use("d", 10.0, slack=0.25)
    old = time.monotonic() - TICKET_MAX_AGE - 1
    for n in range(TICKET_SWEEP * 3):
        tickets.add(f"h{n}", old)
    assert len(tickets) <= TICKET_SWEEP + 1


def test_a_takes_time_is_kept_while_its_host_holds_tickets_and_no_longer() -> None:
    """The take's time in Redis's clock, which a stale ticket's renewal gives back as unused (crawler/downloader.py),
    is kept only while its host holds tickets: forgotten once a ticket used the last one, or when the host's tickets
    are dropped or swept; kept once they all went stale, for the renewal to take. So it does not grow with the job's
    hosts, as a plain dictionary of every host taken from did."""
    from crawler.downloader import TICKET_MAX_AGE, TICKET_SWEEP, StartTickets

    tickets = StartTickets()
    tickets.add("used", 10.0, "100.0")
    assert tickets.use("used", 10.1, slack=0.25) and tickets.forget_take("used") == ""
    tickets.add("stale", 10.0, "100.0")
    tickets.add("stale", 10.3, "100.3")
    assert not tickets.use("stale", 11.0, slack=0.25)
    assert tickets.forget_take("stale") == "100.3" and tickets.forget_take("stale") == ""
    tickets.add("dropped", 10.0, "100.0")
    tickets.drop("dropped")
    assert tickets.forget_take("dropped") == ""
    old = time.monotonic() - TICKET_MAX_AGE - 1
    for n in range(TICKET_SWEEP * 3):
        tickets.add(f"h{n}", old, "1.0")
    assert len(tickets) <= TICKET_SWEEP + 1
    assert tickets.forget_take("h0") == ""  # swept with its tickets


def test_requests_held_through_a_pause_start_a_delay_apart(redis_server: RedisServer, tmp_path: Path) -> None:
    """One process on a frontier; the host answers robots.txt, slowly (1 s), with 429 and ``Retry-After: 2``.
    Its first two feeds (two at a time, 0.4 s apart) wait for robots.txt, then for the pause, in the worker's
    download slot. When the pause ends they must not leave together: each reserves its own start. Before: one
    start was reserved for the slot, and both requests arrived within a few milliseconds."""
    web, paths = feeds_web(8, delay=0.05)
    refusal = {"Content-Type": "text/plain", "Retry-After": "2"}
    web.add("/robots.txt", Route(b"slow down", status=429, headers=refusal, delay=1.0))
    settings = [*BASE, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2", "-s", "DOWNLOAD_DELAY=0.4"]
    with TimedServer(web) as server:
        urls = [a for p in paths for a in ("--url", server.url_for(p))]
        out = tmp_path / "out"
        proc = start("crawl", *urls, "--out", str(out), "--job-id", "j", "--frontier", redis_server.url, *settings)
        _, err = proc.communicate(timeout=300)
        log = sorted(server.log)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    relative = [(round(t - log[0][0], 3), target) for t, target in log]
    assert relative[0][1] == "/robots.txt" and len(log) == len(paths) + 1, relative
    assert all(t >= 2 for t, _ in relative[1:]), relative  # nothing in the pause
    assert short_gaps(log, 0.4) == [], relative
    outcomes = [r["outcome"] for r in read_table(out, "fetch_log").to_pylist() if r["url"].endswith(".xml")]
    assert sorted(outcomes) == ["feed"] * len(paths), outcomes


def test_a_request_connected_late_is_sent_a_delay_after_the_last_start(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """One process on a frontier, two requests at a time, 0.25 s between starts; the process's event loop is held
    0.2 s between every second feed's start and its connection (tests/stalls.py), as a busy worker's is. The
    host must still get no two requests within half the delay, and every feed. Before: the held request
    reached the host 0.2 s after its start and the next one, started a delay after it, 0.05 s later."""
    web, paths = feeds_web(12, delay=0.05)
    stalled = '{"http": "tests.stalls.StalledHandler", "https": "tests.stalls.StalledHandler"}'
    settings = [*BASE, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2", "-s", "DOWNLOAD_DELAY=0.25"]
    with TimedServer(web) as server:
        urls = [a for p in paths for a in ("--url", server.url_for(p))]
        out = tmp_path / "out"
        crawl_alone(redis_server, out, urls, [*settings, "-s", f"DOWNLOAD_HANDLERS={stalled}"])
        log = sorted(server.log)
    relative = [(round(t - log[0][0], 3), target) for t, target in log]
    assert len([t for t in log if t[1].endswith(".xml")]) == len(paths), relative
    assert short_gaps(log, 0.25) == [], relative
    outcomes = [r["outcome"] for r in read_table(out, "fetch_log").to_pylist() if r["url"].endswith(".xml")]
    assert sorted(outcomes) == ["feed"] * len(paths), outcomes


def test_a_connected_request_reserves_its_start_again_only_when_late(redis_server: RedisServer) -> None:
    """What the downloader answers once a request's connection is up (``PoliteDownloader.connected``), with a
    real frontier: connected within a quarter of the delay of its ticket, it goes now and reserves nothing;
    later, with no start reserved at the host since, it goes now and the host's next start is a delay after
    it; later, with another worker's start reserved after its own, it waits for a delay after that one (and
    is checked once more when the wait is over, and no more); a start further off than ``CONNECTED_WAIT_MAX``
    (the host paused meanwhile) is not waited for."""
    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.utils.test import get_crawler

    from crawler.downloader import CONNECTED_WAIT_MAX, PoliteDownloader
    from tests.test_frontier import connect

    mine, other = connect(redis_server, worker="wa"), connect(redis_server, worker="wb")
    mine.register()
    mine.set_budget(2, 0.4)
    crawler = get_crawler(settings_dict={"FEEDCENSUS_FRONTIER": redis_server.url, "DOWNLOAD_DELAY": 0.4})
    downloader = PoliteDownloader(crawler)
    downloader._frontier = mine  # the job's frontier, as the worker's extension would give it
    stats = crawler.stats
    assert stats is not None

    def started(n: int) -> Request:
        """Request ``n`` of the host, taken by this worker and started on its take's ticket."""
        url = f"http://h.example/{n}"
        mine.push(url, str(n), fingerprint=str(n))
        assert [got[1] for got in mine.take(1, done=[("h.example", None)] if n > 1 else [])] == [str(n)]
        downloader.ticket("h.example", time.monotonic(), mine.taken_at)
        request = Request(url)
        assert downloader._may_start(Slot(2, 0.4, jitter=0), request, time.monotonic())
        return request

    def renewals() -> int:
        return int(stats.get_value("feedcensus/frontier/starts_reserved/connected", 0))

    try:
        assert downloader.connected(started(1)) == 0.0 and renewals() == 0  # on time
        time.sleep(0.45)
        late = started(2)
        time.sleep(0.15)  # connected 0.15 s after its start: past a quarter of 0.4 s
        assert downloader.connected(late) == 0.0 and renewals() == 1  # nobody reserved since: now
        wait, _ = other.reserve_start("h.example")
        assert 0.3 < wait <= 0.4  # the host's next start is a delay after the late request, not after its take
        time.sleep(wait + 0.45)  # the host may be asked a delay after that start
        late = started(3)
        other.reserve_start("h.example")  # another worker's start, a delay after this one's
        time.sleep(0.15)
        waits = downloader.connected(late)
        assert 0.45 < waits <= 0.65 and renewals() == 2  # a delay after the other worker's start
        other.reserve_start("h.example")  # and another, a delay after that
        time.sleep(waits + 0.15)  # the timer for its start came late too: reserved once more
        waits = downloader.connected(late)
        assert 0.45 < waits <= 0.65 and renewals() == 3
        time.sleep(waits + 0.15)  # late again, but it reserved twice already: it goes now
        assert downloader.connected(late) == 0.0 and renewals() == 3
        time.sleep(0.45)
        late = started(4)
        mine.pause_host("h.example", CONNECTED_WAIT_MAX + 5, "429")
        time.sleep(0.15)
        assert downloader.connected(late) == 0.0  # the pause is not waited for, holding the connection
        assert stats.get_value("feedcensus/frontier/connected_not_held") == 1
    finally:
        for frontier in (mine, other):
            frontier.close()


def test_the_request_robots_txt_was_fetched_for_gets_its_start_with_the_share(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """One process on a frontier, four hosts with a robots.txt and three feeds each, one request at a time and
    0.3 s between requests. robots.txt takes the start the frontier reserved for the first feed of its host, so
    that feed's start must be reserved again; it is, in the round trip that shares robots.txt (the downloader
    waits for it), not in one of its own. Before: one more Redis round trip per host, counted as a start
    reserved with no ticket (``starts_reserved/none``). The delay still holds at every host."""
    hosts = ("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4")
    servers = [TimedServer(feeds_web(3, delay=0.02)[0], host=host) for host in hosts]
    settings = [*BASE, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", "DOWNLOAD_DELAY=0.3", "--log-level", "INFO"]
    with serving(servers):
        urls = [a for s in servers for i in range(3) for a in ("--url", s.url_for(f"/f{i}.xml"))]
        err = crawl_alone(redis_server, tmp_path / "out", urls, settings)
    assert "starts_reserved/none" not in err, err[-3000:]
    assert "'feedcensus/frontier/starts_reserved_with_robots': 4" in err, err[-3000:]
    for server in servers:
        log = list(server.log)
        assert [target for _, target in log].count("/robots.txt") == 1
        assert len(log) == 4
        # a ticket may be used up to a quarter of the delay after its start (crawler/downloader.py)
        assert short_gaps(log, 2 * 0.75 * 0.3 - 0.03) == [], (server.host, sorted(log))


def test_a_robots_txt_read_from_the_job_drops_the_tickets_only_when_it_asks_for_a_longer_delay(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Two hosts whose robots.txt another worker of the job already shared: one without a Crawl-delay, one
    with ``Crawl-delay: 1`` (the job's delay is 0.3 s). The first request of each waits for robots.txt in this
    worker with the start its take reserved. The first host's robots.txt asks for no longer delay, so that start
    still holds and is used: no round trip more. The second's does: the start kept the shorter delay, so it is
    dropped and reserved again (one ``starts_reserved/none``), and the Crawl-delay holds. Before, both were
    dropped: two reservations."""
    from crawler.frontier import Frontier

    plain, slow = (
        TimedServer(feeds_web(3, delay=0.02)[0], host="127.0.0.1"),
        TimedServer(feeds_web(3, delay=0.02)[0], host="127.0.0.2"),
    )
    settings = [*BASE, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", "DOWNLOAD_DELAY=0.3", "--log-level", "INFO"]
    with serving([plain, slow]):  # started first: the robots.txt shared is keyed by the host's port
        frontier = Frontier.connect(redis_server.url, "j", "another-worker")
        try:
            for server, robots in (
                (plain, b"User-agent: *\nDisallow: /private/\n"),
                (slow, b"User-agent: *\nCrawl-delay: 1\n"),
            ):
                frontier.share_robots(f"{server.host}:{server.port}", robots)
        finally:
            frontier.close()
        urls = [a for s in (plain, slow) for i in range(3) for a in ("--url", s.url_for(f"/f{i}.xml"))]
        err = crawl_alone(redis_server, tmp_path / "out", urls, settings)
    assert "'feedcensus/frontier/starts_reserved/none': 1," in err, err[-3000:]
    for server, delay in ((plain, 0.3), (slow, 1.0)):
        log = list(server.log)
        assert [target for _, target in log] == [target for _, target in log if target.endswith(".xml")]  # from the job
        assert len(log) == 3
        assert short_gaps(log, 2 * 0.75 * delay - 0.03) == [], (server.host, sorted(log))
