"""The state index's files: their layout in SQLite, reading a dataset's Parquet into them, and opening,
reusing or rebuilding the shared index (see "Where the index lives", "Layout" and "Staleness" in
:mod:`pipelines.dataset.state`, which holds :class:`~pipelines.dataset.state.StateIndex`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.fs as pafs

from pipelines.dataset.markers import is_running_marker
from pipelines.dataset.store import open_table
from schemas.tables import FEEDS, PARTITION_KEY
from schemas.vocab import FeedFormat

if TYPE_CHECKING:
    import pyarrow.dataset as ds


logger = logging.getLogger("pipelines.dataset.state")  # one logger for the state index

#: Version of the index layout; an index of another version is rebuilt.
LAYOUT_VERSION = "3"  # 2: fetches index only rows with a status (answers); 3: feeds keep the final_url
#: Folder of the index at the root of a local dataset.
STATE_DIR = "_state"
#: File name of the index in :data:`STATE_DIR`.
INDEX_NAME = "index.sqlite"
#: Seconds a process waits for another one's lock on the index.
BUSY_TIMEOUT = 60.0
#: Rows per batch read from the Parquet.
BATCH_ROWS = 32 * 1024
#: The tables the state is read from (their files make a job's signature).
READ_TABLES = ("feeds", "items", "fetch_log")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_FEED_NAMES = tuple(f.name for f in FEEDS)
_FEED_TIMESTAMPS = frozenset(f.name for f in FEEDS if pa.types.is_timestamp(f.type))
#: What an index must have been built with to be reused: the layout, and the feeds columns its rows list.
_META = {"layout": LAYOUT_VERSION, "feeds_columns": ",".join(_FEED_NAMES)}
#: sqlite error names after which the shared index is left alone (a private one is built).
_NOT_OURS = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {db}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {db}.jobs (job_id TEXT PRIMARY KEY, ord INTEGER NOT NULL UNIQUE, signature TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {db}.feeds (
    url TEXT PRIMARY KEY, ord INTEGER NOT NULL, job_id TEXT NOT NULL, fetched_at INTEGER NOT NULL,
    parsed_job TEXT NOT NULL, row TEXT NOT NULL, final_url TEXT);
CREATE INDEX IF NOT EXISTS {db}.feeds_final ON feeds (final_url);
CREATE TABLE IF NOT EXISTS {db}.fetches (
    url TEXT PRIMARY KEY, ord INTEGER NOT NULL, job_id TEXT NOT NULL, fetched_at INTEGER NOT NULL,
    status INTEGER, retry_after TEXT);
CREATE TABLE IF NOT EXISTS {db}.seen (
    feed_url TEXT NOT NULL, identity TEXT NOT NULL, first_job TEXT NOT NULL, content_hash TEXT,
    PRIMARY KEY (feed_url, identity)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {db}.parses (feed_url TEXT PRIMARY KEY, job_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {db}.parse_dates (feed_url TEXT NOT NULL, pub_date INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS {db}.parse_dates_feed ON parse_dates (feed_url, pub_date);
"""
#: Each connection's own staging tables: one job's parses before they replace the earlier ones.
_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS stage_parses (feed_url TEXT PRIMARY KEY)",
    "CREATE TEMP TABLE IF NOT EXISTS stage_dates (feed_url TEXT NOT NULL, pub_date INTEGER NOT NULL)",
)

#: Keep the later row: a later job, or the same job and a fetched_at not earlier.
_LATER = "excluded.ord > t.ord OR (excluded.ord = t.ord AND excluded.fetched_at >= t.fetched_at)"

_UPSERT_FEED = (
    "INSERT INTO {db}.feeds AS t (url, ord, job_id, fetched_at, parsed_job, row, final_url) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (url) DO UPDATE SET ord = excluded.ord, job_id = excluded.job_id, "
    "fetched_at = excluded.fetched_at, parsed_job = excluded.parsed_job, row = excluded.row, "
    "final_url = excluded.final_url WHERE " + _LATER
)
_UPSERT_FETCH = (
    "INSERT INTO {db}.fetches AS t (url, ord, job_id, fetched_at, status, retry_after) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (url) DO UPDATE SET ord = excluded.ord, job_id = excluded.job_id, "
    "fetched_at = excluded.fetched_at, status = excluded.status, retry_after = excluded.retry_after WHERE " + _LATER
)
#: Rows are added job by job in run order, so the first insert of an identity is its first job.
_UPSERT_SEEN = (
    "INSERT INTO {db}.seen (feed_url, identity, first_job, content_hash) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (feed_url, identity) DO UPDATE SET content_hash = excluded.content_hash"
)
_MERGE_PARSES = (
    "DELETE FROM {db}.parse_dates WHERE feed_url IN (SELECT feed_url FROM temp.stage_parses)",
    "INSERT OR REPLACE INTO {db}.parses (feed_url, job_id) SELECT feed_url, :job FROM temp.stage_parses",
    "INSERT INTO {db}.parse_dates (feed_url, pub_date) SELECT feed_url, pub_date FROM temp.stage_dates",
    "DELETE FROM temp.stage_parses",
    "DELETE FROM temp.stage_dates",
)


