"""Where a Parquet dataset is, and reading its runs back (pyarrow only, no Scrapy).

:func:`resolve_root` turns ``--out`` (a folder or any URI pyarrow understands) into a file system
and a path. :func:`list_jobs` lists the runs in the order they started, :func:`open_table` reads a
table of one run or all of them (schema version checked; a key written by two commits of a
distributed job is read once, :func:`job_winners`). The runs are written by
:class:`pipelines.dataset.commits.DatasetWriter`; its markers are :mod:`pipelines.dataset.markers`.
"""

from __future__ import annotations

import logging
import posixpath
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipelines.dataset.claims import (
    CLAIM_COLUMNS,
    FINAL,
    KEYED_TABLES,
    commit_keys,
    commit_of,
    keep_winners,
    winning_commits,
)
from pipelines.dataset.markers import is_running_marker, run_started
from schemas.tables import PARTITION_KEY, arrow_schema, check_version

if TYPE_CHECKING:
    import pyarrow.dataset as ds

logger = logging.getLogger(__name__)


def resolve_root(out: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path) for a local path or any URI pyarrow understands (s3://, gs://, file://)."""
    if "://" in out:
        fs, path = pafs.FileSystem.from_uri(with_gcs_retry_limit(out))
        return fs, path.rstrip("/")
    local = pafs.LocalFileSystem()
    return local, posixpath.normpath(_abspath(out))


#: Seconds pyarrow's Google Cloud Storage client retries before it gives up, unless the URI says
#: (``?retry_limit_seconds=``): its own default is minutes, during which Ctrl-C is not heard, e.g.
#: while it looks for credentials on a machine that has none (``--out gs://...`` seemed to hang).
GCS_RETRY_LIMIT_SECONDS = 20


def with_gcs_retry_limit(uri: str) -> str:
    """``uri`` with :data:`GCS_RETRY_LIMIT_SECONDS` as its retry limit when it is a ``gs://`` URI without one."""
    if not uri.startswith(("gs://", "gcs://")) or "retry_limit_seconds=" in uri:
        return uri
    return f"{uri}{'&' if '?' in uri else '?'}retry_limit_seconds={GCS_RETRY_LIMIT_SECONDS}"


def _abspath(path: str) -> str:
    import os

    return os.path.abspath(path)


def unfinished_jobs(out: str, jobs: list[str] | None = None) -> dict[str, int]:
    """Of ``jobs`` (default: every job), those with partitions holding a ``.running`` marker, and how many:
    a crawl is writing them, or stopped before it ended (what it committed is there, the rest is not).
    One recursive listing of the dataset (on S3 a paginated LIST), not one per partition."""
    fs, root = resolve_root(out)
    prefix = f"{PARTITION_KEY}="
    found: dict[str, int] = {}
    for info in fs.get_file_info(pafs.FileSelector(root, allow_not_found=True, recursive=True)):
        table, _, inside = info.path[len(root) + 1 :].partition("/")
        folder, _, name = inside.partition("/")
        if table.startswith(("_", ".")) or not folder.startswith(prefix) or not is_running_marker(name):
            continue
        job = folder[len(prefix) :]
        if jobs is None or job in jobs:
            found[job] = found.get(job, 0) + 1
    return found


def list_jobs(out: str, table: str = "fetch_log") -> list[str]:
    """Job ids present in a dataset, in the order the runs started (the last is the latest run).

    A run's start is the time of its first commit marker (:func:`run_started`), so a job
    named ``A`` run after one named ``20261122T001500Z`` still counts as later.
    """
    fs, root = resolve_root(out)
    selector = pafs.FileSelector(f"{root}/{table}", allow_not_found=True)
    prefix = f"{PARTITION_KEY}="
    started: dict[str, float] = {}
    for info in fs.get_file_info(selector):
        base = info.base_name
        if info.type == pafs.FileType.Directory and base.startswith(prefix):
            job = base[len(prefix) :]
            first = run_started(fs, root, job)
            started[job] = first if first is not None else (info.mtime.timestamp() if info.mtime else 0.0)
    return sorted(started, key=lambda job: (started[job], job))


def committed_claims(out: str, job_id: str) -> list[tuple[str, str]]:
    """(key, claim) of every committed ``fetch_log`` row of a job (:mod:`pipelines.dataset.claims`): what
    a frontier that lost its last writes must know was committed. The claim names the row's commit
    (``committed\t<seq>-<token>``, the part file's), so it reads as a published commit's."""
    import pyarrow.dataset as ds

    fs, root = resolve_root(out)
    path = f"{root}/fetch_log/{PARTITION_KEY}={job_id}"
    try:
        dataset = ds.dataset(path, filesystem=fs, format="parquet", ignore_prefixes=[".", "_"])
    except FileNotFoundError:
        return []
    found: list[tuple[str, str]] = []
    for fragment in dataset.get_fragments():
        name = posixpath.basename(fragment.path)
        claim = "committed\t" + name.removeprefix("part-").removesuffix(".parquet")
        rows = fragment.to_table(columns=list(CLAIM_COLUMNS)).to_pylist()
        found += [(key, claim) for key in commit_keys(rows)]
    return found


def committed_urls(out: str, job_id: str) -> set[str]:
    """Every URL with a committed ``fetch_log`` row in a job (requested and final URLs): what a resume skips."""
    try:
        table = open_table(out, "fetch_log", job_id).to_table(columns=["url", "final_url"])
    except FileNotFoundError:
        return set()
    return {u for col in ("url", "final_url") for u in table.column(col).to_pylist() if u}


def job_winners(fs: pafs.FileSystem, root: str, job_id: str) -> dict[str, str] | None:
    """Each key's winning commit in a job where some key has rows in two commits (None otherwise: a job
    written by one writer, or with claims): the rule of :func:`pipelines.dataset.claims.winning_commits`,
    commits in the order they were published (their markers' times, then names). Cached per job and
    listing; only a job with repeated keys keeps its winners in memory."""
    pdir = f"{root}/fetch_log/{PARTITION_KEY}={job_id}"
    parts = [
        i
        for i in fs.get_file_info(pafs.FileSelector(pdir, allow_not_found=True))
        if i.type == pafs.FileType.File and i.base_name.endswith(".parquet") and not i.base_name.startswith((".", "_"))
    ]
    if len({commit_of(i.base_name).partition("-")[2] for i in parts}) < 2:
        return None
    fingerprint = (root, job_id, tuple(sorted((i.base_name, i.size) for i in parts)))
    if fingerprint in _WINNERS:
        winners = _WINNERS[fingerprint]
    else:
        commit_dir = f"{root}/_commits/{PARTITION_KEY}={job_id}"
        published = {
            i.base_name.removesuffix(".json"): i.mtime_ns or 0
            for i in fs.get_file_info(pafs.FileSelector(commit_dir, allow_not_found=True))
        }
        parts.sort(key=lambda i: (published.get(commit_of(i.base_name), i.mtime_ns or 0), i.base_name))
        logs = [
            (commit_of(i.base_name), pq.read_table(i.path, columns=list(CLAIM_COLUMNS), filesystem=fs).to_pylist())
            for i in parts
        ]
        winners = winning_commits(logs)
        keys = sum(1 for k in winners if not k.startswith(FINAL))
        if sum(len(set(commit_keys(rows))) for _, rows in logs) > keys:
            logger.warning(
                "job %s holds rows of one URL from two commits (written before claims, or by a worker taken for "
                "dead): each is read once, from the first commit (docs/datasets.md, Readers); compact removes them",
                job_id,
            )
        else:
            winners = None  # kept small: only a job with repeated keys keeps its winners
        if len(_WINNERS) >= 64:
            _WINNERS.clear()
        _WINNERS[fingerprint] = winners
    return winners


#: (root, job, its fetch_log files) -> each key's winning commit when some key is in two commits, else None.
_WINNERS: dict[tuple[str, str, tuple[tuple[str, int | None], ...]], dict[str, str] | None] = {}


def open_table(out: str, table: str, job_id: str | None = None) -> ds.Dataset:
    """A pyarrow dataset of one table (one job, or all), schema version checked.

    A job holding rows of one key from two commits (see :func:`job_winners`) is read once per key: its
    rows are then read into memory, the others' stay lazy (a job written with claims never has any)."""
    # Imported here: pyarrow.dataset imports pandas (0.4 s), which a crawl that reads no earlier job never needs.
    import pyarrow.dataset as ds

    fs, root = resolve_root(out)
    path = f"{root}/{table}"
    if job_id is not None:
        path = f"{path}/{PARTITION_KEY}={job_id}"
    partitioning = ds.partitioning(pa.schema([(PARTITION_KEY, pa.string())]), flavor="hive")
    schema = arrow_schema(table)
    if job_id is None:
        schema = schema.append(pa.field(PARTITION_KEY, pa.string()))
    dataset = ds.dataset(
        path,
        filesystem=fs,
        format="parquet",
        partitioning=partitioning if job_id is None else None,
        schema=schema,
        ignore_prefixes=[".", "_"],
    )
    fragments = list(dataset.get_fragments())
    for fragment in fragments:
        check_version(fragment.physical_schema.metadata, where=fragment.path)
    if table not in KEYED_TABLES:
        return dataset
    marker = f"/{PARTITION_KEY}="
    jobs = {job_id} if job_id is not None else {f.path.split(marker, 1)[1].split("/", 1)[0] for f in fragments}
    winners = {j: w for j in sorted(jobs) if (w := job_winners(fs, root, j)) is not None}
    if not winners:
        return dataset
    pieces = []
    for fragment in fragments:
        piece = fragment.to_table(schema=dataset.schema)
        job = job_id if job_id is not None else fragment.path.split(marker, 1)[1].split("/", 1)[0]
        if job in winners:
            piece = keep_winners(table, commit_of(posixpath.basename(fragment.path)), piece, winners[job])
        pieces.append(piece)
    return ds.dataset(pa.concat_tables(pieces) if pieces else dataset.schema.empty_table())
