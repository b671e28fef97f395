"""The survey's coverage tables for a census over a web archive (``feedcensus commoncrawl``): the archive
against the live web, beside the peer survey's figures.

Both tables appear only when the job has rows of archive records (``fetch_log.discovered_via =
archive``). A site is ``fetch_log.site`` (the registrable domain of the row's URL). Definitions:

* **sites named**: sites with an archive row: a listed site (``--sites``) always has one, a page or
  feed record or its ``not_archived`` row; without a list, the sites of the records read;
* **with an archived page**: a page record of the site was read (``outcome = page``);
* **whose pages advertise feeds**: one of those pages has a feed link (a ``links`` row);
* **whose feed the archive captured**: a feed record of the site was read as a feed (``outcome =
  feed``): the peer's "had a feed Common Crawl captured";
* **whose feed was fetched live and parsed**: a feed link of one of its archived pages (or, with
  ``--guess``, a guess) was fetched live and parsed as a feed (a ``feeds`` row, ``discovered_via``
  ``archive-link`` or ``guess``, format not unknown), after redirects.

The peer (mnot's feed-survey, its report for CC-MAIN-2026-12) counts over the sites of the crawl,
which all have archived pages: compare its figures with the "% of sites with an archived page"
column. Pure DuckDB over the survey's views; no Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from crawler.report.model import Column, Table

if TYPE_CHECKING:
    import duckdb

__all__ = ["PEER", "coverage_tables"]

#: The peer's figures for CC-MAIN-2026-12 (% of sites), by measure key.
PEER: Final = {"advertising": 35.9, "archive_captured": 7.0}

_SITES = """
WITH arch AS (SELECT * FROM fetch_log WHERE discovered_via = 'archive' AND site IS NOT NULL),
pages AS (SELECT DISTINCT final_url AS page, site FROM arch WHERE outcome = 'page'),
live AS (
    SELECT DISTINCT p.site FROM feeds f JOIN pages p ON f.source = p.page
    WHERE f.discovered_via IN ('archive-link', 'guess') AND f.format <> 'unknown'
)
SELECT
    (SELECT count(DISTINCT site) FROM arch) AS named,
    (SELECT count(DISTINCT site) FROM pages) AS with_page,
    (SELECT count(DISTINCT p.site) FROM links l JOIN pages p ON l.page_url = p.page) AS advertising,
    (SELECT count(DISTINCT site) FROM arch WHERE outcome = 'feed') AS archive_captured,
    (SELECT count(*) FROM live) AS live_parsed
"""

#: The measures of the sites table, in order: key, what it counts.
_MEASURES: Final = (
    ("named", "sites named (in the list, or with a record read)"),
    ("with_page", "with an archived page"),
    ("advertising", "whose archived pages advertise a feed"),
    ("archive_captured", "whose feed the archive captured"),
    ("live_parsed", "whose advertised feed was fetched live and parsed"),
)

_FEEDS = """
WITH live AS (
    SELECT * FROM fetch_log WHERE discovered_via = 'archive-link' AND outcome NOT IN ('duplicate', 'robots')
),
archived AS (SELECT url, any_value(content_hash) AS hash, any_value(item_count) AS items
             FROM feeds WHERE discovered_via = 'archive' GROUP BY url),
parsed AS (SELECT url, any_value(content_hash) AS hash, any_value(item_count) AS items, any_value(final_url) AS final
           FROM feeds WHERE discovered_via = 'archive-link' AND format <> 'unknown' GROUP BY url)
SELECT
    (SELECT count(DISTINCT url) FROM live) AS fetched,
    (SELECT count(*) FROM parsed) AS parsed,
    (SELECT count(*) FROM parsed WHERE final <> url) AS moved,
    (SELECT count(DISTINCT url) FROM live WHERE status IN (404, 410)) AS gone,
    (SELECT count(DISTINCT url) FROM live WHERE outcome NOT IN ('feed', 'not_modified') AND coalesce(status, 0) NOT IN (404, 410)) AS failed,
    (SELECT count(*) FROM live l WHERE l.url IN (SELECT url FROM archived)) AS with_archived,
    (SELECT count(*) FROM parsed p JOIN archived a USING (url) WHERE p.hash IS DISTINCT FROM a.hash) AS changed,
    (SELECT coalesce(sum(greatest(p.items - a.items, 0)), 0) FROM parsed p JOIN archived a USING (url)) AS more_items
"""

_FEED_MEASURES: Final = (
    ("fetched", "advertised feeds fetched live (distinct URLs)"),
    ("parsed", "parsed as a feed"),
    ("moved", "of those, moved since the archive (redirected)"),
    ("gone", "gone (404 or 410)"),
    ("failed", "other failures (errors, not a feed, refused...)"),
    ("with_archived", "with an archived copy beside the live fetch"),
    ("changed", "archived copy and live copy differ (content hash)"),
    ("more_items", "items more in the live copies than in the archived ones (summed)"),
)


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def coverage_tables(con: duckdb.DuckDBPyConnection) -> list[Table]:
    """The coverage tables of one job (none when it read no archive record); ``con`` has the survey's views."""
    [(archive_rows,)] = con.execute("SELECT count(*) FROM fetch_log WHERE discovered_via = 'archive'").fetchall()
    if not archive_rows:
        return []
    return [_sites_table(con), _feeds_table(con)]


def _one_row(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, int]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description or ()]
    row = cursor.fetchone() or ()
    return {name: int(value or 0) for name, value in zip(names, row, strict=False)}


def _sites_table(con: duckdb.DuckDBPyConnection) -> Table:
    counts = _one_row(con, _SITES)
    rows: list[dict[str, Any]] = [
        {
            "key": key,
            "measure": label,
            "sites": counts[key],
            "pct_named": _pct(counts[key], counts["named"]),
            "pct_archived": _pct(counts[key], counts["with_page"]) if key != "named" else None,
            "peer_pct": PEER.get(key),
        }
        for key, label in _MEASURES
    ]
    return Table(
        name="coverage_sites",
        title="Coverage: the sites, in the archive and on the live web",
        columns=(
            Column("measure", "sites"),
            Column("sites", "count", "int"),
            Column("pct_named", "% of sites named", "pct"),
            Column("pct_archived", "% of sites with an archived page", "pct"),
            Column("peer_pct", "peer (CC-MAIN-2026-12) %", "pct"),
            Column("key", "key"),
        ),
        rows=tuple(rows),
        intro="Which sites the archive shows with feeds, and which feeds the live web still serves "
        "(`feedcensus commoncrawl --sites --live`; docs/common-crawl.md defines each line).",
        notes=(
            "The peer's figures (mnot's feed-survey, CC-MAIN-2026-12: 35.9 % of sites advertise a feed, 7.0 % "
            "had a feed Common Crawl captured) count the sites of its crawl, which all have archived pages: "
            "compare them with the % of sites with an archived page.",
        ),
    )


def _feeds_table(con: duckdb.DuckDBPyConnection) -> Table:
    counts = _one_row(con, _FEEDS)
    rows = tuple({"key": key, "measure": label, "count": counts[key]} for key, label in _FEED_MEASURES)
    return Table(
        name="coverage_feeds",
        title="Coverage: advertised feeds, archived and live",
        columns=(Column("measure", "feeds"), Column("count", "count", "int"), Column("key", "key")),
        rows=rows,
        intro="The feeds the archived pages advertise, fetched live (`discovered_via` archive-link), against "
        "the archive's own copy where it holds one (`discovered_via` archive).",
    )
