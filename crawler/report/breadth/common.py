"""The peer's cutoffs and the helpers every breadth section uses: schema look-ups, rows, measures."""

from __future__ import annotations

from typing import Any

import duckdb

from crawler.report.model import Chart, Column, Table
from crawler.report.query import pct
from crawler.report.query import rows as _rows
from schemas.tables import TABLES

#: The peer's ENTRY_RECENCY_CUTOFF_DAYS: a feed whose newest item (else feed date) is older is inactive.
ACTIVE_DAYS = 365
#: The peer's RECENCY_HALF_LIFE_DAYS: the recency part of the quality score halves every 120 days.
HALF_LIFE_DAYS = 120.0
#: The peer's FUTURE_DATE_TOLERANCE_DAYS: later than this after the fetch is a future date.
FUTURE_TOLERANCE_DAYS = 1
#: The peer's QUALITY_SPLIT_THRESHOLD: a score above it is a quality feed.
QUALITY_THRESHOLD = 0.5
#: The peer's update_cadence_bucket limits (days between items): sub-daily, daily, weekly, monthly; slower beyond.
CADENCE_BUCKETS: tuple[tuple[float, str], ...] = (
    (1, "sub-daily (< 1 day)"),
    (2, "daily (< 2 days)"),
    (8, "weekly (< 8 days)"),
    (32, "monthly (< 32 days)"),
)
#: The peer's recency CDF breakpoints (days) and labels: age of the newest item at fetch time.
AGE_BREAKS: tuple[tuple[int, str], ...] = (
    (0, "today"),
    (1, "1 day"),
    (3, "3 days"),
    (7, "1 week"),
    (14, "2 weeks"),
    (30, "1 month"),
    (90, "3 months"),
    (180, "6 months"),
    (365, "1 year"),
    (730, "2 years"),
)
#: The peer's DEFAULT_ENTRY_TITLES: item titles (white space collapsed, lower-cased) a CMS leaves in.
DEFAULT_TITLES = ("default title", "untitled", "no title", "title", "new post", "post title")
#: Parse error messages -> what a user would fix (first match wins; checked in this order).
ERROR_GROUPS: tuple[tuple[str, str], ...] = (
    ("(?i)entity", "undefined entity (an HTML entity in XML: declare it or write the character)"),
    ("(?i)char|encoding|utf-8|bytes", "invalid characters or encoding (fix the bytes or the declared encoding)"),
    (
        "(?i)xml declaration|extra content|start tag|premature end|end of data|tag mismatch|not closed|expected",
        "broken structure (unclosed, misplaced or extra markup)",
    ),
)
FEED_FORMATS = ("rss", "atom", "rdf")
NOT_IN_SCHEMA = "needs column {} (not in this dataset's schema yet): shown empty"

# --- plumbing ------------------------------------------------------------------------------


def has_column(table: str, column: str) -> bool:
    return table in TABLES and any(f.name == column for f in TABLES[table])


def _col(table: str, column: str, sql_type: str, alias: str = "") -> str:
    """``column`` when the schema has it, else a typed NULL under its name."""
    return f"{alias}{column}" if has_column(table, column) else f"NULL::{sql_type} AS {column}"


def _missing(*pairs: tuple[str, str]) -> tuple[str, ...]:
    gone = [f"{t}.{c}" for t, c in pairs if not has_column(t, c)]
    return (NOT_IN_SCHEMA.format(", ".join(gone)),) if gone else ()


def _row(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, Any]:
    rows = _rows(con, sql)
    return rows[0] if rows else {}


MEASURE_COLUMNS = (
    Column("measure", "measure"),
    Column("value", "value"),
    Column("pct", "%", "pct"),
    Column("of", "% of"),
    Column("key", "key"),
)


def _measures(
    name: str, title: str, items: list[tuple[str, str, Any, Any, str]], intro: str, notes: tuple[str, ...] = ()
) -> Table:
    """A table of measures: (key, measure, value, whole or None, what the whole is)."""
    rows = tuple(
        {"key": k, "measure": m, "value": v, "pct": pct(v, w) if isinstance(v, int | float) else None, "of": of}
        for k, m, v, w, of in items
    )
    return Table(name, title, MEASURE_COLUMNS, rows, intro=intro, notes=notes, chart=Chart("measure", "pct"))


def _host(expr: str) -> str:
    return f"lower(regexp_extract({expr}, '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^:/?#]+)', 1))"
