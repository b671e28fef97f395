"""What changed between two runs of a dataset: DuckDB over the Parquet tables, no Scrapy.

:func:`compute` compares one job (default: the latest, in :func:`~pipelines.dataset.store.list_jobs`
order) with an earlier one, ``since`` (default: the job just before it), and returns
:class:`Changes`; :func:`to_markdown` and :meth:`Changes.to_json` render it.

Definitions ("a feed" = a ``feeds`` row whose format is not ``unknown``):

* **New feeds**: URLs that are a feed in ``job`` and were a feed in no job up to
  ``since`` (``first_job``: the first run after ``since`` where they were).
* **Feeds gone**: URLs that were a feed in ``since`` and whose ``fetch_log`` rows in
  ``job`` hold no ``feed``, ``not_modified`` or ``not_due`` answer but some other one
  (a failure, ``not_feed``, a page...): the latest such row's outcome, status and error.
  A feed ``job`` did not request at all is not listed.
* **Element usage changed** / **conformance changed**: for URLs that are a feed in both
  jobs, the set of (scope, element) of ``element_usage`` / of failed ``conformance``
  rule ids differs. Both sides are read through :func:`crawler.report.views.connect`,
  whose views include the rows of feeds a job carried forward (``changed = false``:
  304, same body, not due) from their ``parsed_job``, so such a feed compares equal.
* **New items** / **changed items**: ``items`` rows with ``is_new`` / ``is_changed``
  written by the jobs after ``since`` up to ``job`` (their own rows: a carried-forward
  feed adds none), per feed, with the titles of up to three (newest run first, then
  document order).
* **Publishing cadence** of every feed of ``job``: items per week from dates, over its
  latest parse (the ``job`` view, carried rows included): the items whose ``pub_date``
  is within the 28 days before the feed's ``fetched_at`` in ``job`` (dates more than a
  day after it are bogus and left out) x 7 / 28, n/a when no item has a usable date (as
  ``pipelines.dataset.schedule.items_per_week`` counts for the adaptive schedule); and
  items per week from first sightings: the identities first seen (``is_new``) in the
  jobs after the feed's first job, up to ``job``, divided by the weeks between its
  fetch in that first job and its fetch in ``job`` (``feeds.fetched_at``), n/a when the
  feed is in only one job so far, and too short to tell (``observed_too_short``) when
  those fetches are less than ``MIN_OBSERVED_DAYS`` (a day) apart.

Every list is sorted (by URL, or by count descending then URL) so output is stable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.fs as pafs

from crawler.report.model import Column, Table
from crawler.report.render import markdown_table
from crawler.report.views import SurveyError, connect
from pipelines.dataset.schedule import DEFAULT_WINDOW
from pipelines.dataset.store import list_jobs, open_table, resolve_root
from schemas.tables import PARTITION_KEY, arrow_schema
from schemas.vocab import Outcome

__all__ = ["SECTIONS", "Changes", "ChangesError", "Span", "compute", "pick_jobs", "to_markdown"]

#: Outcomes that show a URL still answers as a feed.
KEPT = (Outcome.FEED, Outcome.NOT_MODIFIED, Outcome.NOT_DUE)
#: Bookkeeping outcomes that say nothing about the feed itself.
IGNORED = (Outcome.DUPLICATE, Outcome.ROBOTS)
#: Days of pub_date the cadence from dates looks back over (the adaptive schedule's window).
WINDOW_DAYS = DEFAULT_WINDOW.days
#: Titles shown per feed in the new and changed items sections.
MAX_TITLES = 3
_WEEK_SECONDS = 7 * 86400
#: The shortest time between a feed's first fetch and its latest that gives a rate by first sighting: one new
#: item in 94 s is not 6,388 a week (it was printed so). Shorter: too short to tell.
MIN_OBSERVED_DAYS = 1


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


class ChangesError(SurveyError):
    """The runs cannot be compared (missing dataset, unknown job, nothing earlier)."""


# --- which runs ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Span:
    """The two runs compared, within every run of the dataset (oldest first)."""

    jobs: tuple[str, ...]
    job: str
    since: str

    @property
    def job_rank(self) -> int:
        return self.jobs.index(self.job)

    @property
    def since_rank(self) -> int:
        return self.jobs.index(self.since)

    @property
    def runs(self) -> tuple[str, ...]:
        """The jobs after ``since`` up to ``job``: whose new and changed items count."""
        return self.jobs[self.since_rank + 1 : self.job_rank + 1]


def pick_jobs(out: str, job: str | None = None, since: str | None = None) -> Span:
    """The runs to compare; :class:`ChangesError` (one line) when they cannot be."""
    fs, root = resolve_root(out)
    if isinstance(fs, pafs.LocalFileSystem) and fs.get_file_info(root).type != pafs.FileType.Directory:
        raise ChangesError(f"no such dataset directory: {out}")
    jobs = tuple(list_jobs(out))
    if not jobs:
        raise ChangesError(f"no crawl found in {out} (expected {out}/fetch_log/job_id=...)")
    listed = ", ".join(jobs)
    chosen = job or jobs[-1]
    if chosen not in jobs:
        raise ChangesError(f"no job {chosen!r} in {out}; jobs, oldest first: {listed}")
    if since is None:
        if chosen == jobs[0]:
            raise ChangesError(f"job {chosen!r} is the first run in {out}: there is no earlier run to compare it with")
        return Span(jobs, chosen, jobs[jobs.index(chosen) - 1])
    if since not in jobs:
        raise ChangesError(f"--since: no job {since!r} in {out}; jobs, oldest first: {listed}")
    if jobs.index(since) >= jobs.index(chosen):
        raise ChangesError(f"--since {since!r} is not earlier than job {chosen!r}; jobs, oldest first: {listed}")
    return Span(jobs, chosen, since)


# --- reading --------------------------------------------------------------------------------

#: What each compared job's views (views.connect: carried-forward feeds included) give.
_SNAPSHOTS: dict[str, str] = {
    "feeds": "SELECT url, format, version, title, item_count, fetched_at FROM feeds",
    "usage": "SELECT DISTINCT feed_url, scope, element FROM element_usage",
    "rules": "SELECT DISTINCT feed_url, rule FROM conformance",
    "items": "SELECT feed_url, pub_date FROM items",
    "log": "SELECT url, outcome, status, error, fetched_at FROM fetch_log",
}
#: The snapshots the earlier job needs.
_SINCE_SNAPSHOTS = ("feeds", "usage", "rules")
#: Columns of the tables read across every run (own rows only, with job_id).
_ALL_COLUMNS: dict[str, tuple[str, ...]] = {
    "feeds": ("url", "format", "fetched_at"),
    "items": ("feed_url", "position", "identity", "title", "link", "is_new", "is_changed"),
}


def _snapshot(con: duckdb.DuckDBPyConnection, out: str, job: str, prefix: str, names: tuple[str, ...]) -> None:
    """Copy one job's (carried) views into ``con`` as tables ``<prefix>_<name>``."""
    view, _ = connect(out, job)
    try:
        for name in names:
            con.register(f"{prefix}_{name}__arrow", view.sql(_SNAPSHOTS[name]).to_arrow_table())
            con.execute(f"CREATE TEMP TABLE {prefix}_{name} AS SELECT * FROM {prefix}_{name}__arrow")
            con.unregister(f"{prefix}_{name}__arrow")
    finally:
        view.close()


