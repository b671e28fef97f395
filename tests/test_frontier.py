"""The distributed crawl's frontier (crawler/frontier/) against a real redis-server on 127.0.0.1.

No mocks: every test starts its own ``redis-server`` in a throwaway folder (tests/redisserver.py),
and the scheduler tests build the census spider's crawler the way Scrapy does.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
import redis
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

import crawler.frontier as frontier_module
from crawler.extensions.history import history_of
from crawler.frontier import (
    BUSY,
    IDLE,
    Frontier,
    FrontierError,
    FrontierScheduler,
    FrontierWorker,
    JobGone,
    Push,
    Pushed,
    display_url,
    has_password,
    shareable_url,
)
from crawler.frontier.store import host_of
from crawler.requests import archive_record_request, make_request
from crawler.spiders.census import CensusSpider
from pipelines.dataset.commits import Batch
from schemas.items import FetchContext
from schemas.vocab import Expect, Via
from tests.redisserver import RedisServer, redis_server

__all__ = ["redis_server"]  # the fixture, imported for the tests below

REPO = Path(__file__).resolve().parents[1]
CTX = FetchContext(via=Via.AUTODISCOVERY, source="http://a.example/", depth=2, kind=Expect.FEED, include_depth=1)


def connect(server: RedisServer, job: str = "j1", worker: str = "w1", **kwargs: Any) -> Frontier:
    return Frontier.connect(server.url, job, worker, **kwargs)


def raw(server: RedisServer) -> redis.Redis:
    return redis.Redis.from_url(server.url, decode_responses=True)


def queue_of(server: RedisServer, job: str = "j1", *, withscores: bool = False) -> Any:
    """Every request queued in the job, over its hosts' queues (``q:<host>``): members, or member -> score."""
    r = raw(server)
    keys = sorted(r.scan_iter(f"feedcensus:{job}:q:*"))
    if withscores:
        # redis-py types zrange's answer as either shape (members, or (member, score) pairs) whatever withscores is
        return {m: s for k in keys for m, s in cast("list[tuple[str, float]]", r.zrange(k, 0, -1, withscores=True))}
    return [m for k in keys for m in r.zrange(k, 0, -1)]


def server_time(r: redis.Redis) -> float:
    seconds, micros = r.time()
    return float(seconds) + micros / 1e6


def make_old(r: redis.Redis, job: str, worker: str, age: float) -> None:
    """Write ``worker``'s heartbeat as ``age`` seconds old, straight into the workers hash."""
    key = f"feedcensus:{job}:workers"
    info = json.loads(r.hget(key, worker) or "{}")
    info["heartbeat"] = server_time(r) - age
    r.hset(key, worker, json.dumps(info))


# --- the frontier alone ----------------------------------------------------------------------------


def test_a_popped_request_is_leased_until_released(redis_server: RedisServer) -> None:
    f = connect(redis_server)
    f.register()
    assert f.push("http://a.example/1", "one", fingerprint="fp1") == Pushed.QUEUED
    assert f.push("http://a.example/2", "two", priority=5, fingerprint="fp2") == Pushed.QUEUED
    assert f.pop() == ("http://a.example/2", "two")  # higher priority first
    assert f.leases() == {"http://a.example/2": "w1"}
    status = f.status()
    assert (status.queued, status.leased, status.seen) == (1, 1, 2)
    assert [(w.id, w.leased) for w in status.workers] == [("w1", 1)]
    assert f.release(["http://a.example/2", "http://a.example/never-leased"]) == 1
    assert f.leases() == {}
    assert raw(redis_server).exists("feedcensus:j1:held:w1") == 0
    assert f.pop() == ("http://a.example/1", "one")
    assert f.pop() is None
    f.lease("http://a.example/3", "three")  # a lease taken directly goes back to the queue like a popped one
    assert sorted(f.unregister()) == ["http://a.example/1", "http://a.example/3"]
    assert (f.queued(), f.leases()) == (2, {})


def test_a_worker_releases_only_its_own_leases(redis_server: RedisServer) -> None:
    """A row of one worker (a page's link dropped as a duplicate) may name a URL another is fetching:
    that lease holds until its holder's own row is committed, or the holder's death would lose it."""
    fetching, other = connect(redis_server, worker="w1"), connect(redis_server, worker="w2")
    fetching.push("http://a.example/slow.xml", "slow", fingerprint="fp-slow")
    assert fetching.pop() == ("http://a.example/slow.xml", "slow")
    assert other.release(["http://a.example/slow.xml"]) == 0
    assert fetching.leases() == {"http://a.example/slow.xml": "w1"}
    assert fetching.release(["http://a.example/slow.xml"]) == 1


def test_a_queued_request_ends_the_leases_of_the_urls_it_stands_for(redis_server: RedisServer) -> None:
    f = connect(redis_server)
    f.push("http://a.example/old", "redirected", fingerprint="fp-old")
    assert f.pop() == ("http://a.example/old", "redirected")
    assert f.push("http://a.example/new", "target", fingerprint="fp-new", release=["http://a.example/old"])
    assert f.leases() == {}
    assert f.queued() == 1


def test_a_fingerprint_is_queued_once_per_job(redis_server: RedisServer) -> None:
    f = connect(redis_server)
    assert f.push("http://a.example/", "first", fingerprint="fp") == Pushed.QUEUED
    assert f.push("http://a.example/", "second", fingerprint="fp") == Pushed.DUPLICATE
    assert f.push("http://a.example/", "retry", fingerprint=None) == Pushed.QUEUED  # dont_filter
    assert f.queued() == 2


def test_requeue_dead_puts_back_exactly_the_dead_workers_leases(redis_server: RedisServer) -> None:
    r = raw(redis_server)
    alive, dead = connect(redis_server, worker="alive"), connect(redis_server, worker="dead")
    alive.register()
    dead.register()
    for i in range(5):
        alive.push(f"http://a.example/{i}", f"req{i}", priority=-i, fingerprint=f"fp{i}")
    taken_by_dead = [dead.pop(), dead.pop()]
    taken_by_alive = alive.pop()
    assert taken_by_dead == [("http://a.example/0", "req0"), ("http://a.example/1", "req1")]
    assert alive.requeue_dead() == []  # both heartbeats are fresh

    make_old(r, "j1", "dead", age=120)
    back = alive.requeue_dead()

    assert sorted(back) == ["http://a.example/0", "http://a.example/1"]
    assert alive.leases() == {"http://a.example/2": "alive"} and taken_by_alive == ("http://a.example/2", "req2")
    assert [w.id for w in alive.status().workers] == ["alive"]
    assert r.exists("feedcensus:j1:held:dead") == 0
    # Back with their priority: they come out first again.
    assert [alive.pop(), alive.pop()] == taken_by_dead
    assert alive.requeue_dead() == []


