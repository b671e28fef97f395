"""The arithmetic of the scale benchmark's log analyser (``benchmarks/scalelog.py``), its web's plan, and
its CPU groups and their options (``benchmarks/scalerig.py``, ``bench_scale.options``).

Hand-made request logs with known answers: peaks, gaps, Retry-After windows, robots.txt fetches.
No crawl runs here; the benchmark itself is ``benchmarks/bench_scale.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_scale
import realweb
import scalelog
import scalerig
from scalelog import Request


def req(
    start: float, end: float, *, host: str = "h", path: str = "/a", status: int = 200, ra: float | None = None
) -> Request:
    return Request(host, path, status, start, end, ra)


def test_peak_counts_overlap_and_not_a_finish_meeting_an_arrival() -> None:
    assert scalelog.peak_in_flight([req(0, 1), req(0.5, 2), req(0.7, 0.8)]) == 3
    # One ends at the instant the next arrives: never two in flight.
    assert scalelog.peak_in_flight([req(0, 1), req(1, 2), req(2, 3)]) == 1
    assert scalelog.peak_in_flight([]) == 0


def test_gaps_are_between_sorted_arrivals() -> None:
    gaps = scalelog.gaps([req(3.0, 4), req(1.0, 2), req(1.25, 2)])
    assert gaps == pytest.approx([0.25, 1.75])
    f = scalelog.host_figures("h", [req(3.0, 4), req(1.0, 2), req(1.25, 2)])
    assert f.min_gap == pytest.approx(0.25)
    assert f.median_gap == pytest.approx(1.0)
    assert scalelog.host_figures("h", [req(0, 1)]).min_gap is None


def test_retry_after_window_counts_arrivals_after_the_429_was_sent() -> None:
    log = [
        req(0.0, 0.5),  # in flight when the 429 goes out: not counted
        req(0.1, 0.2, status=429, ra=4),  # window (0.2, 4.2)
        req(1.0, 1.1, status=429, ra=3),  # inside: counted; its own window (1.1, 4.1) merges
        req(2.0, 2.1),  # inside: counted
        req(4.3, 4.4),  # after: fine
    ]
    assert scalelog.windows(log) == [(0.2, 4.2)]
    assert scalelog.in_windows(log) == 2
    f = scalelog.host_figures("h", log)
    assert (f.in_window, f.refused) == (2, 2)


def test_separate_windows_stay_apart() -> None:
    log = [req(0, 1, status=429, ra=1), req(1.5, 1.6), req(5, 6, status=429, ra=2), req(6.5, 7)]
    assert scalelog.windows(log) == [(1, 2), (6, 8)]
    assert scalelog.in_windows(log) == 2


def test_summary_over_hosts_against_limit_and_delays() -> None:
    log = [
        req(0.0, 1.0, host="a", path="/robots.txt"),
        req(1.0, 2.0, host="a"),
        req(1.1, 2.0, host="a"),  # a: peak 2, gap 0.1
        req(1.2, 2.0, host="a"),  # a: peak 3
        req(0.0, 0.1, host="b", path="/robots.txt"),
        req(0.5, 0.6, host="b", path="/robots.txt"),  # b: robots.txt twice, gap 0.5
        req(0.0, 0.1, host="c", status=429, ra=2),
        req(0.5, 0.6, host="c"),  # c: inside its window
    ]
    figures = scalelog.by_host(log)
    s = scalelog.summarise(log, figures, 2, {"a": 0.25, "b": 1.5, "c": 0.25})
    assert (s.hosts, s.requests, s.max_peak, s.hosts_over_limit) == (3, 8, 3, 1)
    assert s.min_gap == pytest.approx(0.1)
    assert s.short_gap_hosts == 2  # a (0.1 < 0.125) and b (0.5 < 0.75); c's 0.5 is not under 0.125
    assert (s.in_window, s.window_hosts, s.throttled_hosts, s.refused) == (1, 1, 1, 1)
    assert (s.robots, s.robots_max, s.robots_repeat_hosts) == (3, 2, 1)
    assert s.statuses == {200: 7, 429: 1}
    assert s.max_in_window == 1
    assert scalelog.worst_hosts(figures, 1)[0].host == "a"


def test_time_to_share_counts_finishes_from_the_start() -> None:
    log = [req(0, float(k)) for k in range(1, 11)]  # finishes at 1..10
    assert scalelog.time_to_share(log, 0.5, 0.9) == pytest.approx(8.5)
    assert scalelog.time_to_share(log, 0.0, 1.0) == pytest.approx(10.0)
    assert scalelog.time_to_share([], 0.0, 0.9) is None
    f = scalelog.host_figures("h", [req(2, 3), req(1, 5)])
    assert (f.first, f.last) == (1, 5)


def test_read_log_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "run.tsv"
    p.write_text("127.3.0.1\t/s1/\t200\t10.5\t10.75\t\n127.3.0.1\t/s1/feed.xml\t429\t11\t11.5\t4\nbroken line\n")
    assert scalelog.read_log(p) == [
        Request("127.3.0.1", "/s1/", 200, 10.5, 10.75, None),
        Request("127.3.0.1", "/s1/feed.xml", 429, 11.0, 11.5, 4.0),
    ]


def test_plan_puts_large_hosts_first_and_every_site_somewhere() -> None:
    plan = realweb.Plan(300, 200, (20, 40))
    assert [len(plan.by_address[realweb.address(h)].sites) for h in (0, 1)] == [20, 40]
    assert sorted(s for h in plan.by_address.values() for s in h.sites) == list(range(300))
    assert all(h.sites for h in plan.by_address.values())
    assert plan.by_address[realweb.address(1)].trigger == realweb.LARGE_TRIGGER
    first = plan.by_address[realweb.address(0)]
    assert first.crawl_delay == realweb.LARGE_CRAWL_DELAY
    assert first.robots_txt() == b"User-agent: *\nDisallow: /private/\nCrawl-delay: 0.5\n"
    assert realweb.Plan(10, 10).by_address[realweb.address(0)].crawl_delay in (0.0, realweb.CRAWL_DELAY)
    assert (
        plan == realweb.Plan(300, 200, (20, 40)) and plan.host_of_site == realweb.Plan(300, 200, (20, 40)).host_of_site
    )
    with pytest.raises(ValueError, match="cannot give each"):
        realweb.Plan(100, 200)


def test_conditional_requests() -> None:
    assert realweb.not_modified({b"if-none-match": b'"x", "fc-7-1"'}, 7)
    assert not realweb.not_modified({b"if-none-match": b'"fc-8-1"'}, 7)
    assert realweb.not_modified({b"if-modified-since": realweb.LAST_MODIFIED.encode()}, 7)
    assert not realweb.not_modified({b"if-modified-since": b"Mon, 01 Jan 2024 00:00:00 GMT"}, 7)
    assert not realweb.not_modified({b"if-modified-since": b"garbage"}, 7)
    assert not realweb.not_modified({}, 7)


@pytest.mark.skipif(
    not os.access(scalerig.CGROUP_ROOT, os.W_OK), reason="needs a writable cgroup v1 CPU hierarchy (root)"
)
def test_a_cpu_group_holds_its_quota_over_the_period_asked_for() -> None:
    def period_and_quota(group: Path) -> tuple[int, int]:
        return int((group / "cpu.cfs_period_us").read_text()), int((group / "cpu.cfs_quota_us").read_text())

    groups = scalerig.CpuGroups()
    try:
        default = groups.make(2_500)
        coarse = groups.make(25_000, 100_000)
        assert period_and_quota(default) == (scalerig.PERIOD_US, 2_500) == (10_000, 2_500)
        assert period_and_quota(coarse) == (100_000, 25_000)
    finally:
        groups.remove()
    assert not default.exists() and not coarse.exists()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--period", "0.5"], "--period: 1 to 1000 ms"),
        (["--period", "2000"], "--period: 1 to 1000 ms"),
        (["--quota", "0.05", "--period", "10"], "at least 1 ms of CPU a period"),
    ],
)
def test_a_period_or_quota_the_kernel_refuses_is_one_line_before_anything_runs(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        bench_scale.main([*argv, "--parts", "a"])  # part a alone: no cgroup needed to get this far
    assert stop.value.code == 2
    assert says in capsys.readouterr().err


def test_the_options_carry_the_period_and_the_quota_over_it() -> None:
    def parsed(**given: object) -> argparse.Namespace:
        defaults = {"limit": 2, "delay": 0.25, "timeout": 600.0, "quota": 0.25, "period": 10.0}
        return argparse.Namespace(**{**defaults, "workers_without_settings": False, "keep": None, **given})

    opts = bench_scale.options(parsed())
    assert (opts.period_us, opts.quota_us, opts.worker_settings) == (10_000, 2_500, True)
    opts = bench_scale.options(parsed(period=100.0, quota=0.5, workers_without_settings=True))
    assert (opts.period_us, opts.quota_us, opts.worker_settings) == (100_000, 50_000, False)
    assert bench_scale.options(parsed(quota=0)).quota_us == -1
    assert bench_scale.options(parsed(keep=Path("kept"))).keep == Path("kept")