def _every_run(out: str, table: str) -> Any:
    """Every run's own rows of ``table`` (lazily, with job_id); an empty table when none was written."""
    try:
        return open_table(out, table)
    except FileNotFoundError:
        schema = arrow_schema(table).append(pa.field(PARTITION_KEY, pa.string()))
        return schema.empty_table()


def _load(out: str, span: Span) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("SET TimeZone = 'UTC'")
    con.register("runs__arrow", pa.table({"job_id": list(span.jobs), "rank": list(range(len(span.jobs)))}))
    con.execute("CREATE TEMP TABLE runs AS SELECT * FROM runs__arrow")
    for table, columns in _ALL_COLUMNS.items():
        con.register(f"all_{table}__arrow", _every_run(out, table))
        con.execute(
            f"CREATE TEMP VIEW all_{table} AS SELECT {', '.join(f'x.{c}' for c in columns)}, x.job_id, r.rank "
            f"FROM all_{table}__arrow x JOIN runs r ON r.job_id = x.job_id"
        )
    _snapshot(con, out, span.job, "job", tuple(_SNAPSHOTS))
    _snapshot(con, out, span.since, "since", _SINCE_SNAPSHOTS)
    return con


def _rows(con: duckdb.DuckDBPyConnection, sql: str, span: Span) -> list[dict[str, Any]]:
    """The rows of ``sql``; it may use ``$since`` and ``$job`` (the runs' ranks) and ``$window`` (days)."""
    params = {"since": span.since_rank, "job": span.job_rank, "window": WINDOW_DAYS, "titles": MAX_TITLES}
    used = {k: v for k, v in params.items() if f"${k}" in sql}
    cur = con.execute(sql, used)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


