"""The crawl state: what the earlier jobs of a dataset know about each feed, indexed in SQLite.

An incremental crawl reads its state from the dataset it writes to: the latest
``feeds`` row of each feed (validators, hashes, the publisher's schedule hints),
the latest ``fetch_log`` row of each URL (a 429/503 and its Retry-After), and the
item identities each feed has shown (when each was first seen, its latest content
hash). The Parquet is the source of truth; :class:`StateIndex` keeps an index of it
in SQLite (stdlib ``sqlite3``) so lookups are fast and memory stays bounded
however big the dataset is. Deleting the index only costs a rebuild.
This module holds :class:`StateIndex` and what it answers; the index's files (their layout,
reading the Parquet into them, opening or rebuilding them) are :mod:`pipelines.dataset.statefiles`.

Where the index lives
    ``<out>/_state/index.sqlite`` for a local dataset (the ``_`` prefix keeps the
    folder out of every reader's way: it is outside the table folders, and pyarrow
    skips ``_`` names anyway). For a remote one (``s3://...``) a private temporary
    file, deleted on close, unless ``path`` names a file to keep it in.

Layout (``LAYOUT_VERSION``; an index of another version, or of other feeds columns, is rebuilt)
    ``meta(key, value)``: the layout version and the feeds columns;
    ``jobs(job_id, ord, signature)``: the jobs indexed, in run order, each with a
    signature of its part files; ``feeds(url, ord, job_id, fetched_at,
    parsed_job, row, final_url)``: the latest usable feeds row of each URL, the whole row as
    a JSON list in the order of ``schemas.tables.FEEDS``, and the URL it ended at when a
    redirect took it elsewhere (else NULL; indexed, see :meth:`StateIndex.feed_ending_at`); ``fetches(url, ord,
    job_id, fetched_at, status, retry_after)``: the latest fetch_log row of each
    URL; ``seen(feed_url, identity, first_job, content_hash)``: every item
    identity of each feed; ``parses(feed_url, job_id)`` and
    ``parse_dates(feed_url, pub_date)``: the latest job with items of each feed
    and those items' dates. ``ord`` is the job's place in run order; timestamps
    are microseconds since the epoch. An exclude_job inside the shared index
    (not at its end) makes it rebuilt without that job.

Staleness
    A job's signature hashes the names, sizes and modification times of its files
    under ``feeds/``, ``items/`` and ``fetch_log/``. On open, if the jobs indexed
    are the first jobs of the dataset in the same order with the same signatures,
    the index is reused and the jobs after them are added (``added_jobs``);
    otherwise (a job changed, e.g. compacted or resumed, disappeared, or the order
    changed) it is rebuilt from the Parquet (``rebuilt``) into a temporary file
    renamed over the old one. Jobs at the end of the run order that are still
    being written (their partitions hold ``.running``) are never put in the
    shared index: they are read into a private overlay on every open
    (``overlay_jobs``), so a crawl and a ``feedcensus due`` running beside it
    agree on the shared index instead of rebuilding it in turn. Adding jobs runs
    in one ``BEGIN IMMEDIATE`` transaction with a busy timeout; a process that
    cannot get the lock in time, or cannot write there, builds a private index.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pipelines.dataset.schedule import DEFAULT_WINDOW, Hints, items_per_week
from pipelines.dataset.store import list_jobs, resolve_root

if TYPE_CHECKING:
    pass

from pipelines.dataset.statefiles import (
    _EPOCH,
    _US,
    INDEX_NAME,
    LAYOUT_VERSION,
    STATE_DIR,
    _attach_overlay,
    _Base,
    _decode_row,
    _default_path,
    _from_us,
    _Listing,
    _open_base,
    _scan,
    _split,
    _unlink,
)

__all__ = ["INDEX_NAME", "LAYOUT_VERSION", "STATE_DIR", "FeedState", "SeenItem", "StateIndex"]

#: HTTP statuses whose Retry-After the state reports.
RETRY_STATUSES = (429, 503)

_DATES = (
    "SELECT pub_date FROM {db}.parse_dates WHERE feed_url = ? AND pub_date >= ? "
    "UNION ALL SELECT max(pub_date) FROM {db}.parse_dates WHERE feed_url = ? AND pub_date < ?"
)

#: The overlay (``tail``) answers before the shared index (``main``): its jobs are all later.
_DBS = ("tail", "main")

#: Feed states a :class:`StateIndex` keeps once looked up: a crawl asks for a feed's state when it requests
#: the feed and again when the response comes, and each lookup is several queries (benchmarks/RESULTS.md,
#: section 11). On one machine the spider keeps the scheduler near empty, so the response comes a few
#: hundred URLs later; a distributed job's response often reaches another worker, which looks it up itself
#: (only the time is lost).
_REMEMBERED_STATES = 4096


@functools.cache
def _in(sql: str, db: str) -> str:
    """``sql`` (with ``{db}``) for the database ``db``, formatted once."""
    return sql.format(db=db)


@dataclass(frozen=True, slots=True)
class SeenItem:
    """An item identity a feed has shown."""

    first_seen_job: str
    content_hash: str | None  # the latest known content hash of this identity in this feed


@dataclass(frozen=True, slots=True)
class FeedState:
    """What the earlier jobs know about one feed URL."""

    url: str  # feeds.url
    job_id: str | None  # job of the latest feeds row (None if only fetch_log evidence, see retry_*)
    fetched_at: datetime | None  # feeds.fetched_at of that row (UTC aware)
    status: int | None
    etag: str | None
    last_modified: str | None
    content_hash: str | None
    parsed_job: str | None  # the row's parsed_job, or its job_id when null (pre-1.2 rows)
    ttl: int | None
    skip_hours: tuple[int, ...]
    skip_days: tuple[str, ...]
    update_period: str | None
    update_frequency: int | None
    cache_control: str | None
    expires: str | None
    items_per_week: float | None  # of the items of the latest parse, in the 28 days before fetched_at
    retry_after: str | None  # Retry-After of the latest fetch_log row when a 429/503 later than the feeds row
    retry_at: datetime | None  # that row's fetched_at
    row: dict[str, Any] | None  # the complete latest feeds row (every column of FEEDS), for carrying facts forward


# --- the index ---------------------------------------------------------------------------


class StateIndex:
    """The state of a dataset's earlier jobs; open with :meth:`open`, close (or use as a context manager).

    ``jobs`` are the jobs read, oldest first; ``rebuilt`` tells whether the shared
    index was built from scratch by this open, ``added_jobs`` which jobs were
    added to an index that was reused, ``overlay_jobs`` which jobs (still being
    written) were read privately, ``path`` the shared index file (None when private).
    """

    def __init__(self, base: _Base, jobs: list[str], overlay_jobs: list[str]) -> None:
        self._conn = base.conn
        self._leftover = base.leftover
        self._lock = threading.Lock()
        self.jobs = jobs
        self.rebuilt = base.rebuilt
        self.added_jobs = list(base.added)
        self.overlay_jobs = overlay_jobs
        self.path = base.path
        self.closed = False
        #: The databases that can answer: the overlay only when some job is still being written.
        self._dbs = _DBS if overlay_jobs else ("main",)
        #: url -> its state (or None), for the last _REMEMBERED_STATES URLs looked up; the jobs read do not change.
        self._states: dict[str, FeedState | None] = {}

    @classmethod
    def open(cls, out: str, *, exclude_job: str | None = None, path: str | None = None) -> StateIndex:
        """The state of every job in ``out`` but ``exclude_job`` (empty when there is none)."""
        fs, root = resolve_root(out)
        ordered = list_jobs(out)
        listing = _scan(fs, root) if ordered else _Listing({}, frozenset())
        settled, overlay = _split(ordered, exclude_job, listing.running)
        base = _open_base(out, settled, listing, path if path is not None else _default_path(fs, root))
        try:
            _attach_overlay(base.conn, out, overlay, len(settled), listing)
        except BaseException:
            base.conn.close()
            raise
        return cls(base, settled + overlay, overlay)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._conn.close()
            if self._leftover is not None:
                _unlink(self._leftover)

    def __enter__(self) -> StateIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- queries

    def _first(self, sql: str, params: Sequence[Any]) -> tuple[str, tuple[Any, ...]] | None:
        """The first of the overlay and the shared index to answer ``sql`` (with ``{db}``), and its row."""
        for db in self._dbs:
            found = self._conn.execute(_in(sql, db), params).fetchone()
            if found is not None:
                return db, found
        return None

    def feed(self, url: str) -> FeedState | None:
        """The state of one feed URL; None when no job read has a usable feeds row or a 429/503 for it.

        The same object for a URL looked up again (:data:`_REMEMBERED_STATES`): a caller that changes
        its ``row`` (a dict) changes it for the next one, so copy it first (every caller does).
        """
        with self._lock:
            states = self._states
            if url in states:
                return states[url]
            state = states[url] = self._feed(url)
            if len(states) > _REMEMBERED_STATES:
                del states[next(iter(states))]  # the oldest looked up
            return state

    def _feed(self, url: str) -> FeedState | None:
        latest = self._first("SELECT ord, job_id, fetched_at, parsed_job, row FROM {db}.feeds WHERE url = ?", (url,))
        fetch = self._first("SELECT ord, fetched_at, status, retry_after FROM {db}.fetches WHERE url = ?", (url,))
        retry = _retry(latest[1] if latest else None, fetch[1] if fetch else None)
        if latest is None:
            return None if retry is None else _state(url, None, retry, None)
        _, job, fetched_at, parsed_job, row = latest[1]
        return _state(url, (job, _decode_row(row)), retry, self._rate(url, parsed_job, fetched_at))

    def feed_ending_at(self, url: str) -> str | None:
        """The URL of a known feed whose latest row was redirected to ``url`` (the first by URL when several
        were); None when none was. The later jobs (the overlay) answer first."""
        with self._lock:
            found = self._first("SELECT min(url) FROM {db}.feeds WHERE final_url = ? HAVING count(*) > 0", (url,))
        return str(found[1][0]) if found is not None else None

    def _rate(self, url: str, parsed_job: str, fetched_at: int) -> float | None:
        """items_per_week of the feed's latest parse, if the items kept are of that parse.

        Only the dates that can count are read: those from the window's start on, and the
        latest one before it (which makes the rate 0 rather than unknown).
        """
        parse = self._first("SELECT job_id FROM {db}.parses WHERE feed_url = ?", (url,))
        if parse is None or parse[1][0] != parsed_job:
            return None
        start = fetched_at - DEFAULT_WINDOW // _US
        dates = self._conn.execute(_in(_DATES, parse[0]), (url, start, url, start))
        end = _from_us(fetched_at) or _EPOCH
        return items_per_week((_from_us(d) for (d,) in dates if d is not None), end, window=DEFAULT_WINDOW)

    def feeds(self) -> list[FeedState]:
        """Every URL with a usable feeds row or whose latest fetch_log row is a 429/503, sorted by url."""
        with self._lock:
            urls = [u for (u,) in self._conn.execute(f"SELECT url FROM ({self._known_urls()}) ORDER BY url")]
            states = (self._feed(u) for u in urls)
            return [s for s in states if s is not None]

    def count(self) -> int:
        """How many states :meth:`feeds` gives, counted in SQLite when no job is being written (every URL
        the shared index lists then has a state), instead of building each one."""
        if self.overlay_jobs:  # the overlay can hide a 429/503 of the shared index: build them
            return len(self.feeds())
        with self._lock:
            (count,) = self._conn.execute(f"SELECT count(*) FROM ({self._known_urls()})").fetchone()
        return int(count)

    def _known_urls(self) -> str:
        """SQL for the URLs with a usable feeds row or a latest fetch that is a 429/503 (each maybe without a state)."""
        return " UNION ".join(
            f"SELECT url FROM {db}.feeds UNION SELECT url FROM {db}.fetches WHERE status IN {RETRY_STATUSES}"
            for db in self._dbs
        )

    def seen_items(self, feed_url: str) -> dict[str, SeenItem]:
        """identity -> :class:`SeenItem` for every item identity the feed showed in the jobs read."""
        sql = "SELECT identity, first_job, content_hash FROM {db}.seen WHERE feed_url = ?"
        with self._lock:
            seen = {
                identity: SeenItem(first, content_hash)
                for identity, first, content_hash in self._conn.execute(_in(sql, "main"), (feed_url,))
            }
            later = self._conn.execute(_in(sql, "tail"), (feed_url,)) if "tail" in self._dbs else ()
            for identity, first, content_hash in later:
                earlier = seen.get(identity)
                seen[identity] = SeenItem(first if earlier is None else earlier.first_seen_job, content_hash)
        return seen


def _retry(latest: tuple[Any, ...] | None, fetch: tuple[Any, ...] | None) -> tuple[str | None, datetime | None] | None:
    """(Retry-After, when) of the latest fetch_log row if it is a 429/503 later than the feeds row."""
    if fetch is None or fetch[2] not in RETRY_STATUSES:
        return None
    order, fetched_at, _, retry_after = fetch
    if latest is not None and (order, fetched_at) <= (latest[0], latest[2]):
        return None
    return retry_after, _from_us(fetched_at)


def _state(
    url: str,
    latest: tuple[str, dict[str, Any]] | None,
    retry: tuple[str | None, datetime | None] | None,
    rate: float | None,
) -> FeedState:
    retry_after, retry_at = retry if retry is not None else (None, None)
    if latest is None:
        return FeedState(
            url, None, None, None, None, None, None, None, None, (), (), None, None, None, None, None,
            retry_after, retry_at, None,
        )  # fmt: skip
    job, row = latest
    return FeedState(
        url=url,
        job_id=job,
        fetched_at=row["fetched_at"],
        status=row["status"],
        etag=row["etag"],
        last_modified=row["last_modified"],
        content_hash=row["content_hash"],
        parsed_job=row["parsed_job"] or job,
        ttl=row["ttl"],
        skip_hours=tuple(row["skip_hours"] or ()),
        skip_days=tuple(row["skip_days"] or ()),
        update_period=row["update_period"],
        update_frequency=row["update_frequency"],
        cache_control=row["cache_control"],
        expires=row["expires"],
        items_per_week=rate,
        retry_after=retry_after,
        retry_at=retry_at,
        row=row,
    )


def hints_of(state: FeedState) -> Hints:
    """The scheduling hints a feed's state carries."""
    return Hints(
        fetched_at=state.fetched_at,
        ttl=state.ttl,
        skip_hours=state.skip_hours,
        skip_days=state.skip_days,
        update_period=state.update_period,
        update_frequency=state.update_frequency,
        cache_control=state.cache_control,
        expires=state.expires,
        retry_after=state.retry_after,
        retry_at=state.retry_at,
        items_per_week=state.items_per_week,
    )


def conditional_headers(state: FeedState) -> dict[str, str]:
    """The validators of a feed's last fetch, as request headers (RFC 9110 section 13.1)."""
    headers = {}
    if state.etag:
        headers["If-None-Match"] = state.etag
    if state.last_modified:
        headers["If-Modified-Since"] = state.last_modified
    return headers
