"""The breadth sections of the survey (issue #16): every figure of the peer survey tool, from our rows.

The peer is mnot's feed-survey (0.1.2 on PyPI). Each section here is one function returning
:class:`~crawler.report.model.Table` objects that ``feedcensus survey`` renders like its other
tables; every figure is a DuckDB query over the job's Parquet tables, so a notebook can re-cut it.
``docs/survey-breadth.md`` defines each figure and compares it, figure by figure, with the peer's
(:data:`PEER_FIGURES` pairs them; ``benchmarks/bench_peer_survey.py`` runs both tools).

Decisions:

* One row per feed URL (the first fetch of the job, as the rest of the survey). A feed is *parsed*
  when its format is known (rss, atom, rdf); *strictly parsed* when it is also well-formed XML,
  which is what the peer calls parsed (it reads with ``recover=False``, we in recover mode).
* *Feed URLs checked* are the URLs requested as feeds: every fetch_log row except pages, OPML
  files, robots.txt, and the duplicate or not-due rows of a URL already counted.
* Summary sections are tables of measures with a stable ``key`` (:func:`read_measures` reads them
  back from the CSVs by key); the share column says what it is a share of.
* A section that needs a column the dataset's schema does not have yet says so in a note and
  shows its figures as empty, rather than failing the survey.
* Dates: an item dated more than :data:`FUTURE_TOLERANCE_DAYS` after its feed's fetch is
  *future-dated*, kept apart from undated items, and never counts as the newest item.
* Cutoffs that are the peer's are constants below with a comment saying so.

The operational quality score (the peer's ``report/quality.py:score_feed``, written again here in
SQL from its documented definition). A feed that is not parsed scores 0. ``age`` is the days from
the fetch back to the newest item's date, else the feed's own date (a date more than a day in the
future counts as none; a negative age is 0). No age, or an age over 365 days: score 0 (*inactive*).
Otherwise::

    raw = 0.35 recency + 0.25 content + 0.15 entries + 0.15 entry_metadata + 0.10 feed_metadata
    recency        = 2 ** (-age / 120)
    content        = 0.5 presence + 0.3 min(mean length / 1000, 1) + 0.2 profile
                     presence: 1 full content, 0.5 summary only, else 0
                     mean length: characters of every description and content of the items
                     profile: html or xhtml 1.0, mixed 0.75, plain 0.5, none 0.1
    entries        = min(items / 20, 1)
    entry_metadata = clamp(0.4 [newest item date] + 0.2 [oldest item date] + 0.2 [item languages]
                           + 0.2 [more than one length] - title penalty - 0.25 [any default title]
                           - link penalty, 0, 1)
                     title penalty: 0.35 when repeated titles >= 0.8 of titles, 0.20 when >= 0.5
                     link penalty:  0.25 when repeated links >= 0.8 of links, 0.15 when >= 0.5
    feed_metadata  = 0.3 [title] + 0.3 [link] + 0.2 [a language] + 0.2 [feed date]
    cap            = 0.55 if title_rep >= 0.8 or default share >= 0.5, else 0.70 if title_rep >= 0.5 or
                     any default title, else 1; then min(cap, 0.65) if link_rep >= 0.8, min(cap, 0.80)
                     if link_rep >= 0.5; and 0.45 when both the first and the third hold
    score          = round(clamp(min(raw, cap), 0, 1), 4)

A *repeated* title or link is one that occurs more than once in the feed (titles compared after
collapsing white space and lower-casing; links without their query and fragment); the ratio is
the items having one over the items with a title (a link). A feed scoring above
:data:`QUALITY_THRESHOLD` is a *quality* feed.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from crawler.report.model import Chart, Column, Table
from schemas.tables import TABLES

__all__ = [
    "DEFAULT_TITLES",
    "PEER_FIGURES",
    "PeerFigure",
    "breadth_tables",
    "peer_value",
    "read_measures",
]

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


@dataclass(frozen=True, slots=True)
class PeerFigure:
    """One figure of the peer's report, the measure of ours that answers it, and why they may differ.

    ``peer`` is a key of the peer's ``build_report_stats`` (dots go into nested dicts); ``ours`` a
    measure key of a breadth table, or ``table:<name>`` for a figure that is a whole table.
    ``agree``: the two must be equal on the side-by-side web unless ``reason`` applies there.
    """

    peer: str
    ours: str
    reason: str = ""
    agree: bool = False


# --- plumbing ------------------------------------------------------------------------------


def has_column(table: str, column: str) -> bool:
    return table in TABLES and any(f.name == column for f in TABLES[table])


def _col(table: str, column: str, sql_type: str, alias: str = "") -> str:
    """``column`` when the schema has it, else a typed NULL under its name."""
    return f"{alias}{column}" if has_column(table, column) else f"NULL::{sql_type} AS {column}"


def _missing(*pairs: tuple[str, str]) -> tuple[str, ...]:
    gone = [f"{t}.{c}" for t, c in pairs if not has_column(t, c)]
    return (NOT_IN_SCHEMA.format(", ".join(gone)),) if gone else ()


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _row(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, Any]:
    rows = _rows(con, sql)
    return rows[0] if rows else {}


def pct(part: float | None, whole: float | None) -> float | None:
    if not whole or part is None:
        return None
    return round(100.0 * part / whole, 2)


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


# --- the per-feed and per-item working tables ------------------------------------------------------


def prepare(con: duckdb.DuckDBPyConnection) -> None:
    """Temporary tables every section reads: ``bf`` (feeds), ``bl`` (fetch_log), ``bi`` (items), ``bs`` (per feed)."""
    site = "site" if has_column("fetch_log", "site") else f"{_host('coalesce(final_url, url)')} AS site"
    con.execute(
        f"""CREATE TEMP TABLE bl AS
            SELECT url, final_url, status, outcome, error, discovered_via, content_type, fetched_at, {site},
                   {_col("fetch_log", "server", "VARCHAR")}, {_col("fetch_log", "x_powered_by", "VARCHAR")},
                   {_col("fetch_log", "content_language", "VARCHAR")}
            FROM fetch_log"""
    )
    con.execute(
        f"""CREATE TEMP TABLE bf AS
            SELECT f.url, f.final_url, f.format, f.version, f.well_formed, f.item_count, f.title, f.link,
                   f.language, f.self_url, f.self_url_matches, f.parse_error, f.fetched_at, f.errors, f.warnings,
                   f.format IN {FEED_FORMATS} AS parsed, f.format IN {FEED_FORMATS} AND f.well_formed AS strict,
                   {_col("feeds", "generator", "VARCHAR", "f.")}, {_col("feeds", "feed_date", "TIMESTAMPTZ", "f.")},
                   {_col("feeds", "hub_url", "VARCHAR", "f.")}, {_col("feeds", "link_rels", "VARCHAR[]", "f.")},
                   {_col("feeds", "entry_languages", "VARCHAR[]", "f.")},
                   {_col("feeds", "hreflangs", "VARCHAR[]", "f.")}, {_col("feeds", "platforms", "VARCHAR[]", "f.")},
                   (SELECT any_value(l.content_language) FROM bl l WHERE l.url = f.url AND l.outcome = 'feed')
                       AS content_language,
                   (SELECT any_value(l.site) FROM bl l WHERE l.url = f.url) AS site
            FROM feeds f QUALIFY row_number() OVER (PARTITION BY f.url ORDER BY f.fetched_at, f.final_url) = 1"""
    )
    con.execute(
        f"""CREATE TEMP TABLE bi AS
            SELECT i.feed_url, i.position, i.guid, i.link, i.title, i.pub_date, i.enclosure_type, b.fetched_at,
                   {_col("items", "title_has_markup", "BOOLEAN", "i.")},
                   {_col("items", "description_length", "INTEGER", "i.")},
                   {_col("items", "content_length", "INTEGER", "i.")},
                   {_col("items", "content_kind", "VARCHAR", "i.")},
                   i.pub_date > b.fetched_at + INTERVAL {FUTURE_TOLERANCE_DAYS} DAY AS future
            FROM items i JOIN bf b ON b.url = i.feed_url"""
    )
    defaults = ", ".join(f"'{t}'" for t in DEFAULT_TITLES)
    con.execute(
        f"""CREATE TEMP TABLE bs AS
            WITH t AS (
                SELECT feed_url, lower(trim(regexp_replace(title, '\\s+', ' ', 'g'))) AS v FROM bi
                WHERE nullif(trim(title), '') IS NOT NULL),
            tc AS (SELECT feed_url, sum(c) AS titles, coalesce(sum(c) FILTER (WHERE c > 1), 0) AS rep_titles,
                          coalesce(sum(c) FILTER (WHERE v IN ({defaults})), 0) AS default_titles
                   FROM (SELECT feed_url, v, count(*) AS c FROM t GROUP BY ALL) GROUP BY feed_url),
            lc AS (SELECT feed_url, sum(c) AS links, coalesce(sum(c) FILTER (WHERE c > 1), 0) AS rep_links
                   FROM (SELECT feed_url, rtrim(regexp_replace(link, '[?#].*$', ''), '/') AS v, count(*) AS c
                         FROM bi WHERE nullif(link, '') IS NOT NULL GROUP BY ALL) GROUP BY feed_url),
            le AS (SELECT feed_url, coalesce(sum(c) FILTER (WHERE c > 1), 0) AS dup_links
                   FROM (SELECT feed_url, link, count(*) AS c FROM bi WHERE nullif(link, '') IS NOT NULL GROUP BY ALL)
                   GROUP BY feed_url),
            gc AS (SELECT feed_url, coalesce(sum(c) FILTER (WHERE c > 1), 0) AS dup_guids
                   FROM (SELECT feed_url, guid, count(*) AS c FROM bi WHERE nullif(guid, '') IS NOT NULL GROUP BY ALL)
                   GROUP BY feed_url),
            d AS (SELECT feed_url,
                         max(pub_date) FILTER (WHERE NOT future) AS newest,
                         min(pub_date) FILTER (WHERE NOT future) AS oldest,
                         count(*) FILTER (WHERE pub_date IS NOT NULL AND NOT future) AS dated,
                         count(*) FILTER (WHERE pub_date IS NULL) AS undated,
                         count(*) FILTER (WHERE future) AS future,
                         count(content_length) AS with_content, count(description_length) AS with_description,
                         count(content_length) + count(description_length) AS lengths,
                         coalesce(sum(content_length), 0) + coalesce(sum(description_length), 0) AS length_sum,
                         count(DISTINCT content_kind) AS kinds, any_value(content_kind) AS kind,
                         count(*) FILTER (WHERE title_has_markup) AS markup_titles
                  FROM bi GROUP BY feed_url)
            SELECT b.*, coalesce(d.newest, CASE WHEN b.feed_date <= b.fetched_at + INTERVAL {FUTURE_TOLERANCE_DAYS} DAY
                                               THEN b.feed_date END) AS fresh_date,
                   d.newest, d.oldest, coalesce(d.dated, 0) AS dated, coalesce(d.undated, 0) AS undated,
                   coalesce(d.future, 0) AS future, coalesce(d.with_content, 0) AS with_content,
                   coalesce(d.with_description, 0) AS with_description, coalesce(d.lengths, 0) AS lengths,
                   CASE WHEN d.lengths > 0 THEN d.length_sum / d.lengths END AS mean_length,
                   CASE WHEN d.kinds > 1 THEN 'mixed' WHEN d.kinds = 1 THEN d.kind END AS profile,
                   coalesce(d.markup_titles, 0) AS markup_titles,
                   coalesce(tc.titles, 0) AS titles, coalesce(tc.rep_titles, 0) AS rep_titles,
                   coalesce(tc.default_titles, 0) AS default_titles,
                   coalesce(lc.links, 0) AS links, coalesce(lc.rep_links, 0) AS rep_links,
                   coalesce(le.dup_links, 0) AS dup_links, coalesce(gc.dup_guids, 0) AS dup_guids
            FROM bf b LEFT JOIN d ON d.feed_url = b.url LEFT JOIN tc ON tc.feed_url = b.url
                 LEFT JOIN lc ON lc.feed_url = b.url LEFT JOIN le ON le.feed_url = b.url
                 LEFT JOIN gc ON gc.feed_url = b.url"""
    )
    con.execute(
        """CREATE TEMP TABLE bs2 AS SELECT *,
               CASE WHEN fresh_date IS NOT NULL
                    THEN greatest((epoch(fetched_at) - epoch(fresh_date)) / 86400.0, 0) END AS age,
               CASE WHEN titles > 0 THEN rep_titles / titles ELSE 0 END AS title_rep,
               CASE WHEN links > 0 THEN rep_links / links ELSE 0 END AS link_rep,
               CASE WHEN titles > 0 THEN default_titles / titles ELSE 0 END AS default_share
           FROM bs"""
    )
    _quality(con)
    _prepare_pages(con)


def _quality(con: duckdb.DuckDBPyConnection) -> None:
    """Temporary table ``bq``: every feed's quality score (the module docstring's formula)."""
    con.execute(
        f"""CREATE TEMP TABLE bq AS
            WITH c AS (
                SELECT url, parsed AND strict AND age IS NOT NULL AND age <= {ACTIVE_DAYS} AS active, age,
                  pow(2, -coalesce(age, 0) / {HALF_LIFE_DAYS}) AS recency,
                  0.5 * CASE WHEN with_content > 0 THEN 1 WHEN with_description > 0 THEN 0.5 ELSE 0 END
                  + 0.3 * least(coalesce(mean_length, 0) / 1000.0, 1)
                  + 0.2 * CASE profile WHEN 'html' THEN 1.0 WHEN 'xhtml' THEN 1.0 WHEN 'mixed' THEN 0.75
                                       WHEN 'plain' THEN 0.5 ELSE 0.1 END AS content,
                  least(item_count / 20.0, 1) AS entries,
                  greatest(least(0.4 * (newest IS NOT NULL)::INT + 0.2 * (oldest IS NOT NULL)::INT
                      + 0.2 * (len(coalesce(entry_languages, [])) > 0)::INT + 0.2 * (lengths > 1)::INT
                      - CASE WHEN title_rep >= 0.8 THEN 0.35 WHEN title_rep >= 0.5 THEN 0.2 ELSE 0 END
                      - 0.25 * (default_titles > 0)::INT
                      - CASE WHEN link_rep >= 0.8 THEN 0.25 WHEN link_rep >= 0.5 THEN 0.15 ELSE 0 END, 1), 0)
                      AS entry_metadata,
                  0.3 * (nullif(title, '') IS NOT NULL)::INT + 0.3 * (nullif(link, '') IS NOT NULL)::INT
                  + 0.2 * (language IS NOT NULL OR content_language IS NOT NULL
                           OR len(coalesce(entry_languages, [])) > 0)::INT
                  + 0.2 * (feed_date IS NOT NULL)::INT AS feed_metadata,
                  title_rep >= 0.8 OR default_share >= 0.5 AS heavy_titles,
                  title_rep >= 0.5 OR default_titles > 0 AS some_titles, link_rep
                FROM bs2),
            capped AS (
                SELECT *, 0.35 * recency + 0.25 * content + 0.15 * entries + 0.15 * entry_metadata
                          + 0.10 * feed_metadata AS raw,
                  least(CASE WHEN heavy_titles THEN 0.55 WHEN some_titles THEN 0.70 ELSE 1.0 END,
                        CASE WHEN link_rep >= 0.8 THEN 0.65 WHEN link_rep >= 0.5 THEN 0.80 ELSE 1.0 END,
                        CASE WHEN heavy_titles AND link_rep >= 0.8 THEN 0.45 ELSE 1.0 END) AS cap
                FROM c)
            SELECT url, active, age,
                   CASE WHEN active THEN round(greatest(least(raw, cap, 1), 0), 4) ELSE 0 END AS score
            FROM capped"""
    )


def _prepare_pages(con: duckdb.DuckDBPyConnection) -> None:
    """``bp``: one row per HTML page read (the pages table, else fetch_log pages); ``bk``: its feed links."""
    if "pages" in TABLES:
        con.execute(
            f"""CREATE TEMP TABLE bp AS SELECT page_url, site, html_lang, platforms, meta_generator,
                       {_col("pages", "rel_feed", "BOOLEAN")}
                FROM pages QUALIFY row_number() OVER (PARTITION BY page_url ORDER BY fetched_at) = 1"""
        )
    else:
        con.execute(
            """CREATE TEMP TABLE bp AS SELECT DISTINCT coalesce(final_url, url) AS page_url, any_value(site) AS site,
                      NULL::VARCHAR AS html_lang, NULL::VARCHAR[] AS platforms, NULL::VARCHAR AS meta_generator,
                      NULL::BOOLEAN AS rel_feed
               FROM bl WHERE outcome = 'page' GROUP BY ALL"""
        )
    # A feed link as the peer counts one: a feed media type, rel alternate or feed, an href.
    con.execute(
        """CREATE TEMP TABLE bk AS
           SELECT page_url, href, type, rel, regexp_split_to_array(lower(trim(coalesce(rel, ''))), '\\s+') AS rels
           FROM links
           WHERE href IS NOT NULL AND regexp_matches(lower(coalesce(type, '')), 'rss\\+xml|atom\\+xml|rdf\\+xml')
             AND list_has_any(regexp_split_to_array(lower(trim(coalesce(rel, ''))), '\\s+'), ['alternate', 'feed'])"""
    )


# --- the sections ---------------------------------------------------------------------------------


def run_summary(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Run summary and availability, and the freshness funnel."""
    r = _row(
        con,
        """SELECT
             (SELECT count(*) FROM bl WHERE status IS NOT NULL AND outcome NOT IN ('robots', 'opml')) AS responses,
             (SELECT count(*) FROM bp) AS pages,
             (SELECT count(*) FROM bl WHERE status IS NOT NULL AND outcome NOT IN ('robots', 'opml')
                AND regexp_matches(lower(coalesce(content_type, '')), 'text/html|application/xhtml')) AS html,
             (SELECT count(DISTINCT site) FROM bl WHERE status IS NOT NULL AND outcome NOT IN ('robots', 'opml'))
                AS sites,
             (SELECT count(DISTINCT url) FROM bl WHERE outcome NOT IN ('page', 'opml', 'robots', 'duplicate', 'not_due')
                AND coalesce(discovered_via, '') NOT IN ('opml-page', 'reflexive', 'include', 'robots')) AS checked,
             (SELECT count(*) FROM bf WHERE parsed) AS parsed,
             (SELECT count(*) FROM bf WHERE strict) AS strict,
             (SELECT count(DISTINCT site) FROM bf WHERE strict) AS feed_sites,
             (SELECT count(*) FROM bf WHERE strict AND format IN ('rss', 'rdf')) AS rss,
             (SELECT count(*) FROM bf WHERE strict AND format = 'atom') AS atom,
             (SELECT count(*) FROM bs2 WHERE strict) AS valid,
             (SELECT sum(item_count) FROM bf WHERE strict)::BIGINT AS entries,
             (SELECT count(*) FROM bq WHERE active) AS active,
             (SELECT count(*) FROM bq JOIN bf USING (url) WHERE active AND bf.item_count > 0) AS active_entries""",
    )
    checked = r["checked"]
    items = [
        ("responses_processed", "responses processed (feeds and pages)", r["responses"], None, ""),
        ("html_pages", "HTML pages read for autodiscovery", r["pages"], None, ""),
        ("html_responses", "responses served as HTML (pages, and error pages of feed URLs)", r["html"], None, ""),
        ("sites_seen", "sites (registrable domains) answering", r["sites"], None, ""),
        ("sites_with_feeds", "sites with a strictly parsed feed", r["feed_sites"], r["sites"], "sites"),
        ("feed_urls_checked", "feed URLs checked", checked, None, ""),
        ("feeds_parsed", "parsed (rss, atom or rdf, recover mode included)", r["parsed"], checked, "feed URLs"),
        ("feeds_parsed_strict", "parsed from well-formed XML", r["strict"], checked, "feed URLs"),
        ("feeds_unparsed_strict", "not parsed from well-formed XML", checked - r["strict"], checked, "feed URLs"),
        ("feeds_rss_family", "RSS family (RSS 0.9x-2.0 and RSS 1.0)", r["rss"], r["strict"], "parsed"),
        ("feeds_atom", "Atom", r["atom"], r["strict"], "parsed"),
        ("items_total", "items in parsed feeds", r["entries"], None, ""),
    ]
    funnel = [
        ("funnel_checked", "feed URLs checked", checked, checked, "feed URLs"),
        ("funnel_parsed", "parsed (well-formed)", r["strict"], checked, "feed URLs"),
        ("funnel_active", f"newest item (else feed date) within {ACTIVE_DAYS} days", r["active"], checked, "feed URLs"),
        ("funnel_active_entries", "active with items", r["active_entries"], checked, "feed URLs"),
    ]
    return [
        _measures(
            "breadth_run",
            "Run summary and availability",
            items,
            "What the crawl read, and how much of it parsed. Sites are registrable domains (an IP address is "
            "its own site).",
        ),
        _measures(
            "breadth_funnel",
            "Freshness funnel",
            funnel,
            f"From the feed URLs checked to the feeds active within {ACTIVE_DAYS} days (the peer's cutoff) "
            "that have items.",
            _missing(("feeds", "feed_date")),
        ),
    ]