# --- the sections: one query each -------------------------------------------------------------


def new_feeds(con: duckdb.DuckDBPyConnection, span: Span) -> list[dict[str, Any]]:
    return _rows(
        con,
        """WITH before AS (SELECT DISTINCT url FROM all_feeds WHERE rank <= $since AND format <> 'unknown'),
                first_after AS (
                    SELECT url, arg_min(job_id, rank) AS first_job FROM all_feeds
                    WHERE rank > $since AND rank <= $job AND format <> 'unknown' GROUP BY url)
           SELECT j.url, any_value(j.format) AS format, any_value(j.version) AS version,
                  any_value(j.title) AS title, max(j.item_count) AS items, any_value(a.first_job) AS first_job
           FROM job_feeds j LEFT JOIN first_after a ON a.url = j.url
           WHERE j.format <> 'unknown' AND j.url NOT IN (SELECT url FROM before)
           GROUP BY j.url ORDER BY j.url""",
        span,
    )


def gone_feeds(con: duckdb.DuckDBPyConnection, span: Span) -> list[dict[str, Any]]:
    return _rows(
        con,
        f"""WITH fine AS (SELECT DISTINCT url FROM since_feeds WHERE format <> 'unknown'),
                 answers AS (SELECT l.* FROM job_log l JOIN fine f ON f.url = l.url
                             WHERE l.outcome NOT IN ({_quoted(IGNORED)}))
            SELECT url, outcome, status, error FROM answers
            WHERE url NOT IN (SELECT url FROM answers WHERE outcome IN ({_quoted(KEPT)}))
            QUALIFY row_number() OVER (PARTITION BY url ORDER BY fetched_at DESC, outcome) = 1
            ORDER BY url""",
        span,
    )


def _set_changes(
    con: duckdb.DuckDBPyConnection, span: Span, table: str, value: str, order: str
) -> list[dict[str, Any]]:
    """Per feed of both jobs: what ``job_<table>`` has that ``since_<table>`` lacks (added) and the reverse."""
    return _rows(
        con,
        f"""WITH both_jobs AS (SELECT url FROM job_feeds WHERE format <> 'unknown'
                               INTERSECT SELECT url FROM since_feeds WHERE format <> 'unknown'),
                 now AS (SELECT * FROM job_{table} WHERE feed_url IN (SELECT url FROM both_jobs)),
                 was AS (SELECT * FROM since_{table} WHERE feed_url IN (SELECT url FROM both_jobs)),
                 diff AS (SELECT 'added' AS change, * FROM (SELECT * FROM now EXCEPT SELECT * FROM was)
                          UNION ALL
                          SELECT 'removed' AS change, * FROM (SELECT * FROM was EXCEPT SELECT * FROM now))
            SELECT feed_url AS url,
                   coalesce(list({value} ORDER BY {order}) FILTER (WHERE change = 'added'), []) AS added,
                   coalesce(list({value} ORDER BY {order}) FILTER (WHERE change = 'removed'), []) AS removed
            FROM diff GROUP BY feed_url ORDER BY feed_url""",
        span,
    )


def usage_changes(con: duckdb.DuckDBPyConnection, span: Span) -> list[dict[str, Any]]:
    return _set_changes(con, span, "usage", "{'scope': scope, 'element': element}", "scope, element")


def rule_changes(con: duckdb.DuckDBPyConnection, span: Span) -> list[dict[str, Any]]:
    return _set_changes(con, span, "rules", "rule", "rule")


def _flagged_items(con: duckdb.DuckDBPyConnection, span: Span, flag: str) -> list[dict[str, Any]]:
    """Per feed: the items with ``flag`` written by the runs after since up to job, and up to 3 titles."""
    return _rows(
        con,
        f"""SELECT feed_url AS url, count(*) AS items,
                   list(coalesce(title, link, identity, '(untitled)') ORDER BY rank DESC, position)[1:$titles]
                       AS titles
            FROM all_items WHERE rank > $since AND rank <= $job AND {flag}
            GROUP BY feed_url ORDER BY items DESC, url""",
        span,
    )


