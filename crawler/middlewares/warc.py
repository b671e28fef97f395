"""WARC capture (``crawl --warc DIR``): every response the crawl receives, with its request.

A downloader middleware placed next to the downloader (``DOWNLOADER_MIDDLEWARES`` 890): it sees
every response, pages, feeds, OPML, robots.txt, redirects and each retried attempt, before
Scrapy decodes ``Content-Encoding`` (590) or follows a redirect (600), and every request with the
headers the other middlewares gave it. ``crawler/archive/warc.py`` writes the records.

Where each response's record is goes to the ``ArchiveLocations`` extension (crawler/extensions/archive.py),
which the spider asks for the ``fetch_log`` and ``feeds`` rows.
A file that cannot be written stops the crawl (``warc_error``, exit code 3): an archive with holes
would be reported as whole.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro

from crawler.archive.warc import (
    CONTEXT_FIELD,
    DEFAULT_MAX_BYTES,
    REDIRECTED_FROM_FIELD,
    SETTINGS_FIELD,
    Exchange,
    WarcWriter,
    header_pairs,
    request_settings,
    settings_field,
)
from crawler.extensions.archive import archive_locations
from crawler.requests import first_url
from schemas.items import context_from_meta

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: Request headers never written to an archive (WARC files are made to be shared): credentials a proxy
#: URL (HttpProxyMiddleware) or HTTP auth (HttpAuthMiddleware) put on the request.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization"})
#: The finish reason of a crawl stopped because its WARC files could not be written.
WARC_ERROR = "warc_error"
STAT_ERROR = "feedcensus/warc_error"


def software() -> str:
    return f"feedcensus/{version('feedcensus')} (Scrapy {scrapy.__version__}; warcio {version('warcio')})"


class WarcCaptureMiddleware:
    def __init__(self, crawler: Crawler, writer: WarcWriter) -> None:
        self.crawler = crawler
        self.writer = writer
        self.error: str | None = None
        self.locations = archive_locations(crawler)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        folder = str(settings.get("FEEDCENSUS_WARC_DIR") or "")
        if not folder:
            raise NotConfigured  # no FEEDCENSUS_WARC_DIR: no capture (a message would be a WARNING on every run)
        info = {
            "software": software(),
            "http-header-user-agent": str(settings.get("USER_AGENT") or ""),
            "robots": "obey" if settings.getbool("ROBOTSTXT_OBEY") else "ignore",
            "operator": str(settings.get("FEEDCENSUS_CONTACT_URL") or ""),
            "description": "feedcensus crawl: feeds, the pages that advertise them, OPML lists, robots.txt",
            # How the crawl ran, so that a replay runs the same way (crawler/cli/replay.py).
            SETTINGS_FIELD: settings_field(request_settings(settings)),
        }
        writer = WarcWriter(
            Path(folder),
            job=str(settings.get("FEEDCENSUS_JOB_ID") or "job"),
            info={k: v for k, v in info.items() if v},
            max_bytes=settings.getint("FEEDCENSUS_WARC_MAX_BYTES", DEFAULT_MAX_BYTES),
        )
        return cls(crawler, writer)

    def process_response(self, request: Request, response: Response) -> Response:
        if self.error is not None:
            return response
        headers = [
            (name, value) for name, value in header_pairs(request.headers.items()) if name.lower() not in SECRET_HEADERS
        ]
        if not any(name.lower() == "host" for name, _ in headers):
            headers.insert(0, ("Host", urlsplit(request.url).netloc))  # Scrapy's HTTP client adds it when sending
        exchange = Exchange(
            url=response.url,
            method=request.method,
            request_headers=headers,
            status=response.status,
            response_headers=header_pairs(response.headers.items()),
            body=response.body,
            fetched_at=datetime.now(UTC),
            request_body=request.body,
            protocol=response.protocol or "HTTP/1.1",
            ip_address=str(response.ip_address) if response.ip_address is not None else None,
            request_fields=census_fields(request),
        )
        try:
            where = self.writer.write(exchange)
        except OSError as exc:
            self._fail(exc)
        else:
            if self.locations is not None:
                self.locations.put(request, where)
        return response

    def engine_stopped(self) -> None:
        try:
            files = self.writer.close()
        except OSError as exc:  # the last file's close: its records are on disk, but say so
            self._fail(exc)
            files = list(self.writer.files)
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value("feedcensus/warc/dir", str(self.writer.folder))
            stats.set_value("feedcensus/warc/files", len(files))
            stats.set_value("feedcensus/warc/records", self.writer.records)
            stats.set_value("feedcensus/warc/bytes", self.writer.bytes_written)
        logger.info("WARC: %d records in %d files in %s", self.writer.records, len(files), self.writer.folder)

    def _fail(self, exc: OSError) -> None:
        self.error = f"cannot write WARC files to {self.writer.folder}: {type(exc).__name__}: {exc}".replace("\n", " ")
        logger.error("%s; stopping the crawl", self.error)
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value(STAT_ERROR, self.error)
        engine = self.crawler.engine
        if engine is not None and engine.running:
            deferred_from_coro(engine.close_spider_async(reason=WARC_ERROR))


def census_fields(request: Request) -> dict[str, str]:
    """The request record's feedcensus fields: the fetch context (none on Scrapy's robots.txt requests)
    and, after a redirect, the URL first requested."""
    fields = {}
    ctx = context_from_meta(request.meta)
    if ctx is not None:
        fields[CONTEXT_FIELD] = json.dumps(ctx.to_json(), separators=(",", ":"), ensure_ascii=True)
    first = first_url(request)
    if first != request.url:
        fields[REDIRECTED_FROM_FIELD] = first
    return fields
