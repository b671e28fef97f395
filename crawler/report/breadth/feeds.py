"""The breadth sections about the feeds themselves: freshness, content, hygiene, parse errors."""

from __future__ import annotations

from typing import Any

import duckdb

from crawler.report.breadth.common import (
    ACTIVE_DAYS,
    AGE_BREAKS,
    CADENCE_BUCKETS,
    ERROR_GROUPS,
    FUTURE_TOLERANCE_DAYS,
    QUALITY_THRESHOLD,
    _measures,
    _missing,
    _row,
    has_column,
)
from crawler.report.model import Chart, Column, Table
from crawler.report.query import pct, same_copy
from crawler.report.query import rows as _rows


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
        f"""SELECT element, count(DISTINCT feed_url) AS feeds, sum(coalesce(items_with, 0))::BIGINT AS items
           FROM element_usage u JOIN bf b ON {same_copy("u", "b")}
           WHERE scope = 'item' AND (starts_with(element, 'media:') OR element = 'enclosure')
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
            "docs/survey-breadth.md and crawler/report/breadth/__init__.py.",
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
