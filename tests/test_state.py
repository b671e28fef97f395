"""pipelines/dataset/state.py: the crawl state read back from earlier jobs, and its SQLite index.

Every dataset here is real Parquet written by the project's own DatasetWriter
(plus, for the schema 1.0/1.1 cases, files written with an older schema), job
after job: ``list_jobs`` orders runs by their first commit marker.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.dataset.commits import DatasetWriter
from pipelines.dataset.state import INDEX_NAME, STATE_DIR, FeedState, SeenItem, StateIndex
from pipelines.dataset.store import list_jobs
from schemas.tables import FEEDS, VERSION_KEY, arrow_schema
from tests.conftest import feed_row

REPO = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
FEED = "http://example.com/feed.xml"
OTHER = "http://example.org/rss"

#: The columns schema 1.2 added, absent from older files.
NEW_IN_12 = {
    "feeds": {
        "changed", "parsed_job", "content_hash", "new_items", "changed_items", "ttl", "skip_hours", "skip_days",
        "update_period", "update_frequency", "cache_control", "expires",
    },
    "items": {"identity", "identity_source", "content_hash", "first_seen_job", "is_new", "is_changed"},
    "fetch_log": {"retry_after", "next_due", "due_hint", "due_reason"},
}  # fmt: skip


def item_row(feed_url: str, position: int, **extra: Any) -> dict[str, Any]:
    return {"feed_url": feed_url, "position": position, **extra}


def fetch_row(
    url: str, at: datetime, *, status: int | None = 200, outcome: str = "feed", **extra: Any
) -> dict[str, Any]:
    return {"url": url, "final_url": url, "status": status, "outcome": outcome, "fetched_at": at, **extra}


def write_job(
    out: Path,
    job: str,
    *,
    feeds: Iterable[Mapping[str, Any]] = (),
    items: Iterable[Mapping[str, Any]] = (),
    fetch_log: Iterable[Mapping[str, Any]] = (),
    close: bool = True,
    resume: bool = False,
) -> DatasetWriter:
    """One run: its rows in one commit (a fetch_log row for each feed row unless given), closed unless asked."""
    feeds = list(feeds)
    fetch_log = list(fetch_log) or [fetch_row(f["url"], f["fetched_at"]) for f in feeds]
    fetch_log = fetch_log or [fetch_row("http://example.com/", T0, outcome="page")]
    writer = DatasetWriter(str(out), job, resume=resume)
    writer.write_many({"feeds": feeds, "items": list(items), "fetch_log": fetch_log})
    writer.flush()
    if close:
        writer.close()
    time.sleep(0.02)  # the next run's first commit marker is later
    return writer


def write_old(out: Path, table: str, job: str, rows: list[dict[str, Any]], version: str = "1.1") -> None:
    """A file of schema ``version`` (without the 1.2 columns) in a job's partition."""
    fields = [f for f in arrow_schema(table) if f.name not in NEW_IN_12[table]]
    schema = pa.schema(fields, metadata={VERSION_KEY: version.encode()})
    folder = out / table / f"job_id={job}"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-000099-0ld0ld00.parquet")


def index_file(out: Path) -> Path:
    return out / STATE_DIR / INDEX_NAME


def state_of(index: StateIndex, url: str) -> FeedState:
    state = index.feed(url)
    assert state is not None, url
    return state


