"""Writing a partition's rows into new files, for ``compact`` (pipelines/dataset/compact.py).

The rows are streamed: memory holds about one row group, whatever the size of
the partition. The new files are named as commits of the run, after its last one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipelines.dataset.claims import keep_winners
from schemas.tables import PARTITION_KEY, arrow_schema

_SEQ = re.compile(r"^(\d+)-")


def namer(seq: int, token: str) -> Callable[[int], str]:
    """Names of the new files: commit sequence numbers from ``seq`` on, marked by ``token``."""

    def name_of(n: int) -> str:
        return f"part-{seq + n:06d}-c{token}.parquet"

    return name_of


def next_seq(fs: pafs.FileSystem, root: str, job_id: str, parts: list[pafs.FileInfo]) -> int:
    """One more than the highest commit sequence number of the run (part names and commit records)."""
    names = [i.base_name.removeprefix("part-") for i in parts]
    commit_dir = f"{root}/_commits/{PARTITION_KEY}={job_id}"
    names += [i.base_name for i in fs.get_file_info(pafs.FileSelector(commit_dir, allow_not_found=True))]
    seqs = [int(m.group(1)) for n in names if (m := _SEQ.match(n))]
    return max(seqs, default=0) + 1


def write_compacted(
    fs: pafs.FileSystem,
    table: str,
    paths: list[str],
    directory: str,
    name_of: Callable[[int], str],
    file_rows: int,
    group_rows: int,
    tick: Callable[[], None],
    winners: dict[str, str] | None = None,
    dropped: list[int] | None = None,
) -> list[tuple[str, int]]:
    """Stream ``paths`` into files of up to ``file_rows`` rows in row groups of ``group_rows``; [(name, rows)].

    Memory holds about one row group: batches are buffered until a group is
    full, and each group is written as one row group. ``tick`` runs after each
    group (the old files of partitions swapped before are deleted once due).
    """
    schema = arrow_schema(table)
    dataset = ds.dataset(paths, schema=schema, format="parquet", filesystem=fs)
    scanner = dataset.scanner(batch_size=group_rows, batch_readahead=2, fragment_readahead=2)
    written: list[tuple[str, int]] = []
    writer: pq.ParquetWriter | None = None
    sink: Any = None
    in_file = 0

    def close() -> None:
        if writer is not None:
            writer.close()
            sink.close()

    def next_group() -> int:
        """Rows the next row group takes: a full group, or what the current file has room for."""
        room = file_rows - in_file if writer is not None and in_file < file_rows else file_rows
        return min(group_rows, room)

    def write_group(group: pa.Table) -> None:
        nonlocal writer, sink, in_file
        if writer is None or in_file >= file_rows:
            close()
            name = name_of(len(written))
            sink = fs.open_output_stream(f"{directory}/{name}")
            writer = pq.ParquetWriter(sink, schema, compression="zstd")
            written.append((name, 0))
            in_file = 0
        writer.write_table(group, row_group_size=group_rows)
        in_file += group.num_rows
        written[-1] = (written[-1][0], in_file)
        tick()

    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    try:
        for batch in _batches(fs, table, paths, scanner, winners, dropped):
            pending.append(batch)
            pending_rows += batch.num_rows
            while pending_rows and pending_rows >= (size := next_group()):
                buffered = pa.Table.from_batches(pending, schema=schema)
                write_group(buffered.slice(0, size))
                pending = buffered.slice(size).to_batches()
                pending_rows -= size
        if pending_rows:
            write_group(pa.Table.from_batches(pending, schema=schema))
    finally:
        close()
    return written


def _batches(
    fs: pafs.FileSystem,
    table: str,
    paths: list[str],
    scanner: ds.Scanner,
    winners: dict[str, str] | None,
    dropped: list[int] | None,
) -> Iterator[pa.RecordBatch]:
    """The partition's rows in batches; with ``winners``, file by file, without the rows of keys another
    commit holds (their count added to ``dropped[0]``)."""
    if not winners:
        yield from scanner.to_batches()
        return
    schema = arrow_schema(table)
    for path in paths:
        commit = commit_of(posixpath.basename(path))
        for batch in ds.dataset(path, schema=schema, format="parquet", filesystem=fs).to_batches():
            kept = keep_winners(table, commit, pa.Table.from_batches([batch], schema=schema), winners)
            if dropped is not None:
                dropped[0] += batch.num_rows - kept.num_rows
            yield from kept.to_batches()


def commit_of(part_name: str) -> str:
    """The commit a part file belongs to, as its marker is named: ``part-<seq>-<token>.parquet`` -> ``<seq>-<token>``."""
    return part_name.removeprefix("part-").removesuffix(".parquet")
