"""Putting compacted files in place of a partition's old ones, for ``compact`` (pipelines/dataset/compact.py).

Steps 5 and 6 of docs/datasets.md, "Compaction": the new files are recorded as
commits of the run, then swapped in (one ``renameat2`` exchange on Linux, two
renames elsewhere, copies and deletes on object stores). The old files wait in
the staging folder until their grace is over (:class:`Retired`).
"""

from __future__ import annotations

import ctypes
import errno
import json
import logging
import os
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from pipelines.dataset.compactwrite import commit_of
from pipelines.dataset.markers import is_running_marker, run_started
from schemas.tables import PARTITION_KEY

logger = logging.getLogger(__name__)

#: Prefix of the staging folders at the dataset root.
STAGING_PREFIX = ".compact-"
#: The file in a staging folder that names its partition (``<table>/job_id=<job>``).
PARTITION_NOTE = "partition"

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


class CompactError(Exception):
    """The dataset cannot be compacted (missing, unknown job, a partition that changed)."""


def is_part(info: pafs.FileInfo) -> bool:
    """Whether a listed file is a part of the dataset (not a marker, a temporary or a hidden file)."""
    base = info.base_name
    return info.type == pafs.FileType.File and base.endswith(".parquet") and not base.startswith((".", "_"))


def snapshot(fs: pafs.FileSystem, directory: str) -> list[pafs.FileInfo]:
    """Everything in ``directory``, sorted by name (empty when it is missing)."""
    return sorted(fs.get_file_info(pafs.FileSelector(directory, allow_not_found=True)), key=lambda i: i.base_name)


def fingerprint(infos: list[pafs.FileInfo]) -> list[tuple[str, int | None, Any]]:
    """Name, size and mtime of each file: equal fingerprints mean the folder did not change."""
    return [(i.base_name, i.size, i.mtime_ns) for i in infos]


@dataclass(frozen=True, slots=True)
class Partition:
    """One ``<table>/job_id=<job>`` folder as listed before compaction."""

    table: str
    job_id: str
    path: str
    #: Everything in the folder, sorted by name (to tell later whether it changed).
    listing: list[pafs.FileInfo]

    @property
    def parts(self) -> list[pafs.FileInfo]:
        return [i for i in self.listing if is_part(i)]

    @property
    def size(self) -> int:
        return sum(i.size or 0 for i in self.parts)

    @property
    def running(self) -> bool:
        return any(is_running_marker(i.base_name) for i in self.listing)


def exists(fs: pafs.FileSystem, path: str) -> bool:
    """Whether anything is at ``path``."""
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def install(fs: pafs.FileSystem, root: str, partition: Partition, written: list[tuple[str, int]], staging: str) -> bool:
    """Record the staged files as commits and put them in place of the partition's parts.

    True when the old files are now in the staging folder (a local swap),
    False when they are deleted already (object stores).
    """
    new_dir = f"{staging}/new"
    local = isinstance(fs, pafs.LocalFileSystem)
    if local:
        # Files that are not parts (anything but writer temp files) move along with the partition.
        for info in partition.listing:
            if info.type == pafs.FileType.File and not is_part(info) and not info.base_name.endswith(".tmp"):
                fs.copy_file(info.path, f"{new_dir}/{info.base_name}")
    _record_commits(fs, root, partition.table, partition.job_id, written, [i.base_name for i in partition.parts])
    if local:
        _swap_local(new_dir, partition.path, f"{staging}/old")
        return True
    for name, _ in written:
        fs.copy_file(f"{new_dir}/{name}", f"{partition.path}/{name}")
    for info in partition.parts:
        fs.delete_file(info.path)
    return False


def _record_commits(
    fs: pafs.FileSystem, root: str, table: str, job_id: str, written: list[tuple[str, int]], sources: list[str]
) -> None:
    """Name the new files in the run's commit records (only for runs that keep them).

    Each record also keeps when the run started (``started``, from the markers it is about to
    replace), so ``list_jobs`` still orders the runs by their start once those are gone.
    """
    commit_dir = f"{root}/_commits/{PARTITION_KEY}={job_id}"
    if fs.get_file_info(commit_dir).type != pafs.FileType.Directory:
        return
    started = run_started(fs, root, job_id)
    for name, n in written:
        stem = commit_of(name)
        record = {"seq": int(stem.split("-", 1)[0]), "files": {table: n}, "compacted_from": sources, "started": started}
        with fs.open_output_stream(f"{commit_dir}/{stem}.json") as sink:
            sink.write(json.dumps(record).encode())


class Retired:
    """Staging folders holding the old files of swapped partitions, deleted ``grace`` seconds after the swap.

    A folder that cannot be deleted is logged and left (``compact`` reports it as a leftover).
    """

    def __init__(self, fs: pafs.FileSystem, grace: float) -> None:
        self._fs = fs
        self._grace = grace
        self._pending: deque[tuple[float, str]] = deque()  # (when swapped, staging folder), oldest first

    def add(self, staging: str) -> None:
        self._pending.append((time.monotonic(), staging))

    def delete_expired(self) -> None:
        while self._pending and time.monotonic() - self._pending[0][0] >= self._grace:
            self._delete(self._pending.popleft()[1])

    def delete_all(self) -> None:
        """Wait out the newest swap's grace, then delete every folder left."""
        if self._pending:
            time.sleep(max(0.0, self._grace - (time.monotonic() - self._pending[-1][0])))
        while self._pending:
            self._delete(self._pending.popleft()[1])

    def _delete(self, staging: str) -> None:
        try:
            self._fs.delete_dir(staging)
        except OSError as exc:
            logger.warning("could not delete %s (old files of a compacted partition): %s", staging, exc)


def _exchange(a: str, b: str) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), a, None, b)


def _swap_local(new_dir: str, partition: str, old_dir: str) -> None:
    """Put ``new_dir`` where ``partition`` is; the old partition ends up at ``old_dir`` (in the staging folder)."""
    if _exchange(new_dir, partition):
        os.rename(new_dir, old_dir)  # the old files, named as in the fallback (a reader's open folder goes along)
        return
    os.rename(partition, old_dir)
    try:
        os.rename(new_dir, partition)
    except OSError as exc:
        try:
            os.rename(old_dir, partition)
        except OSError:
            raise CompactError(
                f"{partition} is missing: its files are in {old_dir}; move that folder back ({exc})"
            ) from exc
        raise