def new_items(con: duckdb.DuckDBPyConnection, span: Span) -> list[dict[str, Any]]:
    return _flagged_items(con, span, "is_new")


def changed_items(con: duckdb.DuckDBPyConnection, span: Span) -> list[dict[str, Any]]:
    return _flagged_items(con, span, "is_changed")


def cadence(con: duckdb.DuckDBPyConnection, span: Span) -> list[dict[str, Any]]:
    rows = _rows(
        con,
        """WITH latest AS (SELECT url, max(fetched_at) AS fetched_at FROM job_feeds
                           WHERE format <> 'unknown' GROUP BY url),
                dated AS (SELECT i.feed_url AS url, i.pub_date >= l.fetched_at - to_days($window) AS recent
                          FROM job_items i JOIN latest l ON l.url = i.feed_url
                          WHERE i.pub_date IS NOT NULL AND i.pub_date <= l.fetched_at + INTERVAL 1 DAY),
                by_date AS (SELECT url, count(*) AS dated, count(*) FILTER (WHERE recent) AS recent
                            FROM dated GROUP BY url),
                first AS (SELECT url, min(rank) AS first_rank, arg_min(job_id, rank) AS first_job,
                                 min(fetched_at) AS first_fetched
                          FROM all_feeds WHERE rank <= $job AND format <> 'unknown' GROUP BY url),
                fresh AS (SELECT i.feed_url AS url, count(DISTINCT i.identity) AS identities
                          FROM all_items i JOIN first f ON f.url = i.feed_url
                          WHERE i.is_new AND i.rank > f.first_rank AND i.rank <= $job GROUP BY i.feed_url)
           SELECT l.url,
                  coalesce(d.recent, 0) AS recent_items,
                  CASE WHEN d.dated > 0 THEN round(d.recent * 7.0 / $window, 2) END AS per_week_pub_date,
                  f.first_job,
                  coalesce(n.identities, 0) AS new_identities,
                  CASE WHEN f.first_rank < $job AND l.fetched_at > f.first_fetched
                       THEN epoch(l.fetched_at - f.first_fetched) END AS seconds
           FROM latest l JOIN first f ON f.url = l.url
                LEFT JOIN by_date d ON d.url = l.url LEFT JOIN fresh n ON n.url = l.url
           ORDER BY l.url""",
        span,
    )
    for r in rows:
        seconds = r.pop("seconds")
        weeks = seconds / _WEEK_SECONDS if seconds else None
        too_short = seconds is not None and seconds < MIN_OBSERVED_DAYS * 86400
        r["weeks"] = round(weeks, 2) if weeks else None
        r["per_week_first_seen"] = round(r["new_identities"] / weeks, 2) if weeks and not too_short else None
        r["observed_too_short"] = too_short
    return rows


# --- the result -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Section:
    """One section: its JSON key, its Markdown heading and columns, and its query."""

    key: str
    title: str
    intro: str
    columns: tuple[Column, ...]
    query: Callable[[duckdb.DuckDBPyConnection, Span], list[dict[str, Any]]]


_URL = Column("url", "feed")
SECTIONS: tuple[Section, ...] = (
    Section(
        "new_feeds",
        "New feeds",
        "Feeds in this run that no run up to the earlier one had as a feed.",
        (
            _URL,
            Column("format", "format"),
            Column("version", "version"),
            Column("title", "title"),
            Column("items", "items", "int"),
            Column("first_job", "first run"),
        ),
        new_feeds,
    ),
    Section(
        "gone_feeds",
        "Feeds gone",
        "Feeds of the earlier run that this run fetched without getting a feed (nor a 304, nor 'not due'): "
        "the latest outcome.",
        (_URL, Column("outcome", "outcome"), Column("status", "status", "int"), Column("error", "error")),
        gone_feeds,
    ),
    Section(
        "element_usage_changed",
        "Element usage changed",
        "Feeds of both runs whose set of (scope/element) differs; a feed carried forward compares as its last parse.",
        (_URL, Column("added", "elements added"), Column("removed", "elements no longer used")),
        usage_changes,
    ),
    Section(
        "conformance_changed",
        "Conformance changed",
        "Feeds of both runs whose set of failed rules differs (see `feedcensus rules`).",
        (_URL, Column("added", "rules now failed"), Column("removed", "rules no longer failed")),
        rule_changes,
    ),
    Section(
        "new_items",
        "New items",
        "Items no earlier run had seen in the feed (items.is_new), found by the runs compared.",
        (_URL, Column("items", "new items", "int"), Column("titles", f"first {MAX_TITLES} titles")),
        new_items,
    ),
    Section(
        "changed_items",
        "Changed items",
        "Items seen before whose content changed (items.is_changed), found by the runs compared.",
        (_URL, Column("items", "changed items", "int"), Column("titles", f"first {MAX_TITLES} titles")),
        changed_items,
    ),
    Section(
        "cadence",
        "Publishing cadence",
        f"Items per week by date: items of the latest parse dated within the {WINDOW_DAYS} days before the "
        f"feed's fetch x 7/{WINDOW_DAYS}. By first sighting: item identities first seen after the feed's first "
        "run, per week between that run's fetch and this one's (n/a while a feed is in one run only; too short to "
        f"tell while those fetches are less than {_count(MIN_OBSERVED_DAYS, 'day')} apart).",
        (
            _URL,
            Column("per_week_pub_date", "items/week by date"),
            Column("recent_items", f"items dated in {WINDOW_DAYS} days", "int"),
            Column("per_week_first_seen", "items/week by first sighting"),
            Column("new_identities", "identities new after the first run", "int"),
            Column("weeks", "weeks observed"),
            Column("first_job", "first run"),
        ),
        cadence,
    ),
)


