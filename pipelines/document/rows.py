"""Turning parse results, links and fetch records into table rows (pure).

A row is a plain dict keyed by the column names of ``schemas.tables``; the
writer builds Arrow record batches from them with the declared schema. Each builder
writes its row as its table's TypedDict (``schemas.rowtypes``), so mypy checks its keys
and value types; it is then handed on as a plain ``Row``. A
document worker builds the batches of the tables nothing after it reads
itself (:meth:`TableRows.encode`), and they travel as Arrow IPC bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from pipelines.document.platforms import from_generator, from_headers
from pipelines.document.sites import site_of
from schemas.items import FeedDocument, FetchRecord, PageLinks, logged_headers
from schemas.pickling import by_fields
from schemas.rowtypes import (
    ConformanceRow,
    ElementUsageRow,
    FeedsRow,
    FetchLogRow,
    ItemsRow,
    LinksRow,
    PagesRow,
    WarcLocation,
    check_rows,
)
from schemas.tables import FEEDS, Encoded, encode_rows
from schemas.vocab import Via

if TYPE_CHECKING:
    from pipelines.document.checks import Finding
    from pipelines.document.feedparse import ParsedFeed

Row = dict[str, Any]


def _plain(rows: list[Any]) -> list[Row]:
    """Typed rows handed on as plain ones (the writer and the incremental code edit them by key)."""
    return cast("list[Row]", rows)


#: Content-Types the Universal Subscription Mechanism accepts for a feed.
USM_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/rdf+xml"})


@by_fields
@dataclass(slots=True)
class TableRows:
    """Rows for several tables, produced from one item."""

    rows: dict[str, list[Row]] = field(default_factory=dict)
    #: For feeds awaiting reflexive discovery: the page to look at and the URLs that count as this feed.
    reflexive_page: str | None = None
    feed_aliases: tuple[str, ...] = ()
    #: Tables whose rows were built into Arrow already (by :meth:`encode`): written as they are.
    encoded: dict[str, Encoded] = field(default_factory=dict)

    def add(self, table: str, rows: list[Row]) -> None:
        if rows:
            self.rows.setdefault(table, []).extend(rows)

    def encode(self, tables: Iterable[str]) -> None:
        """Build these tables' rows into Arrow record batches now (in a document worker, off the crawl)."""
        for table in tables:
            rows = self.rows.pop(table, None)
            if rows:
                check_rows(table, rows)  # what the dataset writer checks of the other rows (commits.py)
                self.encoded[table] = encode_rows(table, rows)


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def content_type_ok(content_type: str | None, fmt: str) -> bool | None:
    """USM rule: a feed is served with its feed media type. None when the document is no feed."""
    if fmt == "unknown":
        return None
    return media_type(content_type) in USM_TYPES


def warc_location(fetched: FeedDocument | FetchRecord) -> WarcLocation:
    """The WARC columns of a response's rows (all null when it is not archived)."""
    return {
        "warc_filename": fetched.warc_filename,
        "warc_record_offset": fetched.warc_record_offset,
        "warc_record_length": fetched.warc_record_length,
    }


def fetch_row(rec: FetchRecord) -> Row:
    row: FetchLogRow = {
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
        "retry_after": rec.retry_after,
        "waited_for": rec.waited_for,
        "next_due": rec.next_due,
        "due_hint": rec.due_hint,
        "due_reason": rec.due_reason,
        **warc_location(rec),
        "server": rec.server,
        "x_powered_by": rec.x_powered_by,
        "content_language": rec.content_language,
        # Derived here, from the URL alone, so every row has it whoever made the record (inputs, drops, robots).
        "site": site_of(rec.url),
    }
    return cast("Row", row)


def _archived(page: PageLinks) -> bool:
    """Whether ``page`` is a web archive's copy (its rows beside a live fetch's of the same URL: commoncrawl)."""
    return page.record is not None and page.record.discovered_via == Via.ARCHIVE


