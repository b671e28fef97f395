"""Where each response's WARC record is: written by ``--warc`` capture, or served by a replay.

One place every component asks (an extension, found with ``crawler.get_extension``): the WARC
capture middleware and a replay's download handler say where the record of the response a
request got is; the spider and the robots.txt log put it in the ``fetch_log`` and ``feeds`` rows.
Keyed by the request object (weakly: an entry goes with its request), so nothing rides in ``meta``.
"""

from __future__ import annotations

import weakref
from datetime import datetime
from typing import TYPE_CHECKING, Any

from crawler.archive.warc import Location

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class ArchiveLocations:
    def __init__(self) -> None:
        self._where: weakref.WeakKeyDictionary[Request, Location] = weakref.WeakKeyDictionary()
        self._when: weakref.WeakKeyDictionary[Request, datetime] = weakref.WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls()

    def put(self, request: Request, location: Location, fetched_at: datetime | None = None) -> None:
        """Where the response ``request`` got is archived; ``fetched_at``: when an archive says it was
        fetched (a record read back), which the rows then give instead of the time it was read."""
        self._where[request] = location
        if fetched_at is not None:
            self._when[request] = fetched_at

    def of(self, request: Request | None) -> Location | None:
        """The record of the response ``request`` got (None when no archive holds it)."""
        return self._where.get(request) if request is not None else None

    def fetched_at(self, request: Request | None) -> datetime | None:
        """When the archive says the response was fetched (None: a live fetch)."""
        return self._when.get(request) if request is not None else None


def archive_locations(crawler: Crawler) -> ArchiveLocations | None:
    return crawler.get_extension(ArchiveLocations)


def warc_columns(
    locations: ArchiveLocations | None, response: Response, request: Request | None = None
) -> dict[str, Any]:
    """The ``warc_filename``, ``warc_record_offset`` and ``warc_record_length`` of a row about ``response``,
    and its ``fetched_at`` when an archive says when it was fetched.

    A downloader middleware passes the ``request`` it was handed: the engine sets ``response.request``
    only once the response has left the downloader middlewares.
    """
    request = request or response.request
    where = locations.of(request) if locations is not None else None
    if where is None:
        return {"warc_filename": None, "warc_record_offset": None, "warc_record_length": None}
    columns: dict[str, Any] = {
        "warc_filename": where.filename,
        "warc_record_offset": where.offset,
        "warc_record_length": where.length,
    }
    when = locations.fetched_at(request) if locations is not None else None
    if when is not None:
        columns["fetched_at"] = when
    return columns
