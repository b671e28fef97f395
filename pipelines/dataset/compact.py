"""Merging the small Parquet files of finished runs into larger ones, atomically.

A crawl writes one file per table per commit, so a long run leaves many small
files in each ``<table>/job_id=<job>/`` partition. ``compact_dataset`` rewrites
each partition that has more files than it needs as files of up to
``FILE_ROWS`` rows in row groups of ``ROW_GROUP_ROWS`` rows, streaming (memory
holds about one row group, whatever the size of the partition).

Order of operations for one partition (see docs/datasets.md, "Compaction"):

1. Skip it if it holds the ``.running`` marker (a crawl is writing it) unless
   ``force``; skip it if it already has as few files as its rows need.
2. Read the files' footers: check the schema version, count rows.
3. Write the new files into a staging folder ``<root>/.compact-<token>/new/``
   (outside every table folder, so no reader's glob can reach it; DuckDB does
   not skip hidden folders inside a table folder, pyarrow does).
4. Check the row count written equals the row count read, and that the
   partition did not change meanwhile; otherwise give up on it, untouched.
5. Record the new files as commits of the run (``_commits/``), when the run
   has commit records, so a later ``--resume`` of the run keeps them. Each
   record keeps when the run started (``started``): ``list_jobs`` orders runs
   by their first marker, and the markers of the merged commits go (step 7).
6. Local file systems: swap the partition folder and the staging folder in
   one ``renameat2(RENAME_EXCHANGE)`` call (Linux), so a reader that lists the
   partition sees either every old file or every new file, never both or
   neither. Where the kernel or file system cannot exchange, two renames
   (partition out, staging in) leave the partition absent for the
   microseconds between them. Either way the old files end up in
   ``<staging>/old``, deleted with the staging folder at least
   ``OLD_FILES_GRACE`` seconds later: a reader that opened the partition
   folder before the swap and reads its entries after it lists every old
   file (then fails to open them by name), where deleting at once would let
   it list some or none and count too few rows. (``<staging>/partition``
   names the partition, for a leftover folder.)
   Object stores have no rename: the new files are copied in
   (each copy is atomic), then the old ones deleted, so a listing made in
   between sees both (duplicates) for the time of the copies and deletes.
7. Once every partition of the run is done, delete the commit markers of the
   merged files, unless a partition left alone still holds a file of that
   commit: no marker names files that are gone.

A reader that listed the old files before the swap and opens them after it
gets a file-not-found error, never rows of a mix.

This module plans (steps 1, 2, 4 and 7) and reports; ``compactwrite.py``
streams the rows into the new files (step 3) and ``compactswap.py`` records
them, swaps them in and retires the old files (steps 5 and 6).
"""

from __future__ import annotations

import logging
import math
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipelines.dataset.commits import ROW_GROUP_ROWS
from pipelines.dataset.compactswap import (
    PARTITION_NOTE,
    STAGING_PREFIX,
    CompactError,
    Partition,
    Retired,
    exists,
    fingerprint,
    install,
    is_part,
    snapshot,
)
from pipelines.dataset.compactwrite import commit_of, namer, next_seq, write_compacted
from pipelines.dataset.markers import is_running_marker, read_marker
from pipelines.dataset.store import job_winners, list_jobs, resolve_root
from schemas.tables import PARTITION_KEY, SCHEMA_VERSION, TABLES, check_version

__all__ = ["FILE_ROWS", "OLD_FILES_GRACE", "CompactError", "CompactResult", "PartitionCompaction", "compact_dataset"]

logger = logging.getLogger(__name__)

#: Rows per compacted file: eight row groups.
FILE_ROWS = 8 * ROW_GROUP_ROWS
#: Seconds the old files of a swapped partition stay whole (in its staging
#: folder) before they are deleted. A reader that opened the partition folder
#: just before the swap still reads its listing after it; deleting at once
#: could show that reader a partition with some or none of its files.
OLD_FILES_GRACE = 1.0


@dataclass(frozen=True, slots=True)
class PartitionCompaction:
    """What happened to one ``<table>/job_id=<job>`` partition."""

    table: str
    job_id: str
    files_before: int
    files_after: int
    rows: int
    bytes_before: int
    bytes_after: int
    #: Why the partition was left alone, or None when it was rewritten.
    skipped: str | None = None