def link_rows(page: PageLinks) -> list[Row]:
    archived = _archived(page)
    rows: list[LinksRow] = []
    for link, followed in zip(page.links, page.followed, strict=True):
        row: LinksRow = {
            "page_url": page.page_url,
            "href": link.href,
            "href_raw": link.href_raw,
            "rel": link.rel,
            "type": link.type,
            "title": link.title,
            "position": link.position,
            "in_head": link.in_head,
            "conforms_rss": link.conforms_rss,
            "conforms_atom": link.conforms_atom,
            "reasons": list(link.reasons),
            "followed": followed,
            "archived": archived,
        }
        rows.append(row)
    return _plain(rows)


def page_rows(page: PageLinks) -> list[Row]:
    """The ``pages`` row of an HTML page autodiscovery read (one, whether or not it advertises feeds)."""
    facts = page.facts
    row: PagesRow = {
        "page_url": page.page_url,
        "url": page.requested_url,
        "site": site_of(page.page_url),
        "html_lang": facts.html_lang,
        "meta_generator": facts.meta_generator,
        "platforms": list(facts.platforms),
        "hreflangs": list(facts.hreflangs),
        "feed_links": len(page.links),
        "rel_alternate": facts.rel_alternate,
        "rel_feed": facts.rel_feed,
        "fetched_at": page.fetched_at,
        "archived": _archived(page),
    }
    return _plain([row])


def feed_rows(
    doc: FeedDocument,
    parsed: ParsedFeed,
    findings: list[Finding],
    *,
    job_id: str | None = None,
    content_hash: str | None = None,
) -> TableRows:
    """All rows one fetched feed document contributes: feeds, items, element_usage, conformance, fetch_log.

    ``job_id`` is the job being written (the feed's ``parsed_job``); ``content_hash`` the body's SHA-256.
    Items are all new until :func:`mark_novelty` compares them with what earlier jobs saw.
    """
    url = doc.url
    archived = doc.discovered_via == Via.ARCHIVE  # its rows beside a live fetch's of the same URL (commoncrawl --live)
    ctype = doc.headers.get("content-type")
    errors = sum(1 for f in findings if f.severity == "error")
    out = TableRows()
    is_feed = parsed.format != "unknown"
    self_url = parsed.self_url
    feed: FeedsRow = {
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
        "changed": True,
        "parsed_job": job_id,
        "content_hash": content_hash,
        "new_items": len(parsed.items),
        "changed_items": 0,
        "ttl": parsed.ttl,
        "skip_hours": list(parsed.skip_hours),
        "skip_days": list(parsed.skip_days),
        "update_period": parsed.update_period,
        "update_frequency": parsed.update_frequency,
        "cache_control": doc.headers.get("cache-control"),
        "expires": doc.headers.get("expires"),
        "generator": parsed.generator,
        "feed_date": parsed.feed_date,
        "hub_url": parsed.hub_url,
        "link_rels": list(parsed.link_rels),
        "entry_languages": list(parsed.entry_languages),
        "hreflangs": list(parsed.hreflangs),
        "platforms": sorted(from_generator(parsed.generator) | from_headers(doc.headers)),
        **warc_location(doc),
    }
    out.add("feeds", _plain([feed]))
    items: list[ItemsRow] = [
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
            "identity": it.identity,
            "identity_source": it.identity_source,
            "content_hash": it.content_hash,
            "first_seen_job": job_id,
            "is_new": True,
            "is_changed": False,
            "title_has_markup": it.title_has_markup,
            "description_length": it.description_length,
            "content_length": it.content_length,
            "content_kind": it.content_kind,
            "archived": archived,
        }
        for it in parsed.items
    ]
    out.add("items", _plain(items))
    usage: list[ElementUsageRow] = [
        {
            "feed_url": url,
            "scope": u.scope,
            "element": u.element,
            "count": u.count,
            "items_with": u.items_with,
            "defined": u.defined,
            "archived": archived,
        }
        for u in parsed.usage
    ]
    out.add("element_usage", _plain(usage))
    conformance: list[ConformanceRow] = [
        {
            "feed_url": url,
            "rule": f.rule,
            "severity": f.severity,
            "scope": f.scope,
            "count": f.count,
            "example": f.example,
            "source": f.source,
            "w3c": list(f.w3c),
            "archived": archived,
        }
        for f in findings
    ]
    out.add("conformance", _plain(conformance))
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
                    waited_for=doc.waited_for,
                    **warc_location(doc),
                    **logged_headers(doc.headers),
                )
            )
        ],
    )
    if is_feed and doc.check_reflexive:
        out.reflexive_page = parsed.link or ""
        out.feed_aliases = tuple(u for u in (url, doc.final_url, self_url) if u)
    return out