@dataclass(frozen=True, slots=True)
class Changes:
    """Every section's rows for one comparison."""

    span: Span
    sections: dict[str, list[dict[str, Any]]]

    def to_json(self) -> dict[str, Any]:
        """One JSON-ready object: the runs compared, then one list per section."""
        return {
            "job": self.span.job,
            "since": self.span.since,
            "runs": list(self.span.runs),
            **{section.key: self.sections[section.key] for section in SECTIONS},
        }


def compute(out: str, job: str | None = None, since: str | None = None) -> Changes:
    """What changed in ``job`` (default: the latest run) since ``since`` (default: the run before it)."""
    span = pick_jobs(out, job, since)
    con = _load(out, span)
    try:
        return Changes(span, {section.key: section.query(con, span) for section in SECTIONS})
    finally:
        con.close()


# --- Markdown ---------------------------------------------------------------------------------

_MAX_TITLE = 80


def _shown(value: Any, key: str, row: dict[str, Any]) -> Any:
    """A value of ``row`` as the Markdown table shows it."""
    if row.get("observed_too_short") and key in ("per_week_first_seen", "weeks"):
        return "too short to tell" if key == "per_week_first_seen" else f"under {_count(MIN_OBSERVED_DAYS, 'day')}"
    if isinstance(value, list):
        parts = [f"{v['scope']}/{v['element']}" if isinstance(v, dict) else str(v) for v in value]
        if key == "titles":
            return "; ".join(p if len(p) <= _MAX_TITLE else p[: _MAX_TITLE - 1] + "…" for p in parts)
        return ", ".join(parts)
    if value is None and key.startswith(("per_week", "weeks")):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.2f}"
    return value


def _summary(changes: Changes) -> str:
    s = changes.sections
    counts = [
        _count(len(s["new_feeds"]), "new feed"),
        f"{len(s['gone_feeds'])} gone",
        f"{len(s['element_usage_changed'])} with element usage changed",
        f"{len(s['conformance_changed'])} with conformance changed",
        _count(sum(r["items"] for r in s["new_items"]), "new item") + f" in {_count(len(s['new_items']), 'feed')}",
        _count(sum(r["items"] for r in s["changed_items"]), "changed item")
        + f" in {_count(len(s['changed_items']), 'feed')}",
    ]
    return "; ".join(counts) + "."


def to_markdown(changes: Changes, level: int = 1) -> str:
    """The comparison as Markdown: a heading at ``level``, one sub-heading per section."""
    span = changes.span
    runs = ", ".join(span.runs)
    parts = [
        f"{'#' * level} Changes between runs: job {span.job} since {span.since}",
        "",
        f"Runs after {span.since} up to {span.job}: {runs}. {_summary(changes)}",
    ]
    for section in SECTIONS:
        rows = changes.sections[section.key]
        shown = tuple({c.key: _shown(r.get(c.key), c.key, r) for c in section.columns} for r in rows)
        table = Table(section.key, section.title, section.columns, shown)
        parts += ["", f"{'#' * (level + 1)} {section.title} ({len(rows)})", "", section.intro, ""]
        parts.append(markdown_table(table))
    return "\n".join(parts).rstrip() + "\n"