@dataclass(frozen=True, slots=True)
class CompactResult:
    out: str
    partitions: tuple[PartitionCompaction, ...]
    #: Staging folders of interrupted compactions found at the root (see docs/datasets.md).
    leftovers: tuple[str, ...] = ()

    @property
    def compacted(self) -> tuple[PartitionCompaction, ...]:
        return tuple(p for p in self.partitions if p.skipped is None)

    @property
    def files_before(self) -> int:
        return sum(p.files_before for p in self.partitions)

    @property
    def files_after(self) -> int:
        return sum(p.files_after for p in self.partitions)

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.partitions)

    def __str__(self) -> str:
        jobs = sorted({p.job_id for p in self.partitions})
        head = (
            f"Compacted {len(self.compacted)} of {len(self.partitions)} partitions of {len(jobs)} job(s) in {self.out}: "
            f"{self.files_before} files -> {self.files_after}, {self.rows:,} rows unchanged, "
            f"{_size(sum(p.bytes_before for p in self.partitions))} -> {_size(sum(p.bytes_after for p in self.partitions))}."
        )
        lines = (self._per_table(), self._left_alone(), self._leftovers())
        return " ".join([head, *(line for line in lines if line)])

    def _per_table(self) -> str:
        per_table = []
        for table in TABLES:
            mine = [p for p in self.compacted if p.table == table]
            if mine:
                before = sum(p.files_before for p in mine)
                after = sum(p.files_after for p in mine)
                per_table.append(f"{table} {before} -> {after} files ({sum(p.rows for p in mine):,} rows)")
        return "Per table: " + "; ".join(per_table) + "." if per_table else ""

    def _left_alone(self) -> str:
        skipped = Counter(p.skipped for p in self.partitions if p.skipped is not None)
        return "Left alone: " + "; ".join(f"{n} {why}" for why, n in skipped.items()) + "." if skipped else ""

    def _leftovers(self) -> str:
        if not self.leftovers:
            return ""
        return (
            f"{len(self.leftovers)} staging folder(s) of an interrupted compaction remain at the root "
            f"({', '.join(self.leftovers)}); see docs/datasets.md before deleting them."
        )


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def compact_dataset(
    out: str,
    job: str | None = None,
    *,
    force: bool = False,
    file_rows: int = FILE_ROWS,
    row_group_rows: int = ROW_GROUP_ROWS,
    old_files_grace: float | None = None,
    is_stale: Callable[[dict[str, Any]], bool] | None = None,
) -> CompactResult:
    """Compact every partition of ``out`` (or only those of ``job``).

    ``force`` also compacts partitions that hold a ``.running`` marker: only
    for a crawl that died without closing, never for one still writing.
    ``file_rows`` and ``row_group_rows`` size the new files; the old files
    of a swapped partition are deleted at least ``old_files_grace`` seconds
    (default :data:`OLD_FILES_GRACE`) after its swap, once due after each row
    group written, and the call returns once they all are. Raises
    CompactError when there is no dataset or no such job, and
    SchemaVersionError for files of a newer schema.

    ``is_stale`` (what a ``.running`` marker says -> whether its writer is gone, e.g. a distributed worker
    its frontier knows is dead: ``crawler.frontier.marker_is_stale``): such markers, and their writer's
    temporary files, are removed first, so the partition is compacted.
    """
    if file_rows < 1 or row_group_rows < 1:
        raise CompactError(f"file_rows and row_group_rows must be positive, not {file_rows} and {row_group_rows}")
    fs, root = resolve_root(out)
    jobs_by_table = _jobs_by_table(out, job)
    results = []
    merged: dict[str, set[str]] = {}  # job -> the commits whose files were merged away
    retired = Retired(fs, OLD_FILES_GRACE if old_files_grace is None else old_files_grace)
    try:
        winners: dict[str, dict[str, str] | None] = {}
        for table, jobs in jobs_by_table.items():
            for job_id in jobs:
                if job is None or job_id == job:
                    if job_id not in winners:
                        winners[job_id] = _winners(fs, root, job_id)
                    result, sources = _compact_partition(
                        fs, root, table, job_id, force, file_rows, row_group_rows, retired, winners[job_id], is_stale
                    )
                    results.append(result)
                    merged.setdefault(job_id, set()).update(commit_of(name) for name in sources)
                    retired.delete_expired()
        for job_id, commits in merged.items():
            _drop_merged_markers(fs, root, job_id, commits)
    except KeyboardInterrupt:
        raise  # no waiting: the old files stay in their staging folders, reported by the next compact
    except BaseException:
        retired.delete_all()
        raise
    retired.delete_all()
    leftovers = tuple(
        info.base_name
        for info in fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
        if info.base_name.startswith(STAGING_PREFIX)
    )
    return CompactResult(out=out, partitions=tuple(results), leftovers=leftovers)


