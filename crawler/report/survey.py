"""The survey report of a crawl: DuckDB over the Parquet tables of one job.

:func:`compute` aggregates one job (default: the latest) into a
:class:`~crawler.report.model.Survey` of tables; :func:`run` renders it as
Markdown and, with ``report_dir``, also writes ``survey.md``, ``survey.html``
(self-contained, inline SVG charts) and one CSV per table there
(:func:`run_report` also returns the paths of those files).

Rules every table keeps (the element tables' definitions are in :mod:`crawler.report.elements`):

* It is complete and stably sorted: by feeds (or items, links)
  descending, then by name ascending (binary order).
* Percentages are rounded to two decimals; an empty denominator gives none.

All aggregation happens in DuckDB; Python only walks result rows. The job's views
come from :func:`crawler.report.views.connect`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa

from crawler.report.atom import atom_tables
from crawler.report.breadth import breadth_tables
from crawler.report.coverage import coverage_tables
from crawler.report.crawled import LINK_KINDS, autodiscovery_tables, identities_table, reflexive_table, usm_table
from crawler.report.elements import (
    attributes_table,
    comparison_table,
    element_table,
    namespaces_table,
    undefined_table,
)
from crawler.report.model import Chart, Column, Survey, Table
from crawler.report.query import add_pct as _add_pct
from crawler.report.query import archived_copy, pct, same_copy
from crawler.report.query import one as _one
from crawler.report.query import ordered as _ordered
from crawler.report.query import rows as _rows
from crawler.report.reference import known_names
from crawler.report.views import connect
from pipelines.dataset.store import list_jobs
from pipelines.document.dates import FALLBACK_CALLS, FALLBACK_MISSES
from schemas.vocab import DateForm

__all__ = ["LINK_KINDS", "Survey", "compute", "run", "run_report"]

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


def _prepare(con: duckdb.DuckDBPyConnection, fmt: str) -> None:
    """Temporary tables: ``f`` (feeds, one row per URL), ``sel`` (feeds of ``fmt``), ``use`` (their usage).

    A census with ``--live`` has two copies of a feed (archived and live): ``f`` counts the first fetched,
    and every join to ``items``, ``element_usage`` and ``conformance`` keeps that copy's rows (``archived``).
    """
    con.execute(
        f"""CREATE TEMP TABLE f AS
           SELECT url, format, version, well_formed, item_count, reflexive, content_type_ok, self_url, self_url_matches,
                  {archived_copy()} AS archived
           FROM feeds QUALIFY row_number() OVER (PARTITION BY url ORDER BY fetched_at, final_url) = 1"""
    )
    con.execute("CREATE TEMP TABLE sel AS SELECT url, item_count, archived FROM f WHERE format = ?", [fmt])
    con.execute(
        f"""CREATE TEMP TABLE use AS
           SELECT u.feed_url, u.scope, u.element, u.count, u.items_with, u.defined, s.item_count
           FROM element_usage u JOIN sel s ON {same_copy("u")}"""
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


def _rules(con: duckdb.DuckDBPyConnection, fmt: str, n: int) -> Table:
    from pipelines.document.checks import RULES

    failed = {
        r["rule"]: r
        for r in _rows(
            con,
            f"""SELECT c.rule, any_value(c.severity) AS severity, any_value(c.source) AS source,
                      count(DISTINCT c.feed_url) AS feeds,
                      sum(c.count)::BIGINT AS occurrences
               FROM conformance c JOIN sel s ON {same_copy("c")} GROUP BY c.rule""",
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
        f"""SELECT count(*) FROM sel s WHERE NOT EXISTS (
               SELECT 1 FROM conformance c WHERE {same_copy("c")} AND c.severity = 'error')""",
    )
    # profile conformance alone: the rules of source "profile" (files before schema 1.1 had only those)
    profile_clean = _one(
        con,
        f"""SELECT count(*) FROM sel s WHERE NOT EXISTS (
               SELECT 1 FROM conformance c WHERE {same_copy("c")} AND c.severity = 'error'
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
                FROM items i JOIN sel s ON {same_copy("i")} GROUP BY ALL""",
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
            lambda: element_table(con, fmt, "channel", n, items),
            lambda: element_table(con, fmt, "item", n, items),
        ]
        for step in steps:
            t = step()
            tables[t.name] = t
        if fmt == "rss":
            t = comparison_table(con, n, tables)
            tables[t.name] = t
        for t in (
            namespaces_table(con, fmt, n),
            attributes_table(con, fmt, n),
            undefined_table(con, fmt, n),
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
