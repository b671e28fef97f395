"""A host that says "slow down" is slowed as a whole (issue #41).

``crawler.fetch.politeness`` decides how long a host is left alone, tested on plain values; the crawl
test serves one host whose first feed answers 429 with ``Retry-After: 4`` among 24 feeds that answer (0.4 s each, so the host still has work queued through the window)
200, logs every request with its time on the server's side, and checks that no request reached the
host inside the window (beyond what was already in flight when the 429 was sent). Before, only the
refused request waited: the other feeds were fetched inside the window.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from crawler.demo.routes import Route, Web
from crawler.fetch.politeness import HostPauses, retry_after_seconds
from tests.conftest import QUICK_CRAWL, TimedServer, read_table, run_cli

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("20", 20.0),
        (" 0 ", 0.0),
        ("Fri, 27 Nov 2026 12:01:30 GMT", 90.0),
        ("Fri, 27 Nov 2026 11:00:00 GMT", 0.0),  # a date in the past: ask again now
        ("-5", None),
        ("1.5", None),
        ("soon", None),
        ("\xb2", None),  # a digit to str.isdigit(), not to float()
        ("", None),
        (None, None),
    ],
)
def test_retry_after_is_read_as_seconds_or_a_date(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value, NOW) == seconds


def test_a_throttling_answer_pauses_its_host_for_retry_after_capped() -> None:
    pauses = HostPauses(base=1.0, cap=60.0)
    pause = pauses.answered("a.example", 429, "20", now=100.0, wall=NOW)
    assert pause is not None and pause.until == 120.0 and "429 with Retry-After 20" in pause.reason
    assert pauses.paused("a.example", 119.0) is pause and pauses.paused("b.example", 119.0) is None
    assert pauses.paused("a.example", 120.0) is None and pauses.count(120.0) == 0
    # Asked for longer than the cap: deferred until then (its requests recorded, not sent), not cut to the cap.
    long = pauses.answered("a.example", 503, "86400", now=200.0, wall=NOW)
    assert long is not None and long.until == 86600.0 and long.deferred
    assert "more than FEEDCENSUS_HOST_PAUSE_MAX (60 s)" in long.reason
    assert pauses.adopt("b.example", 86600.0, long.reason).deferred  # another worker's deferred pause stays one


def test_without_retry_after_the_back_off_doubles_until_a_good_answer() -> None:
    pauses = HostPauses(base=1.0, cap=60.0)
    waits = []
    for _ in range(4):
        pause = pauses.answered("a.example", 503, None, now=0.0, wall=NOW)
        assert pause is not None
        waits.append(pause.until)
    assert waits == [1.0, 2.0, 4.0, 8.0]
    assert pauses.answered("a.example", 200, None, now=10.0, wall=NOW) is None
    again = pauses.answered("a.example", 503, None, now=10.0, wall=NOW)
    assert again is not None and again.until == 11.0  # the good answer reset the count


def test_a_host_that_throttles_for_ever_stays_at_the_cap() -> None:
    pauses = HostPauses(base=1.0, cap=60.0)
    for n in range(2000):  # 2.0 ** 1024 would overflow: the count stops growing long before
        pause = pauses.answered("a.example", 503, None, now=float(n * 100), wall=NOW)
        assert pause is not None and pause.until == n * 100 + min(2.0 ** min(n, 10), 60.0)


def test_a_pause_another_worker_started_is_adopted_unless_a_longer_one_stands() -> None:
    pauses = HostPauses(base=1.0, cap=3600.0)
    theirs = pauses.adopt("a.example", 30.0, "a.example asked to slow down: 429 with Retry-After 30")
    assert pauses.paused("a.example", 10.0) is theirs
    assert pauses.adopt("a.example", 20.0, "shorter") is theirs
    longer = pauses.adopt("a.example", 40.0, "longer")
    assert longer.until == 40.0 and pauses.paused("a.example", 35.0) is longer


def test_a_shorter_pause_does_not_cut_a_longer_one() -> None:
    pauses = HostPauses(base=1.0, cap=3600.0)
    first = pauses.answered("a.example", 429, "30", now=0.0, wall=NOW)
    second = pauses.answered("a.example", 429, "5", now=1.0, wall=NOW)
    assert second is first and pauses.count(10.0) == 1
    assert pauses.answered("a.example", 404, None, now=2.0, wall=NOW) is None  # not a throttling answer


FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://example.org/</link>'
    b"<description>d</description></channel></rss>"
)
RETRY_AFTER = 4


def test_a_429_with_retry_after_pauses_every_request_to_the_host(tmp_path: Path) -> None:
    web = Web()
    web.add(
        "/slow.xml",
        Route(status=429, body=b"slow down", headers={"Content-Type": "text/plain", "Retry-After": str(RETRY_AFTER)}),
    )
    feeds = [f"/f{n}.xml" for n in range(24)]
    for path in feeds:
        web.add(path, Route(FEED, headers={"Content-Type": "application/rss+xml"}, delay=0.4))
    with TimedServer(web) as server:
        urls = [a for p in ["/slow.xml", *feeds] for a in ("--url", server.url_for(p))]
        proc = run_cli(
            "crawl", *urls, "--out", str(tmp_path / "out"), "--no-reflexive", *QUICK_CRAWL,
            "-s", "ROBOTSTXT_OBEY=False", "-s", "RETRY_TIMES=1", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2",
            timeout=180,
        )  # fmt: skip
        log = list(server.log)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The summary says so: the refused request's two 429s each paused the host.
    assert "hosts that asked to slow down (429/503): 2 pauses" in proc.stdout + proc.stderr, proc.stderr[-2000:]
    first_429 = next(t for t, target in log if target == "/slow.xml")
    # Requests that reached the host inside its window, past a margin for what was in flight at the 429.
    inside = [target for t, target in log if first_429 + 0.5 < t < first_429 + RETRY_AFTER - 0.5]
    assert inside == [], (inside, [(round(t - first_429, 2), target) for t, target in log])
    # Nothing was dropped: every feed was fetched after the pause, and the 429s have their rows.
    rows = read_table(tmp_path / "out", "fetch_log").to_pylist()
    outcomes = {str(r["url"]).rsplit("/", 1)[-1]: r["outcome"] for r in rows}
    assert all(outcomes[p.lstrip("/")] == "feed" for p in feeds), outcomes
    assert outcomes["slow.xml"] == "http_error"
    assert next(r for r in rows if str(r["url"]).endswith("/slow.xml"))["retry_after"] == str(RETRY_AFTER)
    # The host was asked again once its window was over.
    assert any(t >= first_429 + RETRY_AFTER - 0.5 for t, _ in log), log
    # The rows of the requests that waited for the pause say so.
    waited = [r for r in rows if r["waited_for"]]
    assert waited and all(f"429 with Retry-After {RETRY_AFTER}" in r["waited_for"] for r in waited), waited
    assert {r["outcome"] for r in waited} == {"feed"}


def test_a_host_asking_for_longer_than_the_cap_has_its_requests_deferred_not_sent(tmp_path: Path) -> None:
    """Retry-After 7200 with FEEDCENSUS_HOST_PAUSE_MAX=60: the host's other requests get deferred rows at
    once, none reaches the host after the 429, and the crawl does not wait an hour (nor come back after 60 s)."""
    web = Web()
    web.add("/slow.xml", Route(status=429, body=b"no", headers={"Content-Type": "text/plain", "Retry-After": "7200"}))
    feeds = [f"/f{n}.xml" for n in range(12)]
    for path in feeds:
        web.add(path, Route(FEED, headers={"Content-Type": "application/rss+xml"}, delay=0.3))
    with TimedServer(web) as server:
        urls = [a for p in ["/slow.xml", *feeds] for a in ("--url", server.url_for(p))]
        proc = run_cli(
            "crawl", *urls, "--out", str(tmp_path / "out"), "--no-reflexive", *QUICK_CRAWL,
            "-s", "ROBOTSTXT_OBEY=False", "-s", "RETRY_TIMES=0", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
            "-s", "FEEDCENSUS_HOST_PAUSE_MAX=60", timeout=120,
        )  # fmt: skip
        log = list(server.log)
    assert proc.returncode == 0, proc.stderr[-3000:]
    refused_at = next(t for t, target in log if target == "/slow.xml")
    assert [target for t, target in log if t > refused_at + 0.5] == []
    rows = read_table(tmp_path / "out", "fetch_log").to_pylist()
    deferred = [r for r in rows if r["outcome"] == "deferred"]
    fetched = [r for r in rows if r["outcome"] == "feed"]
    assert deferred and len(deferred) + len(fetched) == len(feeds), rows
    assert all("Retry-After 7200" in r["error"] and r["status"] is None for r in deferred)


def test_the_progress_line_counts_the_hosts_paused() -> None:
    from crawler.extensions.progress import status_line

    assert "paused" not in status_line({"response_received_count": 3}, 1, 10.0)
    assert status_line({"politeness/hosts_paused": 1}, 1, 10.0).endswith("1 host paused")
    assert "2 hosts paused" in status_line({"politeness/hosts_paused": 2}, 0, 10.0)