def _jobs_by_table(out: str, job: str | None) -> dict[str, list[str]]:
    """Each table's jobs; CompactError when there are none at all, or none named ``job``."""
    jobs_by_table = {table: list_jobs(out, table) for table in TABLES}
    all_jobs = sorted({j for jobs in jobs_by_table.values() for j in jobs})
    if not all_jobs:
        raise CompactError(f"no dataset found in {out} (expected {out}/<table>/{PARTITION_KEY}=...)")
    if job is not None and job not in all_jobs:
        raise CompactError(f"no job {job!r} in {out}; jobs: {', '.join(all_jobs)}")
    return jobs_by_table


def _unchanged(partition: Partition, why: str, rows: int = 0) -> PartitionCompaction:
    """The result for a partition left alone."""
    n = len(partition.parts)
    return PartitionCompaction(partition.table, partition.job_id, n, n, rows, partition.size, partition.size, why)


def _compact_partition(
    fs: pafs.FileSystem,
    root: str,
    table: str,
    job_id: str,
    force: bool,
    file_rows: int,
    group_rows: int,
    retired: Retired,
    winners: dict[str, str] | None = None,
    is_stale: Callable[[dict[str, Any]], bool] | None = None,
) -> tuple[PartitionCompaction, list[str]]:
    """What happened to one partition, and the names of the files merged away (none when it was left alone)."""
    pdir = f"{root}/{table}/{PARTITION_KEY}={job_id}"
    partition = Partition(table, job_id, pdir, snapshot(fs, pdir))
    if partition.running and is_stale is not None and _drop_stale_markers(fs, partition, is_stale):
        partition = Partition(table, job_id, pdir, snapshot(fs, pdir))
    why, rows = _reason_to_leave(fs, partition, force, file_rows)
    if why is None:
        why = _rewrite(fs, root, partition, rows, file_rows, group_rows, retired, winners)
    if why is not None:
        return _unchanged(partition, why, rows), []
    after = [i for i in snapshot(fs, pdir) if is_part(i)]
    result = PartitionCompaction(
        table, job_id, len(partition.parts), len(after), rows, partition.size, sum(i.size or 0 for i in after)
    )
    return result, [i.base_name for i in partition.parts]


def _reason_to_leave(fs: pafs.FileSystem, partition: Partition, force: bool, file_rows: int) -> tuple[str | None, int]:
    """(why the partition is left alone or None, its row count as far as it was read): steps 1 and 2."""
    if not force and partition.running:
        return "being written by a crawl (.running marker)", 0
    rows = 0
    major = SCHEMA_VERSION.split(".")[0]
    for info in partition.parts:
        with fs.open_input_file(info.path) as f:
            try:
                meta = pq.read_metadata(f)
            except pa.ArrowInvalid as exc:  # cut short, or not Parquet: the dataset is damaged, say which file
                raise CompactError(f"{info.path} cannot be read: {exc}") from None
        version = check_version(meta.metadata, where=info.path)
        if version.split(".")[0] != major:
            return f"written by schema version {version}, not {major}.x", 0
        rows += meta.num_rows
    if len(partition.parts) <= max(1, math.ceil(rows / file_rows)):
        return "already compact", rows
    return None, rows


