"""The few helpers every survey section uses over DuckDB: rows as dicts, one value, a percentage."""

from __future__ import annotations

from typing import Any

import duckdb


def archived_copy(feed: str = "") -> str:
    """SQL: whether a ``feeds`` row (alias ``feed``, or none) is a web archive's copy of its URL: the ``archived``
    a report's table of feeds carries for :func:`same_copy`."""
    return f"coalesce({feed + '.' if feed else ''}discovered_via = 'archive', false)"


def same_copy(x: str, feed: str = "s") -> str:
    """SQL joining rows of ``items``, ``element_usage`` or ``conformance`` (alias ``x``) to the copy of their
    feed a report counts (alias ``feed``, with ``url`` and ``archived``): a census with ``--live`` holds an
    archived and a live copy of one URL, and each copy's rows say whose they are (files before schema 1.9 do
    not: their rows join whichever copy is counted)."""
    return f"{feed}.url = {x}.feed_url AND coalesce({x}.archived, {feed}.archived) = {feed}.archived"


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """The result of ``sql`` as one dict per row, by column name."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def one(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> Any:
    """The first value of the first row of ``sql`` (None when there is no row)."""
    row = con.execute(sql, params or []).fetchone()
    return row[0] if row else None


def pct(part: int | float | None, whole: int | float | None) -> float | None:
    """``100 * part / whole`` rounded to two decimals; None when ``whole`` is 0 or missing."""
    if not whole or part is None:
        return None
    return round(100.0 * part / whole, 2)


def add_pct(table: list[dict[str, Any]], key: str, new: str, whole: int | float | None) -> None:
    """Add column ``new``: each row's ``key`` as a percentage of ``whole``."""
    for r in table:
        r[new] = pct(r[key], whole)


def ordered(
    rows: list[dict[str, Any]], key: str, order: tuple[str, ...] | list[str], last: str
) -> list[dict[str, Any]]:
    """``rows`` sorted by ``key`` in ``order``; other values after, ``last`` at the very end."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(rows, key=lambda r: (r[key] == last, rank.get(r[key], len(rank)), r[key]))
