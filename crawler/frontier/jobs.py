"""What the CLI asks of a frontier without joining a job: every job on a Redis (:func:`frontier_jobs`, for
``feedcensus status``), and whether a dataset's ``.running`` marker names a worker that is gone
(:func:`marker_is_stale`, for ``feedcensus compact``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crawler.frontier.state import FrontierError, FrontierStatus
from crawler.frontier.store import Frontier


def marker_is_stale(info: Mapping[str, Any]) -> bool:
    """Whether the ``.running`` marker of a distributed worker (its ``frontier``, ``job_id`` and ``worker``)
    names a writer that is gone: the job is done or gone from Redis, or the worker is not a live one of it.
    False when the marker names no frontier, or the frontier cannot be asked (then it is left alone)."""
    url, job, worker = info.get("frontier"), info.get("job_id"), info.get("worker")
    if not (isinstance(url, str) and isinstance(job, str) and isinstance(worker, str) and url and job):
        return False
    try:
        frontier = Frontier.connect(url, job)
    except FrontierError:
        return False
    try:
        status = frontier.status()
    except FrontierError:
        return False
    finally:
        frontier.close()
    return status.state != "running" or not any(w.id == worker and w.live for w in status.workers)


def frontier_jobs(url: str) -> list[FrontierStatus]:
    """The status of every job on the frontier at ``url``, by job id (``feedcensus status`` without ``--job``).

    A job is found by its ``meta`` hash (``<prefix><job>:meta``: every job has one from its start until its
    keys expire), scanned with SCAN, which does not hold the server up as KEYS would."""
    probe = Frontier.connect(url, "-")
    try:
        head = probe.prefix.removesuffix("-:")

        def scan() -> set[str]:
            keys = probe.redis.scan_iter(match=f"{head}*:meta", count=1000)
            return {key[len(head) : -len(":meta")] for key in keys if probe.redis.type(key) == "hash"}

        jobs = sorted(job for job in probe._call("list the jobs", scan) if job)
        found = [Frontier(probe.redis, url, job).status() for job in jobs]
    finally:
        probe.close()
    return [status for status in found if status.exists]