def test_a_worker_killed_with_sigkill_has_its_leases_taken_back(redis_server: RedisServer) -> None:
    coordinator = connect(redis_server, worker="coordinator", lease=0.5)
    for i in range(3):
        coordinator.push(f"http://a.example/{i}", f"req{i}", fingerprint=f"fp{i}")
    script = (
        "import sys, time\n"
        "from crawler.frontier import Frontier\n"
        "f = Frontier.connect(sys.argv[1], 'j1', 'victim')\n"
        "f.register()\n"
        "print(f.pop()[0]); print(f.pop()[0], flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, redis_server.url], cwd=REPO, stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            held = sorted([proc.stdout.readline().strip(), proc.stdout.readline().strip()])
            assert set(coordinator.leases()) == set(held)
        finally:
            proc.kill()
    deadline = time.monotonic() + 10
    back: list[str] = []
    while not back and time.monotonic() < deadline:
        time.sleep(0.2)
        back = coordinator.requeue_dead()
    assert sorted(back) == held
    assert coordinator.leases() == {} and coordinator.queued() == 3


def test_is_done_needs_the_inputs_an_empty_queue_no_leases_and_every_worker_idle(redis_server: RedisServer) -> None:
    a, b = connect(redis_server, worker="a"), connect(redis_server, worker="b")
    a.register(IDLE)
    b.register(IDLE)
    assert not a.is_done()  # not seeded: the coordinator may still be queueing inputs
    a.push("http://a.example/", "r", fingerprint="fp")
    a.mark_seeded()
    assert a.seeded and not a.is_done()  # queued
    assert a.pop() is not None
    assert not a.is_done()  # leased
    assert a.is_quiet()  # ...by an idle worker: it may close (and commit), then the job is done
    b.heartbeat(BUSY)
    assert not a.is_quiet()  # busy workers may still queue requests
    a.release(["http://a.example/"])
    assert not a.is_done()
    b.heartbeat(IDLE)
    assert a.is_done() and b.is_done()
    b.heartbeat(BUSY)
    make_old(raw(redis_server), "j1", "b", age=120)
    assert a.is_done()  # a dead worker's state does not count (its leases would)


def test_a_lease_held_by_a_dead_worker_keeps_the_job_open(redis_server: RedisServer) -> None:
    a, b = connect(redis_server, worker="a", lease=30), connect(redis_server, worker="b", lease=30)
    a.register(IDLE)
    b.register(IDLE)
    a.push("http://a.example/", "r", fingerprint="fp")
    a.mark_seeded()
    assert b.pop() is not None
    b.heartbeat(IDLE)
    make_old(raw(redis_server), "j1", "b", age=60)
    assert not a.is_quiet() and not a.is_done()
    assert a.requeue_dead() == ["http://a.example/"]
    assert not a.is_quiet() and a.queued() == 1


def test_finish_marks_the_job_done_and_makes_every_key_expire(redis_server: RedisServer) -> None:
    r = raw(redis_server)
    f = connect(redis_server, key_ttl=3600)
    f.register(IDLE)
    for i in range(2):
        f.push(f"http://a.example/{i}", "r", fingerprint=f"fp{i}")
    f.pop()
    f.mark_seeded()
    f.finish()
    keys = set(r.scan_iter("feedcensus:j1:*"))
    names = (
        "q:a.example",
        "ready",
        "slots",
        "inflight:w1",
        "dupefilter",
        "leases",
        "workers",
        "meta",
        "last",
        "held:w1",
    )
    assert keys == {f"feedcensus:j1:{k}" for k in names}
    assert all(0 < r.ttl(k) <= 3600 for k in keys)
    assert f.status().state == "done"


def test_jobs_have_their_own_keys(redis_server: RedisServer) -> None:
    r = raw(redis_server)
    one, two = connect(redis_server, job="monday"), connect(redis_server, job="tuesday")
    assert one.push("http://a.example/feed", "r", fingerprint="same") == Pushed.QUEUED
    assert two.push("http://a.example/feed", "r", fingerprint="same") == Pushed.QUEUED  # no inherited duplicate filter
    assert one.pop() is not None
    assert (one.queued(), two.queued()) == (0, 1)
    assert two.leases() == {}
    one.finish()
    assert r.ttl("feedcensus:tuesday:q:a.example") == -1  # the other job's keys do not expire
    assert two.status().state == "absent" and one.status().state == "done"


def test_the_state_survives_a_redis_restart(redis_server: RedisServer) -> None:
    f = connect(redis_server)
    f.push("http://a.example/", "r", fingerprint="fp")
    f.mark_seeded()
    redis_server.restart()
    # The client reconnects (its old connection is dead); the append-only file kept the data.
    assert f.push("http://a.example/2", "r2", fingerprint="fp2") == Pushed.QUEUED
    assert f.queued() == 2 and f.seeded
    assert f.push("http://a.example/", "again", fingerprint="fp") == Pushed.DUPLICATE


def test_a_job_gone_from_redis_is_a_frontier_error_at_the_next_heartbeat(redis_server: RedisServer) -> None:
    f = connect(redis_server)
    f.register()
    f.push("http://a.example/", "r", fingerprint="fp")
    assert f.heartbeat(BUSY)
    raw(redis_server).flushall()  # as a restart without its data files leaves it
    with pytest.raises(JobGone, match=r"job j1\): the job is gone from Redis"):
        f.heartbeat(IDLE)
    assert raw(redis_server).keys("*") == []  # it wrote nothing back: no half-job for other workers to wait on
    f.register()  # joining (again) starts the job afresh
    assert f.heartbeat(BUSY)


def test_a_worker_taken_for_dead_hears_so_even_when_it_took_a_request_since(redis_server: RedisServer) -> None:
    alive, dead = connect(redis_server, worker="alive"), connect(redis_server, worker="dead")
    alive.register()
    dead.register()
    alive.push("http://a.example/", "r", fingerprint="fp")
    alive.push("http://a.example/2", "r2", fingerprint="fp2")
    make_old(raw(redis_server), "j1", "dead", age=120)
    assert alive.requeue_dead() == []  # it held nothing
    assert dead.pop() is not None  # its take writes a row for it again...
    assert dead.heartbeat(BUSY) is False  # ...but its next heartbeat still says it had been taken for dead
    assert dead.heartbeat(BUSY) is True


def test_the_jobs_inputs_wait_behind_every_request_found_in_a_response(redis_server: RedisServer) -> None:
    """As in a plain crawl, which gives Scrapy an input only when its scheduler has run empty."""
    f = connect(redis_server)
    f.push("http://a.example/", "home a", fingerprint="a", is_input=True)
    f.push("http://b.example/", "home b", fingerprint="b", is_input=True, priority=5)
    f.push("http://c.example/feed", "feed c", fingerprint="c", priority=-1)  # found on a page: depth 1
    f.push("http://d.example/opml-child", "child d", fingerprint="d", priority=-2)
    assert [got[1] for got in f.take(4)] == ["feed c", "child d", "home b", "home a"]


def test_a_push_pop_or_claim_sent_twice_runs_once(redis_server: RedisServer) -> None:
    """redis-py sends a call again after a reset connection: the reply may be all that was lost."""
    f = connect(redis_server)
    member, score = "http://a.example/\nr", "0.5"
    one = (
        "fp",
        score,
        "a.example",
        member,
        "",
        "0",
    )  # one request: fingerprint, score, host, member, no parent, no releases
    assert f._run("push", "w1", "t1", *one) == "1"
    assert f._run("push", "w1", "t1", *one) == "1"  # the same call: not a duplicate
    assert f._run("push", "w1", "t2", *one) == "0"  # a new call: a duplicate
    f.push("http://a.example/other", "o", fingerprint="fp-other", priority=-5)
    first = f._run("pop", "w1", "t3", "0", "1")
    assert f._run("pop", "w1", "t3", "0", "1") == first  # the same answer, the take's time included
    assert first[:2] == [[member, score], "-1"] and float(first[2]) > 0
    assert f.queued() == 1 and f.leases() == {"http://a.example/": "w1"}
    assert f.pop() == ("http://a.example/other", "o")
    feed = "http://a.example/feed"
    assert f._run("claim_not_due", "w1", "t4", feed, "") == 1
    assert f._run("claim_not_due", "w1", "t4", feed, "") == 1  # the same claim: still this worker's not_due row
    assert f._run("claim_not_due", "w1", "t5", feed, "") == 0  # a new claim: a duplicate


# --- a page read again after its lease came back -------------------------------------------------------
#
# A worker read a page and queued the feed it names (the feed's fingerprint is in the duplicate filter),
# then died before the page's rows were committed: the page goes back to the queue and is read again.
# That reading names the same feed; one process reads the page once and writes no duplicate row for it.

PAGE, FEED, OTHER_PAGE = "http://blog-a.example/", "http://blog-a.example/feed.xml", "http://news-b.example/"


def children_keys(r: redis.Redis, job: str = "j1") -> set[str]:
    return {k for k in r.scan_iter(f"feedcensus:{job}:*") if ":children" in k or k.endswith(":parents")}


def read_twice(redis_server: RedisServer, first_reading: Callable[[Frontier], None]) -> Frontier:
    """A victim leases PAGE, does ``first_reading`` and is killed before any commit; the page's lease
    goes back and a helper (returned) leases PAGE again."""
    r = raw(redis_server)
    victim, helper = connect(redis_server, worker="victim"), connect(redis_server, worker="helper")
    victim.register()
    helper.register()
    victim.push(PAGE, "page", fingerprint="fp-page")
    assert victim.pop() == (PAGE, "page")
    first_reading(victim)
    make_old(r, "j1", "victim", age=120)  # killed: nothing committed, the page's lease goes back
    assert helper.requeue_dead() == [PAGE]
    assert helper.pop() == (PAGE, "page")
    return helper


def test_a_page_read_again_is_not_the_duplicate_of_what_its_first_reading_queued(redis_server: RedisServer) -> None:
    r = raw(redis_server)

    def queue_the_feed(victim: Frontier) -> None:
        assert victim.push(FEED, "feed", priority=-1, fingerprint="fp-feed", parent=PAGE) == Pushed.QUEUED

    helper = read_twice(redis_server, queue_the_feed)

    assert helper.push(FEED, "feed", priority=-1, fingerprint="fp-feed", parent=PAGE) == Pushed.ALREADY_QUEUED
    assert helper.push(FEED, "feed", priority=-1, fingerprint="fp-feed", parent=PAGE) == Pushed.DUPLICATE  # named twice
    assert helper.push(FEED, "feed", fingerprint="fp-feed", parent=OTHER_PAGE) == Pushed.DUPLICATE  # another page
    assert helper.push(FEED, "feed", fingerprint="fp-feed") == Pushed.DUPLICATE  # no page
    assert queue_of(redis_server) == [f"{FEED}\nfeed"]  # queued once
    assert helper.pop() == (FEED, "feed") and helper.pop() is None  # fetched once

    assert helper.release([PAGE, FEED]) == 2  # the rows are committed: the page is not read again
    assert children_keys(r) == set()


def test_a_page_read_again_twice_and_one_handed_back_on_a_stop(redis_server: RedisServer) -> None:
    """The notes of the first reading outlive a second reading that was also lost; a worker that stops
    (Ctrl-C) hands the page back the same way as a dead one."""
    r = raw(redis_server)
    first, second, third = (connect(redis_server, worker=w) for w in ("first", "second", "third"))
    first.push(PAGE, "page", fingerprint="fp-page")
    assert first.pop() == (PAGE, "page")
    first.push(FEED, "feed", priority=-1, fingerprint="fp-feed", parent=PAGE)
    assert first.unregister() == [PAGE]  # stopped before the page's commit
    assert second.pop() == (PAGE, "page")
    assert second.push(FEED, "feed", fingerprint="fp-feed", parent=PAGE) == Pushed.ALREADY_QUEUED
    second.register()
    make_old(r, "j1", "second", age=120)
    assert third.requeue_dead() == [PAGE]
    assert third.pop() == (PAGE, "page")
    assert third.push(FEED, "feed", fingerprint="fp-feed", parent=PAGE) == Pushed.ALREADY_QUEUED
    assert third.queued() == 1
    assert third.unregister(requeue=False) == [PAGE]  # a finished worker lets go: the notes go too
    assert children_keys(r) == set()


def test_a_page_read_again_records_its_not_due_feed_as_not_due_again(redis_server: RedisServer) -> None:
    """An incremental job: the page names a known feed that is not due. The victim claimed it (its
    not_due row was on the way) and died before the commit; the next reading must record the feed as
    not due, not as a duplicate of a row that was never written."""
    r = raw(redis_server)

    def claim_the_feed(victim: Frontier) -> None:
        assert victim.claim_not_due(FEED, PAGE) is True  # its not_due row was on the way to a commit

    helper = read_twice(redis_server, claim_the_feed)

    assert helper.claim_not_due(FEED, PAGE) is True  # the reading again: not due again
    assert helper.claim_not_due(FEED, PAGE) is False  # the page names it twice: one row, as in one process
    assert helper.claim_not_due(FEED, OTHER_PAGE) is False  # another page naming it
    assert helper.claim_not_due(FEED) is False  # an input naming it
    assert helper.release([PAGE]) == 1  # the page's rows are committed: its notes go
    assert children_keys(r) == set()
    assert r.smembers("feedcensus:j1:not_due") == {FEED}


def test_notes_are_kept_only_while_the_worker_leases_the_page(redis_server: RedisServer) -> None:
    """A parent this worker does not lease (an input, a page already released) leaves nothing to clean up;
    a repeated push answers as the first one did."""
    r = raw(redis_server)
    f = connect(redis_server)
    assert f.push(FEED, "feed", fingerprint="fp-feed", parent=PAGE) == Pushed.QUEUED  # PAGE not leased
    assert children_keys(r) == set()
    f.push(PAGE, "page", priority=-1, fingerprint="fp-page")
    assert f.pop() == (FEED, "feed") and f.pop() == (PAGE, "page")
    member, score = f"{OTHER_PAGE}\nother", "0.5"
    assert f._run("push", "w1", "t1", "fp-other", score, "other.example", member, PAGE, "0") == str(int(Pushed.QUEUED))
    assert f._run("push", "w1", "t1", "fp-other", score, "other.example", member, PAGE, "0") == str(
        int(Pushed.QUEUED)
    )  # sent again
    assert children_keys(r) == {"feedcensus:j1:children:" + PAGE, "feedcensus:j1:parents"}
    f.finish()
    assert all(r.ttl(k) > 0 for k in children_keys(r))  # the job's every key expires


# --- failures and credentials ----------------------------------------------------------------------


def test_redis_stopped_mid_way_is_one_frontier_error(redis_server: RedisServer) -> None:
    f = connect(redis_server)
    f.push("http://a.example/", "r", fingerprint="fp")
    redis_server.stop()
    with pytest.raises(FrontierError) as caught:
        f.pop()
    message = str(caught.value)
    assert "\n" not in message and f"127.0.0.1:{redis_server.port}" in message and "pop failed" in message


def test_an_unreachable_frontier_is_refused_at_connect(redis_server: RedisServer) -> None:
    redis_server.stop()
    with pytest.raises(FrontierError, match=r"connect failed: ConnectionError"):
        connect(redis_server)
    with pytest.raises(FrontierError, match=r"^bad frontier URL http://127\.0\.0\.1:1/0: .*redis://"):
        Frontier.connect("http://127.0.0.1:1/0", "j1")
    with pytest.raises(FrontierError, match="needs a job id"):
        Frontier.connect(redis_server.url, "")


def test_a_password_never_appears_in_messages(tmp_path: Path) -> None:
    secret = "s3cr3t-p@ss"
    assert display_url("redis://:s3cr3t@h:6379/0") == "redis://:***@h:6379/0"
    assert display_url("redis://user:s3cr3t@h:6379/0") == "redis://user:***@h:6379/0"
    assert display_url("redis://h:6379/0?password=s3cr3t&db=1") == "redis://h:6379/0?password=***&db=1"
    assert display_url("redis://h:6379/0") == "redis://h:6379/0"
    with RedisServer(tmp_path / "redis", password=secret) as server:
        wrong = server.url.replace("s3cr3t", "WRONGpass")
        with pytest.raises(FrontierError) as refused:
            Frontier.connect(wrong, "j1")
        f = Frontier.connect(server.url, "j1")
        assert secret not in f.display_url and "***" in f.display_url
        server.stop()
        with pytest.raises(FrontierError) as lost:
            f.queued()
    for exc in (refused.value, lost.value):
        text = str(exc)
        assert "WRONGpass" not in text and "s3cr3t" not in text and "%40" not in text, text
        assert f"127.0.0.1:{server.port}" in text


def test_the_password_may_come_from_the_environment_and_a_shown_url_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert shareable_url("redis://:s3cr3t@h:6379/0") == "redis://h:6379/0"
    assert shareable_url("redis://census:s3cr3t@h:6379/0?db=1&password=x") == "redis://census@h:6379/0?db=1"
    assert shareable_url("redis://h:6379/0") == "redis://h:6379/0"
    assert has_password("redis://:s3cr3t@h/0") and has_password("redis://h/0?password=x")
    assert not has_password("redis://census@h:6379/0")
    secret = "env-s3cr3t"
    with RedisServer(tmp_path / "redis", password=secret) as server:
        bare = shareable_url(server.url)
        assert secret not in bare
        with pytest.raises(FrontierError, match="connect failed"):
            Frontier.connect(bare, "j1")  # no password anywhere: refused
        monkeypatch.setenv("FEEDCENSUS_REDIS_PASSWORD", secret)
        f = Frontier.connect(bare, "j1")
        assert f.queued() == 0
        f.close()
        monkeypatch.setenv("FEEDCENSUS_REDIS_PASSWORD", "WRONG-env-pass")
        with pytest.raises(FrontierError) as refused:
            Frontier.connect(bare, "j1")
    assert "WRONG-env-pass" not in str(refused.value) and "connect failed" in str(refused.value)


# --- the scheduler ---------------------------------------------------------------------------------------


def frontier_crawler(tmp_path: Path, server: RedisServer, **settings: Any) -> Crawler:
    import crawler.settings as project

    base = {k: getattr(project, k) for k in dir(project) if k.isupper()}
    return get_crawler(
        CensusSpider,
        {
            **base,
            "FEEDCENSUS_OUT": str(tmp_path / "out"),
            "FEEDCENSUS_JOB_ID": "j1",
            "FEEDCENSUS_WORKER_ID": "w1",
            "FEEDCENSUS_FRONTIER": server.url,
            "FEEDCENSUS_WORKERS": 0,  # the scheduler alone, in this process: no document workers to start
            # These tests drive the scheduler with one host's requests: the job's budget per host
            # (tests/test_budget_distributed.py) is not what they test.
            "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
            **settings,
        },
    )


def open_scheduler(crawler: Crawler) -> tuple[FrontierScheduler, CensusSpider]:
    spider = CensusSpider.from_crawler(crawler)
    scheduler = FrontierScheduler.from_crawler(crawler)
    scheduler.open(spider)
    return scheduler, spider


def worker_of(crawler: Crawler) -> FrontierWorker:
    worker = crawler.get_extension(FrontierWorker)
    assert worker is not None and worker.frontier is not None
    return worker


def frontier_scheduler(
    tmp_path: Path, server: RedisServer, **settings: Any
) -> tuple[Crawler, FrontierScheduler, CensusSpider, FrontierWorker]:
    """A crawler on the frontier (:func:`frontier_crawler`), its scheduler open, its spider and its worker,
    which has joined the job (as at ``spider_opened``)."""
    crawler = frontier_crawler(tmp_path, server, **settings)
    scheduler, spider = open_scheduler(crawler)
    worker = worker_of(crawler)
    assert worker.frontier is not None
    worker.frontier.register()
    return crawler, scheduler, spider, worker


def enqueue(scheduler: FrontierScheduler, spider: CensusSpider, urls: list[str], ctx: FetchContext = CTX) -> None:
    """Give the scheduler a request for each URL, as the engine does."""
    for url in urls:
        scheduler.enqueue_request(make_request(url, ctx, callback=spider.parse, errback=spider.on_error))


def commit_and_wait(worker: FrontierWorker, rows: list[dict[str, Any]], seq: int = 1) -> None:
    """Commit ``rows`` to fetch_log and let two heartbeats pass: the leases those rows end are released."""
    worker.committed(Batch(seq=seq, tables={"fetch_log": rows}))
    worker.tick()
    worker.tick()


def stat(crawler: Crawler, name: str) -> Any:
    assert crawler.stats is not None
    return crawler.stats.get_value(name)


def record_dropped(crawler: Crawler) -> list[str]:
    """The URLs of the requests the crawl drops (``request_dropped``), as they are dropped."""
    dropped: list[str] = []

    def on_dropped(request: Request, spider: object) -> None:
        dropped.append(request.url)

    crawler.signals.connect(on_dropped, signal=signals.request_dropped, weak=False)
    return dropped


def test_a_request_round_trips_through_the_scheduler_with_its_context(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    crawler = frontier_crawler(tmp_path, redis_server)
    scheduler, spider = open_scheduler(crawler)
    sent = make_request(
        "http://a.example/feed.xml",
        CTX,
        callback=spider.parse,
        errback=spider.on_error,
        priority_bias=-1,
        validators={"If-None-Match": '"v1"'},
    )
    sent.meta["tuple"], sent.meta["bytes"], sent.meta["odd"] = ("a", 1), b"\x00\xff", object()
    assert scheduler.enqueue_request(sent) is True
    assert scheduler.has_pending_requests()

    got = scheduler.next_request()

    assert isinstance(got, Request) and got is not sent
    assert (got.url, got.priority, got.dont_filter, got.method) == (sent.url, -3, False, "GET")
    assert got.callback == spider.parse and got.errback == spider.on_error
    assert isinstance(got.meta["fc"], FetchContext) and got.meta["fc"] == CTX
    assert got.meta["handle_httpstatus_list"] == [304]
    assert (got.meta["tuple"], got.meta["bytes"]) == (("a", 1), b"\x00\xff")
    assert "odd" not in got.meta and stat(crawler, "feedcensus/frontier/meta_dropped/odd") == 1
    assert got.headers.get("If-None-Match") == b'"v1"'
    assert scheduler.frontier.leases() == {sent.url: "w1"}
    assert stat(crawler, "feedcensus/frontier/leased") == 1
    assert not scheduler.has_pending_requests() and scheduler.next_request() is None


def test_a_queued_request_carries_only_what_differs_from_a_plain_get(tmp_path: Path, redis_server: RedisServer) -> None:
    crawler = frontier_crawler(tmp_path, redis_server)
    scheduler, spider = open_scheduler(crawler)
    url = "http://a.example/feed.xml"
    sent = make_request(url, CTX, callback=spider.parse, errback=spider.on_error)
    assert scheduler.enqueue_request(sent)
    scheduler.push_pending()
    [member] = queue_of(redis_server)
    queued_url, _, encoded = str(member).partition("\n")
    fields = json.loads(encoded)
    assert queued_url == url and url not in encoded  # the URL is in the member once
    # headers, body, cookies, flags, method, encoding... are at their defaults: left out
    assert set(fields) == {"callback", "errback", "priority", "meta"}, fields
    got = scheduler.next_request()
    assert got is not None
    assert (got.url, got.method, got.body, got.priority, dict(got.headers)) == (url, "GET", b"", sent.priority, {})
    assert got.meta["fc"] == CTX and got.callback == spider.parse and got.cookies == {} and got.flags == []


def test_a_coordinator_queues_every_input_before_it_takes_one(tmp_path: Path, redis_server: RedisServer) -> None:
    _, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    other = connect(redis_server, worker="w2")
    worker.seeding_started()
    for n in range(3):
        scheduler.enqueue_request(
            make_request(f"http://a.example/{n}", CTX, callback=spider.parse, errback=spider.on_error)
        )
    assert scheduler.next_request() is None and scheduler.has_pending_requests()  # still seeding: left to others
    assert other.pop() is None  # the inputs wait for their batch (or the end of the inputs)
    worker.seeded()
    assert not worker.seeding and other.seeded
    assert other.pop() is not None  # another worker takes from the queue
    taken = {scheduler.next_request(), scheduler.next_request()}
    urls = {r.url for r in taken if r is not None}
    assert urls | set(other.leases()) == {f"http://a.example/{n}" for n in range(3)} and len(urls) == 2
    assert scheduler.next_request() is None


def test_a_coordinator_pushes_its_inputs_a_batch_at_a_time_and_drops_their_duplicates(
    tmp_path: Path, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("crawler.frontier.scheduler.PUSH_BATCH", 3)  # where the scheduler reads it
    crawler, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    dropped = record_dropped(crawler)
    frontier = scheduler.frontier
    frontier.push("http://warm.example/", "w")  # Redis has the push script from now on (its first call loads it)
    worker.seeding_started()
    urls = ["http://a.example/0", "http://a.example/1", "http://a.example/0", "http://a.example/2"]
    before = frontier.commands
    for url in urls:
        assert scheduler.enqueue_request(make_request(url, CTX, callback=spider.parse, errback=spider.on_error))
    assert frontier.commands == before + 1  # the first three in one round trip; the fourth waits
    assert frontier.queued() == 1 + 2 and dropped == ["http://a.example/0"]  # the second /0: a duplicate, dropped
    assert stat(crawler, "dupefilter/filtered") == 1
    worker.seeded()
    assert frontier.queued() == 1 + 3 and not scheduler.pending
    assert stat(crawler, "scheduler/enqueued/frontier") == 3
    scores = dict(queue_of(redis_server, withscores=True))
    inputs = [score for member, score in scores.items() if member.startswith("http://a.example/")]
    assert len(inputs) == 3 and min(inputs) >= frontier_module.INPUT_WAIT > scores["http://warm.example/\nw"]


def test_a_worker_takes_several_requests_a_round_trip_and_gives_back_those_it_did_not_fetch(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    crawler = frontier_crawler(tmp_path, redis_server, FEEDCENSUS_FRONTIER_PREFETCH=3)
    scheduler, spider = open_scheduler(crawler)
    frontier = scheduler.frontier
    enqueue(scheduler, spider, [f"http://a.example/{n}" for n in range(8)])
    fetched = [scheduler.next_request() for _ in range(3)]  # the first three, in one round trip (and the script loaded)
    assert all(fetched) and len(frontier.leases()) == 3 and frontier.queued() == 5
    before = frontier.commands
    assert scheduler.next_request() is not None and frontier.commands == before + 1  # three more leased at once
    assert scheduler.next_request() is not None and scheduler.has_pending_requests()
    assert frontier.commands == before + 1  # handed out from what was taken: no round trip
    assert len(frontier.leases()) == 6 and frontier.queued() == 2
    scheduler.close("shutdown")
    worker_of(crawler)._leave("shutdown", requeue=True)  # a worker stopped before the end: what it holds goes back
    assert frontier.queued() == 8 and frontier.leases() == {}


def test_a_request_found_in_a_response_is_pushed_with_the_next_take_or_before_a_release(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    _, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server, FEEDCENSUS_FRONTIER_PREFETCH=2)
    frontier = scheduler.frontier
    enqueue(scheduler, spider, ["http://a.example/", "http://b.example/"])
    page = scheduler.next_request()  # pushes the two, then takes both
    assert page is not None and frontier.queued() == 0 and not scheduler.pending
    feed_ctx = CTX.child(Via.AUTODISCOVERY, page.url, Expect.FEED)
    scheduler.enqueue_request(make_request(page.url + "feed", feed_ctx, callback=spider.parse, errback=spider.on_error))
    assert scheduler.next_request() is not None  # the second taken: no round trip, the feed still held back
    assert frontier.queued() == 0 and len(scheduler.pending) == 1
    assert scheduler._push_call is not None and scheduler._push_call.active()  # or pushed PUSH_DELAY s from now
    worker.committed(Batch(seq=1, tables={"fetch_log": [{"url": page.url, "final_url": page.url}]}))
    worker.tick()  # a heartbeat: the held-back request is queued before any lease is released
    assert frontier.queued() == 1 and not scheduler.pending and page.url in frontier.leases()
    assert not scheduler._push_call
    worker.tick()
    assert page.url not in frontier.leases()  # released one heartbeat after its row was committed


def test_a_page_stays_leased_when_the_requests_it_made_cannot_be_queued(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Redis refusing writes (maxmemory reached, noeviction) but not deletes: the page's lease must hold,
    or the feeds it named would be lost with a worker that stops."""
    _, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    frontier = scheduler.frontier
    scheduler.enqueue_request(make_request("http://a.example/", CTX, callback=spider.parse, errback=spider.on_error))
    page = scheduler.next_request()
    assert page is not None
    worker.committed(Batch(seq=1, tables={"fetch_log": [{"url": page.url, "final_url": page.url}]}))
    worker.tick()  # the page's row is committed: its lease ends at the next heartbeat
    feed_ctx = CTX.child(Via.AUTODISCOVERY, page.url, Expect.FEED)
    scheduler.enqueue_request(make_request(page.url + "feed", feed_ctx, callback=spider.parse, errback=spider.on_error))
    r = raw(redis_server)
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", "1")
    worker.tick()  # the push is refused: the crawl stops, and the page's lease is not released
    r.config_set("maxmemory", "0")
    assert worker.failed is not None and "push failed" in worker.failed
    assert frontier.leases() == {page.url: "w1"} and frontier.queued() == 0


def test_every_request_taken_for_one_url_goes_back(tmp_path: Path, redis_server: RedisServer) -> None:
    """Several requests for one URL (``dont_filter``) share its lease: a worker that takes them at once and
    stops hands back every one."""
    _, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    url = "http://a.example/feed"
    for n in range(5):
        request = make_request(url, CTX, callback=spider.parse, errback=spider.on_error)
        scheduler.enqueue_request(request.replace(dont_filter=True, cb_kwargs={"n": n}))
    first = scheduler.next_request()
    assert first is not None and len(scheduler.taken) == 4 and scheduler.frontier.queued() == 0
    assert scheduler.frontier.leases() == {url: "w1"}
    scheduler.close("shutdown")
    worker.close("shutdown")  # what it holds goes back: all five, none lost
    assert scheduler.frontier.queued() == 5


def test_an_archive_record_is_leased_under_the_url_it_holds(tmp_path: Path, redis_server: RedisServer) -> None:
    """Every record of one WARC file is a request for the file's URL; each is leased under ``archive <url>`` of
    the URL it holds, which its fetch_log row names, so its commit ends its own lease and no other."""
    _, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    warc = "http://archive.example/crawl-1.warc.gz"
    held = [f"http://site{n}.example/feed" for n in range(3)]
    for n, url in enumerate(held):
        ctx = FetchContext(via=Via.ARCHIVE, source="crawl-1.warc.gz", depth=0, kind=Expect.FEED)
        record = archive_record_request(warc, n * 100, 100, url, ctx, callback=spider.parse, errback=spider.on_error)
        scheduler.enqueue_request(record)
    first = scheduler.next_request()
    assert first is not None and first.url == warc and first.cb_kwargs["archived"]["url"] in held
    assert set(scheduler.frontier.leases()) == {f"archive {url}" for url in held}
    done = first.cb_kwargs["archived"]["url"]
    row = {"url": done, "final_url": done, "outcome": "feed", "discovered_via": "archive"}  # the record's row
    commit_and_wait(worker, [row])
    assert set(scheduler.frontier.leases()) == {f"archive {url}" for url in held if url != done}
    scheduler.close("shutdown")
    worker.close("shutdown")
    assert scheduler.frontier.queued() == 2  # the two not fetched go back, the one committed does not


def test_a_live_fetch_of_an_archived_url_is_not_settled_by_the_records_commit(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """``commoncrawl --live``: the archived copy of a feed and the live fetch of its URL are two fetches. Once
    the record's row is committed and its lease released, the live request (a feed link of an archived page,
    noted under the page's archive key) is still handed out, and its own row ends its own lease."""
    _, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    warc, feed, page = "http://archive.example/crawl-1.warc.gz", "http://site.example/feed", "http://site.example/"
    record_ctx = FetchContext(via=Via.ARCHIVE, source="crawl-1.warc.gz", depth=0, kind=Expect.FEED)
    record = archive_record_request(warc, 0, 100, feed, record_ctx, callback=spider.parse, errback=spider.on_error)
    scheduler.enqueue_request(record)
    taken = scheduler.next_request()
    assert taken is not None and scheduler.frontier.leases() == {f"archive {feed}": "w1"}
    commit_and_wait(worker, [{"url": feed, "final_url": feed, "outcome": "feed", "discovered_via": "archive"}])
    assert scheduler.frontier.leases() == {}
    page_ctx = FetchContext(via=Via.ARCHIVE, source="crawl-1.warc.gz", depth=0, kind=Expect.PAGE)
    link_ctx = page_ctx.child(Via.ARCHIVE_LINK, page, Expect.FEED)
    assert link_ctx.source_archived
    scheduler.enqueue_request(make_request(feed, link_ctx, callback=spider.parse, errback=spider.on_error))
    live = scheduler.next_request()
    assert live is not None and live.url == feed and "archived" not in live.cb_kwargs
    assert scheduler.frontier.leases() == {feed: "w1"}
    commit_and_wait(worker, [{"url": feed, "final_url": feed, "outcome": "feed", "discovered_via": "archive-link"}], 2)
    assert scheduler.frontier.leases() == {}
    scheduler.close("shutdown")
    worker.close("shutdown")
    assert scheduler.frontier.queued() == 0


def test_a_row_naming_a_request_taken_and_not_started_does_not_end_its_lease(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Another page's duplicate row for a feed this worker has taken: the feed's lease holds until its own row."""
    _, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server, FEEDCENSUS_FRONTIER_PREFETCH=3)
    urls = ["http://a.example/1", "http://a.example/2", "http://a.example/3"]
    enqueue(scheduler, spider, urls)
    first = scheduler.next_request()
    assert first is not None and scheduler.taken_urls() == set(urls) - {first.url}
    waiting = sorted(scheduler.taken_urls())[0]
    rows = [{"url": first.url, "final_url": first.url}, {"url": waiting, "final_url": waiting, "outcome": "error"}]
    commit_and_wait(worker, rows)
    assert set(scheduler.frontier.leases()) == set(urls) - {first.url}  # the one fetched released, not the other
    while (request := scheduler.next_request()) is not None:
        commit_and_wait(worker, [{"url": request.url, "final_url": request.url}], seq=2)
    assert scheduler.frontier.leases() == {}


def test_a_duplicate_row_does_not_end_the_lease_of_the_request_being_fetched(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Another page names a feed this worker is fetching: the duplicate row must not release the feed."""
    _, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    enqueue(scheduler, spider, ["http://a.example/feed"])
    feed = scheduler.next_request()  # handed to Scrapy: downloading
    assert feed is not None and not scheduler.taken
    duplicate = {"url": feed.url, "final_url": feed.url, "outcome": "duplicate"}
    commit_and_wait(worker, [duplicate])
    assert scheduler.frontier.leases() == {feed.url: "w1"}  # a worker dying now hands the feed back
    commit_and_wait(worker, [{"url": feed.url, "final_url": feed.url, "outcome": "ok"}], seq=2)
    assert scheduler.frontier.leases() == {}


def test_a_request_redis_cannot_take_is_kept_in_this_process(tmp_path: Path, redis_server: RedisServer) -> None:
    crawler = frontier_crawler(tmp_path, redis_server)
    scheduler, spider = open_scheduler(crawler)
    odd = CTX.child(Via.AUTODISCOVERY, "http://a.example/\udcff", Expect.FEED)  # a page URL with a lone surrogate
    request = make_request("http://a.example/feed", odd, callback=spider.parse, errback=spider.on_error)
    assert scheduler.enqueue_request(request) is True and not scheduler.pending
    assert list(scheduler.local) == [request] and stat(crawler, "feedcensus/frontier/kept_local") == 1
    assert scheduler.next_request() is request


def test_the_duplicate_filter_uses_scrapys_fingerprints_and_drops_a_second_request(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    crawler = frontier_crawler(tmp_path, redis_server)
    scheduler, spider = open_scheduler(crawler)
    dropped = record_dropped(crawler)
    first = make_request("http://a.example/feed.xml", CTX, callback=spider.parse, errback=spider.on_error)
    again = make_request("http://a.example/feed.xml", CTX, callback=spider.parse, errback=spider.on_error)
    assert scheduler.enqueue_request(first) is True
    assert scheduler.enqueue_request(again) is True  # held back for a batch: taken as queued for now
    assert scheduler.enqueue_request(again.replace(dont_filter=True)) is True
    assert dropped == [] and scheduler.has_pending_requests()
    scheduler.push_pending()  # one round trip: the second is a duplicate, dropped as the engine drops one
    assert dropped == ["http://a.example/feed.xml"] and scheduler.frontier.queued() == 2
    assert stat(crawler, "dupefilter/filtered") == 1
    fingerprint = crawler.request_fingerprinter.fingerprint(first).hex()
    assert raw(redis_server).smembers("feedcensus:j1:dupefilter") == {fingerprint}


def test_a_redirect_ends_the_lease_of_the_url_it_came_from(tmp_path: Path, redis_server: RedisServer) -> None:
    crawler = frontier_crawler(tmp_path, redis_server)
    scheduler, spider = open_scheduler(crawler)
    scheduler.enqueue_request(make_request("http://a.example/old", CTX, callback=spider.parse, errback=spider.on_error))
    request = scheduler.next_request()
    assert request is not None and scheduler.frontier.leases() == {"http://a.example/old": "w1"}
    redirected = request.replace(url="http://a.example/new")
    redirected.meta["redirect_urls"] = ["http://a.example/old"]
    assert scheduler.enqueue_request(redirected) is True
    assert scheduler.frontier.leases() == {"http://a.example/old": "w1"}  # until the request for /new is queued
    scheduler.push_pending()
    assert scheduler.frontier.leases() == {}
    got = scheduler.next_request()
    assert got is not None and got.meta["redirect_urls"] == ["http://a.example/old"]
    assert scheduler.frontier.leases() == {"http://a.example/new": "w1"}


def test_a_redirect_chain_dropped_as_a_duplicate_is_released_with_its_row(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    crawler, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    dropped = record_dropped(crawler)
    a, b = "http://a.example/loop/a", "http://a.example/loop/b"
    scheduler.enqueue_request(make_request(a, CTX, callback=spider.parse, errback=spider.on_error))
    first = scheduler.next_request()
    assert first is not None
    to_b = first.replace(url=b)
    to_b.meta["redirect_urls"] = [a]
    assert scheduler.enqueue_request(to_b) is True
    second = scheduler.next_request()
    assert second is not None
    back_to_a = second.replace(url=a)
    back_to_a.meta["redirect_urls"] = [a, b]
    assert scheduler.enqueue_request(back_to_a) is True
    scheduler.push_pending()
    assert dropped == [a]  # a redirect loop: its row is for a, not b
    assert scheduler.frontier.leases() == {b: "w1"}
    commit_and_wait(worker, [{"url": a, "final_url": a}])
    assert scheduler.frontier.leases() == {}


@pytest.mark.parametrize("how", ["killed", "stopped"])
def test_a_page_whose_lease_came_back_is_read_again_without_a_duplicate_row(
    tmp_path: Path, redis_server: RedisServer, how: str
) -> None:
    """The scenario of the killed-worker crawl below, step by step: the victim reads blog-a's page and
    queues its feed, then dies (SIGKILL) or stops (Ctrl-C) before the page's rows are committed.
    The helper reads the page again: the feed is no duplicate (``enqueue_request`` True: Scrapy sends
    no ``request_dropped``, so no ``duplicate`` row) and is fetched once."""
    seed = FetchContext(via=Via.URL, source=None, depth=0, kind=Expect.PAGE)
    victim_crawler = frontier_crawler(tmp_path / "victim", redis_server, FEEDCENSUS_WORKER_ID="victim")
    victim, spider = open_scheduler(victim_crawler)
    victim.frontier.register()
    assert victim.enqueue_request(make_request(PAGE, seed, callback=spider.parse, errback=spider.on_error))
    page = victim.next_request()
    assert page is not None and page.url == PAGE
    feed_ctx = seed.child(Via.AUTODISCOVERY, PAGE, Expect.FEED)  # what autodiscovery makes of the page
    assert victim.enqueue_request(make_request(FEED, feed_ctx, callback=spider.parse, errback=spider.on_error))
    victim.push_pending()  # the feed is queued (with the victim's next take from the queue)
    if how == "killed":
        make_old(raw(redis_server), "j1", "victim", age=120)
    else:
        worker_of(victim_crawler).close("shutdown")

    helper_crawler = frontier_crawler(tmp_path / "helper", redis_server, FEEDCENSUS_WORKER_ID="helper")
    helper, spider = open_scheduler(helper_crawler)
    helper_worker = worker_of(helper_crawler)
    helper.frontier.register()
    helper.frontier.requeue_dead()
    again = helper.next_request()
    assert again is not None and again.url == PAGE
    named_again = make_request(FEED, feed_ctx, callback=spider.parse, errback=spider.on_error)
    assert helper.enqueue_request(named_again) is True
    helper.push_pending()
    assert stat(helper_crawler, "feedcensus/frontier/already_queued") == 1
    assert stat(helper_crawler, "dupefilter/filtered") is None
    feed = helper.next_request()
    assert feed is not None and feed.url == FEED and feed.meta["fc"] == feed_ctx
    assert helper.next_request() is None and not helper.has_pending_requests()  # one fetch of the feed

    rows = [{"url": PAGE, "final_url": PAGE}, {"url": FEED, "final_url": FEED}]
    commit_and_wait(helper_worker, rows)
    status = helper.frontier.status()
    assert (status.queued, status.leased, status.seen) == (0, 0, 2)
    assert children_keys(raw(redis_server)) == set()


def test_a_redis_error_in_the_scheduler_is_one_stat_and_one_log_line(
    tmp_path: Path, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = frontier_crawler(tmp_path, redis_server)
    scheduler, spider = open_scheduler(crawler)
    request = make_request("http://a.example/", CTX, callback=spider.parse, errback=spider.on_error)
    redis_server.stop()
    with caplog.at_level(logging.ERROR, logger="crawler.frontier"):
        assert scheduler.next_request() is None
        assert scheduler.has_pending_requests() is False
        assert scheduler.enqueue_request(request) is True  # let go, not reported as a duplicate
        assert scheduler.next_request() is None
    error = stat(crawler, "feedcensus/frontier_error")
    assert isinstance(error, str) and "\n" not in error and "ConnectionError" in error
    assert [r.getMessage() for r in caplog.records] == [f"{error}; stopping the crawl"]
    assert scheduler.worker.failed == error
    with pytest.raises(CloseSpider) as closing:
        scheduler.worker.spider_idle()
    assert closing.value.reason == "frontier_error"


def test_the_scheduler_needs_the_frontier(tmp_path: Path, redis_server: RedisServer) -> None:
    crawler = frontier_crawler(tmp_path, redis_server, FEEDCENSUS_FRONTIER="")
    worker = FrontierWorker.from_crawler(crawler)
    assert worker.frontier is None
    worker.seeded()  # without a frontier: nothing, and no error
    with pytest.raises(FrontierError, match="needs FEEDCENSUS_FRONTIER"):
        FrontierScheduler.from_crawler(crawler)


def test_the_frontier_setting_alone_makes_a_distributed_crawl(tmp_path: Path, redis_server: RedisServer) -> None:
    """However a crawl is started (-s, scrapy crawl), FEEDCENSUS_FRONTIER brings the scheduler and the
    worker extension; without it neither is there, and crawler.frontier (redis) need not be imported."""
    shared = frontier_crawler(tmp_path, redis_server)
    assert shared.settings["SCHEDULER"] == "crawler.frontier.FrontierScheduler"
    assert shared.settings.getwithbase("EXTENSIONS")["crawler.frontier.FrontierWorker"] == 120
    alone = frontier_crawler(tmp_path, redis_server, FEEDCENSUS_FRONTIER="")
    assert alone.settings["SCHEDULER"] != "crawler.frontier.FrontierScheduler"
    assert "crawler.frontier.FrontierWorker" not in alone.settings.getwithbase("EXTENSIONS")
    # CrawlerProcess.crawl(crawler) copies the process's settings onto the crawler (the CLI's way):
    # the extension survives that
    project = Settings(
        {"FEEDCENSUS_FRONTIER": redis_server.url, "EXTENSIONS": {"crawler.extensions.dataset.Dataset": 100}}
    )
    made = project.copy()
    CensusSpider.update_settings(made)
    made.update(project)
    assert {"crawler.frontier.FrontierWorker", "crawler.extensions.dataset.Dataset"} <= set(
        made.getwithbase("EXTENSIONS")
    )
    own = Settings({"FEEDCENSUS_FRONTIER": redis_server.url})
    own.set("SCHEDULER", "my.Scheduler", priority="cmdline")  # a scheduler given on the command line stays
    CensusSpider.update_settings(own)
    assert own["SCHEDULER"] == "my.Scheduler"


# --- the worker --------------------------------------------------------------------------------------------


def test_a_feed_not_due_is_recorded_by_one_worker_of_the_job(tmp_path: Path, redis_server: RedisServer) -> None:
    claims = []
    for name in ("w1", "w2"):
        crawler = frontier_crawler(tmp_path / name, redis_server, FEEDCENSUS_WORKER_ID=name)
        worker = worker_of(crawler)
        worker.spider_opened()
        assert worker._loop is not None
        worker._loop.stop()
        history = history_of(crawler)
        assert history is not None
        claims.append(
            (
                history.claim_not_due("http://a.example/feed", None),
                history.claim_not_due("http://a.example/other", None),
            )
        )
    assert claims == [(True, True), (False, False)]
    assert raw(redis_server).smembers("feedcensus:j1:not_due") == {"http://a.example/feed", "http://a.example/other"}


def test_committed_rows_are_released_one_heartbeat_later(tmp_path: Path, redis_server: RedisServer) -> None:
    crawler, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    worker.frontier.register()  # type: ignore[union-attr]
    for url in ("http://a.example/1", "http://a.example/2"):
        scheduler.enqueue_request(make_request(url, CTX, callback=spider.parse, errback=spider.on_error))
        scheduler.next_request()
    rows: list[dict[str, Any]] = [
        {"url": "http://a.example/1", "final_url": None},
        {"url": "http://x.example/", "final_url": "http://a.example/2"},
    ]
    worker.committed(Batch(seq=1, tables={"fetch_log": rows, "feeds": []}))
    worker.tick()  # the requests those responses made may still be on their way to the queue
    assert len(scheduler.frontier.leases()) == 2
    worker.tick()
    assert scheduler.frontier.leases() == {}
    assert stat(crawler, "feedcensus/frontier/released") == 2


def test_an_idle_worker_waits_for_busy_ones_and_closes_when_the_job_is_quiet(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    crawler = frontier_crawler(tmp_path, redis_server)
    worker = worker_of(crawler)
    frontier = worker.frontier
    assert frontier is not None
    other = connect(redis_server, worker="other")
    frontier.register()
    other.register(BUSY)
    with pytest.raises(DontCloseSpider):
        worker.spider_idle()  # not seeded yet
    assert worker.state == IDLE
    worker.seeded()
    with pytest.raises(DontCloseSpider):
        worker.spider_idle()  # the other worker is busy: it may still queue requests
    other.push("http://a.example/", "r", fingerprint="fp")
    assert other.pop() is not None
    other.heartbeat(IDLE)
    # Quiet: the other worker's lease only waits for its commit. But should it die first, its request comes
    # back to the queue, and a worker must be left to fetch it: this one waits for the lease's release...
    with pytest.raises(DontCloseSpider):
        worker.spider_idle()
    # ... or as long as finding the other dead takes (a lease and two heartbeats), then closes anyway.
    assert worker._others_hold_since is not None
    worker._others_hold_since -= frontier.lease_seconds + 2 * worker.interval
    worker.spider_idle()
    worker.close("finished")
    assert frontier.status().state == "running"  # not done while that lease is held
    other.release(["http://a.example/"])
    assert other.unregister() == []
    assert other.is_done() and other.status().workers == []


def test_an_idle_worker_closes_once_the_other_workers_leases_are_released(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    crawler = frontier_crawler(tmp_path, redis_server)
    worker = worker_of(crawler)
    assert worker.frontier is not None
    other = connect(redis_server, worker="other")
    worker.frontier.register()
    other.register(BUSY)
    worker.seeded()
    other.push("http://a.example/", "r", fingerprint="fp")
    assert other.pop() is not None
    other.heartbeat(IDLE)
    with pytest.raises(DontCloseSpider):
        worker.spider_idle()
    other.release(["http://a.example/"])
    worker.spider_idle()  # nothing held by another worker: the spider may close
    worker.close("finished")
    assert other.unregister() == []
    assert other.is_done()


def test_a_finished_worker_lets_go_of_a_lease_no_row_named(tmp_path: Path, redis_server: RedisServer) -> None:
    crawler, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server)
    assert worker.frontier is not None
    worker.frontier.register()
    worker.seeded()
    scheduler.enqueue_request(make_request("http://a.example/", CTX, callback=spider.parse, errback=spider.on_error))
    assert scheduler.next_request() is not None
    worker.close("finished")  # everything it fetched is committed: fetching it again would change nothing
    status = connect(redis_server, worker="other").status()
    assert (status.queued, status.leased, status.state) == (0, 0, "done")
    assert stat(crawler, "feedcensus/frontier/orphaned") == 1


def test_a_worker_that_stops_early_hands_back_what_it_holds_and_the_last_one_ends_the_job(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    crawler, scheduler, spider, worker = frontier_scheduler(tmp_path, redis_server, FEEDCENSUS_FRONTIER_KEY_TTL=100)
    assert worker.frontier is not None
    worker.frontier.register()
    scheduler.enqueue_request(make_request("http://a.example/", CTX, callback=spider.parse, errback=spider.on_error))
    worker.seeded()
    assert scheduler.next_request() is not None

    worker.close("shutdown")  # Ctrl-C: the request in flight goes back

    other = connect(redis_server, worker="other")
    status = other.status()
    assert (status.queued, status.leased, status.workers, status.state) == (1, 0, [], "running")
    assert stat(crawler, "feedcensus/frontier/requeued") == 1
    assert stat(crawler, "feedcensus/frontier/redis_commands") > 0
    # A later worker takes it, commits its row and closes: the job is done and its keys expire.
    crawler2 = frontier_crawler(tmp_path, redis_server, FEEDCENSUS_WORKER_ID="w2", FEEDCENSUS_FRONTIER_KEY_TTL=100)
    scheduler2, _ = open_scheduler(crawler2)
    worker2 = worker_of(crawler2)
    assert worker2.frontier is not None
    worker2.frontier.register()
    assert scheduler2.next_request() is not None
    worker2.committed(Batch(seq=1, tables={"fetch_log": [{"url": "http://a.example/", "final_url": None}]}))
    worker2.spider_idle()
    worker2.close("finished")
    assert other.status().state == "done"
    assert 0 < raw(redis_server).ttl("feedcensus:j1:dupefilter") <= 100


# --- a real distributed crawl: two Scrapy processes on one frontier ------------------------------------------

RUNNER = """
import json, sys
from scrapy.crawler import CrawlerProcess
from scrapy.settings import Settings
import crawler.settings as project
from crawler.spiders.census import CensusSpider

frontier, job, worker, out, seeds, delay, concurrency, log = sys.argv[1:9]
settings = Settings()
settings.setmodule(project, priority="project")
settings.setdict({
    "FEEDCENSUS_OUT": out, "FEEDCENSUS_JOB_ID": job, "FEEDCENSUS_WORKER_ID": worker,
    "FEEDCENSUS_REFLEXIVE": False, "FEEDCENSUS_ALLOW_PRIVATE_NETWORKS": True, "FEEDCENSUS_LIVE_PROGRESS": False,
    "AUTOTHROTTLE_ENABLED": False, "CONCURRENT_REQUESTS_PER_DOMAIN": 8, "DOWNLOAD_DELAY": float(delay),
    "CONCURRENT_REQUESTS": int(concurrency),
    "LOG_LEVEL": "INFO", "LOG_FILE": log,
}, priority="cmdline")
if frontier:
    settings.setdict({
        "SCHEDULER": "crawler.frontier.FrontierScheduler", "FEEDCENSUS_FRONTIER": frontier,
        "FEEDCENSUS_FRONTIER_HEARTBEAT": 0.5, "FEEDCENSUS_FRONTIER_LEASE": 3.0,
    }, priority="cmdline")
process = CrawlerProcess(settings)
crawler = process.create_crawler(CensusSpider)
process.crawl(crawler, seeds=seeds or None)
process.start()
stats = crawler.stats.get_stats()
print(json.dumps({k: v for k, v in stats.items() if isinstance(v, (int, float, str))}))
"""


def start_crawl(
    tmp_path: Path, name: str, frontier: str, seeds: str, delay: float = 0.0, concurrency: int = 16
) -> subprocess.Popen[str]:
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER, encoding="utf-8")
    argv = [str(runner), frontier, "e2e", name, str(tmp_path / "out" if frontier else tmp_path / name)]
    argv += [seeds, str(delay), str(concurrency), str(tmp_path / f"{name}.log")]
    return subprocess.Popen(
        [sys.executable, *argv],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )


def finished(proc: subprocess.Popen[str], tmp_path: Path, name: str) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=120)
    log = (tmp_path / f"{name}.log").read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    return dict(json.loads(out.strip().splitlines()[-1]))


def fetched(out: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(final URL, outcome) of every fetch_log row but robots.txt (each process fetches and records its
    own), and the URLs the rows name.

    Keyed by the final URL, not the URL requested: when two names of one feed are found (a page's
    link to feed.xml, a list's link to /rss that redirects there), the first to reach the duplicate
    filter gets the ``feed`` row and the other the ``duplicate`` one. With several workers, a page
    held by a killed worker is read after its lease runs out, later than one process would: the
    rows then swap which name is which, and still say the same (one fetch, one duplicate).
    """
    from pipelines.dataset.store import open_table

    rows = open_table(str(out), "fetch_log", "e2e").to_table(columns=["url", "final_url", "outcome"]).to_pylist()
    rows = [r for r in rows if not r["url"].endswith("/robots.txt")]
    return sorted((r["final_url"] or r["url"], r["outcome"]) for r in rows), sorted(r["url"] for r in rows)


def test_workers_crawl_one_job_and_write_what_one_process_would_even_when_one_is_killed(
    tmp_path: Path, redis_server: RedisServer, demo_server: Any
) -> None:
    from crawler.demo.webserver import demo_seeds

    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(demo_seeds(demo_server.url)) + "\n", encoding="utf-8")
    alone = start_crawl(tmp_path, "alone", "", str(seeds))  # Scrapy's own scheduler: the reference
    # A slow coordinator taking two requests at a time, so that the others get their share of the demo web
    # (at 0.2 s it could finish the web on a loaded machine before the victim had leased two requests).
    coordinator = start_crawl(tmp_path, "coordinator", redis_server.url, str(seeds), delay=0.4, concurrency=2)
    watcher = connect(redis_server, job="e2e", worker="watcher")
    wait_for(
        lambda: bool(watcher.status().workers)
    )  # workers join a job its coordinator started (`feedcensus worker` checks)
    victim = start_crawl(tmp_path, "victim", redis_server.url, "", delay=1.0)  # slow: holds what it took
    held = wait_for(lambda: [w.leased for w in watcher.status().workers if w.id == "victim" and w.leased >= 2])
    victim.kill()  # SIGKILL, with requests in flight and nothing committed
    victim.communicate()
    helper = start_crawl(tmp_path, "helper", redis_server.url, "")

    stats = {name: finished(proc, tmp_path, name) for name, proc in (("coordinator", coordinator), ("helper", helper))}
    reference = finished(alone, tmp_path, "alone")

    assert fetched(tmp_path / "out") == fetched(tmp_path / "alone")  # nothing lost, nothing twice
    assert reference["finish_reason"] == "finished"
    for name, s in stats.items():
        assert s["finish_reason"] == "finished", name
        assert s.get("feedcensus/frontier_error") is None
    # The coordinator takes requests from the start; whether the helper gets any before the
    # coordinator has taken back the victim's depends on the machine's load: not asserted.
    assert stats["coordinator"].get("feedcensus/frontier/leased", 0) > 0
    assert sum(s.get("feedcensus/frontier/requeued", 0) for s in stats.values()) >= held[0]
    status = watcher.status()
    assert (status.state, status.queued, status.leased, status.workers) == ("done", 0, 0, [])
    assert status.seen > 10 and 0 < raw(redis_server).ttl("feedcensus:e2e:dupefilter") <= 604800


def wait_for(condition: Any, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_a_start_reserved_keeps_the_hosts_delay_and_pause_and_an_unused_one_may_be_renewed(
    redis_server: RedisServer,
) -> None:
    """``reserve_start`` (crawler/downloader.py calls it for a start no take reserved): each start is the host's
    delay after the last one, whichever worker reserved it, and not inside the host's pause; a worker whose timer
    came too late renews its unused start, now, while no other start was reserved after it."""
    a, b = connect(redis_server, worker="wa"), connect(redis_server, worker="wb")
    a.register()
    a.set_budget(2, 0.5)
    wait, first = a.reserve_start("h.example")
    assert wait == 0.0
    wait, second = b.reserve_start("h.example")
    assert 0.45 < wait <= 0.5 and abs(float(second) - float(first) - 0.5) < 1e-3
    wait, _ = a.reserve_start("h.example", 2.0)  # a Crawl-delay it just read: the host's delay from now on
    assert 2.4 < wait <= 2.5
    # b's start (0.5 s from the first) was not used, but a start was reserved after it: no renewal
    wait, _ = b.reserve_start("h.example", None, second)
    assert wait > 4.0
    c = connect(redis_server, worker="wc")
    wait, third = c.reserve_start("h2.example")
    time.sleep(0.2)
    wait, renewed = c.reserve_start("h2.example", None, third)  # nothing since: now, not a delay later
    assert wait == 0.0 and float(renewed) > float(third)
    a.pause_host("h2.example", 1.0, "429")
    wait, _ = c.reserve_start("h2.example", None, renewed)
    assert 0.9 < wait <= 1.0  # never inside the host's pause
    for frontier in (a, b, c):
        frontier.close()


def test_a_takes_start_that_went_unused_is_renewed_now_while_nobody_reserved_after_it(
    redis_server: RedisServer,
) -> None:
    """A take says when it was made (Redis's clock): the start it reserved at each host it took from. A worker whose
    ticket went stale before its request could start renews that start (crawler/downloader.py): now while no
    start at the host was reserved after the take, else the host's delay after the last one. Before, a take
    did not say when, and every such renewal waited for the host's delay after the take."""
    a, b = connect(redis_server, worker="wa"), connect(redis_server, worker="wb")
    a.register()
    a.set_budget(2, 0.5)
    a.push("http://h.example/1", "one", fingerprint="1")
    assert [got[1] for got in a.take(1)] == ["one"] and a.taken_at
    assert abs(float(a.taken_at) - time.time()) < 5  # Redis's clock, on this machine
    time.sleep(0.2)  # the request sat in the worker past its ticket
    wait, renewed = a.reserve_start(host_of("http://h.example/1"), None, a.taken_at)
    assert wait == 0.0 and float(renewed) > float(a.taken_at)
    # another take's start, then a start another worker reserved after it: that one waits for the delay
    a.push("http://k.example/1", "other", fingerprint="2")
    assert [got[1] for got in b.take(1)] == ["other"]
    took = b.taken_at
    wait, _ = a.reserve_start(host_of("http://k.example/1"))
    assert 0.4 < wait <= 0.5
    wait, _ = b.reserve_start(host_of("http://k.example/1"), None, took)
    assert 0.9 < wait <= 1.0
    for frontier in (a, b):
        frontier.close()


def test_robots_txt_is_claimed_or_read_in_one_round_trip(redis_server: RedisServer) -> None:
    """The first worker to ask for a host's robots.txt claims its fetch; another reads what the job holds:
    pending while the fetch runs, then the body (or the error). Each question is one round trip (before, a
    worker that did not claim it sent two: the claim, then the read)."""
    first, other = connect(redis_server, worker="w1"), connect(redis_server, worker="w2")
    try:
        for frontier in (first, other):  # a script's first run loads it into Redis (more commands, once)
            frontier.robots(f"warm-up-{frontier.worker}.example:80")
        answers = []
        for frontier in (first, other, first):
            before = frontier.commands
            answers.append(frontier.robots("h.example:80"))
            assert frontier.commands == before + 1
        assert answers == [("mine", None), ("pending", None), ("mine", None)]
        first.share_robots("h.example:80", b"User-agent: *\nDisallow: /x\n")
        before = other.commands
        assert other.robots("h.example:80") == ("body", b"User-agent: *\nDisallow: /x\n")
        assert other.commands == before + 1
        first.share_robots("h2.example:80", None)
        assert other.robots("h2.example:80") == ("error", None)
    finally:
        first.close()
        other.close()


def test_an_unreadable_queued_request_gives_back_the_slot_of_the_host_it_was_taken_from(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """A queued request that cannot be read is dropped, and the slot its take held goes back to the host whose
    queue it came from: for an archive's record (leased as ``archive <url>``, queued under the archive's host),
    not its URL's host. Before, the slot went back to host '' (the lease key has no host), and the archive's
    host kept one slot taken for the rest of the job: with one request at a time, none of its records again."""
    crawler, scheduler, _spider, worker = frontier_scheduler(tmp_path, redis_server)
    frontier = worker.frontier
    assert frontier is not None
    frontier.set_budget(1, 0.0)
    frontier.push_many([Push("archive http://a.example/feed.xml", "not a request", host="cc.example")])
    assert scheduler.next_request() is None
    assert stat(crawler, "feedcensus/frontier/unreadable") == 1
    frontier.give_back(scheduler.done)
    slots = raw(redis_server).hgetall("feedcensus:j1:slots")
    assert slots.get("cc.example", "0 0").split()[0] == "0", slots
    assert frontier.leases() == {}
