"""The survey's tables about the crawl itself rather than the feeds' content: what autodiscovery found on
pages (links, kinds, why links were left out), how items were identified, reflexive autodiscovery, and the
Universal Subscription Mechanism. ``crawler/report/survey.py`` puts them into the survey."""

from __future__ import annotations

import duckdb

from crawler.report.model import Chart, Column, Table
from crawler.report.query import add_pct as _add_pct
from crawler.report.query import one as _one
from crawler.report.query import ordered as _ordered
from crawler.report.query import pct, same_copy
from crawler.report.query import rows as _rows
from schemas.vocab import FeedMediaType

#: Reflexive autodiscovery verdicts, in the order the report lists them.
REFLEXIVE = ("advertises", "does_not_advertise", "page_unreachable", "no_link")
NOT_CHECKED = "(not checked)"
#: How the report names the kind of feed each link media type advertises.
_LINK_KIND_NAMES: dict[FeedMediaType, str] = {
    FeedMediaType.RSS: "RSS",
    FeedMediaType.ATOM: "Atom",
    FeedMediaType.RDF: "RDF",
}
#: Link media types (lower-cased, parameters removed; schemas.vocab.FeedMediaType)
#: -> the kind of feed advertised.
LINK_KINDS: dict[str, str] = {media.value: _LINK_KIND_NAMES[media] for media in FeedMediaType}


