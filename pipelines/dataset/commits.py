"""Writing one run of a Parquet dataset in crash-safe commits (pyarrow only, no Scrapy).

Layout: ``<root>/<table>/job_id=<job>/part-<seq>-<token>.parquet``: one folder
per table, hive-partitioned by run, so a second run into the same root adds a
partition and never touches the first. Rows are buffered per table and
written as one file per flush (row count or age, whichever comes first); a
file is written under a hidden temporary name (``.part-...``) and renamed into
place when complete, so a crash never leaves a half-written ``.parquet`` file
for pyarrow or DuckDB to trip on (both skip names starting with ``.``). On
object stores, where a PUT is atomic, the final name is written directly.
The markers a commit leaves are described in :mod:`pipelines.dataset.markers`;
reading the runs back is :mod:`pipelines.dataset.store`.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipelines.dataset import faults
from pipelines.dataset.claims import fetch_key, keep_rows, page_keys
from pipelines.dataset.markers import RUNNING_MARKER, commit_published
from pipelines.dataset.store import resolve_root
from schemas.rowtypes import check_rows
from schemas.tables import PARTITION_KEY, TABLES, Encoded, arrow_schema, decode_rows

__all__ = ["ROW_GROUP_ROWS", "Batch", "DatasetWriter", "arrow_table"]

logger = logging.getLogger(__name__)

#: Parquet row group size: large enough for fast scans, small enough to stream.
ROW_GROUP_ROWS = 128 * 1024


@dataclass(frozen=True, slots=True)
class Batch:
    """The rows of one commit, taken from the buffers."""

    seq: int
    #: table -> the rows buffered as dicts (fetch_log rows are always dicts)
    tables: dict[str, list[dict[str, Any]]]
    #: table -> the rows buffered already built into Arrow (a document worker's items, element_usage...)
    encoded: dict[str, list[Encoded]] = field(default_factory=dict)

    def row_count(self) -> int:
        return sum(map(len, self.tables.values())) + sum(e.num_rows for parts in self.encoded.values() for e in parts)


def arrow_table(table: str, rows: list[dict[str, Any]], encoded: list[Encoded]) -> pa.Table:
    """Rows of one table as one Arrow table: the dict rows first, then the ones built into Arrow already."""
    schema = arrow_schema(table)
    # from_pylist, not encode_rows' struct array: for a commit's thousands of rows it is the faster.
    batches = [pa.RecordBatch.from_pylist(rows, schema=schema)] if rows else []
    batches += [decode_rows(table, e) for e in encoded]
    arrow = pa.Table.from_batches(batches, schema=schema)
    # Many small batches (one a feed) left as chunks would make the Parquet writer slower.
    return arrow.combine_chunks() if len(batches) > 1 else arrow


def _remove_quietly(fs: pafs.FileSystem, path: str) -> None:
    try:
        fs.delete_file(path)
    except OSError as exc:  # never there (the open failed), or the disk refuses even that
        logger.debug("dataset: cannot remove %s: %s", path, exc)


def _atomic_rename_supported(fs: pafs.FileSystem) -> bool:
    return isinstance(fs, pafs.LocalFileSystem)


class DatasetWriter:
    """Buffers rows of one run and writes them in commits of Parquet files.

    A commit writes one file per table that has rows, all under hidden
    temporary names, renames them into place, then records a marker
    ``<root>/_commits/job_id=<job>/<seq>-<token>.json`` naming the files. A
    crawl killed mid-commit leaves files without a marker; ``resume=True``
    deletes them (and stray temporary files) before writing again, so a
    resumed run never holds half of a commit. Rows of one feed always travel
    in one commit, so a feed is either wholly in the dataset or not at all.
    """

    def __init__(
        self,
        out: str,
        job_id: str,
        *,
        batch_rows: int = 20000,
        flush_seconds: float = 30.0,
        resume: bool = False,
        auto_commit: bool = True,
    ) -> None:
        self.fs, self.root = resolve_root(out)
        self.out = out
        self.job_id = job_id
        self.batch_rows = batch_rows
        self.flush_seconds = flush_seconds
        self._rows: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
        self._encoded: dict[str, list[Encoded]] = {t: [] for t in TABLES}
        self._pending = 0
        self._since = time.monotonic()
        self._seq = 0
        self._token = secrets.token_hex(4)
        self.rows_written: dict[str, int] = dict.fromkeys(TABLES, 0)
        self.files_written = 0
        self.commits = 0
        self._running: set[str] = set()
        #: More for the ``.running`` markers: a distributed worker's frontier (without its password) and worker
        #: id, so that ``compact`` can ask whether the writer is still alive.
        self.marker_info: dict[str, str] = {}
        self.closed = False
        #: Commit as soon as ``batch_rows`` rows are buffered. A caller that commits on
        #: another thread (the crawl's dataset extension) turns it off and drives
        #: :meth:`take` and :meth:`commit` itself.
        self.auto_commit = auto_commit
        if resume:
            self._seq = self.discard_uncommitted()

    def partition_dir(self, table: str) -> str:
        return f"{self.root}/{table}/{PARTITION_KEY}={self.job_id}"

    @property
    def commit_dir(self) -> str:
        return f"{self.root}/_commits/{PARTITION_KEY}={self.job_id}"

    def write(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        self.write_many({table: rows})

    def write_many(
        self, tables: Mapping[str, Iterable[Mapping[str, Any]]], encoded: Mapping[str, Encoded] | None = None
    ) -> None:
        """Buffer rows of several tables, and rows already built into Arrow (``encoded``:
        :func:`schemas.tables.encode_rows`); they land in the same commit.

        :class:`~schemas.rowtypes.RowError`, and nothing buffered, when a row has a key its table has no
        column for (Arrow would drop it silently) or no value for a non-nullable column (the commit would
        fail later, on the writer's thread): the caller that built the row hears of it."""
        checked = {table: rows if isinstance(rows, list) else list(rows) for table, rows in tables.items()}
        for table, rows in checked.items():
            check_rows(table, rows)
        for table, rows in checked.items():
            buf = self._rows[table]
            buf.extend(rows)  # type: ignore[arg-type]
            self._pending += len(rows)
        for table, batch in (encoded or {}).items():
            self._encoded[table].append(batch)
            self._pending += batch.num_rows
        if self.auto_commit and self._pending >= self.batch_rows:
            self.flush()

    @property
    def pending(self) -> int:
        """Rows buffered and not yet taken for a commit."""
        return self._pending

    def due(self) -> bool:
        """Whether a commit is due: ``batch_rows`` rows buffered, or the oldest older than ``flush_seconds``."""
        if not self._pending:
            return False
        return self._pending >= self.batch_rows or time.monotonic() - self._since >= self.flush_seconds

    def flush_due(self) -> None:
        """Commit if one is due (see :meth:`due`)."""
        if self.due():
            self.flush()

    @property
    def next_seq(self) -> int:
        """The sequence number the next batch taken will carry."""
        return self._seq + 1

    def take(self) -> Batch | None:
        """Hand every buffered row over as the next commit's batch (None when nothing is buffered).

        Cheap: call it where rows are produced; :meth:`commit` the batch anywhere
        else, one batch at a time and in the order taken.
        """
        self._since = time.monotonic()
        if not self._pending:
            return None
        rows, self._rows = self._rows, {t: [] for t in TABLES}
        encoded, self._encoded = self._encoded, {t: [] for t in TABLES}
        self._pending = 0
        self._seq += 1
        return Batch(self._seq, {t: r for t, r in rows.items() if r}, {t: e for t, e in encoded.items() if e})

    def flush(self) -> None:
        """Commit every buffered row now."""
        batch = self.take()
        if batch is not None:
            self.commit(batch)

    def close(self) -> None:
        if not self.closed:
            self.flush()
            self.finish()

    def finish(self) -> None:
        """Remove the run's ``.running`` markers: no more commits follow."""
        self.closed = True
        for directory in sorted(self._running):
            self.fs.delete_file(f"{directory}/{self.running_marker}")
        self._running.clear()

    @property
    def running_marker(self) -> str:
        """This writer's own marker: other writers of the job (other workers) have theirs."""
        return f"{RUNNING_MARKER}-{self._token}"

    def _mark_running(self, directory: str) -> None:
        """Put the ``.running`` marker in a partition folder before the run's first file lands there."""
        if directory not in self._running:
            with self.fs.open_output_stream(f"{directory}/{self.running_marker}") as sink:
                sink.write(json.dumps({"job_id": self.job_id, "token": self._token, **self.marker_info}).encode())
            self._running.add(directory)

    @property
    def token(self) -> str:
        """This writer's token: in its part files' names, its commit markers' and its ``.running`` markers'."""
        return self._token

    def commit_id(self, batch: Batch) -> str:
        """The name of ``batch``'s commit marker, without ``.json``: ``<seq>-<token>``."""
        return f"{batch.seq:06d}-{self._token}"

    def commit(self, batch: Batch, drop: set[str] | None = None) -> None:
        """Write one batch: its files under temporary names, renamed into place, then its marker.

        ``drop``: keys (:mod:`pipelines.dataset.claims`) whose rows another commit holds: left out.
        A write that fails removes the temporary files it made (a full disk keeps no half commit).
        """
        drop = drop or set()
        tables = [t for t in TABLES if t in batch.tables or t in batch.encoded]
        name = f"part-{batch.seq:06d}-{self._token}.parquet"
        atomic = _atomic_rename_supported(self.fs)
        pages = page_keys(batch.tables.get("pages", [])) if drop else {}
        written: list[tuple[str, str, str, int]] = []  # (table, temporary name, final name, rows)
        try:
            for table in tables:
                rows = batch.tables.get(table, [])
                if drop and table == "fetch_log":
                    rows = [r for r in rows if fetch_key(r) not in drop]
                arrow = keep_rows(table, arrow_table(table, rows, batch.encoded.get(table, [])), drop, pages)
                if arrow.num_rows == 0:
                    continue
                directory = self.partition_dir(table)
                self.fs.create_dir(directory, recursive=True)
                self._mark_running(directory)
                final = f"{directory}/{name}"
                target = f"{directory}/.{name}.tmp" if atomic else final
                written.append((table, target, final, arrow.num_rows))
                with self.fs.open_output_stream(target) as sink:
                    pq.write_table(arrow, sink, row_group_size=ROW_GROUP_ROWS, compression="zstd")
        except BaseException:
            for _, target, _, _ in written:
                _remove_quietly(self.fs, target)
            raise
        faults.reached("written")
        for _, target, final, _ in written:
            if target != final:
                self.fs.move(target, final)
        if not written:
            return
        faults.reached("renamed")
        self.fs.create_dir(self.commit_dir, recursive=True)
        marker = {"seq": batch.seq, "files": {t: n for t, _, _, n in written}}
        with self.fs.open_output_stream(f"{self.commit_dir}/{batch.seq:06d}-{self._token}.json") as sink:
            sink.write(json.dumps(marker).encode())
        faults.reached("committed")
        for table, _, _, n in written:
            self.rows_written[table] += n
        self.files_written += len(written)
        self.commits += 1

    def commit_published(self, commit: str) -> bool:
        """Whether the commit ``commit`` (``<seq>-<token>``) of this job is in the dataset: its marker, or a
        compacted file's record naming one of its files (``compact`` removes merged commits' markers)."""
        return commit_published(self.fs, self.root, self.job_id, commit)

    def discard_commit(self, commit: str) -> int:
        """Delete the files of commit ``commit`` (``<seq>-<token>``, another writer's that died before it wrote
        the commit's marker: none of its files count), in every table of the job; how many there were."""
        removed = 0
        names = {f"part-{commit}.parquet", f".part-{commit}.parquet.tmp"}
        for table in TABLES:
            for name in names:
                path = f"{self.partition_dir(table)}/{name}"
                if self.fs.get_file_info(path).type == pafs.FileType.File:
                    _remove_quietly(self.fs, path)
                    removed += 1
        return removed

    def remove_leftovers(self, token: str) -> int:
        """Remove what the writer ``token`` (a dead worker's) left in this job's partitions: its
        ``.running`` markers and temporary part files. How many files went."""
        removed = 0
        tmp = re.compile(rf"^\.part-\d+-{re.escape(token)}\.parquet\.tmp$")
        for table in TABLES:
            selector = pafs.FileSelector(self.partition_dir(table), allow_not_found=True)
            for info in self.fs.get_file_info(selector):
                if info.base_name == f"{RUNNING_MARKER}-{token}" or tmp.match(info.base_name):
                    _remove_quietly(self.fs, info.path)
                    removed += 1
        return removed

    def check_writable(self) -> None:
        """Raise ``OSError`` now if the output cannot be written (read-only, missing bucket, no space)."""
        self.fs.create_dir(self.root, recursive=True)
        probe = f"{self.root}/.feedcensus-probe-{self._token}"
        with self.fs.open_output_stream(probe) as sink:
            sink.write(b"probe")
        self.fs.delete_file(probe)

    def discard_uncommitted(self) -> int:
        """Delete this job's files that no commit marker names; return the highest committed seq."""
        committed: set[str] = set()
        top = 0
        for info in self.fs.get_file_info(pafs.FileSelector(self.commit_dir, allow_not_found=True)):
            stem = info.base_name.removesuffix(".json")
            if info.base_name.endswith(".json") and "-" in stem:
                committed.add(stem)
                top = max(top, int(stem.split("-", 1)[0]))
        for table in TABLES:
            selector = pafs.FileSelector(self.partition_dir(table), allow_not_found=True)
            for info in self.fs.get_file_info(selector):
                base = info.base_name
                stem = base.removeprefix("part-").removesuffix(".parquet")
                if base.startswith(".") or (base.startswith("part-") and stem not in committed):
                    logger.warning("resume: removing %s (not part of a finished commit)", info.path)
                    self.fs.delete_file(info.path)
        return top
