"""Turning parse results, links and fetch records into table rows (pure).

A row is a plain dict keyed by the column names of ``schemas.tables``; the
writer builds Arrow record batches from them with the declared schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schemas.items import LINK_FIELDS, FeedDocument, FetchRecord, PageLinks

if TYPE_CHECKING:
    from pipelines.document.checks import Finding
    from pipelines.document.feedparse import ParsedFeed

Row = dict[str, Any]

#: Content-Types the Universal Subscription Mechanism accepts for a feed.
USM_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/rdf+xml"})


@dataclass(slots=True)
class TableRows:
    """Rows for several tables, produced from one item."""

    rows: dict[str, list[Row]] = field(default_factory=dict)
    #: For feeds awaiting reflexive discovery: the page to look at and the URLs that count as this feed.
    reflexive_page: str | None = None
    feed_aliases: tuple[str, ...] = ()

    def add(self, table: str, rows: list[Row]) -> None:
        if rows:
            self.rows.setdefault(table, []).extend(rows)


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def content_type_ok(content_type: str | None, fmt: str) -> bool | None:
    """USM rule: a feed is served with its feed media type. None when the document is no feed."""
    if fmt == "unknown":
        return None
    return media_type(content_type) in USM_TYPES


def fetch_row(rec: FetchRecord) -> Row:
    return {
        "url": rec.url,
        "final_url": rec.final_url,
        "status": rec.status,
        "outcome": rec.outcome,
        "error": rec.error,
        "source": rec.source,
        "discovered_via": rec.discovered_via,
        "depth": rec.depth,
        "content_type": rec.content_type,
        "bytes": rec.bytes,
        "fetched_at": rec.fetched_at,
    }


def link_rows(page: PageLinks) -> list[Row]:
    rows = []
    for link, followed in zip(page.links, page.followed, strict=True):
        row: Row = {"page_url": page.page_url, **{f: getattr(link, f) for f in LINK_FIELDS}, "followed": followed}
        row["reasons"] = list(link.reasons)
        rows.append(row)
    return rows


def feed_rows(doc: FeedDocument, parsed: ParsedFeed, findings: list[Finding]) -> TableRows:
    """All rows one fetched feed document contributes: feeds, items, element_usage, conformance, fetch_log."""
    url = doc.url
    ctype = doc.headers.get("content-type")
    errors = sum(1 for f in findings if f.severity == "error")
    out = TableRows()
    is_feed = parsed.format != "unknown"
    self_url = parsed.self_url
    out.add(
        "feeds",
        [
            {
                "url": url,
                "final_url": doc.final_url,
                "status": doc.status,
                "content_type": ctype,
                "content_type_ok": content_type_ok(ctype, parsed.format),
                "format": parsed.format,
                "version": parsed.version,
                "well_formed": parsed.well_formed,
                "parse_error": parsed.error,
                "encoding": parsed.encoding,
                "item_count": len(parsed.items),
                "title": parsed.title,
                "link": parsed.link,
                "language": parsed.language,
                "self_url": self_url,
                "self_url_matches": None if self_url is None else self_url in (doc.final_url, url),
                "reflexive": None,
                "discovered_via": doc.discovered_via,
                "source": doc.source,
                "bytes": len(doc.body),
                "errors": errors,
                "warnings": len(findings) - errors,
                "etag": doc.headers.get("etag"),
                "last_modified": doc.headers.get("last-modified"),
                "fetched_at": doc.fetched_at,
            }
        ],
    )
    out.add(
        "items",
        [
            {
                "feed_url": url,
                "position": it.position,
                "guid": it.guid,
                "guid_is_permalink": it.guid_is_permalink,
                "link": it.link,
                "title": it.title,
                "author": it.author,
                "categories": it.categories,
                "enclosure_url": it.enclosure_url,
                "enclosure_type": it.enclosure_type,
                "enclosure_length": it.enclosure_length,
                "pub_date_raw": it.pub_date_raw,
                "pub_date": it.pub_date,
                "date_form": it.date_form,
            }
            for it in parsed.items
        ],
    )
    out.add(
        "element_usage",
        [
            {
                "feed_url": url,
                "scope": u.scope,
                "element": u.element,
                "count": u.count,
                "items_with": u.items_with,
                "defined": u.defined,
            }
            for u in parsed.usage
        ],
    )
    out.add(
        "conformance",
        [
            {
                "feed_url": url,
                "rule": f.rule,
                "severity": f.severity,
                "scope": f.scope,
                "count": f.count,
                "example": f.example,
                "source": f.source,
                "w3c": list(f.w3c),
            }
            for f in findings
        ],
    )
    out.add(
        "fetch_log",
        [
            fetch_row(
                FetchRecord(
                    url=url,
                    outcome="feed" if is_feed else "not_feed",
                    final_url=doc.final_url,
                    status=doc.status,
                    error=None if is_feed else (parsed.error or "not a feed"),
                    source=doc.source,
                    discovered_via=doc.discovered_via,
                    depth=doc.depth,
                    content_type=ctype,
                    bytes=len(doc.body),
                    fetched_at=doc.fetched_at,
                )
            )
        ],
    )
    if is_feed and doc.check_reflexive:
        out.reflexive_page = parsed.link or ""
        out.feed_aliases = tuple(u for u in (url, doc.final_url, self_url) if u)
    return out