# --- the dataset's files -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Listing:
    """A signature of each job's files in :data:`READ_TABLES`, and the jobs still being written."""

    signatures: dict[str, str]
    running: frozenset[str]

    def signature(self, job: str) -> str:
        return self.signatures.get(job, _digest([]))


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def _scan(fs: pafs.FileSystem, root: str) -> _Listing:
    """One recursive listing per table read: each job's part files (name, size, mtime) and ``.running`` markers."""
    prefix = f"{PARTITION_KEY}="
    files: dict[str, list[str]] = {}
    running: set[str] = set()
    for table in READ_TABLES:
        base = f"{root}/{table}/"
        for info in fs.get_file_info(pafs.FileSelector(base.rstrip("/"), allow_not_found=True, recursive=True)):
            if info.type != pafs.FileType.File or not info.path.startswith(base):
                continue
            folder, _, name = info.path[len(base) :].partition("/")
            if not folder.startswith(prefix) or not name:
                continue
            job = folder[len(prefix) :]
            if is_running_marker(name):
                running.add(job)
            elif not any(part.startswith((".", "_")) for part in name.split("/")):
                files.setdefault(job, []).append(f"{table}/{name}\t{info.size}\t{info.mtime_ns}")
    return _Listing({job: _digest(lines) for job, lines in files.items()}, frozenset(running))


def _split(jobs: Sequence[str], exclude: str | None, running: frozenset[str]) -> tuple[list[str], list[str]]:
    """(jobs for the shared index, jobs for the overlay): the overlay takes the trailing running or excluded jobs."""
    cut = len(jobs)
    while cut and (jobs[cut - 1] == exclude or jobs[cut - 1] in running):
        cut -= 1
    return [j for j in jobs[:cut] if j != exclude], [j for j in jobs[cut:] if j != exclude]


def _batches(
    out: str, table: str, job: str, columns: list[str], where: ds.Expression | None = None
) -> Iterator[pa.RecordBatch]:
    """A job's rows of one table in batches, only ``columns`` (absent from old files: null)."""
    try:
        dataset = open_table(out, table, job)
    except FileNotFoundError:  # the job wrote no row to this table
        return
    yield from dataset.to_batches(columns=columns, filter=where, batch_size=BATCH_ROWS)


# --- values --------------------------------------------------------------------------


def _us(value: datetime | None) -> int:
    return 0 if value is None else (value - _EPOCH) // _US


