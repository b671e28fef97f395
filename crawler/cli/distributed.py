"""``feedcensus worker`` and ``feedcensus status``: the commands of a distributed crawl.

``feedcensus crawl --frontier URL`` starts a job on a Redis frontier (its inputs
go into the shared queue and it crawls too); ``worker`` joins that job from any
process or machine; ``status`` shows the queue, the requests in flight and the
workers while it runs. docs/distributed.md says how to run them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from crawler.cli.errors import EXIT_FRONTIER, fail


def cmd_worker(args: argparse.Namespace) -> int:
    from crawler.cli import jobsettings
    from crawler.cli.crawl import crawl, report_end, warn_password
    from crawler.cli.options import check_frontier, checked_settings, crawl_settings, project_settings

    settings = checked_settings(args)
    if not args.out:
        raise fail("--out is required (the job's dataset: every worker writes into the same one)")
    if not args.job_id:
        raise fail("--job is required: the job `feedcensus crawl --frontier` started")
    warn_password(args.frontier)
    gone, finished = check_job(args.frontier, args.job_id, args.wait, out=args.out)
    if gone:
        print(f"feedcensus worker: {gone}", file=sys.stderr)
        return EXIT_FRONTIER
    if finished:
        # A scheduled worker started after its job ended: nothing to do, and nothing written into the
        # finished job's dataset (not even this worker's row), which may be compacted already.
        print(f"feedcensus worker: {finished}", file=sys.stderr)
        return 0
    args.seeds, args.opml, args.url, args.resume = [], [], [], None
    check_frontier(args.frontier, args.job_id)
    settings = crawl_settings(args, settings)
    archives = jobsettings.join(args.frontier, args.job_id, settings, project_settings())
    if args.replay or archives:
        from crawler.cli.replay import load_index, replay_settings

        replay_settings(load_index(list(args.replay or archives or [])), settings)
    result = crawl(args, settings)
    return report_end(result, args, settings, "worker", worker=True)


def check_job(url: str, job: str, wait: float, out: str | None = None) -> tuple[str | None, str | None]:
    """A worker joins a job its coordinator has started: registered, and its trusted input hosts shared
    (the coordinator's first step, before it queues anything), or does so within ``wait`` seconds.

    Returns two lines to print, either None. The first when the job is gone: the frontier has no trace of
    it but ``out`` holds its rows (Redis lost its data, or the job's keys expired or were deleted), so no
    coordinator will come (exit code 4, as for a worker that finds the job gone while it runs). The second
    when the job is finished (its last worker marked it done): nothing to do."""
    from crawler.frontier import Frontier, FrontierError

    deadline = time.monotonic() + wait
    try:
        frontier = Frontier.connect(url, job)
        try:
            while not ((status := frontier.status()).exists and frontier.hosts_shared()):
                if out and not status.exists and _has_rows(out, job):
                    gone = (
                        f"{frontier.gone_error()}; {out} holds rows of job {job!r}: the job cannot go on: start it "
                        "again, under a new --job-id to keep its rows apart from these"
                    )
                    return gone, None
                if time.monotonic() >= deadline:
                    raise fail(
                        f"no job {job!r} on the frontier {frontier.display_url} after {wait:g} s: "
                        "start it with feedcensus crawl --frontier"
                    )
                time.sleep(0.2)
        finally:
            frontier.close()
    except FrontierError as exc:
        raise fail(str(exc)) from None
    if status.state == "done":
        return None, f"job {job} on {status.display_url} is finished: nothing to do (start a new job for a new crawl)"
    return None, None


def _has_rows(out: str, job: str) -> bool:
    """Whether the dataset ``out`` holds a commit of ``job`` (False when it cannot be read: the crawl says why)."""
    from pipelines.dataset.markers import run_started
    from pipelines.dataset.store import resolve_root

    try:
        return run_started(*resolve_root(out), job) is not None
    except (OSError, ValueError):
        return False


def frontier_status(url: str, job: str) -> Any:
    from crawler.frontier import Frontier, FrontierError

    try:
        frontier = Frontier.connect(url, job)
        try:
            return frontier.status()
        finally:
            frontier.close()
    except FrontierError as exc:
        raise fail(str(exc)) from None


def frontier_jobs(url: str) -> list[Any]:
    from crawler.frontier import FrontierError, frontier_jobs

    try:
        return frontier_jobs(url)
    except FrontierError as exc:
        raise fail(str(exc)) from None


def job_state(status: Any) -> str:
    """A job's state in one word: seeding (its inputs not all queued yet), seeded (all queued, no worker on it),
    running, or finished."""
    if status.state == "done":
        return "finished"
    if not status.seeded:
        return "seeding"
    return "running" if status.live_workers else "seeded"


def job_lines(url: str, jobs: list[Any]) -> list[str]:
    """One line a job: its id, state, queue, requests in flight and workers (``status --job`` says more)."""
    from crawler.frontier import display_url

    if not jobs:
        return [f"no job on the frontier {display_url(url)}"]
    width = max(len(status.job) for status in jobs)
    lines = [f"{len(jobs)} job{'s' if len(jobs) != 1 else ''} on the frontier {jobs[0].display_url}"]
    for status in jobs:
        lines.append(
            f"  {status.job:<{width}}  {job_state(status):<8}  queued {status.queued:,}   "
            f"in flight {status.leased:,}   workers {len(status.live_workers)}"
        )
    return lines


def cmd_status(args: argparse.Namespace) -> int:
    """The job's status on stdout (``--json``: one object, ``exists`` false for no such job, exit 0); a job
    the frontier does not have is one line on stderr and exit 2, as every command's usage error.
    Without ``--job``: every job on the frontier, one line each (``--json``: one object, ``jobs`` a list)."""
    if not args.job:
        jobs = frontier_jobs(args.frontier)
        if args.json:
            listed = [{**status.to_json(), "job_state": job_state(status)} for status in jobs]
            print(json.dumps({"jobs": listed}, sort_keys=True))
        else:
            print("\n".join(job_lines(args.frontier, jobs)))
        return 0
    status = frontier_status(args.frontier, args.job)
    if args.json:
        print(json.dumps(status.to_json(), sort_keys=True))
        return 0
    if not status.exists:
        raise fail(status_lines(status)[0])
    print("\n".join(status_lines(status)))
    return 0


def status_lines(status: Any) -> list[str]:
    """The status of a job as a person reads it."""
    if not status.exists:
        return [f"no job {status.job!r} on the frontier {status.display_url}"]
    lines = [
        f"job {status.job} on {status.display_url}: {status.state}{'' if status.seeded else ' (inputs not all in yet)'}",
        f"queued {status.queued:,}   in flight {status.leased:,}   seen {status.seen:,}   workers {len(status.workers)}",
    ]
    for w in status.workers:
        lines.append(f"  {w.id}  {w.state:<6}  heartbeat {w.heartbeat_age:.1f} s ago  requests {w.requests:,}")
    return lines
