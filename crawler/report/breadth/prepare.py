"""The per-feed and per-item working tables every breadth section reads (``bf``, ``bl``, ``bi``, ``bs``)."""

from __future__ import annotations

import duckdb

from crawler.report.breadth.common import (
    ACTIVE_DAYS,
    DEFAULT_TITLES,
    FEED_FORMATS,
    FUTURE_TOLERANCE_DAYS,
    HALF_LIFE_DAYS,
    _col,
    _host,
    has_column,
)
from crawler.report.query import archived_copy, same_copy
from schemas.tables import TABLES

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
                   (SELECT any_value(l.site) FROM bl l WHERE l.url = f.url) AS site,
                   {archived_copy("f")} AS archived
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
            FROM items i JOIN bf b ON {same_copy("i", "b")}"""
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