@pytest.fixture
def three_jobs(tmp_path: Path) -> Path:
    """Jobs A, B, C of one feed (and another feed in A only)."""
    out = tmp_path / "out"
    write_job(
        out, "A",
        feeds=[feed_row(FEED, T0, etag='"a"', title="first"), feed_row(OTHER, T0, etag='"o"')],
        items=[
            item_row(FEED, 0, identity="id-1", guid="g1", content_hash="h1-a", pub_date=T0 - timedelta(days=2)),
            item_row(FEED, 1, identity="id-2", guid="g2", content_hash="h2", pub_date=T0 - timedelta(days=40)),
        ],
    )  # fmt: skip
    write_job(
        out, "B",
        # two fetches of the feed in one job: the later fetched_at wins, whatever the order written
        feeds=[
            feed_row(FEED, T0 + timedelta(hours=2), etag='"b2"', title="second", ttl=60, skip_hours=[0, 1],
                     skip_days=["Sunday"], update_period="hourly", update_frequency=2, cache_control="max-age=60",
                     expires="Sun, 01 Mar 2026 15:00:00 GMT", content_hash="doc-b"),
            feed_row(FEED, T0 + timedelta(hours=1), etag='"b1"'),
        ],
        items=[
            item_row(FEED, 0, identity="id-1", content_hash="h1-b", pub_date=T0 - timedelta(days=1)),
            item_row(FEED, 1, identity="id-3", content_hash="h3", pub_date=T0 + timedelta(hours=1)),
            item_row(FEED, 2, identity="id-4", content_hash="h4", pub_date=T0 - timedelta(days=27, hours=12)),
            item_row(FEED, 3, identity="id-5", content_hash="h5", pub_date=T0 - timedelta(days=29)),
            item_row(FEED, 4, identity="id-6", content_hash="h6"),
        ],
    )  # fmt: skip
    # C: not modified, carried forward from B's parse; its fetched_at is later than B's
    write_job(
        out, "C",
        feeds=[feed_row(FEED, T0 + timedelta(days=1), etag='"b2"', changed=False, parsed_job="B", content_hash="doc-b")],
    )  # fmt: skip
    return out


# --- what the state says --------------------------------------------------------------


def test_the_latest_job_and_within_it_the_latest_fetch_give_the_state(three_jobs: Path) -> None:
    with StateIndex.open(str(three_jobs)) as index:
        assert index.jobs == ["A", "B", "C"]
        state = state_of(index, FEED)
        assert state.job_id == "C"
        assert state.fetched_at == T0 + timedelta(days=1)
        assert state.parsed_job == "B"
        assert state.etag == '"b2"' and state.content_hash == "doc-b" and state.status == 200
        assert state.row is not None and list(state.row) == [f.name for f in FEEDS]
        assert state.row["changed"] is False and state.row["fetched_at"] == T0 + timedelta(days=1)
        other = state_of(index, OTHER)
        assert (other.job_id, other.parsed_job, other.etag) == ("A", "A", '"o"')
        assert index.feed("http://nowhere.example/") is None


