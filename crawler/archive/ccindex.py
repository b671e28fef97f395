"""Rows of a web archive's columnar index (Common Crawl's ``cc-index-table``): which records to fetch.

Common Crawl publishes, per crawl, a Parquet index with one row per WARC record: ``url``,
``warc_filename``, ``warc_record_offset``, ``warc_record_length``, the MIME types
(``content_mime_type`` as served, ``content_mime_detected`` as sniffed) and more. A survey needs
only the feed records (about 0.2 % of a crawl) and, for autodiscovery adoption, a sample of HTML
pages. :func:`read_index` selects them from a local export (Parquet or CSV, one file or a glob)
with DuckDB. Pure: paths in, plain rows out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import duckdb

#: The feed media types Common Crawl's MIME detection gives (``content_mime_detected``).
FEED_TYPES: Final = ("application/rss+xml", "application/atom+xml", "application/rdf+xml")
#: Pages sampled for autodiscovery (``--pages N``).
PAGE_TYPES: Final = ("text/html", "application/xhtml+xml")
REQUIRED: Final = ("url", "warc_filename", "warc_record_offset", "warc_record_length")
#: The MIME columns, most trusted first: what was detected in the body, then what the server said.
MIME_COLUMNS: Final = ("content_mime_detected", "content_mime_type")


class IndexRowsError(Exception):
    """An index that cannot be read or lacks a required column (one line)."""


@dataclass(frozen=True, slots=True)
class IndexRow:
    url: str
    warc_filename: str
    offset: int
    length: int
    mime: str | None
    kind: str  # "feed" or "page"


@dataclass(frozen=True, slots=True)
class Selection:
    """The rows chosen, and how many chosen rows were left out as unusable."""

    rows: list[IndexRow]
    #: Rows with no URL or file name, or an offset or length that is not a whole number >= 0 (> 0).
    unusable: int


#: SQL: a row that names a record (its offset and length read as whole numbers where they are not).
USABLE = (
    "url IS NOT NULL AND warc_filename IS NOT NULL "
    "AND TRY_CAST(warc_record_offset AS BIGINT) >= 0 AND TRY_CAST(warc_record_length AS BIGINT) > 0 "
    "AND TRY_CAST(warc_record_offset AS DOUBLE) = TRY_CAST(warc_record_offset AS BIGINT) "
    "AND TRY_CAST(warc_record_length AS DOUBLE) = TRY_CAST(warc_record_length AS BIGINT)"
)


def read_index(source: str, *, pages: int = 0, where: str | None = None) -> Selection:
    """The feed records of ``source`` (every row when it has no MIME column), then ``pages`` HTML rows.

    ``where`` is an extra SQL condition on the index's columns (DuckDB syntax), e.g.
    ``url_host_tld = 'de'``. Pages are a sample fixed by the data (for one DuckDB version): the rows
    with the smallest hash of their URL. Rows are in index order (feeds) and hash order (pages). A
    row's MIME type is ``content_mime_detected``, or ``content_mime_type`` where that is null.
    """
    # Imported here: Scrapy's spider loader imports every spider module, the archive spider's
    # included, so a module-level import would cost every crawl DuckDB's start-up (0.1 s).
    import duckdb

    con = duckdb.connect()
    try:
        relation = open_index(con, source)
        columns = set(relation.columns)
        missing = [c for c in REQUIRED if c not in columns]
        if missing:
            raise IndexRowsError(f"{source}: the index lacks the column(s) {', '.join(missing)}")
        present = [c for c in MIME_COLUMNS if c in columns]
        mime = f"coalesce({', '.join(present)})" if present else None
        extra = f"({where})" if where else "true"
        feeds = f"{is_mime(mime, FEED_TYPES)} AND {extra}"
        rows = _select(relation, mime, f"{feeds} AND {USABLE}", "feed")
        [(unusable,)] = relation.filter(f"{feeds} AND NOT coalesce({USABLE}, false)").aggregate("count(*)").fetchall()
        if pages and mime is not None:
            rows += _select(
                relation, mime, f"{is_mime(mime, PAGE_TYPES)} AND {extra} AND {USABLE}", "page", sample=pages
            )
        return Selection(rows, int(unusable))
    except duckdb.Error as exc:
        raise IndexRowsError(f"{source}: {' '.join(str(exc).split())}") from None
    finally:
        con.close()


def open_index(con: duckdb.DuckDBPyConnection, source: str) -> duckdb.DuckDBPyRelation:
    lowered = source.lower()
    if lowered.endswith((".csv", ".csv.gz", ".tsv")):
        return con.read_csv(source)
    return con.read_parquet(source)


def is_mime(mime: str | None, types: tuple[str, ...]) -> str:
    """SQL: the row's MIME type is one of ``types`` (true without a MIME column: an export of chosen rows)."""
    if mime is None:
        return "true"
    listed = ", ".join(f"'{t}'" for t in types)
    return f"coalesce(lower(split_part({mime}, ';', 1)) IN ({listed}), false)"


def _select(
    relation: duckdb.DuckDBPyRelation, mime: str | None, condition: str, kind: str, *, sample: int = 0
) -> list[IndexRow]:
    chosen = relation.filter(condition).project(
        "CAST(url AS VARCHAR) AS url, CAST(warc_filename AS VARCHAR) AS warc_filename, "
        "CAST(warc_record_offset AS BIGINT) AS warc_record_offset, "
        f"CAST(warc_record_length AS BIGINT) AS warc_record_length, {mime if mime is not None else 'NULL'} AS mime"
    )
    if sample:
        chosen = chosen.order("hash(url)").limit(sample)
    return [IndexRow(u, f, o, n, m, kind) for u, f, o, n, m in chosen.fetchall()]