def _rewrite(
    fs: pafs.FileSystem,
    root: str,
    partition: Partition,
    rows: int,
    file_rows: int,
    group_rows: int,
    retired: Retired,
    winners: dict[str, str] | None = None,
) -> str | None:
    """Steps 3 to 6: stage, check, record and swap in the new files; why not, when the partition changed.

    ``winners`` (a job written by several writers): each key's rows are kept from its winning commit
    only (:func:`pipelines.dataset.claims.winning_commits`), so the rows written must be those read
    less the duplicates dropped.

    After a swap the staging folder holds the old files; ``retired`` deletes
    it later. Otherwise it holds only copies and goes at once.
    """
    token = secrets.token_hex(4)
    staging = f"{root}/{STAGING_PREFIX}{token}"
    new_dir = f"{staging}/new"
    fs.create_dir(new_dir, recursive=True)
    with fs.open_output_stream(f"{staging}/{PARTITION_NOTE}") as note:  # whose files, for a leftover
        note.write(f"{partition.table}/{PARTITION_KEY}={partition.job_id}\n".encode())
    holds_old_files = False
    try:
        seq = next_seq(fs, root, partition.job_id, partition.parts)
        name_of = namer(seq, token)
        sources = [i.path for i in partition.parts]
        dropped: list[int] = [0]
        written = write_compacted(
            fs, partition.table, sources, new_dir, name_of, file_rows, group_rows, retired.delete_expired,
            winners, dropped,
        )  # fmt: skip
        if dropped[0]:
            logger.warning(
                "compact: %s: %d rows of keys another commit of the job holds dropped (docs/datasets.md, Readers)",
                partition.path, dropped[0],
            )  # fmt: skip
        if sum(n for _, n in written) != rows - dropped[0]:
            raise CompactError(
                f"{partition.path}: wrote {sum(n for _, n in written)} rows, read {rows}; left untouched"
            )
        if fingerprint(snapshot(fs, partition.path)) != fingerprint(partition.listing):
            return "changed while being compacted (run compact again)"
        holds_old_files = install(fs, root, partition, written, staging)
    finally:
        if holds_old_files:
            retired.add(staging)
        elif not exists(fs, f"{staging}/old"):  # only copies: the partition is as it was
            fs.delete_dir(staging)
        # else the fallback's renames failed half-way: the old files stay there (a reported leftover)
    return None


def _drop_stale_markers(fs: pafs.FileSystem, partition: Partition, is_stale: Callable[[dict[str, Any]], bool]) -> bool:
    """Remove the ``.running`` markers whose writers are gone (and those writers' temporary files); whether any."""
    dropped = False
    for info in partition.listing:
        if not is_running_marker(info.base_name):
            continue
        said = read_marker(fs, info.path)
        if not said or not is_stale(said):
            continue
        token = str(said.get("token") or "")
        logger.info("compact: %s: its writer is gone (%s); removing its marker", info.path, said.get("worker"))
        fs.delete_file(info.path)
        for other in partition.listing:
            if token and other.base_name.startswith(".part-") and other.base_name.endswith(f"-{token}.parquet.tmp"):
                fs.delete_file(other.path)
        dropped = True
    return dropped


def _winners(fs: pafs.FileSystem, root: str, job_id: str) -> dict[str, str] | None:
    return job_winners(fs, root, job_id)


def _drop_merged_markers(fs: pafs.FileSystem, root: str, job_id: str, commits: set[str]) -> None:
    """Delete the markers of ``commits`` (merged away) that no longer name a file in any table of the run.

    A commit spans tables: its marker stays while a partition left alone (a crawl writing it,
    already compact) still holds one of its files.
    """
    commit_dir = f"{root}/_commits/{PARTITION_KEY}={job_id}"
    markers = {
        info.base_name.removesuffix(".json"): info.path
        for info in fs.get_file_info(pafs.FileSelector(commit_dir, allow_not_found=True))
        if info.base_name.endswith(".json")
    }
    gone = commits & markers.keys()
    if not gone:
        return
    for table in TABLES:
        for info in fs.get_file_info(
            pafs.FileSelector(f"{root}/{table}/{PARTITION_KEY}={job_id}", allow_not_found=True)
        ):
            if is_part(info):
                gone.discard(commit_of(info.base_name))
    for commit in sorted(gone):
        fs.delete_file(markers[commit])
