"""The marker files of a dataset's commit protocol, and what they tell a reader.

* ``.running-<token>`` in a partition folder: a writer (one per process of a job) is writing
  into it; ``compact`` leaves such a partition alone. It holds the job, the writer's token and,
  for a distributed worker, its frontier and worker id (:func:`read_marker`).
* ``_commits/job_id=<job>/<seq>-<token>.json``: a commit is published; its files count. A file
  no marker names is half a commit, deleted by a resume.
* ``<seq>-c<8 hex>.json`` (:data:`COMPACTED_MARKER`): written by ``compact`` for a file it made,
  naming the files it was made of and when the run started.

The writer that makes them is :class:`pipelines.dataset.commits.DatasetWriter`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow.fs as pafs

from schemas.tables import PARTITION_KEY

__all__ = ["COMPACTED_MARKER", "RUNNING_MARKER", "commit_published", "is_running_marker", "read_marker", "run_started"]

#: Hidden file in a partition folder while a run writes into it; ``compact`` skips such partitions.
RUNNING_MARKER = ".running"
#: The commit marker of a file written by ``compact`` (``<seq>-c<8 hex>.json``, a writer's token has 8 hex
#: digits): it records when its run started, as the markers of the commits it replaced are gone.
COMPACTED_MARKER = re.compile(r"^\d+-c[0-9a-f]{8}\.json$")


def is_running_marker(name: str) -> bool:
    """A partition's "being written" marker: ``.running-<token>``, one per writer (the processes of a
    distributed job share partitions), or ``.running`` as written before schema 1.3."""
    return name == RUNNING_MARKER or name.startswith(RUNNING_MARKER + "-")


def run_started(fs: pafs.FileSystem, root: str, job_id: str) -> float | None:
    """When a run started (seconds since the epoch): the time of its first commit marker; None without any.

    Markers written by ``compact`` carry the start of the run they were written for (``started``),
    since their own time is that of the compaction.
    """
    selector = pafs.FileSelector(f"{root}/_commits/{PARTITION_KEY}={job_id}", allow_not_found=True)
    times = []
    for marker in fs.get_file_info(selector):
        started = _recorded_start(fs, marker) if COMPACTED_MARKER.match(marker.base_name) else None
        if started is None and marker.mtime is not None:
            started = marker.mtime.timestamp()
        if started is not None:
            times.append(started)
    return min(times, default=None)


def _recorded_start(fs: pafs.FileSystem, marker: pafs.FileInfo) -> float | None:
    try:
        with fs.open_input_stream(marker.path) as f:
            started = json.loads(f.read()).get("started")
    except (OSError, ValueError, AttributeError):  # gone meanwhile, or not a marker of ours
        return None
    return float(started) if isinstance(started, int | float) else None


def read_marker(fs: pafs.FileSystem, path: str) -> dict[str, Any]:
    """What a ``.running`` marker says (job_id, token; a distributed worker's frontier and worker); {} if unreadable."""
    try:
        with fs.open_input_stream(path) as f:
            info = json.loads(f.read())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def commit_published(fs: pafs.FileSystem, root: str, job_id: str, commit: str) -> bool:
    """Whether the commit ``commit`` (``<seq>-<token>``) of a job is in the dataset: its marker, or the record
    of a compacted file made of one of its files."""
    commit_dir = f"{root}/_commits/{PARTITION_KEY}={job_id}"
    if fs.get_file_info(f"{commit_dir}/{commit}.json").type == pafs.FileType.File:
        return True
    part = f"part-{commit}.parquet"
    for marker in fs.get_file_info(pafs.FileSelector(commit_dir, allow_not_found=True)):
        if COMPACTED_MARKER.match(marker.base_name):
            try:
                with fs.open_input_stream(marker.path) as f:
                    sources = json.loads(f.read()).get("compacted_from") or []
            except (OSError, ValueError, AttributeError):
                continue
            if part in sources:
                return True
    return False