def autodiscovery(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Autodiscovery as the peer counts it: pages, sites, relations, multi-rel links, format pairs, platforms."""
    r = _row(
        con,
        """WITH pg AS (
               SELECT page_url, bool_or(alt) AS alt, bool_or(fd) AS fd, count(DISTINCT href) AS feeds FROM (
                   SELECT page_url, list_contains(rels, 'alternate') AS alt, list_contains(rels, 'feed') AS fd, href
                   FROM bk
                   UNION ALL  -- rel=feed without alternate: the pages table knows, links has no row for it
                   SELECT page_url, false, true, NULL FROM bp WHERE rel_feed)
               GROUP BY page_url),
           multi AS (
               SELECT page_url, href FROM bk GROUP BY ALL
               HAVING bool_or(list_contains(rels, 'alternate')) AND bool_or(list_contains(rels, 'feed')))
           SELECT (SELECT count(*) FROM bp) AS pages, (SELECT count(*) FROM pg) AS with_links,
                  (SELECT count(*) FROM pg WHERE alt) AS alt, (SELECT count(*) FROM pg WHERE fd) AS fd,
                  (SELECT count(*) FROM pg WHERE alt AND fd) AS both,
                  (SELECT count(*) FROM multi) AS multi, (SELECT count(DISTINCT page_url) FROM multi) AS multi_pages,
                  (SELECT count(*) FROM pg WHERE feeds > 1) AS multi_feed,
                  (SELECT count(DISTINCT site) FROM bp) AS sites,
                  (SELECT count(DISTINCT p.site) FROM bp p JOIN pg USING (page_url)) AS sites_with,
                  (SELECT count(*) FROM bf WHERE strict AND url IN (SELECT href FROM bk)) AS feeds_advertised,
                  (SELECT count(*) FROM bf WHERE strict) AS valid""",
    )
    pairs = _rows(
        con,
        """WITH fe AS (
               SELECT DISTINCT k.page_url, b.url, b.format,
                      rtrim(regexp_replace(lower(b.link), '[?#].*$', ''), '/') AS l,
                      lower(trim(regexp_replace(b.title, '\\s+', ' ', 'g'))) AS t
               FROM bk k JOIN bf b ON b.url = k.href WHERE b.strict AND (b.link IS NOT NULL OR b.title IS NOT NULL)),
           g AS (SELECT page_url, l, t, list_sort(list(DISTINCT format)) AS formats, count(*) AS n
                 FROM fe GROUP BY ALL HAVING count(*) > 1)
           SELECT array_to_string(formats, ' and ') AS formats, count(*) AS groups, count(DISTINCT page_url) AS pages
           FROM g GROUP BY ALL ORDER BY groups DESC, formats""",
    )
    pair_pages = _row(
        con,
        """SELECT count(DISTINCT page_url) AS n FROM (
               SELECT k.page_url FROM bk k JOIN bf b ON b.url = k.href WHERE b.strict
               GROUP BY k.page_url, rtrim(regexp_replace(lower(b.link), '[?#].*$', ''), '/'),
                        lower(trim(regexp_replace(b.title, '\\s+', ' ', 'g')))
               HAVING count(DISTINCT b.url) > 1)""",
    )["n"]
    pages, valid = r["pages"], r["valid"]
    items = [
        ("pages_with_feed_links", "pages with feed links", r["with_links"], pages, "HTML pages"),
        ("sites_with_feed_links", "sites with feed links", r["sites_with"], r["sites"], "sites with pages"),
        ("pages_rel_alternate", "pages with a rel=alternate feed link", r["alt"], pages, "HTML pages"),
        ("pages_rel_feed", "pages with a rel=feed feed link", r["fd"], pages, "HTML pages"),
        ("pages_rel_both", "pages using both relations", r["both"], pages, "HTML pages"),
        ("multi_rel_links", "feed URLs linked with both alternate and feed on one page", r["multi"], None, ""),
        ("pages_multi_rel", "pages with such a link", r["multi_pages"], pages, "HTML pages"),
        ("pages_multi_feed", "pages advertising more than one feed", r["multi_feed"], pages, "HTML pages"),
        (
            "pages_format_pairs",
            "pages offering one channel in two formats",
            pair_pages,
            r["multi_feed"],
            "multi-feed pages",
        ),
        ("feeds_advertised", "parsed feeds some page advertises", r["feeds_advertised"], valid, "parsed feeds"),
        (
            "feeds_not_advertised",
            "parsed feeds no page advertises",
            valid - r["feeds_advertised"],
            valid,
            "parsed feeds",
        ),
    ]
    per_page = _rows(
        con,
        """SELECT CASE WHEN n > 10 THEN '11+' ELSE n::VARCHAR END AS feeds_per_page, count(*) AS pages
           FROM (SELECT page_url, count(DISTINCT href) AS n FROM bk GROUP BY ALL) GROUP BY ALL
           ORDER BY min(n)""",
    )
    for p in per_page:
        p["pct_pages"] = pct(p["pages"], r["with_links"])
    by_platform = _rows(
        con,
        """WITH p AS (SELECT page_url, CASE WHEN len(coalesce(platforms, [])) = 0 THEN ['unknown']
                                            ELSE platforms END AS ps,
                             page_url IN (SELECT page_url FROM bk) AS adv FROM bp)
           SELECT platform, count(*) AS pages, count(*) FILTER (WHERE adv) AS with_links
           FROM (SELECT unnest(ps) AS platform, adv FROM p) GROUP BY ALL ORDER BY pages DESC, platform""",
    )
    for p in by_platform:
        p["pct_with_links"] = pct(p["with_links"], p["pages"])
    return [
        _measures(
            "breadth_autodiscovery",
            "Autodiscovery as the peer counts it",
            items,
            "A feed link: a <link> with a feed media type (rss+xml, atom+xml, rdf+xml), rel alternate or feed "
            "among its tokens, and an href. A pair: two parsed feeds a page advertises with the same channel "
            "link (query and fragment dropped) and title.",
        ),
        Table(
            "breadth_feeds_per_page",
            "Feed links per page",
            (
                Column("feeds_per_page", "distinct feeds"),
                Column("pages", "pages", "int"),
                Column("pct_pages", "% of pages with feed links", "pct"),
            ),
            tuple(per_page),
            chart=Chart("feeds_per_page", "pct_pages"),
        ),
        Table(
            "breadth_format_pairs",
            "Channels offered in two formats on one page",
            (Column("formats", "formats"), Column("groups", "groups", "int"), Column("pages", "pages", "int")),
            tuple(pairs),
        ),
        Table(
            "breadth_autodiscovery_platforms",
            "Autodiscovery by HTML platform",
            (
                Column("platform", "platform"),
                Column("pages", "HTML pages", "int"),
                Column("with_links", "with feed links", "int"),
                Column("pct_with_links", "%", "pct"),
            ),
            tuple(by_platform),
            notes=_missing(("pages", "platforms")),
            chart=Chart("platform", "pct_with_links"),
        ),
    ]


def platforms(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """The fingerprint table: platforms by feeds (generator, headers) and pages (markers), with quality."""
    rows = _rows(
        con,
        f"""WITH fp AS (
                SELECT b.url, unnest(CASE WHEN len(coalesce(b.platforms, [])) = 0 THEN ['unknown']
                                         ELSE b.platforms END) AS platform,
                       q.score, b.errors, b.warnings
                FROM bf b JOIN bq q USING (url) WHERE b.strict),
            pp AS (SELECT platform, count(*) AS pages FROM (SELECT unnest(platforms) AS platform FROM bp) GROUP BY ALL)
            SELECT platform, count(*) AS feeds, round(avg(score), 3) AS mean_quality,
                   count(*) FILTER (WHERE score > {QUALITY_THRESHOLD}) AS quality_feeds,
                   round(avg(errors), 2) AS mean_errors, count(*) FILTER (WHERE coalesce(errors, 0) = 0) AS clean,
                   coalesce(any_value(pp.pages), 0) AS pages
            FROM fp LEFT JOIN pp USING (platform) GROUP BY platform ORDER BY feeds DESC, platform""",
    )
    valid = _row(con, "SELECT count(*) AS n FROM bf WHERE strict")["n"]
    for r in rows:
        r["pct_feeds"] = pct(r["feeds"], valid)
        r["pct_clean"] = pct(r["clean"], r["feeds"])
    usage = _rows(
        con,
        """WITH fp AS (SELECT url, unnest(CASE WHEN len(coalesce(platforms, [])) = 0 THEN ['unknown']
                                              ELSE platforms END) AS platform FROM bf WHERE strict),
                n AS (SELECT platform, count(*) AS feeds FROM fp GROUP BY ALL)
           SELECT fp.platform, u.element, count(DISTINCT fp.url) AS feeds, any_value(n.feeds) AS of_feeds
           FROM fp JOIN element_usage u ON u.feed_url = fp.url JOIN n USING (platform)
           WHERE u.scope IN ('channel', 'item') AND NOT contains(u.element, '@')
           GROUP BY ALL ORDER BY fp.platform, feeds DESC, u.element""",
    )
    for u in usage:
        u["pct_feeds"] = pct(u["feeds"], u["of_feeds"])
    return [
        Table(
            "breadth_platforms",
            "Platforms (fingerprints) and how their feeds fare",
            (
                Column("platform", "platform"),
                Column("feeds", "parsed feeds", "int"),
                Column("pct_feeds", "% of parsed feeds", "pct"),
                Column("pages", "pages", "int"),
                Column("mean_quality", "mean quality score"),
                Column("quality_feeds", f"feeds scoring > {QUALITY_THRESHOLD}", "int"),
                Column("mean_errors", "mean profile errors"),
                Column("pct_clean", "% failing no error rule", "pct"),
            ),
            tuple(rows),
            intro="A platform is named by the feed's generator, its HTTP headers (Server, X-Powered-By, ...) or "
            "the markers of the page that advertises it (meta generator, /wp-content/ ...); the fingerprint "
            "table is documented in docs/datasets.md (Platform fingerprints). Feeds without one are unknown.",
            notes=_missing(("feeds", "platforms"), ("pages", "platforms")),
            chart=Chart("platform", "pct_feeds"),
        ),
        Table(
            "breadth_platform_elements",
            "Element usage by platform",
            (
                Column("platform", "platform"),
                Column("element", "element"),
                Column("feeds", "feeds", "int"),
                Column("pct_feeds", "% of the platform's feeds", "pct"),
            ),
            tuple(usage),
        ),
    ]


def languages(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Language tagging: its sources, feeds with none, several, mismatches; and the values."""
    con.execute(
        """CREATE TEMP TABLE blang AS
           SELECT b.url, lower(b.language) AS feed_lang, lower(trim(split_part(b.content_language, ',', 1))) AS http,
                  list_distinct(list_transform(coalesce(b.entry_languages, []), lambda x: lower(x))) AS entry,
                  coalesce(b.hreflangs, []) AS hreflangs, b.item_count,
                  EXISTS (SELECT 1 FROM element_usage u WHERE u.feed_url = b.url AND u.element = 'language') AS el_lang,
                  EXISTS (SELECT 1 FROM element_usage u WHERE u.feed_url = b.url AND u.element = 'dc:language')
                      AS el_dc,
                  EXISTS (SELECT 1 FROM element_usage u WHERE u.feed_url = b.url AND ends_with(u.element, '@xml:lang'))
                      AS el_xml,
                  (SELECT any_value(lower(p.html_lang)) FROM bk k JOIN bp p USING (page_url) WHERE k.href = b.url)
                      AS html_lang
           FROM bf b WHERE b.strict"""
    )
    r = _row(
        con,
        """SELECT count(*) AS n,
              count(*) FILTER (WHERE el_lang) AS el_lang, count(*) FILTER (WHERE el_dc) AS el_dc,
              count(*) FILTER (WHERE el_xml OR (feed_lang IS NOT NULL AND NOT el_lang AND NOT el_dc)) AS el_xml, count(*) FILTER (WHERE feed_lang IS NOT NULL) AS feed,
              count(*) FILTER (WHERE len(entry) > 0) AS entry, count(*) FILTER (WHERE http <> '') AS http,
              count(*) FILTER (WHERE html_lang IS NOT NULL) AS html, count(*) FILTER (WHERE len(hreflangs) > 0) AS hl,
              count(*) FILTER (WHERE http <> '' AND feed_lang IS NOT NULL) AS http_feed,
              count(*) FILTER (WHERE http <> '' AND feed_lang IS NOT NULL AND http <> feed_lang) AS mismatch,
              count(*) FILTER (WHERE html_lang IS NOT NULL AND feed_lang IS NOT NULL
                               AND split_part(html_lang, '-', 1) <> split_part(feed_lang, '-', 1)) AS html_mismatch,
              count(*) FILTER (WHERE feed_lang IS NULL AND coalesce(http, '') = '' AND len(entry) = 0
                               AND len(hreflangs) = 0) AS none,
              count(*) FILTER (WHERE len(list_distinct(list_filter(
                  entry || CASE WHEN item_count > 0 THEN [feed_lang, nullif(http, '')] ELSE [] END,
                  lambda x: x IS NOT NULL))) > 1) AS several
           FROM blang""",
    )
    n = r["n"]
    items = [
        ("lang_channel_element", "channel <language>", r["el_lang"], n, "parsed feeds"),
        ("lang_dc_language", "dc:language", r["el_dc"], n, "parsed feeds"),
        ("lang_xml_lang", "xml:lang (root, channel or items)", r["el_xml"], n, "parsed feeds"),
        ("lang_feed", "a channel language (language, dc:language or xml:lang)", r["feed"], n, "parsed feeds"),
        ("lang_entry", "item languages (xml:lang, dc:language on items)", r["entry"], n, "parsed feeds"),
        ("lang_http", "HTTP Content-Language", r["http"], n, "parsed feeds"),
        ("lang_http_and_feed", "both HTTP and channel language", r["http_feed"], n, "parsed feeds"),
        ("lang_html", "HTML lang of an advertising page", r["html"], n, "parsed feeds"),
        ("lang_hreflang", "hreflang on a link", r["hl"], n, "parsed feeds"),
        ("lang_none", "no language at all", r["none"], n, "parsed feeds"),
        ("lang_several", "several languages (items, channel, HTTP)", r["several"], n, "parsed feeds"),
        ("lang_mismatch_http", "HTTP and channel language differ", r["mismatch"], n, "parsed feeds"),
        ("lang_mismatch_html", "page and channel primary language differ", r["html_mismatch"], n, "parsed feeds"),
    ]
    values = _rows(
        con,
        """SELECT lang AS language, count(DISTINCT url) AS feeds FROM (
               SELECT url, unnest(CASE WHEN len(ls) = 0 THEN ['unknown'] ELSE ls END) AS lang FROM (
                   SELECT url, list_distinct(list_filter(entry || [feed_lang, nullif(http, '')], lambda x: x IS NOT NULL))
                       AS ls FROM blang))
           GROUP BY ALL ORDER BY feeds DESC, language""",
    )
    for v in values:
        v["pct_feeds"] = pct(v["feeds"], n)
    return [
        _measures(
            "breadth_languages",
            "Languages: where feeds say theirs",
            items,
            "Of the parsed feeds: each source of a language tag, feeds with none, with several, and with "
            "sources that disagree.",
            _missing(
                ("feeds", "entry_languages"),
                ("feeds", "hreflangs"),
                ("fetch_log", "content_language"),
                ("pages", "html_lang"),
            ),
        ),
        Table(
            "breadth_language_values",
            "Languages named",
            (
                Column("language", "language (lower-cased)"),
                Column("feeds", "feeds", "int"),
                Column("pct_feeds", "% of parsed feeds", "pct"),
            ),
            tuple(values),
            intro="Every language a feed names (channel, items, HTTP); unknown when none.",
            chart=Chart("language", "pct_feeds"),
        ),
    ]


def freshness(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Age of the newest item at fetch time, items per week, cadence buckets, future-dated and undated items."""
    r = _row(
        con,
        """SELECT count(*) AS n, count(*) FILTER (WHERE item_count > 0) AS with_items,
              count(*) FILTER (WHERE newest IS NOT NULL) AS dated, count(*) FILTER (WHERE feed_date IS NOT NULL) AS fd,
              count(*) FILTER (WHERE future > 0) AS future_feeds, sum(future)::BIGINT AS future_items,
              count(*) FILTER (WHERE undated > 0) AS undated_feeds, sum(undated)::BIGINT AS undated_items,
              sum(item_count)::BIGINT AS items,
              median(CASE WHEN dated > 1 AND newest > oldest
                          THEN (dated - 1) * 7 * 86400.0 / (epoch(newest) - epoch(oldest)) END) AS per_week
           FROM bs2 WHERE strict""",
    )
    n, items_total = r["n"], r["items"] or 0
    measures = [
        ("feeds_with_items", "feeds with items", r["with_items"], n, "parsed feeds"),
        ("feeds_with_item_dates", "feeds with a dated item", r["dated"], r["with_items"], "feeds with items"),
        ("feeds_with_feed_date", "feeds with a feed-level date", r["fd"], n, "parsed feeds"),
        ("feeds_future_items", "feeds with future-dated items", r["future_feeds"], n, "parsed feeds"),
        ("items_future", "future-dated items", r["future_items"], items_total, "items"),
        ("feeds_undated_items", "feeds with undated items", r["undated_feeds"], n, "parsed feeds"),
        ("items_undated", "undated items", r["undated_items"], items_total, "items"),
        (
            "items_per_week_median",
            "items per week (median over feeds)",
            round(r["per_week"], 2) if r["per_week"] is not None else None,
            None,
            "",
        ),
    ]
    ages = _rows(con, "SELECT age FROM bs2 WHERE strict AND newest IS NOT NULL")
    age_rows = []
    for days, label in AGE_BREAKS:
        k = sum(1 for a in ages if int(a["age"]) <= days)
        age_rows.append({"age": label, "days": days, "feeds": k, "pct_feeds": pct(k, len(ages))})
    age_rows.append({"age": "all", "days": None, "feeds": len(ages), "pct_feeds": pct(len(ages), len(ages))})
    cadence = _rows(
        con,
        """SELECT (epoch(newest) - epoch(oldest)) / 86400.0 / (item_count - 1) AS interval FROM bs2
           WHERE strict AND item_count >= 2 AND newest > oldest""",
    )
    buckets: list[dict[str, Any]] = []
    lower = 0.0
    for limit, label in CADENCE_BUCKETS:
        k = sum(1 for c in cadence if lower <= c["interval"] < limit)
        buckets.append({"bucket": label, "feeds": k})
        lower = limit
    buckets.append(
        {"bucket": f"slower (>= {lower:g} days)", "feeds": sum(1 for c in cadence if c["interval"] >= lower)}
    )
    buckets.append({"bucket": "no interval (fewer than 2 dated items)", "feeds": n - len(cadence)})
    for b in buckets:
        b["pct_feeds"] = pct(b["feeds"], n)
    measures.append(("feeds_with_cadence", "feeds with an inferred interval", len(cadence), n, "parsed feeds"))
    return [
        _measures(
            "breadth_freshness",
            "Freshness: dates, future-dated and undated items",
            measures,
            f"An item dated more than {FUTURE_TOLERANCE_DAYS} day after the fetch is future-dated: kept apart "
            "from undated items and never the newest. Items per week: dated items less one, over the span "
            "between the oldest and the newest.",
            _missing(("feeds", "feed_date")),
        ),
        Table(
            "breadth_newest_age",
            "Age of the newest item at fetch time (cumulative)",
            (
                Column("age", "at most"),
                Column("feeds", "feeds", "int"),
                Column("pct_feeds", "% of feeds with a dated item", "pct"),
            ),
            tuple(age_rows),
            chart=Chart("age", "pct_feeds"),
        ),
        Table(
            "breadth_cadence",
            "Inferred update interval",
            (
                Column("bucket", "interval"),
                Column("feeds", "feeds", "int"),
                Column("pct_feeds", "% of parsed feeds", "pct"),
            ),
            tuple(buckets),
            intro="(newest - oldest item date) / (items - 1), the peer's definition (every item in the divisor).",
            chart=Chart("bucket", "pct_feeds"),
        ),
    ]


def content(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Content profiles, lengths, HTML in titles, enclosures by type."""
    r = _row(
        con,
        """SELECT count(*) AS n, count(*) FILTER (WHERE with_content > 0) AS full_content,
              count(*) FILTER (WHERE with_content = 0 AND with_description > 0) AS summary,
              count(*) FILTER (WHERE with_content = 0 AND with_description = 0 AND item_count > 0) AS title_only,
              count(*) FILTER (WHERE markup_titles > 0) AS markup_feeds,
              count(*) FILTER (WHERE profile = 'html') AS html, count(*) FILTER (WHERE profile = 'xhtml') AS xhtml,
              count(*) FILTER (WHERE profile = 'plain') AS plain, count(*) FILTER (WHERE profile = 'mixed') AS mixed,
              count(*) FILTER (WHERE profile IS NULL) AS no_profile
           FROM bs2 WHERE strict""",
    )
    lengths = _row(
        con,
        """SELECT median(description_length) AS d, median(content_length) AS c, count(*) AS items,
                  count(*) FILTER (WHERE title_has_markup) AS markup
           FROM bi JOIN bf b ON b.url = bi.feed_url WHERE b.strict""",
    )
    n = r["n"]
    items = [
        ("content_full", "full content (content:encoded or atom:content)", r["full_content"], n, "parsed feeds"),
        ("content_summary", "summary only (description or atom:summary)", r["summary"], n, "parsed feeds"),
        ("content_title_only", "title only (items without either)", r["title_only"], n, "parsed feeds"),
        ("profile_html", "content kind html", r["html"], n, "parsed feeds"),
        ("profile_xhtml", "content kind xhtml", r["xhtml"], n, "parsed feeds"),
        ("profile_plain", "content kind plain", r["plain"], n, "parsed feeds"),
        ("profile_mixed", "content kinds mixed", r["mixed"], n, "parsed feeds"),
        ("profile_unknown", "no content kind", r["no_profile"], n, "parsed feeds"),
        ("feeds_markup_titles", "feeds with HTML inside titles", r["markup_feeds"], n, "parsed feeds"),
        ("items_markup_titles", "items with HTML inside the title", lengths["markup"], lengths["items"], "items"),
        ("description_length_median", "description length, median (characters)", lengths["d"], None, ""),
        ("content_length_median", "content:encoded / content length, median", lengths["c"], None, ""),
    ]
    enclosures = _rows(
        con,
        """SELECT coalesce(split_part(lower(enclosure_type), '/', 1), '(none)') AS kind,
                  coalesce(lower(split_part(enclosure_type, ';', 1)), '(none)') AS type,
                  count(*) AS items, count(DISTINCT feed_url) AS feeds
           FROM bi WHERE enclosure_type IS NOT NULL GROUP BY ALL ORDER BY items DESC, type""",
    )
    media = _rows(
        con,
        """SELECT element, count(DISTINCT feed_url) AS feeds, sum(coalesce(items_with, 0))::BIGINT AS items
           FROM element_usage WHERE scope = 'item' AND (starts_with(element, 'media:') OR element = 'enclosure')
             AND NOT contains(element, '@') GROUP BY ALL ORDER BY feeds DESC, element""",
    )
    for e in enclosures:
        e["pct_feeds"] = pct(e["feeds"], n)
    for m in media:
        m["pct_feeds"] = pct(m["feeds"], n)
    return [
        _measures(
            "breadth_content",
            "Content profiles",
            items,
            "Per feed: full content when any item has content:encoded or atom:content; summary only when "
            "none has, but some has a description or summary; title only otherwise.",
            _missing(
                ("items", "content_length"),
                ("items", "description_length"),
                ("items", "content_kind"),
                ("items", "title_has_markup"),
            ),
        ),
        Table(
            "breadth_enclosures",
            "Enclosures by media type",
            (
                Column("kind", "kind"),
                Column("type", "media type"),
                Column("items", "items", "int"),
                Column("feeds", "feeds", "int"),
                Column("pct_feeds", "% of parsed feeds", "pct"),
            ),
            tuple(enclosures),
            chart=Chart("type", "pct_feeds"),
        ),
        Table(
            "breadth_media",
            "Media RSS and enclosure elements in items",
            (
                Column("element", "element"),
                Column("feeds", "feeds", "int"),
                Column("items", "items", "int"),
                Column("pct_feeds", "% of parsed feeds", "pct"),
            ),
            tuple(media),
            chart=Chart("element", "pct_feeds"),
        ),
    ]


def _rel_counts(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Feeds with self, hub, paging and archive links: link_rels when the schema has it, else element_usage."""
    if has_column("feeds", "link_rels"):
        source = "SELECT url, unnest(coalesce(link_rels, [])) AS rel FROM bf WHERE strict"
    else:
        source = """SELECT feed_url AS url, lower(split_part(element, '@rel=', 2)) AS rel FROM element_usage
                    WHERE scope = 'channel' AND contains(element, '@rel=')
                      AND feed_url IN (SELECT url FROM bf WHERE strict)"""
    return _row(
        con,
        f"""WITH r AS ({source})
            SELECT count(DISTINCT url) FILTER (WHERE rel = 'self') AS self,
                   count(DISTINCT url) FILTER (WHERE rel = 'hub') AS hub,
                   count(DISTINCT url) FILTER (WHERE rel IN ('first', 'last', 'next', 'prev', 'previous')) AS paging,
                   count(DISTINCT url) FILTER (WHERE rel IN ('current', 'next-archive', 'prev-archive')) AS archive
            FROM r""",
    )


def hygiene(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Duplicates, default titles, self, paging, archive and hub links, and the quality score."""
    r = _row(
        con,
        f"""SELECT count(*) AS n, count(*) FILTER (WHERE dup_guids > 0) AS dup_guids,
              count(*) FILTER (WHERE dup_links > 0) AS dup_links, count(*) FILTER (WHERE rep_links > 0) AS rep_links,
              count(*) FILTER (WHERE rep_titles > 0) AS rep_titles,
              count(*) FILTER (WHERE default_titles > 0) AS default_titles,
              count(*) FILTER (WHERE self_url IS NOT NULL) AS self_url,
              count(*) FILTER (WHERE self_url_matches) AS self_matches,
              count(*) FILTER (WHERE hub_url IS NOT NULL) AS hub_url,
              (SELECT round(avg(score), 3) FROM bq JOIN bf USING (url) WHERE bf.strict) AS mean_quality,
              (SELECT count(*) FROM bq JOIN bf USING (url) WHERE bf.strict AND score > {QUALITY_THRESHOLD}) AS quality,
              (SELECT count(*) FROM bq WHERE active) AS active,
              (SELECT round(avg(score), 3) FROM bq WHERE active) AS active_mean,
              (SELECT count(*) FROM bq JOIN bf USING (url) WHERE bf.strict AND NOT active AND age IS NULL) AS undated,
              (SELECT count(*) FROM bq JOIN bf USING (url) WHERE bf.strict AND NOT active AND age IS NOT NULL)
                  AS stale
           FROM bs2 WHERE strict""",
    )
    rels = _rel_counts(con)
    n = r["n"]
    items = [
        ("feeds_dup_guids", "feeds with duplicate guids", r["dup_guids"], n, "parsed feeds"),
        ("feeds_dup_links", "feeds with duplicate item links (as written)", r["dup_links"], n, "parsed feeds"),
        (
            "feeds_repeated_links",
            "feeds with repeated item links (query, fragment dropped)",
            r["rep_links"],
            n,
            "parsed feeds",
        ),
        ("feeds_repeated_titles", "feeds with repeated item titles", r["rep_titles"], n, "parsed feeds"),
        ("feeds_default_titles", "feeds with default item titles", r["default_titles"], n, "parsed feeds"),
        ("feeds_self_link", "feeds with a self link", rels["self"], n, "parsed feeds"),
        (
            "feeds_self_link_matches",
            "self link matches the URL fetched",
            r["self_matches"],
            r["self_url"],
            "feeds with a self URL",
        ),
        ("feeds_hub", "feeds with a WebSub hub link", rels["hub"], n, "parsed feeds"),
        (
            "feeds_paging",
            "feeds with paging links (RFC 5005 first, last, next, prev)",
            rels["paging"],
            n,
            "parsed feeds",
        ),
        (
            "feeds_archive",
            "feeds with archive links (RFC 5005 current, prev-archive, next-archive)",
            rels["archive"],
            n,
            "parsed feeds",
        ),
        ("quality_mean", "mean quality score", r["mean_quality"], None, ""),
        ("quality_feeds", f"feeds scoring above {QUALITY_THRESHOLD}", r["quality"], n, "parsed feeds"),
        ("quality_active", f"active feeds (dated within {ACTIVE_DAYS} days)", r["active"], n, "parsed feeds"),
        ("quality_active_mean", "mean quality score of active feeds", r["active_mean"], None, ""),
        ("quality_inactive_undated", "inactive: no date", r["undated"], n, "parsed feeds"),
        ("quality_inactive_stale", f"inactive: older than {ACTIVE_DAYS} days", r["stale"], n, "parsed feeds"),
    ]
    hist = _rows(
        con,
        """SELECT least(floor(score * 10), 9)::INT AS bin, count(*) AS feeds
           FROM bq JOIN bf USING (url) WHERE bf.strict GROUP BY ALL ORDER BY bin""",
    )
    got = {h["bin"]: h["feeds"] for h in hist}
    bins = [
        {"score": f"{b / 10:.1f}-{(b + 1) / 10:.1f}", "feeds": got.get(b, 0), "pct_feeds": pct(got.get(b, 0), n)}
        for b in range(10)
    ]
    return [
        _measures(
            "breadth_hygiene",
            "Hygiene and the operational quality score",
            items,
            "Duplicates are within one feed. The quality score is the peer's, written down in "
            "docs/survey-breadth.md and crawler/report/breadth.py.",
            _missing(("feeds", "link_rels"), ("feeds", "hub_url")),
        ),
        Table(
            "breadth_quality",
            "Operational quality score",
            (
                Column("score", "score"),
                Column("feeds", "parsed feeds", "int"),
                Column("pct_feeds", "% of parsed feeds", "pct"),
            ),
            tuple(bins),
            chart=Chart("score", "pct_feeds"),
        ),
    ]


def _error_group_sql() -> str:
    cases = " ".join(f"WHEN regexp_matches(reason, '{pattern}') THEN '{label}'" for pattern, label in ERROR_GROUPS)
    return f"CASE {cases} ELSE 'other XML error' END"


def parse_errors(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Why feed URLs did not parse, grouped by what a user would fix."""
    rows = _rows(
        con,
        f"""WITH checked AS (
                SELECT url, any_value(outcome) AS outcome, any_value(status) AS status, any_value(error) AS error
                FROM bl WHERE outcome NOT IN ('page', 'opml', 'robots', 'duplicate', 'not_due')
                  AND coalesce(discovered_via, '') NOT IN ('opml-page', 'reflexive', 'include', 'robots')
                GROUP BY url),
            why AS (
                SELECT c.url,
                  CASE WHEN c.outcome = 'http_error' THEN 'HTTP error (fix the URL, or the server)'
                       WHEN c.outcome IN ('network_error', 'timeout', 'refused', 'too_large', 'redirect_loop',
                                          'robots_denied', 'invalid_url', 'unsupported_scheme')
                            THEN 'not reachable (' || c.outcome || ')'
                       WHEN b.url IS NULL OR NOT b.parsed THEN 'not a feed (the URL serves something else)'
                       ELSE 'malformed XML: ' END AS grp,
                  CASE WHEN c.outcome = 'http_error' THEN 'HTTP ' || coalesce(c.status::VARCHAR, '?')
                       WHEN b.url IS NULL OR NOT b.parsed THEN coalesce(b.parse_error, c.error, c.outcome)
                       ELSE trim(split_part(coalesce(b.parse_error, 'not well-formed'), ',', 1)) END AS reason
                FROM checked c LEFT JOIN bf b ON b.url = c.url
                WHERE c.outcome <> 'feed' OR b.url IS NULL OR NOT b.strict)
            SELECT CASE WHEN grp = 'malformed XML: ' THEN grp || {_error_group_sql()} ELSE grp END AS grp,
                   reason, count(*) AS feeds
            FROM why GROUP BY ALL ORDER BY feeds DESC, grp, reason""",
    )
    total = sum(r["feeds"] for r in rows)
    for r in rows:
        r["pct_errors"] = pct(r["feeds"], total)
    return [
        Table(
            "breadth_parse_errors",
            "Parse errors, grouped by what to fix",
            (
                Column("grp", "what to fix"),
                Column("reason", "reason"),
                Column("feeds", "feed URLs", "int"),
                Column("pct_errors", "% of failures", "pct"),
            ),
            tuple(rows),
            intro=f"The {total} feed URLs checked that did not give a well-formed feed; an XML error is named "
            "by its message up to the first comma (the position dropped).",
            chart=Chart("reason", "pct_errors"),
        )
    ]


SECTIONS = (run_summary, autodiscovery, platforms, languages, freshness, content, hygiene, parse_errors)


def breadth_tables(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """Every breadth table of one job, in section order (``con`` has the survey's views)."""
    prepare(con)
    return [t for section in SECTIONS for t in section(con)]


# --- reading back, and the peer ------------------------------------------------------------------


def read_measures(report_dir: Path) -> dict[str, Any]:
    """Every measure of the breadth tables a survey wrote as CSV, by key (numbers as int or float)."""
    found: dict[str, Any] = {f"table:{path.stem}": path.stem for path in sorted(report_dir.glob("*.csv"))}
    for path in sorted(report_dir.glob("breadth_*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                if "key" in row:
                    found[row["key"]] = _number(row["value"])
    return found


def _number(text: str) -> Any:
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def peer_value(figures: dict[str, Any], key: str) -> Any:
    """A figure of the peer's ``build_report_stats`` by dotted key; a table figure by its name."""
    value: Any = figures
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, list | dict):
        return f"table:{key}"
    return value


_REL_FEED = (
    "the peer also counts the target of a link with rel=feed alone, which neither autodiscovery spec accepts: "
    "our links table has no row for it (pages.rel_feed marks its page)"
)
_LENGTHS = "needs items.content_length and items.description_length (shown empty before they are written)"
_ENTRY_LANG = "the peer reads xml:lang on any element inside an item; ours feeds.entry_languages"
_QUALITY = (
    "the score's inputs differ where noted: content kind per item (the peer: per element), item links only "
    "(the peer: every Atom link of an entry), and the inputs a dataset without items.content_length, "
    "content_kind or feeds.feed_date lacks"
)
#: Every figure of the peer's report and the measure of ours that answers it (docs/survey-breadth.md).
PEER_FIGURES: tuple[PeerFigure, ...] = (
    PeerFigure("responses_processed", "responses_processed", agree=True),
    PeerFigure("pages_seen", "html_pages", agree=True),
    PeerFigure("html_responses", "html_responses", "", agree=True),
    PeerFigure("sites_seen", "sites_seen", agree=True),
    PeerFigure("feed_results_count", "feed_urls_checked", agree=True),
    PeerFigure("parsed_feeds", "feeds_parsed_strict", agree=True),
    PeerFigure("unparsed_feeds", "feeds_unparsed_strict", agree=True),
    PeerFigure("parse_success_pct", "table:breadth_run", "a percentage of feeds_parsed_strict in breadth_run"),
    PeerFigure("unparsed_pct", "table:breadth_run", "a percentage of feeds_unparsed_strict in breadth_run"),
    PeerFigure("rss_count", "feeds_rss_family", agree=True),
    PeerFigure("atom_count", "feeds_atom", agree=True),
    PeerFigure("formats", "table:breadth_run", "formats and versions: the survey's formats table"),
    PeerFigure("sites_with_feeds_found", "sites_with_feeds", agree=True),
    PeerFigure("total_entries", "items_total", "the peer does not count Atom entries of an un-namespaced feed"),
    PeerFigure("feeds_with_autodiscovery", "feeds_advertised", _REL_FEED, agree=True),
    PeerFigure("feeds_without_autodiscovery", "feeds_not_advertised", _REL_FEED, agree=True),
    PeerFigure("pages_with_autodiscovery", "pages_with_feed_links", agree=True),
    PeerFigure("sites_with_autodiscovery", "sites_with_feed_links", agree=True),
    PeerFigure("discovery_rel_alternate", "pages_rel_alternate", agree=True),
    PeerFigure("discovery_rel_feed", "pages_rel_feed", agree=True),
    PeerFigure("discovery_rel_both_page", "pages_rel_both", agree=True),
    PeerFigure("discovery_multi_rel_url", "multi_rel_links", "a runtime counter the peer never increments"),
    PeerFigure("discovery_link_rel_both", "multi_rel_links", agree=True),
    PeerFigure("discovery_link_rel_both_page", "pages_multi_rel", agree=True),
    PeerFigure("discovery_link_rel_both_page_known", "pages_multi_rel", "a flag (whether the count is known)"),
    PeerFigure("discovery_pages_with_duplicates", "pages_format_pairs", agree=True),
    PeerFigure("discovery_multi_feed_pages", "pages_multi_feed", agree=True),
    PeerFigure("discovery_duplicate_format_pairs", "table:breadth_format_pairs"),
    PeerFigure("discovery_per_page_hist", "table:breadth_feeds_per_page"),
    PeerFigure("html_fingerprints", "table:breadth_autodiscovery_platforms"),
    PeerFigure("fingerprint_prevalence", "table:breadth_platforms"),
    PeerFigure("source_fingerprint_quality", "table:breadth_platforms"),
    PeerFigure("extension_prevalence", "table:namespaces", "the survey's namespaces and element tables"),
    PeerFigure("feed_link_signals", "table:breadth_hygiene"),
    PeerFigure("feeds_with_content", "content_full", _LENGTHS, agree=True),
    PeerFigure("feeds_with_summary", "content_summary", _LENGTHS, agree=True),
    PeerFigure("feeds_with_neither", "content_title_only", _LENGTHS + "; ours counts only feeds with items"),
    PeerFigure("content_profile_dist", "table:breadth_content"),
    PeerFigure("content_profile_prevalence", "table:breadth_content"),
    PeerFigure("feeds_with_entries", "feeds_with_items", agree=True),
    PeerFigure(
        "feeds_with_entry_dates",
        "feeds_with_item_dates",
        "the peer reads dates dateutil can parse, ours the RFC 822 / ISO 8601 reader's",
        agree=True,
    ),
    PeerFigure(
        "feeds_with_updated_date",
        "feeds_with_feed_date",
        "the peer prefers lastBuildDate/updated; a feed with only an unparseable one differs",
        agree=True,
    ),
    PeerFigure(
        "feeds_with_repeated_entry_titles",
        "feeds_repeated_titles",
        "titles as each parser reads them: the peer takes the element's text, ours the item title as "
        "text (entities and markup decoded)",
        agree=True,
    ),
    PeerFigure("feeds_with_default_entry_titles", "feeds_default_titles", agree=True),
    PeerFigure(
        "feeds_with_repeated_entry_links",
        "feeds_repeated_links",
        "the peer groups every Atom link of an entry (replies, enclosures), ours the item's link",
        agree=True,
    ),
    PeerFigure("languages", "table:breadth_language_values"),
    PeerFigure("language_prevalence", "table:breadth_language_values"),
    PeerFigure("lang_src_http", "lang_http", "the peer reads Content-Language case-sensitively", agree=True),
    PeerFigure("lang_src_feed", "lang_feed", agree=True),
    PeerFigure("lang_src_entry", "lang_entry", "the peer reads xml:lang on any element inside an item", agree=True),
    PeerFigure("lang_http_feed", "lang_http_and_feed", agree=True),
    PeerFigure("lang_mismatches", "lang_mismatch_http", agree=True),
    PeerFigure("lang_hreflang", "lang_hreflang", agree=True),
    PeerFigure("lang_multiple_entry_languages", "lang_several", _ENTRY_LANG, agree=True),
    PeerFigure("lang_multiple_in_feed", "lang_several", "the peer also counts xml:lang values outside items"),
    PeerFigure("lang_no_info", "lang_none", _ENTRY_LANG, agree=True),
    PeerFigure("lang_count_hist", "table:breadth_language_values", "computed, not shown by the peer"),
    PeerFigure("update_cadence_cdf", "table:breadth_cadence", "buckets here, a CDF there (same interval)"),
    PeerFigure("update_cadence_cdf.no_cadence", "feeds_with_cadence", "ours counts feeds with one, it those without"),
    PeerFigure("feed_recency_cdf", "table:breadth_newest_age", "ours: the newest item's age (else the feed date)"),
    PeerFigure("entry_recency_cdf", "table:breadth_newest_age"),
    PeerFigure("n_zero_entry", "feeds_with_items", "ours counts feeds with items, it those without"),
    PeerFigure("quality_hist", "table:breadth_quality"),
    PeerFigure("quality_split_threshold", "table:breadth_quality", "a constant (0.5)"),
    PeerFigure("quality_split_count", "quality_feeds", _QUALITY, agree=True),
    PeerFigure("mean_quality", "quality_mean", _QUALITY, agree=True),
    PeerFigure("active_quality.n", "quality_active", agree=True),
    PeerFigure("active_quality.with_entries", "funnel_active_entries", agree=True),
    PeerFigure("active_quality.without_entries", "table:breadth_funnel", "quality_active less funnel_active_entries"),
    PeerFigure("active_quality.pct", "table:breadth_hygiene", "the share column of quality_active"),
    PeerFigure("inactive_quality.n", "table:breadth_hygiene", "quality_inactive_undated plus quality_inactive_stale"),
    PeerFigure("inactive_quality.cutoff_days", "table:breadth_hygiene", "a constant (365, ACTIVE_DAYS)"),
    PeerFigure("active_quality.mean", "quality_active_mean", _QUALITY, agree=True),
    PeerFigure("inactive_quality.undated", "quality_inactive_undated", agree=True),
    PeerFigure("inactive_quality.stale", "quality_inactive_stale", agree=True),
    PeerFigure("error_types", "table:breadth_parse_errors"),
    PeerFigure("total_errors", "feeds_unparsed_strict", agree=True),
    PeerFigure("error_column_rows", "table:breadth_parse_errors", "the same rows in two columns"),
    PeerFigure("content_types_collapsed", "table:breadth_run", "the survey's fetch_log content types"),
    PeerFigure("sniffed_format_counts", "table:breadth_run", "WARC mode only (0 for a list)"),
    PeerFigure("feeds_sniffed", "table:breadth_run", "WARC mode only (0 for a list)"),
)
#: Keys of the peer's figures dict that are settings or labels of its run, not figures.
PEER_NOT_FIGURES = frozenset(
    {
        "is_opml",
        "source_label",
        "max_crawl_time",
        "top_n",
        "tranco_include_subdomains",
        "tranco_list_label",
        "run_limit",
        "quality",
        "active_quality",
        "inactive_quality",
    }
)