def autodiscovery_tables(con: duckdb.DuckDBPyConnection) -> tuple[Table, Table, Table, int]:
    con.execute(
        """CREATE TEMP TABLE fetched_pages AS SELECT DISTINCT coalesce(final_url, url) AS page
           FROM fetch_log WHERE outcome = 'page'"""
    )
    con.execute(
        f"""CREATE TEMP TABLE lk AS SELECT *,
                lower(trim(split_part(coalesce(type, ''), ';', 1))) AS media_type,
                CASE lower(trim(split_part(coalesce(type, ''), ';', 1)))
                    {" ".join(f"WHEN '{t}' THEN '{k}'" for t, k in LINK_KINDS.items())}
                    ELSE 'other' END AS kind
            FROM links"""
    )
    pages = _one(con, "SELECT count(*) FROM fetched_pages")
    page_stats = _rows(
        con,
        """SELECT
             count(*) FILTER (WHERE EXISTS (SELECT 1 FROM lk WHERE lk.page_url = p.page AND lk.in_head)) AS head,
             count(*) FILTER (WHERE EXISTS (SELECT 1 FROM lk WHERE lk.page_url = p.page)
                              AND NOT EXISTS (SELECT 1 FROM lk WHERE lk.page_url = p.page AND lk.in_head)) AS body_only,
             count(*) FILTER (WHERE EXISTS (SELECT 1 FROM lk WHERE lk.page_url = p.page AND lk.in_head
                                            AND lk.kind = 'RSS')) AS rss,
             count(*) FILTER (WHERE EXISTS (SELECT 1 FROM lk WHERE lk.page_url = p.page AND lk.in_head
                                            AND lk.kind = 'Atom')) AS atom,
             count(*) FILTER (WHERE EXISTS (SELECT 1 FROM lk WHERE lk.page_url = p.page AND lk.in_head AND lk.kind = 'RSS')
                              AND EXISTS (SELECT 1 FROM lk WHERE lk.page_url = p.page AND lk.in_head
                                          AND lk.kind = 'Atom')) AS both
           FROM fetched_pages p""",
    )[0]
    link = _rows(
        con,
        """SELECT count(*) AS links, count(*) FILTER (WHERE in_head) AS head,
                  count(*) FILTER (WHERE followed) AS followed,
                  count(*) FILTER (WHERE conforms_rss) AS rss, count(*) FILTER (WHERE conforms_atom) AS atom,
                  count(*) FILTER (WHERE conforms_rss AND conforms_atom) AS both,
                  count(*) FILTER (WHERE NOT conforms_rss AND NOT conforms_atom) AS neither
           FROM lk""",
    )[0]
    nlinks = link["links"]
    summary = [
        ("pages fetched", pages, None, ""),
        ("pages advertising at least one feed (link in head)", page_stats["head"], pages, "pages"),
        ("pages advertising an RSS feed", page_stats["rss"], pages, "pages"),
        ("pages advertising an Atom feed", page_stats["atom"], pages, "pages"),
        ("pages advertising both RSS and Atom", page_stats["both"], pages, "pages"),
        ("pages with feed links only in the body", page_stats["body_only"], pages, "pages"),
        ("feed links found", nlinks, None, ""),
        ("links in the head", link["head"], nlinks, "links"),
        ("links followed by the crawl", link["followed"], nlinks, "links"),
        ("links conforming to RSS Autodiscovery (RSS Board)", link["rss"], nlinks, "links"),
        ("links conforming to Atom autodiscovery (draft)", link["atom"], nlinks, "links"),
        ("links conforming to both", link["both"], nlinks, "links"),
        ("links conforming to neither", link["neither"], nlinks, "links"),
    ]
    summary_rows = tuple({"measure": m, "count": c, "share": pct(c, whole), "of": of} for m, c, whole, of in summary)
    kinds = _rows(
        con,
        """SELECT kind, count(*) AS links, count(DISTINCT page_url) AS pages,
                  count(*) FILTER (WHERE conforms_rss) AS conforms_rss,
                  count(*) FILTER (WHERE conforms_atom) AS conforms_atom,
                  string_agg(DISTINCT media_type, ' ' ORDER BY media_type) AS media_types
           FROM lk GROUP BY kind ORDER BY links DESC, kind""",
    )
    for r in kinds:
        r["pct_links"] = pct(r["links"], nlinks)
        r["pct_conforms_rss"] = pct(r["conforms_rss"], r["links"])
        r["pct_conforms_atom"] = pct(r["conforms_atom"], r["links"])
    reasons = _rows(
        con,
        # atom-type-not-atom: on every RSS and RDF link of datasets written before 2026-11 (the Atom draft judges
        # Atom links only, crawler/fetch/discovery.py), left out so that old and new jobs read alike.
        """SELECT reason, count(*) AS links FROM (SELECT unnest(reasons) AS reason FROM lk)
           WHERE reason <> 'atom-type-not-atom'
           GROUP BY reason ORDER BY links DESC, reason""",
    )
    from crawler.fetch.discovery import REASON_SPECS, SPECS
    from crawler.fetch.discovery import RULES as LINK_RULES

    for r in reasons:
        r["pct_links"] = pct(r["links"], nlinks)
        r["spec"] = SPECS.get(REASON_SPECS.get(r["reason"], ""), "")
        r["meaning"] = LINK_RULES.get(r["reason"], "")
    t_summary = Table(
        "autodiscovery",
        "Autodiscovery adoption",
        (
            Column("measure", "measure"),
            Column("count", "count", "int"),
            Column("share", "%", "pct"),
            Column("of", "of"),
        ),
        summary_rows,
        intro="Pages the crawl fetched (fetch_log outcome page) and the feed links they carry (links table), judged "
        "against the RSS Board's RSS Autodiscovery and the Atom autodiscovery draft.",
        chart=Chart("measure", "share"),
    )
    t_kinds = Table(
        "autodiscovery_link_types",
        "Autodiscovery links by feed type",
        (
            Column("kind", "feed type"),
            Column("links", "links", "int"),
            Column("pct_links", "% of links", "pct"),
            Column("pages", "pages", "int"),
            Column("pct_conforms_rss", "% conforming to RSS Autodiscovery", "pct"),
            Column("pct_conforms_atom", "% conforming to the Atom draft", "pct"),
            Column("media_types", "type values (lower-cased)"),
        ),
        tuple(kinds),
        chart=Chart("kind", "pct_links"),
    )
    t_reasons = Table(
        "autodiscovery_reasons",
        "Autodiscovery links: why they fail a spec",
        (
            Column("reason", "reason"),
            Column("links", "links", "int"),
            Column("pct_links", "% of links", "pct"),
            Column("spec", "spec"),
            Column("meaning", "meaning"),
        ),
        tuple(reasons),
        chart=Chart("reason", "pct_links"),
    )
    return t_summary, t_kinds, t_reasons, pages


#: items.identity_source values, in the order the report lists them (schemas.vocab.IdentitySource).
IDENTITY_SOURCES = ("guid", "link", "hash")
NOT_RECORDED = "(not recorded)"


