"""``feedcensus survey``, ``changes``, ``due`` and ``compact``: commands over a written dataset."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from crawler.cli.errors import fail


def note_unfinished(command: str, out: str, jobs: list[str] | None) -> None:
    """One line on stderr per job read that is not finished: its figures cover only what was committed.

    ``jobs``: the jobs the command reads, None for every job; a job id None stands for the latest."""
    from pipelines.dataset.store import list_jobs, unfinished_jobs

    try:
        if jobs is not None and None in jobs:
            latest = list_jobs(out)[-1:]
            jobs = [j for j in jobs if j is not None] + latest
        unfinished = unfinished_jobs(out, jobs)
    except OSError:
        return  # the command itself says what is wrong with the dataset
    for job, partitions in sorted(unfinished.items()):
        print(
            f"feedcensus {command}: note: job {job} is not finished ({partitions} partitions hold .running markers: "
            "a crawl is writing it, or stopped before it ended); what it committed is counted, nothing more",
            file=sys.stderr,
        )


def cmd_survey(args: argparse.Namespace) -> int:
    """The Markdown on stdout; with ``--out``, one line per file written instead (``--print``: both, the lines on stderr).

    ``--since JOB`` adds the changes between JOB and the surveyed job: after the Markdown, and
    with ``--out`` as ``changes.md`` there.
    """
    from crawler.report.changes import compute, to_markdown
    from crawler.report.survey import run_report
    from crawler.report.views import SurveyError
    from schemas.tables import SchemaVersionError

    try:
        changes = compute(args.dir, job=args.job, since=args.since) if args.since else None
        markdown, written = run_report(args.dir, job=args.job, fmt=args.format, report_dir=args.out)
        if changes is not None:
            section = to_markdown(changes, level=2)
            markdown = markdown.rstrip("\n") + "\n\n" + section
            if args.out:
                path = Path(args.out) / "changes.md"
                path.write_text(section, encoding="utf-8")
                written.append(path)
    except (SurveyError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    note_unfinished("survey", args.dir, [args.job, *([args.since] if args.since else [])])
    show_markdown = not args.out or args.print
    if show_markdown:
        print(markdown)
    for path in written:
        print(f"wrote {path}", file=sys.stderr if show_markdown else sys.stdout)
    return 0


def cmd_changes(args: argparse.Namespace) -> int:
    """What changed between two runs: Markdown on stdout, or ``--json`` one object."""
    from crawler.report.changes import compute, to_markdown
    from crawler.report.views import SurveyError
    from schemas.tables import SchemaVersionError

    try:
        changes = compute(args.dir, job=args.job, since=args.since)
    except (SurveyError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    note_unfinished("changes", args.dir, [changes.span.job, changes.span.since])
    if args.json:
        print(json.dumps(changes.to_json(), ensure_ascii=False))
    else:
        print(to_markdown(changes), end="")
    return 0


def _duration(option: str, text: str | None, default_seconds: float) -> timedelta:
    from pipelines.dataset.schedule import parse_duration

    if text is None:
        return timedelta(seconds=default_seconds)
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise fail(f"{option}: {exc}") from None


def cmd_due(args: argparse.Namespace) -> int:
    """Every known feed with when it is next due (due now first); exit 0 whether or not any is due."""
    from crawler import settings
    from crawler.report.due import DueError, due_feeds, parse_time, to_lines
    from pipelines.dataset.schedule import Policy
    from pipelines.dataset.state import hints_of
    from schemas.tables import SchemaVersionError

    policy = Policy(
        min_interval=_duration("--min-interval", args.min_interval, settings.FEEDCENSUS_MIN_INTERVAL),
        max_interval=_duration("--max-interval", args.max_interval, settings.FEEDCENSUS_MAX_INTERVAL),
        ignore_hints=args.ignore_hints,
    )
    try:
        now = parse_time(args.at) if args.at else datetime.now(UTC)
    except ValueError as exc:
        raise fail(f"--at: {exc}") from None
    try:
        feeds = due_feeds(args.dir, hints_of, policy, now)
    except (DueError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    note_unfinished("due", args.dir, None)
    if args.json:
        for feed in feeds:
            print(json.dumps(feed.to_json(), ensure_ascii=False))
    else:
        print("\n".join(to_lines(feeds, now)))
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    from pipelines.dataset.compact import CompactError, compact_dataset
    from schemas.tables import SchemaVersionError

    try:
        # A distributed worker's marker names its frontier: one whose worker is gone is removed.
        from crawler.frontier import marker_is_stale

        result = compact_dataset(args.dir, job=args.job, force=args.force, is_stale=marker_is_stale)
    except (CompactError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    print(result)
    return 0
