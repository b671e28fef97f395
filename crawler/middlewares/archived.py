"""Archive records fetched by Range request (``feedcensus commoncrawl``) become the responses they hold.

A downloader middleware just above the HTTP compression middleware (``DOWNLOAD_MIDDLEWARES`` 595:
it sees the answer first, so a record whose stored body is still ``Content-Encoding``-coded is
decoded next, as live). For a request the archive spider made (fetch context ``via = archive``)
that got a 206 (or a 200 with the whole file, when the server ignores ``Range``), it reads the
one WARC record the bytes hold (``crawler/archive/read.py``) and returns the archived response:
the record's URL, status, headers and body, with the request's context; the record's location
and fetch time go to ``ArchiveLocations``, so the rows name the record and the archived time.
A record that cannot be read (cut short, corrupt, not a response, not the URL the index named)
fails the request with :class:`~crawler.archive.read.BadRecord`: a recorded outcome, not a stop.
Any other status goes on as an HTTP error of the archive host. The archived response is never
redirected (HTTP or meta refresh) nor retried: it is what the archive holds.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from crawler.archive.read import BadRecord, read_record
from crawler.archive.warc import Location
from crawler.extensions.archive import archive_locations
from crawler.handlers.warc import scrapy_response
from crawler.requests import context_of
from schemas.vocab import Via

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


class ArchiveRecordMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.locations = archive_locations(crawler)
        self._warned_whole = False

    def _whole_file(self, url: str) -> None:
        """The archive host answered a Range request with the whole file: it works, at a file per record."""
        if not self._warned_whole:
            self._warned_whole = True
            logger.warning(
                "the archive host ignores Range requests (%s answered 200 with the whole file): each record costs "
                "the whole WARC file, and files over DOWNLOAD_MAXSIZE fail as too_large",
                url,
            )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        archived = request.cb_kwargs.get("archived")
        if not archived or context_of(request).via != Via.ARCHIVE or response.status not in (200, 206):
            return response
        offset, length = int(archived["offset"]), int(archived["length"])
        if response.status == 200:
            self._whole_file(request.url)
        raw = response.body if response.status == 206 else response.body[offset : offset + length]
        filename = str(context_of(request).source or request.url)
        where = Location(filename, offset, length)
        record = read_record(raw, where)  # BadRecord: the errback records it
        if record.url != archived["url"]:
            raise BadRecord(f"the record at {filename}:{offset} is for {record.url}, the index says {archived['url']}")
        if self.locations is not None:
            self.locations.put(request, where, record.fetched_at)
        # What the record holds is history: an archived redirect, refresh or 503 is recorded as it is, never
        # followed or retried (the same bytes would come back, or the live web would be fetched).
        request.meta["dont_redirect"] = True
        request.meta["dont_retry"] = True
        stats = self.crawler.stats
        if stats is not None:
            stats.inc_value("feedcensus/archive/records")
            stats.inc_value("feedcensus/archive/bytes", length)
        return scrapy_response(record, request)
