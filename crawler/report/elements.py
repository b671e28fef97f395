"""The survey's element tables: channel and item elements, the published comparison, namespaces,
attributes and undefined elements. They read the temporary tables ``sel``, ``use`` and ``names``
that :func:`crawler.report.survey.compute` prepares.

Definitions (``n`` = feeds of the chosen format in the job, one row per URL):

* Channel elements: share of the ``n`` feeds whose channel has the element
  (element_usage scope ``channel``, attributes excluded).
* Item elements: share of the ``n`` feeds where any item has it, and share of
  items, ``sum(items_with) / sum(item_count)``.
* Case variants: a name that differs from a known name
  (:data:`crawler.report.reference.KNOWN_NAMES`) only by ASCII case is counted
  in the known name's row, and the row lists the variants it merged. Per feed,
  the merged ``items_with`` is capped at the feed's item count.
"""

from __future__ import annotations

from typing import Any

import duckdb

from crawler.report.model import Chart, Column, Table
from crawler.report.query import add_pct as _add_pct
from crawler.report.query import pct
from crawler.report.query import rows as _rows
from crawler.report.reference import BOARD_2007_NOTE, PUBLISHED
from schemas.namespaces import PREFIXES

__all__ = [
    "FORMAT_NAMES",
    "attributes_table",
    "comparison_table",
    "element_rows",
    "element_table",
    "namespaces_table",
    "undefined_table",
]

#: How headings name the formats.
FORMAT_NAMES = {"rss": "RSS", "atom": "Atom", "rdf": "RSS 1.0 (RDF)"}


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


def _published(fmt: str, scope: str) -> dict[str, Any]:
    if fmt != "rss":
        return {}
    return {p.element: p for p in PUBLISHED if p.scope == scope}


def element_table(con: duckdb.DuckDBPyConnection, fmt: str, scope: str, n: int, items: int) -> Table:
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


def comparison_table(con: duckdb.DuckDBPyConnection, n: int, tables: dict[str, Table]) -> Table:
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


def namespaces_table(con: duckdb.DuckDBPyConnection, fmt: str, n: int) -> Table:
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


def attributes_table(con: duckdb.DuckDBPyConnection, fmt: str, n: int) -> Table:
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


def undefined_table(con: duckdb.DuckDBPyConnection, fmt: str, n: int) -> Table:
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
