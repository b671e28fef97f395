"""The row of each dataset table as a TypedDict: the keys and value types of ``schemas/tables.py``.

A row builder annotates the dict it builds with its table's type, so mypy catches a misspelled or
missing key and a value of the wrong type where the row is written, not when a survey reads a null.
A nullable column is ``X | None``. ``tests/test_row_types.py`` checks that each TypedDict has
exactly its table's columns with these types, so a column added to ``schemas/tables.py`` must be
added here too. At run time the dataset writer checks every row's keys (:func:`check_rows`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from operator import itemgetter
from typing import Any, TypedDict

from schemas.tables import TABLES

__all__ = [
    "ROW_TYPES",
    "ConformanceRow",
    "ElementUsageRow",
    "FeedsRow",
    "FetchLogRow",
    "ItemsRow",
    "LinksRow",
    "PagesRow",
    "RowError",
    "WarcLocation",
    "WorkersRow",
    "check_rows",
]


class WarcLocation(TypedDict):
    """The WARC columns, in ``feeds`` and ``fetch_log`` alike (``schemas.tables.WARC_FIELDS``)."""

    warc_filename: str | None
    warc_record_offset: int | None
    warc_record_length: int | None


class FeedsRow(WarcLocation):
    """A ``feeds`` row."""

    url: str
    final_url: str | None
    status: int | None
    content_type: str | None
    content_type_ok: bool | None
    format: str
    version: str | None
    well_formed: bool
    parse_error: str | None
    encoding: str | None
    item_count: int
    title: str | None
    link: str | None
    language: str | None
    self_url: str | None
    self_url_matches: bool | None
    reflexive: str | None
    discovered_via: str
    source: str | None
    bytes: int
    errors: int | None
    warnings: int | None
    etag: str | None
    last_modified: str | None
    fetched_at: datetime
    changed: bool | None
    parsed_job: str | None
    content_hash: str | None
    new_items: int | None
    changed_items: int | None
    ttl: int | None
    skip_hours: list[int] | None
    skip_days: list[str] | None
    update_period: str | None
    update_frequency: int | None
    cache_control: str | None
    expires: str | None
    generator: str | None
    feed_date: datetime | None
    hub_url: str | None
    link_rels: list[str] | None
    entry_languages: list[str] | None
    hreflangs: list[str] | None
    platforms: list[str] | None


class ItemsRow(TypedDict):
    """An ``items`` row."""

    feed_url: str
    position: int
    guid: str | None
    guid_is_permalink: bool | None
    link: str | None
    title: str | None
    author: str | None
    categories: list[str] | None
    enclosure_url: str | None
    enclosure_type: str | None
    enclosure_length: int | None
    pub_date_raw: str | None
    pub_date: datetime | None
    date_form: str | None
    identity: str | None
    identity_source: str | None
    content_hash: str | None
    first_seen_job: str | None
    is_new: bool | None
    is_changed: bool | None
    title_has_markup: bool | None
    description_length: int | None
    content_length: int | None
    content_kind: str | None
    archived: bool | None


class ElementUsageRow(TypedDict):
    """An ``element_usage`` row."""

    feed_url: str
    scope: str
    element: str
    count: int
    items_with: int | None
    defined: bool | None
    archived: bool | None


class LinksRow(TypedDict):
    """A ``links`` row."""

    page_url: str
    href: str | None
    href_raw: str | None
    rel: str | None
    type: str | None
    title: str | None
    position: int
    in_head: bool
    conforms_rss: bool
    conforms_atom: bool
    reasons: list[str]
    followed: bool
    archived: bool | None


class PagesRow(TypedDict):
    """A ``pages`` row."""

    page_url: str
    url: str
    site: str | None
    html_lang: str | None
    meta_generator: str | None
    platforms: list[str]
    hreflangs: list[str]
    feed_links: int
    rel_alternate: bool
    rel_feed: bool
    fetched_at: datetime
    archived: bool | None


class ConformanceRow(TypedDict):
    """A ``conformance`` row."""

    feed_url: str
    rule: str
    severity: str
    scope: str
    count: int
    example: str | None
    source: str | None
    w3c: list[str] | None
    archived: bool | None


class FetchLogRow(WarcLocation):
    """A ``fetch_log`` row."""

    url: str
    final_url: str | None
    status: int | None
    outcome: str
    error: str | None
    source: str | None
    discovered_via: str | None
    depth: int | None
    waited_for: str | None
    content_type: str | None
    bytes: int | None
    fetched_at: datetime
    retry_after: str | None
    next_due: datetime | None
    due_hint: str | None
    due_reason: str | None
    server: str | None
    x_powered_by: str | None
    content_language: str | None
    site: str | None


class WorkersRow(TypedDict):
    """A ``workers`` row."""

    worker: str
    host: str | None
    pid: int | None
    frontier: str | None
    started_at: datetime
    finished_at: datetime
    finish_reason: str | None
    requests: int | None
    responses: int | None
    feeds: int | None
    items: int | None
    errors: int | None
    requeued: int | None


#: Each table's row type.
ROW_TYPES: dict[str, type[Any]] = {
    "feeds": FeedsRow,
    "items": ItemsRow,
    "element_usage": ElementUsageRow,
    "links": LinksRow,
    "pages": PagesRow,
    "conformance": ConformanceRow,
    "fetch_log": FetchLogRow,
    "workers": WorkersRow,
}


class RowError(ValueError):
    """A row that does not fit its table: a column the table does not have, or a non-nullable one missing or null."""


@functools.cache
def _columns(table: str) -> tuple[frozenset[str], tuple[str, ...], Callable[[Mapping[str, Any]], Any]]:
    """(every column of ``table``, its non-nullable ones, a getter of their values); RowError for a table
    there is not."""
    fields = TABLES.get(table)
    if fields is None:
        raise RowError(f"no table {table!r} (tables: {', '.join(TABLES)})")
    required = tuple(f.name for f in fields if not f.nullable)
    return frozenset(f.name for f in fields), required, itemgetter(*required, *required[:1])  # a tuple even for one


def check_rows(table: str, rows: Iterable[Mapping[str, Any]]) -> None:
    """Raise :class:`RowError` when a row has a key ``table`` has no column for, or no value for one of its
    non-nullable columns. A nullable column a row leaves out is written as null.

    Cheap enough for every row a crawl writes: the keys of all the rows are gathered in one set first
    (one C loop), and the non-nullable values are read by one ``itemgetter`` a row."""
    rows = rows if isinstance(rows, list) else list(rows)
    columns, required, values = _columns(table)
    unknown = set().union(*rows) - columns
    if unknown:
        raise RowError(f"{table} row has no such column: {', '.join(sorted(unknown))} (a misspelled key?)")
    try:
        for row in rows:
            if None in values(row):
                _refuse_null(table, row, required)
    except KeyError as exc:
        raise RowError(f"{table} row has no value for {exc.args[0]}, which may not be null") from None


def _refuse_null(table: str, row: Mapping[str, Any], required: tuple[str, ...]) -> None:
    name = next(name for name in required if row[name] is None)
    raise RowError(f"{table} row has no value for {name}, which may not be null")
