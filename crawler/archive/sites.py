"""A census of a list of sites (``feedcensus commoncrawl --sites``): which archive records to read for each.

Survey users choose sites from a ranked list of registrable domains (the Tranco top list: lines
``rank,domain``, no header). :func:`read_sites` reads such a list, and :func:`select_sites` joins it
with a web archive's columnar index on ``url_host_registered_domain`` and picks, per listed site:

* its **pages**: the home page record first (a URL whose path is ``/`` with no query; the
  shortest such URL when there are several, e.g. ``http`` and ``https``; where the index has no
  home page of the site, its first other page in the order below stands in), then up to ``pages``
  more HTML records, a sample fixed by the data (shortest URL first, then the smallest DuckDB
  ``hash()`` of the URL);
* its **feeds**: up to :data:`FEEDS_PER_SITE` feed records (shortest URL first: a site's main
  feed tends to have the shortest URL; then by hash).

Where the index has ``fetch_status``, only records of a 200 are taken: a redirect or an error page
holds no document worth a Range request. ``where`` (DuckDB SQL on the index's columns) still
filters. A listed site with no page record left is returned in :attr:`SiteSelection.missing`, so
the census records it (a row, not silence). Pure: paths in, plain rows out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from crawler.archive.ccindex import (
    FEED_TYPES,
    MIME_COLUMNS,
    PAGE_TYPES,
    REQUIRED,
    USABLE,
    IndexRow,
    IndexRowsError,
    is_mime,
    open_index,
)

#: The index column a listed domain is matched against (Common Crawl's, by the Public Suffix List).
SITE_COLUMN: Final = "url_host_registered_domain"
#: Feed records read per listed site at most.
FEEDS_PER_SITE: Final = 10


@dataclass(frozen=True, slots=True)
class ListedSite:
    rank: int
    domain: str


@dataclass(frozen=True, slots=True)
class SiteSelection:
    """The records chosen for the listed sites, and the sites the index holds no page of."""

    #: Per site in rank order: its home page, its other pages, then its feeds.
    rows: list[IndexRow]
    #: Listed sites with no page record (after ``where`` and ``fetch_status``), in rank order.
    missing: list[ListedSite]
    #: How many distinct sites the list names.
    listed: int


def domain_of(text: str) -> str:
    """A listed domain as it is matched: stripped, without a trailing dot, lower-cased."""
    return text.strip().strip(".").lower()


def read_sites(path: str, limit: int | None = None) -> tuple[list[ListedSite], int]:
    """The sites of a ``rank,domain`` list in rank order (the first of a repeated domain kept), and how
    many non-blank lines were not ``rank,domain`` (a header...); ``limit``: only the first that many
    sites. OSError when the file cannot be read."""
    sites: dict[str, ListedSite] = {}
    skipped = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            rank_text, comma, domain_text = line.partition(",")
            domain = domain_of(domain_text)
            if not comma or not rank_text.strip().isdigit() or not domain or "," in domain or " " in domain:
                skipped += bool(line.strip())
                continue
            sites.setdefault(domain, ListedSite(int(rank_text), domain))
    ordered = sorted(sites.values(), key=lambda s: (s.rank, s.domain))
    return (ordered[:limit] if limit is not None else ordered), skipped


def select_sites(source: str, sites: list[ListedSite], *, pages: int = 0, where: str | None = None) -> SiteSelection:
    """The index rows of ``source`` to read for ``sites`` (see the module's docstring)."""
    import duckdb  # imported here, as in ccindex: the spider modules import this one

    con = duckdb.connect()
    try:
        relation = open_index(con, source)
        columns = set(relation.columns)
        lacking = [c for c in (*REQUIRED, SITE_COLUMN) if c not in columns]
        if lacking:
            raise IndexRowsError(f"{source}: the index lacks the column(s) {', '.join(lacking)}")
        present = [c for c in MIME_COLUMNS if c in columns]
        if not present:
            raise IndexRowsError(f"{source}: the index lacks a MIME column ({' or '.join(MIME_COLUMNS)})")
        mime = f"coalesce({', '.join(present)})"
        con.execute("CREATE TEMP TABLE listed (rank BIGINT, domain VARCHAR)")
        if sites:
            con.executemany("INSERT INTO listed VALUES (?, ?)", [(s.rank, s.domain) for s in sites])
        status = "TRY_CAST(fetch_status AS INTEGER) = 200" if "fetch_status" in columns else "true"
        con.register("idx", relation.filter(f"({where or 'true'}) AND {status} AND {USABLE}"))
        kinds = {"mime": mime, "pages": is_mime(mime, PAGE_TYPES), "feeds": is_mime(mime, FEED_TYPES)}
        rows = con.execute(_CHOSEN.format(**kinds), [pages, FEEDS_PER_SITE]).fetchall()
        chosen = [IndexRow(u, f, o, n, m, kind) for u, f, o, n, m, kind, _ in rows]
        with_pages = {domain for *_, kind, domain in rows if kind == "page"}
        return SiteSelection(chosen, [s for s in sites if s.domain not in with_pages], len(sites))
    except duckdb.Error as exc:
        raise IndexRowsError(f"{source}: {' '.join(str(exc).split())}") from None
    finally:
        con.close()


#: The records of the listed sites' registered domains, with their site's rank and their kind.
_CANDIDATES = """
    SELECT CAST(i.url AS VARCHAR) AS url, CAST(i.warc_filename AS VARCHAR) AS warc_filename,
        CAST(i.warc_record_offset AS BIGINT) AS off, CAST(i.warc_record_length AS BIGINT) AS len,
        {mime} AS mime, l.rank, l.domain,
        CASE WHEN {pages} THEN 'page' WHEN {feeds} THEN 'feed' END AS kind,
        regexp_matches(CAST(i.url AS VARCHAR), '^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]+/?$') AS home
    FROM idx i JOIN listed l ON lower(trim(CAST(i.url_host_registered_domain AS VARCHAR), '.')) = l.domain
"""

#: Per site: its home page (the shortest; else its first other page), up to $1 other pages, up to $2 feeds.
_CHOSEN = (
    "WITH c AS ("
    + _CANDIDATES
    + """), ranked AS (
        SELECT *, kind = 'page' AND home AS home_page, row_number() OVER (
            PARTITION BY domain, kind, kind = 'page' AND home ORDER BY length(url), hash(url), url) AS n
        FROM c WHERE kind IS NOT NULL
    ), counted AS (
        SELECT *, max(CASE WHEN home_page THEN 1 ELSE 0 END) OVER (PARTITION BY domain) AS has_home FROM ranked
    )
    SELECT url, warc_filename, off, len, mime, kind, domain FROM counted
    WHERE (home_page AND n = 1) OR (kind = 'page' AND NOT home_page AND n <= $1 + 1 - has_home)
        OR (kind = 'feed' AND n <= $2)
    ORDER BY rank, domain, kind DESC, home_page DESC, n
"""
)
