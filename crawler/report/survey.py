"""The survey report of a crawl: DuckDB over the Parquet tables of one job.

:func:`compute` aggregates one job (default: the latest) into a
:class:`~crawler.report.model.Survey` of tables; :func:`run` renders it as
Markdown and, with ``report_dir``, also writes ``survey.md``, ``survey.html``
(self-contained, inline SVG charts) and one CSV per table there
(:func:`run_report` also returns the paths of those files).

Definitions (``n`` = feeds of the chosen format in the job, one row per URL):

* Channel elements: share of the ``n`` feeds whose channel has the element
  (element_usage scope ``channel``, attributes excluded).
* Item elements: share of the ``n`` feeds where any item has it, and share of
  items, ``sum(items_with) / sum(item_count)``.
* Case variants: a name that differs from a known name
  (:data:`crawler.report.reference.KNOWN_NAMES`) only by ASCII case is counted
  in the known name's row, and the row lists the variants it merged. Per feed,
  the merged ``items_with`` is capped at the feed's item count.
* Every table is complete and stably sorted: by feeds (or items, links)
  descending, then by name ascending (binary order).
* Percentages are rounded to two decimals; an empty denominator gives none.

All aggregation happens in DuckDB; Python only walks result rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from crawler.report.atom import atom_tables
from crawler.report.breadth import breadth_tables
from crawler.report.coverage import coverage_tables
from crawler.report.crawled import LINK_KINDS, autodiscovery_tables, identities_table, reflexive_table, usm_table
from crawler.report.model import Chart, Column, Survey, Table
from crawler.report.query import add_pct as _add_pct
from crawler.report.query import one as _one
from crawler.report.query import ordered as _ordered
from crawler.report.query import pct
from crawler.report.query import rows as _rows
from crawler.report.reference import BOARD_2007_NOTE, PUBLISHED, known_names
from pipelines.dataset.store import list_jobs, open_table
from pipelines.document.dates import FALLBACK_CALLS, FALLBACK_MISSES
from schemas.namespaces import PREFIXES
from schemas.tables import TABLES, arrow_schema
from schemas.vocab import DateForm

__all__ = ["LINK_KINDS", "Survey", "SurveyError", "compute", "connect", "run"]

#: What each ``items.date_form`` means (the names are schemas.vocab.DateForm).
_DATE_FORM_MEANINGS: dict[DateForm, str] = {
    DateForm.RFC822_UNIVERSAL: 'RFC 822 in one of the profile\'s three universal forms ("... +0000", "-0000", "GMT")',
    DateForm.RFC822_OTHER_ZONE: "RFC 822 with another time zone",
    DateForm.RFC822_2DIGIT_YEAR: "RFC 822 with a two-digit year",
    DateForm.ISO8601: "ISO 8601 / W3C-DTF (dc:date, Atom)",
    DateForm.OTHER_PARSED: "another form that could still be parsed",
    DateForm.UNPARSED: "could not be parsed",
    DateForm.NOT_TRIED: (
        f"not tried by the slow last-resort parser (its document had given it {FALLBACK_MISSES} dates it"
        f" could not read, or {FALLBACK_CALLS} in all)"
    ),
}
#: The date forms of ``items.date_form`` -> their meaning, in the order the
#: report lists them (DateForm's order; every member must have a meaning above).
DATE_FORMS: dict[str, str] = {form.value: _DATE_FORM_MEANINGS[form] for form in DateForm}
NO_DATE = "(no date)"
#: How headings name the formats.
FORMAT_NAMES = {"rss": "RSS", "atom": "Atom", "rdf": "RSS 1.0 (RDF)"}


class SurveyError(Exception):
    """The dataset cannot be surveyed (missing, empty, unknown job)."""


# --- reading ---------------------------------------------------------------------------


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
    # keeps its own rows only.
    con.execute(
        """CREATE TEMP TABLE carried AS
           SELECT DISTINCT u AS url, parsed_job FROM (
               SELECT url AS u, parsed_job FROM feeds WHERE changed = false AND parsed_job IS NOT NULL AND parsed_job <> $job
               UNION ALL
               SELECT final_url, parsed_job FROM feeds
               WHERE changed = false AND parsed_job IS NOT NULL AND parsed_job <> $job AND final_url IS NOT NULL
           ) WHERE u NOT IN (SELECT url FROM feeds WHERE changed IS DISTINCT FROM false)""",
        {"job": job},
    )
    for table in CARRIED_TABLES:
        parts = [f"SELECT * FROM {table}__own"]
        con.register(f"{table}__own", _arrow(out, table, job))
        con.unregister(table)
        for n, source in enumerate(sources):
            name = f"{table}__from{n}"
            con.register(name, _arrow(out, table, source))
            parts.append(
                f"SELECT * FROM {name} WHERE feed_url IN (SELECT url FROM carried WHERE parsed_job = '{_quoted(source)}')"
            )
        con.execute(f"CREATE TEMP VIEW {table} AS " + " UNION ALL ".join(parts))


def _quoted(text: str) -> str:
    return text.replace("'", "''")


# --- the tables ---------------------------------------------------------------------------


def _prepare(con: duckdb.DuckDBPyConnection, fmt: str) -> None:
    """Temporary tables: ``f`` (feeds, one row per URL), ``sel`` (feeds of ``fmt``), ``use`` (their usage)."""
    con.execute(
        """CREATE TEMP TABLE f AS
           SELECT url, format, version, well_formed, item_count, reflexive, content_type_ok, self_url, self_url_matches
           FROM feeds QUALIFY row_number() OVER (PARTITION BY url ORDER BY fetched_at, final_url) = 1"""
    )
    con.execute("CREATE TEMP TABLE sel AS SELECT url, item_count FROM f WHERE format = ?", [fmt])
    con.execute(
        """CREATE TEMP TABLE use AS
           SELECT u.feed_url, u.scope, u.element, u.count, u.items_with, u.defined, s.item_count
           FROM element_usage u JOIN sel s ON s.url = u.feed_url"""
    )
    names = known_names(fmt)
    known = pa.table({"canon": list(names), "key": [n.lower() for n in names]})
    con.register("known_arrow", known)
    con.execute("CREATE TEMP TABLE known AS SELECT canon, key FROM known_arrow")
    # Per distinct name (a few thousand at most): its known spelling and its namespace.
    con.execute(
        """CREATE TEMP TABLE names AS
           SELECT n.element, coalesce(k.canon, n.element) AS canon,
                  split_part(n.element, '@', 1) AS el,
                  CASE WHEN starts_with(n.element, '{') THEN split_part(substr(n.element, 2), '}', 1)
                       WHEN contains(split_part(n.element, '@', 1), ':') THEN split_part(n.element, ':', 1)
                  END AS namespace
           FROM (SELECT DISTINCT element FROM use) n LEFT JOIN known k ON k.key = lower(n.element)"""
    )


def element_rows(con: duckdb.DuckDBPyConnection, scope: str) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """(rows of element, feeds, items; variants merged per row) for the elements at ``scope``."""
    base = """
        WITH u AS (
            SELECT x.feed_url, x.element AS written, n.canon AS element, x.items_with, x.item_count,
                   x.defined = false AND x.element = n.canon AS undefined
            FROM use x JOIN names n ON n.element = x.element
            WHERE x.scope = ? AND NOT contains(x.element, '@')
        )"""
    rows = _rows(
        con,
        base
        + """, per_feed AS (
            SELECT element, feed_url, least(sum(coalesce(items_with, 0)), max(item_count)) AS items_with,
                   bool_or(coalesce(undefined, false)) AS undefined
            FROM u GROUP BY element, feed_url
        )
        SELECT element, count(*) AS feeds, sum(items_with)::BIGINT AS items,
               CASE WHEN bool_or(undefined) THEN 'undefined' ELSE '' END AS flag
        FROM per_feed GROUP BY element ORDER BY feeds DESC, element""",
        [scope],
    )
    variants: dict[str, list[str]] = {}
    for v in _rows(
        con,
        base
        + """
        SELECT element, written, count(DISTINCT feed_url) AS feeds FROM u WHERE written <> element
        GROUP BY element, written ORDER BY element, feeds DESC, written""",
        [scope],
    ):
        variants.setdefault(v["element"], []).append(f"{v['written']} ({v['feeds']} feeds)")
    return rows, variants


def _formats(con: duckdb.DuckDBPyConnection, total: int) -> Table:
    rows = _rows(
        con,
        """SELECT format, coalesce(version, '') AS version, count(*) AS feeds,
                  count(*) FILTER (WHERE NOT well_formed) AS not_well_formed,
                  sum(item_count)::BIGINT AS items
           FROM f GROUP BY ALL ORDER BY feeds DESC, format, version""",
    )
    for r in rows:
        r["label"] = f"{r['format']} {r['version'] or '(no version)'}"
    _add_pct(rows, "feeds", "pct_feeds", total)
    return Table(
        "formats",
        "Formats and versions",
        (
            Column("format", "format"),
            Column("version", "version"),
            Column("feeds", "feeds", "int"),
            Column("pct_feeds", "% of feeds", "pct"),
            Column("not_well_formed", "not well-formed", "int"),
            Column("items", "items", "int"),
        ),
        tuple(rows),
        intro=f"All {total} feeds of the job, whatever the format (one row per feed URL).",
        chart=Chart("label", "pct_feeds"),
    )


def _published(fmt: str, scope: str) -> dict[str, Any]:
    if fmt != "rss":
        return {}
    return {p.element: p for p in PUBLISHED if p.scope == scope}


def _element_table(con: duckdb.DuckDBPyConnection, fmt: str, scope: str, n: int, items: int) -> Table:
    rows, variants = element_rows(con, scope)
    published = _published(fmt, scope)
    _add_pct(rows, "feeds", "pct_feeds", n)
    _add_pct(rows, "items", "pct_items", items)
    for r in rows:
        p = published.get(r["element"])
        r["board_2007"] = p.board_2007 if p else None
        r["survey_2005"] = p.survey_2005 if p else None
        r["variants"] = ", ".join(variants.get(r["element"], []))
    cols, marks = _element_columns(fmt, scope)
    what = "whose channel has the element" if scope == "channel" else "where any item has the element"
    intro = f"Share of the {n} {fmt} feeds {what}"
    intro += f"; share of their {items} items having it." if scope == "item" else "."
    return Table(
        f"{scope}_elements",
        f"{FORMAT_NAMES.get(fmt, fmt)} {scope} elements ({n} feeds" + (f", {items} items)" if scope == "item" else ")"),
        cols,
        tuple(rows),
        intro=intro,
        notes=_element_notes(fmt, scope, rows),
        chart=Chart("element", "pct_feeds", marks),
    )


def _element_columns(fmt: str, scope: str) -> tuple[tuple[Column, ...], tuple[tuple[str, str], ...]]:
    """(columns, chart marks) of an element table: items only for items, published figures only for RSS."""
    cols = [Column("element", "element"), Column("feeds", "feeds", "int"), Column("pct_feeds", "% of feeds", "pct")]
    if scope == "item":
        cols += [Column("items", "items", "int"), Column("pct_items", "% of items", "pct")]
    marks: tuple[tuple[str, str], ...] = ()
    if fmt == "rss":
        cols.append(Column("board_2007", "RSS Board 2007 %", "pct"))
        marks = (("board_2007", "RSS Board 2007"),)
        if scope == "channel":
            cols.append(Column("survey_2005", "2005 survey %", "pct"))
            marks += (("survey_2005", "2005 survey"),)
    cols.append(Column("flag", "flag"))
    cols.append(Column("variants", "case variants merged"))
    return tuple(cols), marks


def _element_notes(fmt: str, scope: str, rows: list[dict[str, Any]]) -> tuple[str, ...]:
    notes = []
    merged = [r for r in rows if r["variants"]]
    if merged:
        notes.append(
            "Case variants merged: "
            + "; ".join(f"{r['element']} also counts {r['variants']}" for r in merged)
            + ". Only names that differ from a known RSS core or common extension name by letter case are merged;"
            " the undefined-elements table lists them as written."
        )
    else:
        notes.append(
            "No case variants of known names were found (names differing from a known RSS core or common"
            " extension name only by letter case would be merged into its row)."
        )
    if any(r["flag"] for r in rows):
        notes.append(
            "flag undefined: a name without a namespace that the format's specification does not define here, "
            "tallied as written (see the undefined-elements table)."
        )
    if scope == "item" and fmt == "rss":
        notes.append(BOARD_2007_NOTE)
    return tuple(notes)


def _comparison(con: duckdb.DuckDBPyConnection, n: int, tables: dict[str, Table]) -> Table:
    by_scope: dict[str, dict[str, dict[str, Any]]] = {
        "channel": {r["element"]: r for r in tables["channel_elements"].rows},
        "item": {r["element"]: r for r in tables["item_elements"].rows},
    }
    rows = []
    for p in PUBLISHED:
        if p.scope not in by_scope:
            by_scope[p.scope] = {r["element"]: r for r in element_rows(con, p.scope)[0]}
        ours = by_scope[p.scope].get(p.element)
        feeds = ours["feeds"] if ours else 0
        rows.append(
            {
                "element": p.element if p.scope in ("channel", "item") else f"{p.scope}/{p.element}",
                "scope": p.scope,
                "feeds": feeds,
                "pct_feeds": pct(feeds, n),
                "board_2007": p.board_2007,
                "survey_2005": p.survey_2005,
            }
        )
    return Table(
        "published_comparison",
        "Comparison with the published surveys",
        (
            Column("element", "element"),
            Column("scope", "scope"),
            Column("feeds", "feeds", "int"),
            Column("pct_feeds", "ours: % of feeds", "pct"),
            Column("board_2007", "RSS Board 2007 % (1,933 feeds)", "pct"),
            Column("survey_2005", "2005 survey % (5,162 feeds)", "pct"),
        ),
        tuple(rows),
        intro="Every figure the two surveys published, beside ours (same definition: share of RSS feeds).",
        notes=(BOARD_2007_NOTE,),
        chart=Chart("element", "pct_feeds", (("board_2007", "RSS Board 2007"), ("survey_2005", "2005 survey"))),
    )


def _namespaces(con: duckdb.DuckDBPyConnection, fmt: str, n: int) -> Table:
    rows = _rows(
        con,
        """WITH per_feed AS (
               SELECT DISTINCT n.namespace, u.feed_url FROM use u JOIN names n ON n.element = u.element
               WHERE n.namespace IS NOT NULL
           )
           SELECT p.namespace, count(*) AS feeds,
                  (SELECT count(DISTINCT el) FROM names n WHERE n.namespace = p.namespace) AS elements
           FROM per_feed p GROUP BY p.namespace ORDER BY feeds DESC, p.namespace""",
    )
    _add_pct(rows, "feeds", "pct_feeds", n)
    for r in rows:
        r["uri"] = PREFIXES.get(r["namespace"], r["namespace"])
    return Table(
        "namespaces",
        f"Namespaces ({fmt})",
        (
            Column("namespace", "prefix or URI"),
            Column("feeds", "feeds", "int"),
            Column("pct_feeds", "% of feeds", "pct"),
            Column("elements", "distinct elements", "int"),
            Column("uri", "namespace URI"),
        ),
        tuple(rows),
        intro=f"Share of the {n} {fmt} feeds using at least one element of the namespace, at any depth. "
        "Known namespaces are named by their fixed prefix whatever prefix the feed declared; others by URI.",
        chart=Chart("namespace", "pct_feeds"),
    )


def _attributes(con: duckdb.DuckDBPyConnection, fmt: str, n: int) -> Table:
    rows = _rows(
        con,
        """SELECT element AS attribute, scope, count(DISTINCT feed_url) AS feeds, sum(count)::BIGINT AS occurrences
           FROM use WHERE contains(element, '@') GROUP BY ALL ORDER BY feeds DESC, attribute, scope""",
    )
    _add_pct(rows, "feeds", "pct_feeds", n)
    return Table(
        "attributes",
        f"Attributes ({fmt})",
        (
            Column("attribute", "element@attribute"),
            Column("scope", "scope"),
            Column("feeds", "feeds", "int"),
            Column("pct_feeds", "% of feeds", "pct"),
            Column("occurrences", "occurrences", "int"),
        ),
        tuple(rows),
        intro=f"Share of the {n} {fmt} feeds using the attribute at that scope. A link's rel is written with its "
        "value (atom:link@rel=self).",
        chart=Chart("attribute", "pct_feeds"),
    )


def _undefined(con: duckdb.DuckDBPyConnection, fmt: str, n: int) -> Table:
    rows = _rows(
        con,
        """SELECT element, scope, count(DISTINCT feed_url) AS feeds, sum(count)::BIGINT AS occurrences
           FROM use WHERE defined = false GROUP BY ALL ORDER BY feeds DESC, element, scope""",
    )
    _add_pct(rows, "feeds", "pct_feeds", n)
    return Table(
        "undefined_elements",
        f"Undefined core elements ({fmt})",
        (
            Column("element", "element (as written)"),
            Column("scope", "scope"),
            Column("feeds", "feeds", "int"),
            Column("pct_feeds", "% of feeds", "pct"),
            Column("occurrences", "occurrences", "int"),
        ),
        tuple(rows),
        intro="Elements and attributes without a namespace that the format's specification does not define at that "
        "scope (pubdate, date, content...), tallied exactly as written.",
        chart=Chart("element", "pct_feeds"),
    )


def _rules(con: duckdb.DuckDBPyConnection, fmt: str, n: int) -> Table:
    from pipelines.document.checks import RULES

    failed = {
        r["rule"]: r
        for r in _rows(
            con,
            """SELECT c.rule, any_value(c.severity) AS severity, any_value(c.source) AS source,
                      count(DISTINCT c.feed_url) AS feeds,
                      sum(c.count)::BIGINT AS occurrences
               FROM conformance c JOIN sel s ON s.url = c.feed_url GROUP BY c.rule""",
        )
    }
    rows = []
    for rule_id in sorted(set(RULES) | set(failed)):
        rule = RULES.get(rule_id)
        got = failed.get(rule_id, {})
        rows.append(
            {
                "rule": rule_id,
                "severity": rule.severity if rule else got.get("severity"),
                "section": rule.section if rule else None,
                "source": rule.source if rule else got.get("source"),
                "w3c": ", ".join(rule.w3c) if rule else None,
                "feeds": got.get("feeds", 0),
                "pct_feeds": pct(got.get("feeds", 0), n),
                "occurrences": got.get("occurrences", 0),
                "title": rule.title if rule else None,
            }
        )
    rows.sort(key=lambda r: (-r["feeds"], r["rule"]))
    clean = _one(
        con,
        """SELECT count(*) FROM sel s WHERE NOT EXISTS (
               SELECT 1 FROM conformance c WHERE c.feed_url = s.url AND c.severity = 'error')""",
    )
    # profile conformance alone: the rules of source "profile" (files before schema 1.1 had only those)
    profile_clean = _one(
        con,
        """SELECT count(*) FROM sel s WHERE NOT EXISTS (
               SELECT 1 FROM conformance c WHERE c.feed_url = s.url AND c.severity = 'error'
               AND coalesce(c.source, 'profile') = 'profile')""",
    )
    notes = [
        f"{clean} of {n} {fmt} feeds ({pct(clean, n)}%) fail no error-severity rule; "
        f"{profile_clean} ({pct(profile_clean, n)}%) fail no error-severity rule of the profile itself "
        "(source = profile; rss2 and namespace rules are the RSS 2.0 and namespace checks the W3C Feed Validator "
        "also makes; rss1 rules, with sections of the RSS 1.0 specification, are checked on RSS 1.0 feeds, "
        "format rdf, only; see docs/conformance.md).",
        f"{sum(1 for r in rows if not r['feeds'])} of the {len(rows)} rules fail on no {fmt} feed "
        "(listed in the table, left out of the chart).",
    ]
    if fmt == "rdf":
        notes.append(
            "The RSS Best Practices Profile's rules and the rss2 rules are checked on RSS feeds only; "
            "RSS 1.0 feeds get the rss1 and namespace rules (RSS 0.90 feeds none)."
        )
    elif fmt != "rss":
        notes.append("The RSS Best Practices Profile's rules are checked on RSS feeds only.")
    return Table(
        "rule_failures",
        f"RSS Best Practices Profile: rule failure rates ({fmt})",
        (
            Column("rule", "rule"),
            Column("severity", "severity"),
            Column("section", "profile §"),
            Column("source", "source"),
            Column("w3c", "W3C validator names"),
            Column("feeds", "feeds failing", "int"),
            Column("pct_feeds", "% of feeds", "pct"),
            Column("occurrences", "occurrences", "int"),
            Column("title", "requirement"),
        ),
        tuple(rows),
        intro=f"Share of the {n} {fmt} feeds failing each rule at least once (every rule listed, also those no feed "
        "fails). error = a must of the profile or the RSS 2.0 (rss1 rules: 1.0) specification; warning = a should.",
        notes=tuple(notes),
        chart=Chart("rule", "pct_feeds", zero_rows="rules no feed fails", zero_row="rule no feed fails"),
    )


def _date_forms(con: duckdb.DuckDBPyConnection, fmt: str) -> Table:
    got = {
        r["date_form"]: r["items"]
        for r in _rows(
            con,
            f"""SELECT coalesce(i.date_form, '{NO_DATE}') AS date_form, count(*) AS items
                FROM items i JOIN sel s ON s.url = i.feed_url GROUP BY ALL""",
        )
    }
    total = sum(got.values())
    dated = total - got.get(NO_DATE, 0)
    rows = [
        {"date_form": form, "items": got.get(form, 0), "meaning": DATE_FORMS.get(form, "")}
        for form in sorted(set(DATE_FORMS) | set(got) | {NO_DATE})
    ]
    rows = _ordered(rows, "date_form", list(DATE_FORMS), NO_DATE)
    for r in rows:
        r["pct_items"] = pct(r["items"], total)
        r["pct_dated"] = pct(r["items"], dated) if r["date_form"] != NO_DATE else None
    return Table(
        "date_forms",
        f"Date forms of items ({fmt})",
        (
            Column("date_form", "date form"),
            Column("items", "items", "int"),
            Column("pct_items", "% of items", "pct"),
            Column("pct_dated", "% of dated items", "pct"),
            Column("meaning", "meaning"),
        ),
        tuple(rows),
        intro=f"The form each item's date took as written (pubDate, dc:date, published, updated...): {total} items of "
        f"{fmt} feeds, {dated} with a date.",
        chart=Chart("date_form", "pct_items"),
    )


def compute(out: str, job_id: str | None = None, fmt: str = "rss") -> Survey:
    """Every table of the survey of one job (default: the latest) for feeds of ``fmt``."""
    con, job = connect(out, job_id)
    try:
        _prepare(con, fmt)
        total = _one(con, "SELECT count(*) FROM f")
        n = _one(con, "SELECT count(*) FROM sel")
        items = _one(con, "SELECT coalesce(sum(item_count), 0)::BIGINT FROM sel")
        tables: dict[str, Table] = {}
        steps: list[Callable[[], Table]] = [
            lambda: _formats(con, total),
            lambda: _element_table(con, fmt, "channel", n, items),
            lambda: _element_table(con, fmt, "item", n, items),
        ]
        for step in steps:
            t = step()
            tables[t.name] = t
        if fmt == "rss":
            t = _comparison(con, n, tables)
            tables[t.name] = t
        for t in (
            _namespaces(con, fmt, n),
            _attributes(con, fmt, n),
            _undefined(con, fmt, n),
            _rules(con, fmt, n),
            _date_forms(con, fmt),
            identities_table(con, n),
        ):
            tables[t.name] = t
        # Before _autodiscovery, whose temporary table ``pages`` would hide the dataset's own.
        breadth = [*breadth_tables(con), *coverage_tables(con)]
        atom = atom_tables(con)  # reads breadth's bf
        summary, kinds, reasons, pages = autodiscovery_tables(con)
        for t in (summary, kinds, reasons, reflexive_table(con, total), usm_table(con), *breadth):
            tables[t.name] = t
        return Survey(
            job_id=job,
            fmt=fmt,
            jobs=tuple(list_jobs(out)),
            totals={"feeds": total, "format_feeds": n, "format_items": items, "pages": pages},
            tables=_beside(tuple(tables.values()), "rule_failures", atom),
        )
    finally:
        con.close()


def _beside(tables: tuple[Table, ...], name: str, section: list[Table]) -> tuple[Table, ...]:
    """``tables`` with ``section`` right after the table called ``name`` (the Atom section after the profile's)."""
    out: list[Table] = []
    for t in tables:
        out.append(t)
        if t.name == name:
            out += section
    return tuple(out)


def run(out: str, *, job: str | None = None, fmt: str = "rss", report_dir: str | None = None) -> str:
    """The survey as Markdown; with ``report_dir``, also survey.md, survey.html and one CSV per table there."""
    return run_report(out, job=job, fmt=fmt, report_dir=report_dir)[0]


def run_report(
    out: str, *, job: str | None = None, fmt: str = "rss", report_dir: str | None = None
) -> tuple[str, list[Path]]:
    """The survey as Markdown, and the files written into ``report_dir`` (none without it), in writing order."""
    from crawler.report.render import to_markdown, write_report

    survey = compute(out, job, fmt=fmt)
    markdown = to_markdown(survey)
    written = write_report(survey, Path(report_dir), markdown=markdown) if report_dir else []
    return markdown, written
