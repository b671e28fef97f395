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
from typing import Final

import duckdb

#: The feed media types Common Crawl's MIME detection gives (``content_mime_detected``).
FEED_TYPES: Final = ("application/rss+xml", "application/atom+xml", "application/rdf+xml")
#: Pages sampled for autodiscovery (``--pages N``).
PAGE_TYPES: Final = ("text/html", "application/xhtml+xml")
REQUIRED: Final = ("url", "warc_filename", "warc_record_offset", "warc_record_length")
#: The MIME columns, most trusted first: what was detected in the body, then what the server said.
MIME_COLUMNS: Final = ("content_mime_detected", "content_mime_type")


class ArchiveIndexError(Exception):
    """An index that cannot be read or lacks a required column (one line)."""


@dataclass(frozen=True, slots=True)
class IndexRow:
    url: str
    warc_filename: str
    offset: int
    length: int
    mime: str | None
    kind: str  # "feed" or "page"


def read_index(source: str, *, pages: int = 0, where: str | None = None) -> list[IndexRow]:
    """The feed records of ``source`` (every row when it has no MIME column), then ``pages`` HTML rows.

    ``where`` is an extra SQL condition on the index's columns (DuckDB syntax), e.g.
    ``url_host_tld = 'de'``. Pages are a deterministic sample: the rows with the smallest hash of
    their URL. Rows are in index order (feeds) and hash order (pages).
    """
    con = duckdb.connect()
    try:
        relation = _open(con, source)
        columns = set(relation.columns)
        missing = [c for c in REQUIRED if c not in columns]
        if missing:
            raise ArchiveIndexError(f"{source}: the index lacks the column(s) {', '.join(missing)}")
        mime = next((c for c in MIME_COLUMNS if c in columns), None)
        extra = f"({where})" if where else "true"
        feeds = _select(relation, mime, f"{_is(mime, FEED_TYPES)} AND {extra}", "feed")
        sample = []
        if pages and mime is not None:
            sample = _select(relation, mime, f"{_is(mime, PAGE_TYPES)} AND {extra}", "page", sample=pages)
        return feeds + sample
    except duckdb.Error as exc:
        raise ArchiveIndexError(f"{source}: {' '.join(str(exc).split())}") from None
    finally:
        con.close()


def _open(con: duckdb.DuckDBPyConnection, source: str) -> duckdb.DuckDBPyRelation:
    lowered = source.lower()
    if lowered.endswith((".csv", ".csv.gz", ".tsv")):
        return con.read_csv(source)
    return con.read_parquet(source)


def _is(mime: str | None, types: tuple[str, ...]) -> str:
    """SQL: the row's MIME type is one of ``types`` (true without a MIME column: an export of chosen rows)."""
    if mime is None:
        return "true"
    listed = ", ".join(f"'{t}'" for t in types)
    return f"lower(split_part({mime}, ';', 1)) IN ({listed})"


def _select(
    relation: duckdb.DuckDBPyRelation, mime: str | None, condition: str, kind: str, *, sample: int = 0
) -> list[IndexRow]:
    chosen = relation.filter(condition).project(
        f"url, warc_filename, warc_record_offset, warc_record_length, {mime if mime is not None else 'NULL'}"
    )
    if sample:
        chosen = chosen.order("hash(url)").limit(sample)
    return [IndexRow(str(u), str(f), int(o), int(n), m, kind) for u, f, o, n, m in chosen.fetchall()]