def _from_us(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + value * _US


def _encode_row(row: dict[str, Any]) -> str:
    values = [_us(row[n]) if n in _FEED_TIMESTAMPS and row[n] is not None else row[n] for n in _FEED_NAMES]
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def _decode_row(text: str) -> dict[str, Any]:
    values = json.loads(text)
    row = dict(zip(_FEED_NAMES, values, strict=True))
    for name in _FEED_TIMESTAMPS:
        row[name] = _from_us(row[name])
    return row


def _nonempty(values: pa.Array[Any]) -> pa.Array[Any]:
    """The strings, with empty ones as null."""
    import pyarrow.compute as pc  # imported here, as in the other builders: a first crawl builds no index

    # Scalars made here, not at import: pa.scalar imports pandas (0.2 s), which a first job never needs.
    empty, null = pa.scalar("", pa.string()), pa.scalar(None, pa.string())
    result: pa.Array[Any] = pc.if_else(pc.equal(values, empty), null, values)
    return result


def _as_us(values: pa.Array[Any]) -> list[int | None]:
    import pyarrow.compute as pc

    result: list[int | None] = pc.cast(values, pa.int64()).to_pylist()
    return result


# --- building ------------------------------------------------------------------------


def _connect(filename: str, mode: str | None = None) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); ``mode`` 'rw' or 'ro' never creates the file."""
    if mode is None:
        conn = sqlite3.connect(filename, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
    else:
        uri = f"{Path(os.path.abspath(filename)).as_uri()}?mode={mode}"
        conn = sqlite3.connect(uri, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False, uri=True)
    conn.execute("PRAGMA temp_store = FILE")
    return conn


def _create(conn: sqlite3.Connection, db: str) -> None:
    for statement in _SCHEMA.format(db=db).split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.executemany(f"INSERT OR REPLACE INTO {db}.meta (key, value) VALUES (?, ?)", _META.items())


def _index_feeds(conn: sqlite3.Connection, db: str, out: str, job: str, order: int) -> None:
    import pyarrow.dataset as ds  # only when there is an earlier job to read (see store.open_table)

    sql = _UPSERT_FEED.format(db=db)
    usable = ds.field("format") != FeedFormat.UNKNOWN.value
    for batch in _batches(out, "feeds", job, list(_FEED_NAMES), usable):
        conn.executemany(
            sql,
            (
                (
                    row["url"],
                    order,
                    job,
                    _us(row["fetched_at"]),
                    row["parsed_job"] or job,
                    _encode_row(row),
                    row["final_url"] if row["final_url"] not in (None, row["url"]) else None,
                )
                for row in batch.to_pylist()
            ),
        )


def _index_fetch_log(conn: sqlite3.Connection, db: str, out: str, job: str, order: int) -> None:
    import pyarrow.compute as pc

    sql = _UPSERT_FETCH.format(db=db)
    for whole in _batches(out, "fetch_log", job, ["url", "fetched_at", "status", "retry_after"]):
        # Only answers count: a not_due, duplicate or network-error row (no status) does not hide
        # the Retry-After of the 429/503 before it.
        batch = whole.filter(pc.is_valid(whole.column("status")))
        conn.executemany(
            sql,
            zip(
                batch.column("url").to_pylist(),
                repeat(order),
                repeat(job),
                (at or 0 for at in _as_us(batch.column("fetched_at"))),
                batch.column("status").to_pylist(),
                batch.column("retry_after").to_pylist(),
                strict=False,
            ),
        )


def _index_items(conn: sqlite3.Connection, db: str, out: str, job: str) -> None:
    """Upsert the job's item identities into ``seen``; keep its items' dates as each feed's latest parse."""
    import pyarrow.compute as pc

    upsert = _UPSERT_SEEN.format(db=db)
    columns = ["feed_url", "identity", "guid", "link", "content_hash", "pub_date"]
    for batch in _batches(out, "items", job, columns):
        feed = batch.column("feed_url")
        identity = pc.coalesce(
            _nonempty(batch.column("identity")), _nonempty(batch.column("guid")), _nonempty(batch.column("link"))
        )
        known = pc.is_valid(identity)
        conn.executemany(
            upsert,
            zip(
                pc.filter(feed, known).to_pylist(),
                pc.filter(identity, known).to_pylist(),
                repeat(job),
                pc.filter(batch.column("content_hash"), known).to_pylist(),
                strict=False,
            ),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO temp.stage_parses (feed_url) VALUES (?)", ((u,) for u in pc.unique(feed).to_pylist())
        )
        dated = pc.is_valid(batch.column("pub_date"))
        conn.executemany(
            "INSERT INTO temp.stage_dates (feed_url, pub_date) VALUES (?, ?)",
            zip(pc.filter(feed, dated).to_pylist(), _as_us(pc.filter(batch.column("pub_date"), dated)), strict=True),
        )
    for statement in _MERGE_PARSES:
        conn.execute(statement.format(db=db), {"job": job} if ":job" in statement else {})


def _add_jobs(conn: sqlite3.Connection, db: str, out: str, jobs: Sequence[str], first: int, listing: _Listing) -> None:
    """Index ``jobs`` (in run order, the first at place ``first``) into schema ``db``; the caller commits."""
    for statement in _STAGING:
        conn.execute(statement)
    for order, job in enumerate(jobs, start=first):
        _index_feeds(conn, db, out, job, order)
        _index_fetch_log(conn, db, out, job, order)
        _index_items(conn, db, out, job)
        conn.execute(
            f"INSERT INTO {db}.jobs (job_id, ord, signature) VALUES (?, ?, ?)", (job, order, listing.signature(job))
        )


def _build(out: str, jobs: Sequence[str], listing: _Listing, filename: str) -> sqlite3.Connection:
    """A new index of ``jobs`` in ``filename`` ('' for a private temporary file), committed."""
    conn = _connect(filename)
    try:
        conn.execute("PRAGMA journal_mode = OFF")  # a new file: a failed build is thrown away whole
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("BEGIN")
        _create(conn, "main")
        _add_jobs(conn, "main", out, jobs, 0, listing)
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("PRAGMA synchronous = FULL")
    except BaseException:
        conn.close()
        raise
    return conn


def _plan(conn: sqlite3.Connection, jobs: Sequence[str], listing: _Listing) -> list[str] | None:
    """The jobs to add to an index that holds a prefix of ``jobs`` unchanged; None when it must be rebuilt."""
    meta = dict(conn.execute("SELECT key, value FROM main.meta").fetchall())
    if any(meta.get(key) != value for key, value in _META.items()):
        return None
    stored = conn.execute("SELECT job_id, signature FROM main.jobs ORDER BY ord").fetchall()
    if len(stored) > len(jobs):
        return None
    for (job, signature), wanted in zip(stored, jobs, strict=False):
        if job != wanted or signature != listing.signature(wanted):
            return None
    return list(jobs[len(stored) :])


