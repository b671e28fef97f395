"""Writing and reading the Parquet datasets (pyarrow only, no Scrapy).

Layout: ``<root>/<table>/job_id=<job>/part-<seq>-<token>.parquet``: one folder
per table, hive-partitioned by run, so a second run into the same root adds a
partition and never touches the first. Rows are buffered per table and
written as one file per flush (row count or age, whichever comes first); a
file is written under a hidden temporary name (``.part-...``) and renamed into
place when complete, so a crash never leaves a half-written ``.parquet`` file
for pyarrow or DuckDB to trip on (both skip names starting with ``.``). On
object stores, where a PUT is atomic, the final name is written directly.
"""

from __future__ import annotations

import logging
import posixpath
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from schemas.tables import PARTITION_KEY, TABLES, arrow_schema, check_version

logger = logging.getLogger(__name__)

#: Parquet row group size: large enough for fast scans, small enough to stream.
ROW_GROUP_ROWS = 128 * 1024


def resolve_root(out: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path) for a local path or any URI pyarrow understands (s3://, gs://, file://)."""
    if "://" in out:
        fs, path = pafs.FileSystem.from_uri(out)
        return fs, path.rstrip("/")
    local = pafs.LocalFileSystem()
    return local, posixpath.normpath(_abspath(out))


def _abspath(path: str) -> str:
    import os

    return os.path.abspath(path)


def _atomic_rename_supported(fs: pafs.FileSystem) -> bool:
    return isinstance(fs, pafs.LocalFileSystem)


@dataclass
class _Buffer:
    rows: list[dict[str, Any]] = field(default_factory=list)
    since: float = field(default_factory=time.monotonic)


class DatasetWriter:
    """Buffers rows per table and writes them as Parquet files of one run."""

    def __init__(
        self,
        out: str,
        job_id: str,
        *,
        batch_rows: int = 20000,
        flush_seconds: float = 30.0,
    ) -> None:
        self.fs, self.root = resolve_root(out)
        self.out = out
        self.job_id = job_id
        self.batch_rows = batch_rows
        self.flush_seconds = flush_seconds
        self._buffers: dict[str, _Buffer] = {t: _Buffer() for t in TABLES}
        self._schemas = {t: arrow_schema(t) for t in TABLES}
        self._seq = 0
        self._token = secrets.token_hex(4)
        self.rows_written: dict[str, int] = dict.fromkeys(TABLES, 0)
        self.files_written = 0
        self.closed = False

    def partition_dir(self, table: str) -> str:
        return f"{self.root}/{table}/{PARTITION_KEY}={self.job_id}"

    def write(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        buf = self._buffers[table]
        buf.rows.extend(rows)  # type: ignore[arg-type]
        if len(buf.rows) >= self.batch_rows:
            self.flush(table)

    def flush_due(self) -> None:
        """Write every table whose buffer is older than ``flush_seconds``."""
        now = time.monotonic()
        for table, buf in self._buffers.items():
            if buf.rows and now - buf.since >= self.flush_seconds:
                self.flush(table)

    def flush(self, table: str | None = None) -> None:
        for name in [table] if table else list(self._buffers):
            buf = self._buffers[name]
            if buf.rows:
                rows, self._buffers[name] = buf.rows, _Buffer()
                self._write_file(name, rows)
            else:
                buf.since = time.monotonic()

    def close(self) -> None:
        if not self.closed:
            self.flush()
            self.closed = True

    def _write_file(self, table: str, rows: list[dict[str, Any]]) -> None:
        schema = self._schemas[table]
        batch = pa.RecordBatch.from_pylist(rows, schema=schema)
        directory = self.partition_dir(table)
        self.fs.create_dir(directory, recursive=True)
        self._seq += 1
        name = f"part-{self._seq:06d}-{self._token}.parquet"
        final = f"{directory}/{name}"
        target = f"{directory}/.{name}.tmp" if _atomic_rename_supported(self.fs) else final
        with self.fs.open_output_stream(target) as sink:
            pq.write_table(pa.Table.from_batches([batch]), sink, row_group_size=ROW_GROUP_ROWS, compression="zstd")
        if target != final:
            self.fs.move(target, final)
        self.rows_written[table] += len(rows)
        self.files_written += 1


# --- reading ---------------------------------------------------------------------


def list_jobs(out: str, table: str = "fetch_log") -> list[str]:
    """Job ids present in a dataset, oldest first (ids sort by their UTC start time by default)."""
    fs, root = resolve_root(out)
    selector = pafs.FileSelector(f"{root}/{table}", allow_not_found=True)
    prefix = f"{PARTITION_KEY}="
    jobs = []
    for info in fs.get_file_info(selector):
        base = info.base_name
        if info.type == pafs.FileType.Directory and base.startswith(prefix):
            jobs.append(base[len(prefix) :])
    return sorted(jobs)


def open_table(out: str, table: str, job_id: str | None = None) -> ds.Dataset:
    """A pyarrow dataset of one table (one job, or all), schema version checked."""
    fs, root = resolve_root(out)
    path = f"{root}/{table}"
    if job_id is not None:
        path = f"{path}/{PARTITION_KEY}={job_id}"
    partitioning = ds.partitioning(pa.schema([(PARTITION_KEY, pa.string())]), flavor="hive")
    schema = arrow_schema(table)
    if job_id is None:
        schema = schema.append(pa.field(PARTITION_KEY, pa.string()))
    dataset = ds.dataset(path, filesystem=fs, format="parquet", partitioning=partitioning if job_id is None else None,
                         schema=schema, ignore_prefixes=[".", "_"])
    for fragment in dataset.get_fragments():
        check_version(fragment.physical_schema.metadata, where=fragment.path)
    return dataset
