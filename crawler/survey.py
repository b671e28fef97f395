"""The element-usage survey of a dataset (DuckDB over the Parquet tables).

For RSS feeds: the share of feeds whose channel has each element; for items,
the share of feeds where any item has it and the share of items that have
it; feeds counted by format and version. The RSS Advisory Board's published
figures (the 1,933-feed survey behind the RSS Best Practices Profile) stand
beside ours where it published one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from pipelines.dataset import list_jobs, open_table

#: The RSS Advisory Board's survey of 1,933 feeds (RSS Best Practices Profile), in percent.
BOARD_CHANNEL = {
    "dc:language": 36.0,
    "atom:link": 15.0,
    "ttl": 21.0,
    "textInput": 0.31,
    "rating": 0.26,
    "skipDays": 0.10,
}
BOARD_ITEM = {"dc:creator": 42.7, "wfw:commentRss": 34.3, "source": 3.0}
#: A 2005 survey of 5,162 RSS feeds, in percent of feeds.
SURVEY_2005_CHANNEL = {"ttl": 11.7, "skipHours": 2.5, "textInput": 1.0, "cloud": 0.7, "skipDays": 0.5, "rating": 0.4}


class SurveyError(Exception):
    """The dataset cannot be surveyed (missing, empty, unknown job)."""


@dataclass
class Survey:
    job_id: str
    formats: list[dict[str, Any]] = field(default_factory=list)
    channel: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    rss_feeds: int = 0
    rss_items: int = 0


def connect(out: str, job_id: str | None = None) -> tuple[duckdb.DuckDBPyConnection, str]:
    """A DuckDB connection with one view per table of one job (default: the latest)."""
    jobs = list_jobs(out)
    if not jobs:
        raise SurveyError(f"no crawl found in {out} (expected {out}/fetch_log/job_id=...)")
    job = job_id or jobs[-1]
    if job not in jobs:
        raise SurveyError(f"no job {job!r} in {out}; jobs: {', '.join(jobs)}")
    con = duckdb.connect()
    for table in ("feeds", "items", "element_usage", "links", "conformance", "fetch_log"):
        arrow = open_table(out, table, job).to_table()
        con.register(f"{table}_arrow", arrow)
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM {table}_arrow")
    return con, job


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def compute(out: str, job_id: str | None = None, fmt: str = "rss") -> Survey:
    con, job = connect(out, job_id)
    s = Survey(job_id=job)
    s.formats = _rows(
        con,
        """
        SELECT format, coalesce(version, '') AS version, count(*) AS feeds,
               sum(CASE WHEN well_formed THEN 0 ELSE 1 END) AS not_well_formed
        FROM feeds GROUP BY ALL ORDER BY feeds DESC, format, version""",
    )
    s.rss_feeds = con.execute("SELECT count(*) FROM feeds WHERE format = ?", [fmt]).fetchone()[0]  # type: ignore[index]
    s.rss_items = con.execute("SELECT coalesce(sum(item_count), 0) FROM feeds WHERE format = ?", [fmt]).fetchone()[0]  # type: ignore[index]
    s.channel = _rows(
        con,
        """
        SELECT u.element, count(DISTINCT u.feed_url) AS feeds,
               round(100.0 * count(DISTINCT u.feed_url) / ?, 2) AS pct_feeds
        FROM element_usage u JOIN feeds f ON f.url = u.feed_url
        WHERE f.format = ? AND u.scope = 'channel' AND position('@' IN u.element) = 0
        GROUP BY u.element ORDER BY feeds DESC, u.element""",
        [max(s.rss_feeds, 1), fmt],
    )
    s.items = _rows(
        con,
        """
        SELECT u.element, count(DISTINCT u.feed_url) AS feeds,
               round(100.0 * count(DISTINCT u.feed_url) / ?, 2) AS pct_feeds,
               sum(u.items_with) AS items, round(100.0 * sum(u.items_with) / ?, 2) AS pct_items
        FROM element_usage u JOIN feeds f ON f.url = u.feed_url
        WHERE f.format = ? AND u.scope = 'item' AND position('@' IN u.element) = 0
        GROUP BY u.element ORDER BY feeds DESC, u.element""",
        [max(s.rss_feeds, 1), max(s.rss_items, 1), fmt],
    )
    for row in s.channel:
        row["board_pct"] = BOARD_CHANNEL.get(row["element"])
    for row in s.items:
        row["board_pct"] = BOARD_ITEM.get(row["element"])
    return s


def markdown_table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> str:
    def cell(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, float):
            return f"{v:.2f}"
        return str(v).replace("|", "\\|")

    head = "| " + " | ".join(title for _, title in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(cell(r.get(key)) for key, _ in columns) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def to_markdown(s: Survey) -> str:
    parts = [
        f"# Feed element usage survey (job {s.job_id})",
        "",
        "## Formats and versions",
        "",
        markdown_table(
            s.formats,
            [("format", "format"), ("version", "version"), ("feeds", "feeds"), ("not_well_formed", "not well-formed")],
        ),
        "",
        f"## RSS channel elements ({s.rss_feeds} feeds)",
        "",
        markdown_table(
            s.channel,
            [
                ("element", "element"),
                ("feeds", "feeds"),
                ("pct_feeds", "% of feeds"),
                ("board_pct", "RSS Board 2007 %"),
            ],
        ),
        "",
        f"## RSS item elements ({s.rss_feeds} feeds, {s.rss_items} items)",
        "",
        markdown_table(
            s.items,
            [
                ("element", "element"),
                ("feeds", "feeds"),
                ("pct_feeds", "% of feeds"),
                ("items", "items"),
                ("pct_items", "% of items"),
                ("board_pct", "RSS Board 2007 % of feeds"),
            ],
        ),
        "",
    ]
    return "\n".join(parts)


def run(out: str, *, job: str | None = None, fmt: str = "rss", report_dir: str | None = None) -> str:
    """The survey as Markdown (and, with ``report_dir``, written there as files)."""
    markdown = to_markdown(compute(out, job, fmt=fmt))
    if report_dir:
        from pathlib import Path

        Path(report_dir).mkdir(parents=True, exist_ok=True)
        (Path(report_dir) / "survey.md").write_text(markdown, encoding="utf-8")
    return markdown