@dataclass(slots=True)
class _Base:
    """The index of the settled jobs, as opened."""

    conn: sqlite3.Connection
    rebuilt: bool = False
    added: tuple[str, ...] = ()
    path: str | None = None  # the shared index file, None when private
    leftover: str | None = None  # a temporary file to delete on close


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _private(out: str, jobs: Sequence[str], listing: _Listing) -> _Base:
    return _Base(_build(out, jobs, listing, ""), rebuilt=bool(jobs))


def _install(out: str, jobs: Sequence[str], listing: _Listing, target: str) -> _Base:
    """Build the index in a temporary file beside ``target`` and rename it into place."""
    try:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=os.path.dirname(target) or ".")
        os.close(fd)
    except OSError as exc:
        logger.warning("state index: cannot write beside %s (%s); using a private temporary index", target, exc)
        return _private(out, jobs, listing)
    try:
        conn = _build(out, jobs, listing, tmp)
        _fsync(tmp)
        os.chmod(tmp, 0o644)
    except BaseException:
        _unlink(tmp)
        raise
    try:
        os.replace(tmp, target)
    except OSError as exc:  # e.g. Windows, where another process holds the old file open
        logger.warning("state index: cannot replace %s (%s); using a private temporary index", target, exc)
        return _Base(conn, rebuilt=True, leftover=tmp)
    return _Base(conn, rebuilt=True, path=target)


def _read_only(out: str, jobs: Sequence[str], listing: _Listing, target: str) -> _Base:
    """The shared index cannot be locked for writing: use it as it is if up to date, else a private one."""
    try:
        conn = _connect(target, "ro")
    except sqlite3.DatabaseError:
        pass
    else:
        try:
            if _plan(conn, jobs, listing) == []:
                return _Base(conn, path=target)
        except sqlite3.DatabaseError:
            pass
        conn.close()
    logger.warning("state index: %s is busy or read-only; using a private temporary index", target)
    return _private(out, jobs, listing)


def _update(conn: sqlite3.Connection, out: str, jobs: Sequence[str], listing: _Listing, target: str) -> _Base | None:
    """With the write lock held: add the new jobs and commit; None when the index must be rebuilt."""
    try:
        todo = _plan(conn, jobs, listing)
    except sqlite3.DatabaseError as exc:
        logger.warning("state index: %s is unreadable (%s); rebuilding it", target, exc)
        todo = None
    if todo is None:
        return None
    try:
        _add_jobs(conn, "main", out, todo, len(jobs) - len(todo), listing)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        conn.close()
        raise
    return _Base(conn, added=tuple(todo), path=target)


def _try_shared(out: str, jobs: Sequence[str], listing: _Listing, target: str) -> _Base | None:
    """Open, update or rebuild the shared index; None when another process replaced it meanwhile (try again)."""
    before = _stat(target)
    if before is None:
        return _install(out, jobs, listing, target)
    try:
        conn = _connect(target, "rw")
    except sqlite3.DatabaseError:
        return None if _stat(target) is None else _read_only(out, jobs, listing, target)
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.DatabaseError as exc:
        conn.close()
        if getattr(exc, "sqlite_errorname", "") in _NOT_OURS:
            return _read_only(out, jobs, listing, target)
        logger.warning("state index: %s is not a usable index (%s); rebuilding it", target, exc)
        return _install(out, jobs, listing, target)
    if _stat(target) != before:
        conn.execute("ROLLBACK")
        conn.close()
        return None
    updated = _update(conn, out, jobs, listing, target)
    if updated is not None:
        return updated
    try:
        return _install(out, jobs, listing, target)  # holding the old file's lock: others wait, then see the new one
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def _open_base(out: str, jobs: Sequence[str], listing: _Listing, target: str | None) -> _Base:
    if not jobs or target is None:
        return _private(out, jobs, listing)
    for _ in range(5):
        opened = _try_shared(out, jobs, listing, target)
        if opened is not None:
            return opened
    logger.warning("state index: %s keeps being replaced; using a private temporary index", target)
    return _private(out, jobs, listing)


def _attach_overlay(conn: sqlite3.Connection, out: str, jobs: Sequence[str], first: int, listing: _Listing) -> None:
    """The jobs still being written, in a private temporary database ``tail`` (empty when there are none)."""
    conn.execute("ATTACH DATABASE '' AS tail")
    conn.execute("BEGIN")
    try:
        _create(conn, "tail")
        _add_jobs(conn, "tail", out, jobs, first, listing)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _default_path(fs: pafs.FileSystem, root: str) -> str | None:
    if isinstance(fs, pafs.LocalFileSystem):
        return os.path.join(root, STATE_DIR, INDEX_NAME)
    return None
