"""``feedcensus due``: when each known feed is next due, on real Parquet, run for real.

Two runs are written with the project's DatasetWriter; the state index reads them back
(``StateIndex.open``) and the times below are worked out by hand from the feeds' hints:
a ttl of 15 and of 60 minutes, a ttl moved out of skipHours, and a feed with no hint
(the policy's max-interval, read from crawler.settings).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crawler import settings
from crawler.report.due import DueError, due_feeds, iso, parse_time, schedule, summary
from pipelines.dataset.commits import DatasetWriter
from pipelines.dataset.schedule import Policy
from pipelines.dataset.state import StateIndex, hints_of
from pipelines.dataset.store import list_jobs
from tests.conftest import REPO, assert_usage_error
from tests.conftest import feed_row as feed

FEEDCENSUS = REPO / ".venv" / "bin" / "feedcensus"

T = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)  # a Wednesday
QUICK = "http://quick.test/feed"  # ttl 15: due 12:15
TTL = "http://ttl.test/feed"  # ttl 60, fetched again at 12:20 in the second run: due 13:20
SKIP = "http://skip.test/feed"  # ttl 60 but skipHours 13 and 14: due 15:00
QUIET = "http://quiet.test/feed"  # no hint, no dated item: due after max-interval
PAGE = "http://page.test/"  # not a feed: not known


def write_job(out: Path, job: str, feeds: Iterable[Mapping[str, Any]], log: Iterable[Mapping[str, Any]]) -> None:
    writer = DatasetWriter(str(out), job)
    writer.write_many({"feeds": list(feeds), "fetch_log": list(log)})
    writer.close()
    time.sleep(0.02)  # the next run's first commit marker is later


def fetched(url: str, at: datetime, outcome: str = "feed") -> dict[str, Any]:
    return {"url": url, "final_url": url, "status": 200, "outcome": outcome, "fetched_at": at}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("due") / "out"
    first = [
        feed(QUICK, T, ttl=15),
        feed(TTL, T, ttl=60),
        feed(SKIP, T, ttl=60, skip_hours=[13, 14]),
        feed(QUIET, T),
    ]
    write_job(out, "b-first", first, [fetched(f["url"], T) for f in first] + [fetched(PAGE, T, "page")])
    later = T + timedelta(minutes=20)
    write_job(out, "a-second", [feed(TTL, later, ttl=60, status=200)], [fetched(TTL, later)])
    assert list_jobs(str(out)) == ["b-first", "a-second"]
    return out


def feedcensus(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(FEEDCENSUS), *args], capture_output=True, text=True, timeout=120, cwd=REPO, check=False)


def due_json(dataset: Path, *args: str) -> list[dict[str, Any]]:
    proc = feedcensus("due", str(dataset), "--json", *args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return [json.loads(line) for line in proc.stdout.splitlines()]


def at(minutes: int) -> str:
    return iso(T + timedelta(minutes=minutes))


# --- the schedule --------------------------------------------------------------------------


def test_due_lists_due_now_first_then_by_time_and_a_summary(dataset: Path) -> None:
    proc = feedcensus("due", str(dataset), "--at", "2024-05-01T12:30:00Z")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    urls = [next(w for w in line.split() if w.startswith("http")) for line in lines[:-1]]
    assert urls == [QUICK, TTL, SKIP, QUIET]
    assert lines[0].startswith("due now") and "2024-05-01T12:15:00Z" in lines[0] and "ttl 15 min" in lines[0]
    assert lines[1].startswith("in 50m") and "2024-05-01T13:20:00Z" in lines[1]
    assert lines[2].startswith("in 2h30m") and "2024-05-01T15:00:00Z  skip" in lines[2]
    assert lines[-1] == "1 feed due now, 3 later (next at 2024-05-01T13:20:00Z)"
    assert PAGE not in proc.stdout


def test_json_gives_time_hint_and_reason_per_feed(dataset: Path) -> None:
    rows = {r["url"]: r for r in due_json(dataset, "--at", at(30))}
    assert set(rows) == {QUICK, TTL, SKIP, QUIET}
    assert rows[QUICK] == {
        "url": QUICK,
        "due_now": True,
        "next_due": "2024-05-01T12:15:00Z",
        "hint": "ttl",
        "reason": "ttl 15 min",
        "last_fetched": "2024-05-01T12:00:00Z",
        "status": 200,
    }
    # the second run's fetch is the state: ttl 60 from 12:20
    assert (rows[TTL]["due_now"], rows[TTL]["next_due"], rows[TTL]["last_fetched"]) == (
        False,
        "2024-05-01T13:20:00Z",
        "2024-05-01T12:20:00Z",
    )
    # skipHours 13-14 move 13:00 to 15:00
    assert (rows[SKIP]["next_due"], rows[SKIP]["hint"]) == ("2024-05-01T15:00:00Z", "skip")
    assert "skipHours 13-14" in rows[SKIP]["reason"]


def test_the_skipped_hours_pass_and_the_feed_is_due(dataset: Path) -> None:
    rows = due_json(dataset, "--at", at(180))  # 15:00
    assert [(r["url"], r["due_now"]) for r in rows] == [(QUICK, True), (TTL, True), (SKIP, True), (QUIET, False)]
    proc = feedcensus("due", str(dataset), "--at", at(179))  # 14:59: still skipped
    assert proc.stdout.splitlines()[-1] == "2 feeds due now, 2 later (next at 2024-05-01T15:00:00Z)"


def test_nothing_due_is_not_an_error(dataset: Path) -> None:
    proc = feedcensus("due", str(dataset), "--at", at(1))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 feeds due now, 4 later (next at 2024-05-01T12:15:00Z)"


def test_the_default_policy_is_the_crawl_settings(dataset: Path) -> None:
    rows = {r["url"]: r for r in due_json(dataset, "--at", at(30))}
    quiet = rows[QUIET]
    assert quiet["hint"] == "max-interval"
    assert quiet["next_due"] == iso(T + timedelta(seconds=settings.FEEDCENSUS_MAX_INTERVAL))


def test_policy_options_bound_the_hints(dataset: Path) -> None:
    rows = {r["url"]: r for r in due_json(dataset, "--at", at(30), "--min-interval", "2h", "--max-interval", "3h")}
    assert (rows[QUICK]["next_due"], rows[QUICK]["hint"], rows[QUICK]["due_now"]) == (at(120), "min-interval", False)
    assert (rows[TTL]["next_due"], rows[TTL]["hint"]) == (at(140), "min-interval")
    assert (rows[QUIET]["next_due"], rows[QUIET]["hint"]) == (at(180), "max-interval")
    # 14:00 is in skipHours: the skip moves it to 15:00, which max-interval (3h) still allows
    assert (rows[SKIP]["next_due"], rows[SKIP]["hint"]) == (at(180), "skip")
    ignored = due_json(dataset, "--at", at(30), "--ignore-hints")
    assert {(r["due_now"], r["hint"]) for r in ignored} == {(True, "ignore-hints")}


def test_schedule_in_process_agrees_with_next_due(dataset: Path) -> None:
    now = T + timedelta(minutes=30)
    feeds = due_feeds(str(dataset), hints_of, Policy(), now)
    assert [f.url for f in feeds] == [QUICK, TTL, SKIP, QUIET]
    assert summary(feeds) == "1 feed due now, 3 later (next at 2024-05-01T13:20:00Z)"
    with StateIndex.open(str(dataset)) as index:
        again = schedule(reversed(index.feeds()), hints_of, Policy(), now)
    assert again == feeds  # the order does not depend on the state's


def test_parse_time_reads_iso_and_takes_naive_as_utc() -> None:
    assert parse_time("2024-05-01T12:30:00Z") == T + timedelta(minutes=30)
    assert parse_time("2024-05-01 14:30+02:00") == T + timedelta(minutes=30)
    assert parse_time("2024-05-01T12:30") == T + timedelta(minutes=30)
    with pytest.raises(ValueError, match="not an ISO time"):
        parse_time("tonight")


# --- bad input ---------------------------------------------------------------------------------


def test_no_crawl_yet_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DueError, match="no crawl found"):
        due_feeds(str(tmp_path / "empty"), hints_of, Policy(), T)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["due", "DATA", "--min-interval", "5x"], "feedcensus due: --min-interval: not a duration: '5x'"),
        (["due", "DATA", "--max-interval", "soon"], "feedcensus due: --max-interval: not a duration"),
        (["due", "DATA", "--at", "tonight"], "feedcensus due: --at: not an ISO time: 'tonight'"),
        (["due", "MISSING"], "feedcensus due: no such dataset directory"),
        (["due", "EMPTY"], "feedcensus due: no crawl found in"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(dataset: Path, tmp_path: Path, args: list[str], needle: str) -> None:
    (tmp_path / "empty").mkdir()
    subst = {"DATA": str(dataset), "MISSING": str(tmp_path / "missing"), "EMPTY": str(tmp_path / "empty")}
    assert_usage_error(feedcensus(*[subst.get(a, a) for a in args]), needle)
    assert not (tmp_path / "missing").exists()
