"""The network-safety downloader middleware: the thin Scrapy component around ``crawler.fetch.netsafety``.

``NetworkSafetyMiddleware`` refuses requests the crawl must not make:
non-http(s) schemes, over-long URLs, and URLs found in fetched content that
point at (or resolve to) loopback, private, link-local or cloud-metadata
addresses, unless their host is one the user named in the inputs. The
decisions are ``crawler.fetch.netsafety``'s, which is pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import CannotResolveHostError
from twisted.internet import error as tx_error

from crawler.fetch.netsafety import DEFAULT_MAX_URL_LENGTH, addresses_reason, check_request_url, needs_resolution
from crawler.outcomes import RefusedRequest
from crawler.spiders.census import CensusSpider

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler


class NetworkSafetyMiddleware:
    """Refuses what ``crawler.fetch.netsafety`` says the crawl must not fetch; resolves names first.

    A refused request fails with :class:`RefusedRequest` before any connection
    is made, so the spider's errback records it (``refused``,
    ``unsupported_scheme`` or ``invalid_url``). A name that is not an input host
    is resolved through the reactor's resolver (Scrapy's caching resolver, so
    the address checked is the one the download then connects to).
    """

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.allow_private = settings.getbool("FEEDCENSUS_ALLOW_PRIVATE_NETWORKS")
        self.max_length = settings.getint("FEEDCENSUS_MAX_URL_LENGTH", DEFAULT_MAX_URL_LENGTH)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        spider = self.crawler.spider
        trusted = spider.input_hosts if isinstance(spider, CensusSpider) else set()
        refusal = check_request_url(
            request.url, trusted_hosts=trusted, allow_private=self.allow_private, max_length=self.max_length
        )
        if refusal is not None:
            self.crawler.stats.inc_value(f"netsafety/{refusal.outcome}")
            raise RefusedRequest(refusal.reason, outcome=refusal.outcome)
        name = needs_resolution(request.url, trusted_hosts=trusted, allow_private=self.allow_private)
        if name is None:
            return
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import reactor

        try:
            address = await maybe_deferred_to_future(reactor.resolve(name))  # type: ignore[arg-type]
        except (
            tx_error.DNSLookupError,
            tx_error.TimeoutError,
            OSError,
        ) as exc:  # the download would fail the same way; say so once
            raise CannotResolveHostError(f"DNS lookup failed for {name}: {type(exc).__name__}") from None
        why = addresses_reason(name, [address])
        if why:
            self.crawler.stats.inc_value("netsafety/refused")
            raise RefusedRequest(f"refused: {why} (found in content; --allow-private-networks allows it)")
