"""``feedcensus survey`` and ``compact``: commands over a written dataset."""

from __future__ import annotations

import argparse

from crawler.cli.errors import fail


def cmd_survey(args: argparse.Namespace) -> int:
    from crawler.report.survey import SurveyError, run
    from schemas.tables import SchemaVersionError

    try:
        markdown = run(args.dir, job=args.job, fmt=args.format, report_dir=args.out)
    except (SurveyError, SchemaVersionError, OSError) as exc:
        raise fail(str(exc)) from None
    print(markdown)
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