# --- incremental crawls ------------------------------------------------------------

#: The response headers a carried-forward row takes from a 304 when the server sends them again.
REVALIDATED_HEADERS = ("etag", "last_modified", "cache_control", "expires")


class Seen(Protocol):
    """What an earlier job saw of one item identity (``pipelines.dataset.state.SeenItem``)."""

    @property
    def first_seen_job(self) -> str: ...

    @property
    def content_hash(self) -> str | None: ...


def mark_novelty(rows: TableRows, seen: Mapping[str, Seen]) -> None:
    """Compare a parsed feed's items with the identities earlier jobs saw in it.

    Sets ``items.first_seen_job``, ``is_new``, ``is_changed`` (same identity, a different content
    hash) and the feed's ``new_items`` / ``changed_items``. An identity repeated inside one
    document counts once as new.
    """
    new = changed = 0
    first_here: set[str] = set()
    for item in rows.rows.get("items", ()):
        identity = item["identity"]
        before = seen.get(identity) if identity is not None else None
        if before is None:
            item["is_new"] = identity not in first_here
            new += item["is_new"]
            if identity is not None:
                first_here.add(identity)
            continue
        item["first_seen_job"] = before.first_seen_job
        item["is_new"] = False
        item["is_changed"] = before.content_hash is not None and before.content_hash != item["content_hash"]
        changed += item["is_changed"]
    for feed in rows.rows.get("feeds", ()):
        feed["new_items"] = new
        feed["changed_items"] = changed


@dataclass(frozen=True, slots=True)
class Carried:
    """A fetch of a known feed that is not parsed: the response (if any) and the feed's previous row."""

    url: str
    previous: Mapping[str, Any]  # the latest feeds row of an earlier job, with parsed_job set
    record: FetchRecord  # this fetch's fetch_log record (outcome not_modified, feed or not_due)
    headers: Mapping[str, str] | None = None  # the response's headers; None when nothing was fetched


def carried_rows(carried: Carried) -> TableRows:
    """The rows of a feed that did not change (or was not due): its previous facts, carried forward.

    The ``feeds`` row keeps every document fact of the previous parse (format, counts, title,
    conformance totals...) with ``changed = false`` and ``parsed_job`` naming the job whose
    rows (items, element_usage, conformance) hold the detail. When the server answered, the row
    takes this response's status, final URL, time and any validators or caching headers it sent
    again; when the feed was not due, it keeps the previous fetch's.
    """
    rec = carried.record
    row: Row = {f.name: carried.previous.get(f.name) for f in FEEDS}
    row.update(
        url=carried.url,
        discovered_via=rec.discovered_via or row["discovered_via"],
        source=rec.source,
        changed=False,
        new_items=0,
        changed_items=0,
    )
    if carried.headers is not None:
        row.update(final_url=rec.final_url, status=rec.status, fetched_at=rec.fetched_at, **warc_location(rec))
        for column in REVALIDATED_HEADERS:
            value = carried.headers.get(column.replace("_", "-"))
            if value:
                row[column] = value
    out = TableRows()
    out.add("feeds", [row])
    out.add("fetch_log", [fetch_row(rec)])
    return out
