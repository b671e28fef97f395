"""The breadth sections about the crawl and the web around the feeds: the run, autodiscovery, platforms, languages."""

from __future__ import annotations

import duckdb

from crawler.report.breadth.common import ACTIVE_DAYS, QUALITY_THRESHOLD, _measures, _missing, _row
from crawler.report.model import Chart, Column, Table
from crawler.report.query import pct
from crawler.report.query import rows as _rows


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
