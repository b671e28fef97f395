"""``feedcensus survey`` and ``compact``: commands over a written dataset."""

from __future__ import annotations

import argparse
import sys

from crawler.cli.errors import fail


def cmd_survey(args: argparse.Namespace) -> int:
    """The Markdown on stdout; with ``--out``, one line per file written instead (``--print``: both, the lines on stderr)."""
    from crawler.report.survey import SurveyError, run_report
    from schemas.tables import SchemaVersionError

    try:
        markdown, written = run_report(args.dir, job=args.job, fmt=args.format, report_dir=args.out)
    except (SurveyError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    show_markdown = not args.out or args.print
    if show_markdown:
        print(markdown)
    for path in written:
        print(f"wrote {path}", file=sys.stderr if show_markdown else sys.stdout)
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    from pipelines.dataset.compact import CompactError, compact_dataset
    from schemas.tables import SchemaVersionError

    try:
        result = compact_dataset(args.dir, job=args.job, force=args.force)
    except (CompactError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    print(result)
    return 0
