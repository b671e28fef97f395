"""The thin Scrapy components around the pure discovery and safety code.

``AutodiscoveryMiddleware`` (spider middleware) runs ``crawler.discovery.discover``
on every HTML response the spider marked, hands a ``PageLinks`` item to the
pipelines and yields requests for the feeds the page advertises.

``NetworkSafetyMiddleware`` (downloader middleware) refuses requests the crawl
must not make: non-http(s) schemes, over-long URLs, and URLs found in fetched
content that point at (or resolve to) loopback, private, link-local or
cloud-metadata addresses, unless their host is one the user named in the
inputs. The decisions are ``crawler.netsafety``'s, which is pure.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import CannotResolveHostError, NotConfigured

from crawler.discovery import discover
from crawler.guess import guess_feed_urls
from crawler.items import PageLinks
from crawler.netsafety import DEFAULT_MAX_URL_LENGTH, addresses_reason, check_request_url, needs_resolution
from crawler.outcomes import RefusedRequest

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


class AutodiscoveryMiddleware:
    """Finds advertised feeds on HTML pages and requests them."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("AUTODISCOVERY_ENABLED", True):
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        self.follow_body = settings.getbool("FEEDCENSUS_FOLLOW_BODY_LINKS")
        self.guess = settings.getbool("FEEDCENSUS_GUESS")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        yield from result
        yield from self._discover(response)

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for o in result:
            yield o
        for o in self._discover(response):
            yield o

    def _discover(self, response: Response) -> Iterator[Any]:
        if not response.meta.get("fc_html"):
            return
        stats = self.stats
        ctx = response.meta.get("fc") or {}
        headers = {"content-type": response.headers.get(b"Content-Type", b"").decode("latin-1")}
        links = discover(response.body, response.url, headers, follow_body=self.follow_body)
        stats.inc_value("autodiscovery/pages")
        if links:
            stats.inc_value("autodiscovery/pages_advertising")
        stats.inc_value("autodiscovery/links", len(links))
        for link in links:
            for reason in link.reasons:
                stats.inc_value(f"autodiscovery/reason_count/{reason}")
        redirects = response.meta.get("redirect_urls") or []
        followed = [link.followable for link in links]
        yield PageLinks(
            page_url=response.url,
            requested_url=redirects[0] if redirects else response.url,
            links=links,
            followed=followed,
        )
        depth = ctx.get("depth", 0) + 1
        spider = self.crawler.spider
        for link in links:
            if link.followable and link.href:
                stats.inc_value("autodiscovery/followed")
                meta = {"fc": {"via": "autodiscovery", "source": response.url, "depth": depth, "kind": "feed"}}
                yield Request(link.href, meta=meta, errback=getattr(spider, "on_error", None), priority=-depth)
        if self.guess and not links and ctx.get("via") != "guess":
            for url in guess_feed_urls(response.body, response.url, headers):
                stats.inc_value("autodiscovery/guessed")
                meta = {"fc": {"via": "guess", "source": response.url, "depth": depth, "kind": "feed"}}
                yield Request(url, meta=meta, errback=getattr(spider, "on_error", None), priority=-depth - 1)


class NetworkSafetyMiddleware:
    """Refuses what ``crawler.netsafety`` says the crawl must not fetch; resolves names first.

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
        trusted = getattr(self.crawler.spider, "input_hosts", None) or set()
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
            address = await maybe_deferred_to_future(reactor.resolve(name))  # type: ignore[attr-defined]
        except Exception as exc:  # the download would fail the same way; say so once
            raise CannotResolveHostError(f"DNS lookup failed for {name}: {type(exc).__name__}") from None
        why = addresses_reason(name, [address])
        if why:
            self.crawler.stats.inc_value("netsafety/refused")
            raise RefusedRequest(f"refused: {why} (found in content; --allow-private-networks allows it)")
