"""A job's tables as DuckDB views, as the survey and ``changes`` read them.

:func:`connect` opens one view per table of one job (default: the latest). A feed
the job did not parse again (304, same body, not due) keeps the items,
element_usage and conformance rows of the job that parsed it (``feeds.parsed_job``);
those rows join the job's own views, so every feed is covered without the data
being written twice.
"""

from __future__ import annotations

import contextlib
from typing import Any

import duckdb
import pyarrow as pa

from crawler.report.query import archived_copy, same_copy
from pipelines.dataset.store import list_jobs, open_table
from schemas.tables import TABLES, arrow_schema

__all__ = ["CARRIED_TABLES", "SurveyError", "connect"]


class SurveyError(Exception):
    """The dataset cannot be surveyed (missing, empty, unknown job)."""


def _arrow(out: str, table: str, job: str) -> Any:
    """The pyarrow dataset of one table of one job; an empty table when the job wrote none."""
    try:
        return open_table(out, table, job)
    except FileNotFoundError:
        return pa.table({f.name: pa.array([], type=f.type) for f in TABLES[table]}, schema=arrow_schema(table))


def connect(out: str, job_id: str | None = None) -> tuple[duckdb.DuckDBPyConnection, str]:
    """A DuckDB connection with one view per table of one job (default: the latest)."""
    jobs = list_jobs(out)
    if not jobs:
        raise SurveyError(f"no crawl found in {out} (expected {out}/fetch_log/job_id=...)")
    job = job_id or jobs[-1]
    if job not in jobs:
        raise SurveyError(f"no job {job!r} in {out}; jobs: {', '.join(jobs)}")
    con = duckdb.connect()
    # In Jupyter the bar is off already, and DuckDB refuses to set it at all without ipywidgets.
    with contextlib.suppress(duckdb.InvalidInputException):
        con.execute("SET enable_progress_bar = false")
    for table in TABLES:
        con.register(table, _arrow(out, table, job))
    _carry_forward(con, out, job)
    return con, job


#: Tables whose rows of an unchanged feed stay in the job that parsed it (feeds.parsed_job).
CARRIED_TABLES = ("items", "element_usage", "conformance")


def _carry_forward(con: duckdb.DuckDBPyConnection, out: str, job: str) -> None:
    """Make a job's views cover the feeds it did not parse again (304, same body, not due).

    Such a feed has a ``feeds`` row with ``changed = false`` naming the ``parsed_job`` whose
    items, element_usage and conformance rows describe it; those rows join this job's own, so
    a survey of the latest run covers every feed without the data being written twice.
    """
    sources = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT parsed_job FROM feeds WHERE changed = false AND parsed_job IS NOT NULL AND parsed_job <> ?",
            [job],
        ).fetchall()
    ]
    if not sources:
        return
    # A row carried forward under an alias (a URL that redirected to the feed) names the feed's
    # own URL as final_url: the parsed job's rows are under that one. A URL this job parsed itself
    # keeps its own rows only. Each copy of a URL (a census holds the archive's and the live one:
    # query.same_copy) carries its own copy's rows.
    copy = archived_copy()
    con.execute(
        f"""CREATE TEMP TABLE carried AS
           SELECT DISTINCT u AS url, parsed_job, archived FROM (
               SELECT url AS u, parsed_job, {copy} AS archived FROM feeds
               WHERE changed = false AND parsed_job IS NOT NULL AND parsed_job <> $job
               UNION ALL
               SELECT final_url, parsed_job, {copy} FROM feeds
               WHERE changed = false AND parsed_job IS NOT NULL AND parsed_job <> $job AND final_url IS NOT NULL
           ) WHERE (u, archived) NOT IN (SELECT url, {copy} FROM feeds WHERE changed IS DISTINCT FROM false)""",
        {"job": job},
    )
    for table in CARRIED_TABLES:
        parts = [f"SELECT * FROM {table}__own"]
        con.register(f"{table}__own", _arrow(out, table, job))
        con.unregister(table)
        for n, source in enumerate(sources):
            name = f"{table}__from{n}"
            con.register(name, _arrow(out, table, source))
            mine = f"c.parsed_job = '{_quoted(source)}' AND {same_copy('x', 'c')}"
            parts.append(f"SELECT * FROM {name} x WHERE EXISTS (SELECT 1 FROM carried c WHERE {mine})")
        con.execute(f"CREATE TEMP VIEW {table} AS " + " UNION ALL ".join(parts))


def _quoted(text: str) -> str:
    return text.replace("'", "''")
