"""The autodiscovery spider middleware: the thin Scrapy component around ``crawler.fetch.discovery``.

``AutodiscoveryMiddleware`` runs ``crawler.fetch.discovery.discover`` on every
HTML response the spider marked, hands a ``PageLinks`` item to the pipelines
and yields requests for the feeds the page advertises.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured

from crawler.fetch.discovery import discover
from crawler.fetch.guess import guess_feed_urls
from schemas.items import PageLinks

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