def identities_table(con: duckdb.DuckDBPyConnection, n: int) -> Table:
    """What item identity is taken from: how many feeds need the link or hash fallback."""
    rows = _rows(
        con,
        f"""SELECT coalesce(identity_source, '{NOT_RECORDED}') AS source,
                   count(DISTINCT feed_url) AS feeds, count(*) AS items
            FROM items i JOIN sel s ON {same_copy("i")} GROUP BY ALL""",
    )
    rows = _ordered(rows, "source", IDENTITY_SOURCES, NOT_RECORDED)
    total_items = sum(r["items"] for r in rows)
    _add_pct(rows, "feeds", "pct_feeds", n)
    _add_pct(rows, "items", "pct_items", total_items)
    fallback = _one(
        con,
        f"""SELECT count(DISTINCT feed_url) FROM items i JOIN sel s ON {same_copy("i")}
           WHERE identity_source IN ('link', 'hash')""",
    )
    return Table(
        "item_identity",
        "Item identity: what tells an item apart from one fetch to the next",
        (
            Column("source", "identity from"),
            Column("feeds", "feeds using it", "int"),
            Column("pct_feeds", "% of feeds", "pct"),
            Column("items", "items", "int"),
            Column("pct_items", "% of items", "pct"),
        ),
        tuple(rows),
        intro=f"An item is known by its guid, else its link, else a hash of its title, description and enclosure "
        f"URL. {fallback} of {n} feeds ({pct(fallback, n) or 0:.2f} %) need the link or hash fallback for at "
        "least one item.",
    )


def reflexive_table(con: duckdb.DuckDBPyConnection, total: int) -> Table:
    rows = _rows(
        con,
        f"""SELECT coalesce(reflexive, '{NOT_CHECKED}') AS verdict, count(*) AS feeds,
                   count(*) FILTER (WHERE format = 'rss') AS rss, count(*) FILTER (WHERE format = 'atom') AS atom,
                   count(*) FILTER (WHERE format = 'rdf') AS rdf
            FROM f GROUP BY ALL""",
    )
    rows = _ordered(rows, "verdict", REFLEXIVE, NOT_CHECKED)
    _add_pct(rows, "feeds", "pct_feeds", total)
    checked = sum(r["feeds"] for r in rows if r["verdict"] != NOT_CHECKED)
    for r in rows:
        r["pct_checked"] = pct(r["feeds"], checked) if r["verdict"] != NOT_CHECKED else None
    return Table(
        "reflexive",
        "Reflexive autodiscovery: does the feed's own site advertise it?",
        (
            Column("verdict", "verdict"),
            Column("feeds", "feeds", "int"),
            Column("pct_feeds", "% of feeds", "pct"),
            Column("pct_checked", "% of checked feeds", "pct"),
            Column("rss", "rss", "int"),
            Column("atom", "atom", "int"),
            Column("rdf", "rdf", "int"),
        ),
        tuple(rows),
        intro=f"All {total} feeds of the job: the verdict of fetching the channel link and looking for an "
        "autodiscovery link back to the feed.",
        chart=Chart("verdict", "pct_feeds"),
    )


def usm_table(con: duckdb.DuckDBPyConnection) -> Table:
    rows = _rows(
        con,
        """SELECT CASE WHEN grouping(format) = 1 THEN '(all)' ELSE format END AS format, count(*) AS feeds,
                  count(*) FILTER (WHERE content_type_ok) AS content_type_ok,
                  count(*) FILTER (WHERE self_url IS NOT NULL) AS self_url,
                  count(*) FILTER (WHERE self_url_matches) AS self_url_matches
           FROM f GROUP BY GROUPING SETS ((format), ())
           ORDER BY grouping(format), feeds DESC, format""",
    )
    for r in rows:
        r["pct_content_type_ok"] = pct(r["content_type_ok"], r["feeds"])
        r["pct_self_url"] = pct(r["self_url"], r["feeds"])
        r["pct_self_url_matches"] = pct(r["self_url_matches"], r["self_url"])
    return Table(
        "usm_self_links",
        "Universal Subscription Mechanism: Content-Type and self links",
        (
            Column("format", "format"),
            Column("feeds", "feeds", "int"),
            Column("pct_content_type_ok", "% served with a feed media type", "pct"),
            Column("pct_self_url", "% with a self link", "pct"),
            Column("pct_self_url_matches", "% of self links matching the URL fetched", "pct"),
            Column("content_type_ok", "feed media type", "int"),
            Column("self_url", "self link", "int"),
            Column("self_url_matches", "self link matches", "int"),
        ),
        tuple(rows),
        intro="Feed media types are application/rss+xml, application/atom+xml and application/rdf+xml; the self "
        "link is atom:link rel=self (Atom 0.3: rel=start).",
        chart=Chart("format", "pct_content_type_ok"),
    )
