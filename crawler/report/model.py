"""The survey as plain data: tables of rows with typed columns, and what to chart."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Chart", "Column", "Survey", "Table"]

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Column:
    """One column: the row key, its heading, and how to show values.

    ``kind``: ``text``, ``int``, ``pct`` (a percentage, two decimals) or ``list``.
    """

    key: str
    title: str
    kind: str = "text"


@dataclass(frozen=True, slots=True)
class Chart:
    """A horizontal bar chart of one percentage column of a table (0-100 scale).

    ``marks`` are other percentage columns drawn as ticks on the bars
    (published figures); ``max_rows`` keeps long tables' charts readable (the
    table itself is always complete). Rows at 0 % with no mark are not drawn
    (the caption counts them, in the words of ``zero_rows``).
    """

    label: str
    value: str
    marks: tuple[tuple[str, str], ...] = ()
    max_rows: int = 40
    #: What the caption calls the rows at 0 % left out of the chart (none drawn, no mark beside them),
    #: after their count: "30 rules no feed fails not drawn".
    zero_rows: str = "rows at 0%"
    zero_row: str = "row at 0%"


@dataclass(frozen=True, slots=True)
class Table:
    """One table of the report; ``name`` is also its CSV file name."""

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    intro: str = ""
    notes: tuple[str, ...] = ()
    chart: Chart | None = None


@dataclass(frozen=True, slots=True)
class Survey:
    """Every table of the report for one job and one format."""

    job_id: str
    fmt: str
    jobs: tuple[str, ...]
    #: feeds (all formats), format_feeds, format_items, pages.
    totals: dict[str, int] = field(default_factory=dict)
    tables: tuple[Table, ...] = ()

    def table(self, name: str) -> Table:
        """The table called ``name`` (KeyError when there is none)."""
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)