def test_a_feeds_state_is_looked_up_once_and_the_oldest_forgotten(
    three_jobs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crawl asks for a feed's state at its request and again at its response: the second answer is
    the first one, not new queries; only the last few thousand URLs are kept."""
    import pipelines.dataset.state as state_module

    monkeypatch.setattr(state_module, "_REMEMBERED_STATES", 2)
    with StateIndex.open(str(three_jobs)) as index:
        first = index.feed(FEED)
        assert first is not None and index.feed(FEED) is first
        assert index.feed("http://nowhere.example/") is None and list(index._states) == [
            FEED,
            "http://nowhere.example/",
        ]
        index.feed(OTHER)  # a third URL: the oldest goes
        assert list(index._states) == ["http://nowhere.example/", OTHER]
        again = index.feed(FEED)  # looked up anew, the same state
        assert again is not first and again == first


def test_within_a_job_the_later_fetched_at_wins(three_jobs: Path) -> None:
    with StateIndex.open(str(three_jobs), exclude_job="C") as index:
        state = state_of(index, FEED)
        assert (state.job_id, state.etag, state.fetched_at) == ("B", '"b2"', T0 + timedelta(hours=2))
        assert state.ttl == 60 and state.skip_hours == (0, 1) and state.skip_days == ("Sunday",)
        assert (state.update_period, state.update_frequency) == ("hourly", 2)
        assert state.cache_control == "max-age=60" and state.expires == "Sun, 01 Mar 2026 15:00:00 GMT"
        assert state.row is not None and state.row["title"] == "second"


def test_a_later_job_wins_even_with_an_earlier_fetched_at(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_job(out, "new-name", feeds=[feed_row(FEED, T0 + timedelta(days=3), etag='"1"')])
    write_job(out, "another", feeds=[feed_row(FEED, T0, etag='"2"')])  # not due: fetched_at of its last fetch
    with StateIndex.open(str(out)) as index:
        assert index.jobs == ["new-name", "another"]
        assert state_of(index, FEED).etag == '"2"'


def test_an_excluded_job_is_never_read(three_jobs: Path) -> None:
    with StateIndex.open(str(three_jobs), exclude_job="B") as index:
        assert index.jobs == ["A", "C"]
        assert state_of(index, FEED).job_id == "C"
        seen = index.seen_items(FEED)
        assert set(seen) == {"id-1", "id-2"}
        assert seen["id-1"] == SeenItem("A", "h1-a")
        # C carries B's parse forward, but B was not read: no items of that parse
        assert state_of(index, FEED).items_per_week is None


def test_documents_that_are_not_feeds_are_not_state(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_job(out, "A", feeds=[feed_row(FEED, T0, etag='"good"')])
    write_job(
        out, "B",
        feeds=[
            feed_row(FEED, T0 + timedelta(hours=1), format="unknown", etag='"html"', parse_error="not a feed"),
            feed_row(OTHER, T0 + timedelta(hours=1), format="unknown"),
        ],
    )  # fmt: skip
    with StateIndex.open(str(out)) as index:
        state = state_of(index, FEED)
        assert (state.job_id, state.etag) == ("A", '"good"')
        assert index.feed(OTHER) is None
        assert [s.url for s in index.feeds()] == [FEED]
        assert index.count() == 1  # a URL whose latest document is no feed is not counted


def test_a_429_after_a_good_fetch_carries_its_retry_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    gone = "http://example.net/only-429"
    recovered = "http://example.net/recovered"
    write_job(out, "A", feeds=[feed_row(FEED, T0), feed_row(recovered, T0)])
    write_job(
        out, "B",
        fetch_log=[
            fetch_row(FEED, T0 + timedelta(hours=1), status=429, outcome="http_error", retry_after="120"),
            fetch_row(gone, T0 + timedelta(hours=1), status=503, outcome="http_error", retry_after="Wed, 04 Mar 2026 00:00:00 GMT"),
            fetch_row(recovered, T0 + timedelta(hours=1), status=429, outcome="http_error", retry_after="60"),
            fetch_row("http://example.net/404", T0, status=404, outcome="http_error"),
        ],
    )  # fmt: skip
    write_job(out, "C", feeds=[feed_row(recovered, T0 + timedelta(hours=2))])
    with StateIndex.open(str(out)) as index:
        state = state_of(index, FEED)
        assert (state.job_id, state.retry_after, state.retry_at) == ("A", "120", T0 + timedelta(hours=1))
        only = state_of(index, gone)
        assert only.job_id is None and only.row is None and only.fetched_at is None and only.skip_hours == ()
        assert (only.retry_after, only.retry_at) == ("Wed, 04 Mar 2026 00:00:00 GMT", T0 + timedelta(hours=1))
        later = state_of(index, recovered)
        assert (later.job_id, later.retry_after, later.retry_at) == ("C", None, None)
        assert index.feed("http://example.net/404") is None
        assert [s.url for s in index.feeds()] == sorted([FEED, gone, recovered])

        def no_state(url: str) -> None:
            raise AssertionError("count() built a state")

        with monkeypatch.context() as patch:
            patch.setattr(index, "_feed", no_state)
            assert index.count() == 3  # counted in SQLite, not built
    with StateIndex.open(str(out), exclude_job="B") as index:
        assert state_of(index, FEED).retry_at is None
        assert index.feed(gone) is None
        assert index.count() == len(index.feeds()) == 2


def test_items_are_first_seen_in_their_earliest_job_with_their_latest_hash(three_jobs: Path) -> None:
    with StateIndex.open(str(three_jobs)) as index:
        seen = index.seen_items(FEED)
        assert seen == {
            "id-1": SeenItem("A", "h1-b"),
            "id-2": SeenItem("A", "h2"),
            "id-3": SeenItem("B", "h3"),
            "id-4": SeenItem("B", "h4"),
            "id-5": SeenItem("B", "h5"),
            "id-6": SeenItem("B", "h6"),
        }
        assert index.seen_items(OTHER) == {}
        assert index.seen_items("http://nowhere.example/") == {}


def test_items_per_week_counts_the_latest_parse_in_the_28_days_before_the_fetch(three_jobs: Path) -> None:
    with StateIndex.open(str(three_jobs), exclude_job="C") as index:
        # B's parse, fetched at T0+2h: T0-1d, T0+1h, T0-27d12h count; T0-29d is out; id-6 has no date
        assert state_of(index, FEED).items_per_week == pytest.approx(3 * 7 / 28)
        assert state_of(index, OTHER).items_per_week is None  # no items at all
    with StateIndex.open(str(three_jobs)) as index:
        # C carries B's parse forward with C's fetched_at (T0+1d): T0-27d12h is now out of the window
        assert state_of(index, FEED).items_per_week == pytest.approx(2 * 7 / 28)


def test_a_parse_with_items_but_no_dates_has_no_rate(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_job(out, "A", feeds=[feed_row(FEED, T0)], items=[item_row(FEED, 0, guid="g", pub_date=T0)])
    write_job(out, "B", feeds=[feed_row(FEED, T0 + timedelta(hours=1))], items=[item_row(FEED, 0, guid="g")])
    with StateIndex.open(str(out)) as index:
        assert state_of(index, FEED).items_per_week is None
    with StateIndex.open(str(out), exclude_job="B") as index:
        assert state_of(index, FEED).items_per_week == pytest.approx(7 / 28)


def test_old_schema_files_fall_back_to_guid_then_link(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_job(out, "old", fetch_log=[fetch_row(FEED, T0)])
    write_old(out, "feeds", "old", [feed_row(FEED, T0, etag='"old"')], version="1.0")
    write_old(
        out, "items", "old",
        [
            item_row(FEED, 0, guid="guid-1", link="http://example.com/1"),
            item_row(FEED, 1, guid="", link="http://example.com/2"),  # an empty guid is no guid
            item_row(FEED, 2, link="http://example.com/3"),
            item_row(FEED, 3, title="neither guid nor link"),
        ],
    )  # fmt: skip
    write_old(out, "fetch_log", "old", [fetch_row(OTHER, T0, status=429, outcome="http_error")])
    write_job(
        out, "new",
        feeds=[feed_row(FEED, T0 + timedelta(hours=1), etag='"new"')],
        items=[
            item_row(FEED, 0, identity="guid-1", guid="guid-1", content_hash="c1"),
            item_row(FEED, 1, identity="http://example.com/4", link="http://example.com/4", content_hash="c4"),
        ],
    )  # fmt: skip
    with StateIndex.open(str(out), exclude_job="new") as index:
        state = state_of(index, FEED)
        assert (state.job_id, state.parsed_job, state.etag) == ("old", "old", '"old"')
        assert state.ttl is None and state.skip_days == () and state.content_hash is None
        assert state.row is not None and state.row["changed"] is None
        assert index.seen_items(FEED) == {
            "guid-1": SeenItem("old", None),
            "http://example.com/2": SeenItem("old", None),
            "http://example.com/3": SeenItem("old", None),
        }
        other = state_of(index, OTHER)  # a 429 of a file without retry_after
        assert other.job_id is None and other.retry_after is None and other.retry_at == T0
    with StateIndex.open(str(out)) as index:
        seen = index.seen_items(FEED)
        assert seen["guid-1"] == SeenItem("old", "c1")
        assert seen["http://example.com/4"] == SeenItem("new", "c4")
        assert len(seen) == 4


# --- the index ---------------------------------------------------------------------


def test_a_second_open_reuses_the_index_and_adds_only_new_jobs(three_jobs: Path) -> None:
    with StateIndex.open(str(three_jobs)) as first:
        assert first.rebuilt and first.added_jobs == [] and first.overlay_jobs == []
        assert first.path == str(index_file(three_jobs)) and index_file(three_jobs).is_file()
    with StateIndex.open(str(three_jobs)) as second:
        assert not second.rebuilt and second.added_jobs == []
        assert state_of(second, FEED).job_id == "C"
    write_job(
        three_jobs,
        "D",
        feeds=[feed_row(FEED, T0 + timedelta(days=2), etag='"d"')],
        items=[item_row(FEED, 0, identity="id-7")],
    )
    with StateIndex.open(str(three_jobs)) as third:
        assert not third.rebuilt and third.added_jobs == ["D"]
        assert third.jobs == ["A", "B", "C", "D"]
        assert state_of(third, FEED).etag == '"d"'
        assert third.seen_items(FEED)["id-7"] == SeenItem("D", None)
        assert third.seen_items(FEED)["id-1"] == SeenItem("A", "h1-b")
    with sqlite3.connect(index_file(three_jobs)) as conn:
        assert conn.execute("SELECT job_id FROM jobs ORDER BY ord").fetchall() == [("A",), ("B",), ("C",), ("D",)]


def test_a_job_whose_files_changed_rebuilds_the_index(three_jobs: Path) -> None:
    StateIndex.open(str(three_jobs)).close()
    # resume B: one more commit lands in its partitions
    write_job(three_jobs, "B", feeds=[feed_row(OTHER, T0 + timedelta(hours=3), etag='"o-b"')], resume=True)
    assert list_jobs(str(three_jobs)) == ["A", "B", "C"]
    with StateIndex.open(str(three_jobs)) as index:
        assert index.rebuilt and index.added_jobs == []
        assert state_of(index, OTHER).etag == '"o-b"'
        assert state_of(index, FEED).job_id == "C"
    with StateIndex.open(str(three_jobs)) as again:
        assert not again.rebuilt


def test_a_job_that_disappeared_rebuilds_the_index(three_jobs: Path) -> None:
    StateIndex.open(str(three_jobs)).close()
    for table in ("feeds", "items", "fetch_log", "_commits"):
        shutil.rmtree(three_jobs / table / "job_id=C", ignore_errors=True)
    with StateIndex.open(str(three_jobs)) as index:
        assert index.rebuilt and index.jobs == ["A", "B"]
        assert state_of(index, FEED).job_id == "B"


def test_an_excluded_job_inside_the_index_rebuilds_it_without_that_job(three_jobs: Path) -> None:
    StateIndex.open(str(three_jobs)).close()
    with StateIndex.open(str(three_jobs), exclude_job="C") as index:
        assert index.rebuilt and index.jobs == ["A", "B"]
        assert state_of(index, FEED).job_id == "B"


def test_a_deleted_index_is_rebuilt(three_jobs: Path) -> None:
    with StateIndex.open(str(three_jobs)) as index:
        before = index.feeds()
    index_file(three_jobs).unlink()
    with StateIndex.open(str(three_jobs)) as index:
        assert index.rebuilt
        assert index.feeds() == before


def test_a_garbage_index_is_rebuilt_with_one_warning(three_jobs: Path, caplog: pytest.LogCaptureFixture) -> None:
    index_file(three_jobs).parent.mkdir()
    index_file(three_jobs).write_bytes(b"this is not a database" * 200)
    with caplog.at_level(logging.WARNING, logger="pipelines.dataset.state"), StateIndex.open(str(three_jobs)) as index:
        assert index.rebuilt
        assert state_of(index, FEED).job_id == "C"
    warnings = [r for r in caplog.records if r.name == "pipelines.dataset.state"]
    assert len(warnings) == 1 and "rebuilding" in warnings[0].getMessage()
    assert "\n" not in warnings[0].getMessage()
    with StateIndex.open(str(three_jobs)) as again:
        assert not again.rebuilt


@pytest.mark.parametrize("key", ["layout", "feeds_columns"])
def test_an_index_of_another_layout_or_feeds_schema_is_rebuilt(three_jobs: Path, key: str) -> None:
    StateIndex.open(str(three_jobs)).close()
    with sqlite3.connect(index_file(three_jobs)) as conn:
        assert conn.execute("UPDATE meta SET value = 'older' WHERE key = ?", (key,)).rowcount == 1
    conn.close()
    with StateIndex.open(str(three_jobs)) as index:
        assert index.rebuilt and state_of(index, FEED).job_id == "C"


def test_an_empty_or_missing_dataset_is_an_empty_state(tmp_path: Path) -> None:
    for out in (tmp_path / "missing", tmp_path):
        with StateIndex.open(str(out)) as index:
            assert index.jobs == [] and index.feeds() == []
            assert index.feed(FEED) is None and index.seen_items(FEED) == {}
            assert not index.rebuilt and index.path is None
    assert not (tmp_path / "missing").exists() and not (tmp_path / STATE_DIR).exists()


def test_a_job_still_being_written_is_read_beside_the_shared_index(three_jobs: Path) -> None:
    StateIndex.open(str(three_jobs)).close()
    writer = write_job(
        three_jobs, "D",
        feeds=[feed_row(FEED, T0 + timedelta(days=2), etag='"d"')],
        items=[item_row(FEED, 0, identity="id-1", content_hash="h1-d"), item_row(FEED, 1, identity="id-8")],
        fetch_log=[fetch_row(OTHER, T0 + timedelta(days=2), status=503, outcome="http_error", retry_after="5")],
        close=False,
    )  # fmt: skip
    try:
        with StateIndex.open(str(three_jobs)) as index:  # `feedcensus due` beside the crawl
            assert not index.rebuilt and index.added_jobs == [] and index.overlay_jobs == ["D"]
            assert index.jobs == ["A", "B", "C", "D"]
            assert state_of(index, FEED).etag == '"d"'
            assert state_of(index, OTHER).retry_after == "5"
            assert index.seen_items(FEED)["id-1"] == SeenItem("A", "h1-d")
            assert index.seen_items(FEED)["id-8"] == SeenItem("D", None)
            assert index.count() == len(index.feeds())
        with StateIndex.open(str(three_jobs), exclude_job="D") as crawl:  # the crawl itself
            assert not crawl.rebuilt and crawl.overlay_jobs == [] and crawl.jobs == ["A", "B", "C"]
            assert state_of(crawl, FEED).job_id == "C" and "id-8" not in crawl.seen_items(FEED)
    finally:
        writer.close()
    with StateIndex.open(str(three_jobs)) as done:
        assert done.added_jobs == ["D"] and not done.rebuilt and done.overlay_jobs == []


def test_an_index_path_can_be_given(three_jobs: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "state.sqlite"
    with StateIndex.open(str(three_jobs), path=str(elsewhere)) as index:
        assert index.path == str(elsewhere) and index.rebuilt
    assert elsewhere.is_file() and not index_file(three_jobs).exists()
    with StateIndex.open(str(three_jobs), path=str(elsewhere)) as index:
        assert not index.rebuilt and state_of(index, FEED).job_id == "C"


def test_processes_opening_the_index_together_agree(three_jobs: Path) -> None:
    StateIndex.open(str(three_jobs)).close()
    holder = StateIndex.open(str(three_jobs))  # a crawl keeps its index open
    write_job(three_jobs, "D", feeds=[feed_row(FEED, T0 + timedelta(days=2), etag='"d"')])
    results: list[str | None] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            with StateIndex.open(str(three_jobs)) as index:
                results.append(state_of(index, FEED).etag)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and results == ['"d"'] * 6
    assert state_of(holder, FEED).job_id in {"C", "D"}  # still answers
    holder.close()
    with sqlite3.connect(index_file(three_jobs)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT count(*) FROM jobs").fetchone() == (4,)
    conn.close()


def test_an_index_locked_by_another_process_is_used_as_is_or_built_privately(
    three_jobs: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    StateIndex.open(str(three_jobs)).close()
    monkeypatch.setattr("pipelines.dataset.statefiles.BUSY_TIMEOUT", 0.1)  # where the index is opened
    locker = sqlite3.connect(index_file(three_jobs), isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")  # another process adding jobs for a long time
    try:
        with StateIndex.open(str(three_jobs)) as index:  # up to date: read as it is
            assert not index.rebuilt and index.path == str(index_file(three_jobs))
            assert state_of(index, FEED).job_id == "C"
        write_job(three_jobs, "D", feeds=[feed_row(FEED, T0 + timedelta(days=2), etag='"d"')])
        with (
            caplog.at_level(logging.WARNING, logger="pipelines.dataset.state"),
            StateIndex.open(str(three_jobs)) as index,
        ):
            assert index.rebuilt and index.path is None  # a private index, the shared one left alone
            assert state_of(index, FEED).etag == '"d"'
        assert [r.getMessage() for r in caplog.records if "private" in r.getMessage()] != []
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    with StateIndex.open(str(three_jobs)) as index:
        assert index.added_jobs == ["D"] and not index.rebuilt


OPEN_AND_PRINT = """
import sys
from pipelines.dataset.state import StateIndex
with StateIndex.open(sys.argv[1]) as index:
    state = index.feed(sys.argv[2])
    print(state.etag if state else None, state.row["title"] if state and state.row else None)
"""


def test_processes_rebuilding_the_index_together_leave_one_good_index(three_jobs: Path) -> None:
    holder = StateIndex.open(str(three_jobs))  # a crawl keeps the old index open
    write_job(three_jobs, "B", feeds=[feed_row(OTHER, T0 + timedelta(hours=3), title="resumed")], resume=True)
    write_job(three_jobs, "D", feeds=[feed_row(FEED, T0 + timedelta(days=2), etag='"d"')])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AND_PRINT, str(three_jobs), url],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for url in (FEED, OTHER, FEED, OTHER)
    ]  # fmt: skip
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outputs]
    assert [out.strip() for out, _ in outputs] == ['"d" None', "None resumed"] * 2
    assert state_of(holder, OTHER).row is not None  # the old index still answers, unchanged
    assert state_of(holder, FEED).job_id == "C"
    holder.close()
    assert sorted(p.name for p in index_file(three_jobs).parent.iterdir()) == [INDEX_NAME]  # no temporary left
    with sqlite3.connect(index_file(three_jobs)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT job_id FROM jobs ORDER BY ord").fetchall() == [("A",), ("B",), ("C",), ("D",)]
    conn.close()
    with StateIndex.open(str(three_jobs)) as index:
        assert not index.rebuilt and index.added_jobs == []


def test_scale_fifty_thousand_items(tmp_path: Path) -> None:
    out = tmp_path / "out"
    feeds_per_job, items_per_feed = 250, 100
    for j, job in enumerate(("J1", "J2")):
        at = T0 + timedelta(days=j)
        feeds = [feed_row(f"http://example.com/{f}.xml", at, etag=f'"{j}"') for f in range(feeds_per_job)]
        items = [
            item_row(
                feeds[f]["url"], i, identity=f"{f}-{i + 50 * j}", content_hash=f"h{j}", pub_date=at - timedelta(hours=i)
            )
            for f in range(feeds_per_job)
            for i in range(items_per_feed)
        ]
        write_job(out, job, feeds=feeds, items=items)
    started = time.perf_counter()
    with StateIndex.open(str(out)) as index:
        built = time.perf_counter() - started
        assert index.rebuilt
        seen = index.seen_items("http://example.com/7.xml")
        assert len(seen) == 150
        assert seen["7-60"] == SeenItem("J1", "h1") and seen["7-149"] == SeenItem("J2", "h1")
        started = time.perf_counter()
        states = index.feeds()
        listed = time.perf_counter() - started
        assert len(states) == feeds_per_job and all(s.job_id == "J2" for s in states)
        assert states[0].items_per_week == pytest.approx(100 * 7 / 28)
    started = time.perf_counter()
    with StateIndex.open(str(out)) as index:
        reopened = time.perf_counter() - started
        assert not index.rebuilt
    print(
        f"\nstate index, {2 * feeds_per_job * items_per_feed} item rows: build {built:.2f}s, "
        f"feeds() of {feeds_per_job} {listed:.3f}s, reopen {reopened:.3f}s"
    )
