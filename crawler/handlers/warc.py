"""Replay (``feedcensus replay``): responses served from WARC files instead of the network.

:class:`WarcReplayHandler` is the download handler for ``http`` and ``https`` (``DOWNLOAD_HANDLERS``,
Scrapy 2.19's ``BaseDownloadHandler`` API): a request gets the response record archived for its
URL (``crawler/archive/read.py`` indexes and reads them): the archived status, headers (with
``Content-Encoding``: Scrapy's ``HttpCompressionMiddleware`` decodes as it does live) and body,
the server's address, and the record's :class:`~crawler.archive.warc.Location` goes to the
``ArchiveLocations`` extension, so the rows point at the record they came from. A URL requested
several times (a retried 503, then the 200) gets its records in archive order, then the last again.
A URL without a record fails with :class:`~crawler.archive.read.NotArchived` (``not_archived``);
a record that cannot be read with :class:`~crawler.archive.read.BadRecord` (``network_error``).

:class:`ArchiveResolver` is the reactor's resolver during a replay (``TWISTED_DNS_RESOLVER``): the
network-safety middleware resolves a host found in content before it lets a request through, and
gets the address the archive recorded for that host (``WARC-IP-Address``), so it judges what it
judged live, with no DNS lookup. A host the archive never reached fails with ``NotArchived``.

Everything else (robots.txt, retries, redirects, network safety) runs as in a crawl.
"""

from __future__ import annotations

import ipaddress
import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader.handlers.base import BaseDownloadHandler
from scrapy.exceptions import DownloadCancelledError, NotConfigured
from scrapy.http import Headers
from scrapy.responsetypes import responsetypes
from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer

from crawler.archive.read import (
    ArchivedResponse,
    ArchiveError,
    ArchiveIndex,
    ArchiveReader,
    NotArchived,
    build_index,
    find_files,
)
from crawler.extensions.archive import archive_locations

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from twisted.internet.base import ReactorBase

logger = logging.getLogger(__name__)

#: The setting naming what a replay serves from.
SETTING = "FEEDCENSUS_REPLAY"


def replay_index(settings: BaseSettings) -> ArchiveIndex | None:
    """The index a replay serves from: the one ``feedcensus replay`` built, or one built from the
    WARC paths or globs the setting lists (``-s FEEDCENSUS_REPLAY=a.warc.gz,b.warc.gz``); None when off."""
    value = settings.get(SETTING)
    if isinstance(value, ArchiveIndex):
        return value
    patterns = settings.getlist(SETTING)
    if not patterns:
        return None
    try:
        return build_index(find_files(patterns))
    except ArchiveError as exc:
        raise NotConfigured(f"{SETTING}: {exc}") from None


class WarcReplayHandler(BaseDownloadHandler):
    def __init__(self, crawler: Crawler, index: ArchiveIndex) -> None:
        super().__init__(crawler)
        self.index = index
        self.reader = ArchiveReader(index)
        self.locations = archive_locations(crawler)
        self.maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        #: How many times each URL has been served (the next request gets its next record).
        self.served: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        index = replay_index(crawler.settings)
        if index is None:
            raise NotConfigured(f"no {SETTING}")
        return cls(crawler, index)

    async def download_request(self, request: Request) -> Response:
        url = request.url
        where = self.index.location(url, self.served[url])
        stats = self.crawler.stats
        if where is None:
            if stats is not None:
                stats.inc_value("feedcensus/replay/not_archived")
            raise NotArchived(url)
        self.served[url] += 1
        archived = self.reader.read(where)  # BadRecord: the errback records it
        maxsize = int(request.meta.get("download_maxsize", self.maxsize))
        if maxsize and len(archived.body) > maxsize:
            raise DownloadCancelledError(
                f"Cancelling download of {url}: archived body ({len(archived.body)} bytes) larger than download max size ({maxsize})"
            )
        response = scrapy_response(archived, request)
        if self.locations is not None:
            self.locations.put(request, where, archived.fetched_at)
        if stats is not None:
            stats.inc_value("feedcensus/replay/records")
            stats.inc_value("feedcensus/replay/bytes", where.length)
        return response

    async def close(self) -> None:
        self.reader.close()


def scrapy_response(archived: ArchivedResponse, request: Request) -> Response:
    """The archived response as Scrapy's download handlers make one: its URL, status, headers
    (``Content-Encoding`` kept, for ``HttpCompressionMiddleware``), body, protocol and server address."""
    headers = Headers()
    for name, value in archived.headers:
        headers.appendlist(name, value)
    url = archived.url or request.url
    respcls = responsetypes.from_args(headers=headers, url=url, body=archived.body)
    return respcls(
        url=url,
        status=archived.status,
        headers=headers,
        body=archived.body,
        request=request,
        ip_address=_address(archived.ip_address),
        protocol=archived.protocol,
    )


def _address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text) if text else None
    except ValueError:
        return None


@implementer(IResolverSimple)
class ArchiveResolver:
    """The addresses the archive recorded, by host; no DNS lookup."""

    def __init__(self, reactor: ReactorBase, index: ArchiveIndex) -> None:
        self.reactor = reactor
        self.index = index

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: ReactorBase) -> Self:
        # Scrapy passes its CrawlerProcess here (the resolver is the reactor's, made before any crawler).
        index = replay_index(crawler.settings)
        if index is None:
            raise NotConfigured(f"no {SETTING}")
        return cls(reactor, index)

    def install_on_reactor(self) -> None:
        self.reactor.installResolver(self)  # type: ignore[arg-type]  # @implementer(IResolverSimple): mypy cannot see it

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:  # Twisted's name
        host = name.lower()
        address = self.index.addresses.get(host)
        if address is not None:
            return defer.succeed(address)
        if host in self.index.hosts:
            return defer.fail(DNSLookupError(f"{name}: the archive recorded no address for it"))
        return defer.fail(NotArchived(name, "no record of this host in the archive"))
