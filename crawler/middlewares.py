"""The thin Scrapy components around the pure discovery and safety code.

``AutodiscoveryMiddleware`` (spider middleware) runs ``crawler.discovery.discover``
on every HTML response the spider marked, hands a ``PageLinks`` item to the
pipelines and yields requests for the feeds the page advertises.

``NetworkSafetyMiddleware`` (downloader middleware) refuses requests the crawl
must not make: non-http(s) schemes, and URLs found in fetched content that
point at loopback, private, link-local or cloud-metadata addresses, unless
their host is one the user named in the inputs.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import NotConfigured

from crawler.discovery import discover
from crawler.items import PageLinks
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


#: Networks that URLs found in content may not reach (besides what ipaddress calls private).
_METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})


def private_reason(host: str) -> str | None:
    """Why ``host`` is off-limits for content-derived URLs, or None when it is public."""
    h = host.strip("[]").lower().rstrip(".")
    if h == "localhost" or h.endswith(".localhost") or h in _METADATA_HOSTS:
        return f"{h} is a local or metadata host"
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_reserved or ip.is_multicast or ip.is_unspecified:
        return f"{h} is a loopback, private, link-local or reserved address"
    return None


class NetworkSafetyMiddleware:
    """Refuses non-http(s) requests and private targets that came from content."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.allow_private = crawler.settings.getbool("FEEDCENSUS_ALLOW_PRIVATE_NETWORKS")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme not in ("http", "https"):
            raise RefusedRequest(f"only http and https are fetched, not {parts.scheme}:", outcome="unsupported_scheme")
        if self.allow_private:
            return
        host = (parts.hostname or "").lower()
        allowed = getattr(self.crawler.spider, "input_hosts", set())
        if host in allowed:
            return
        reason = private_reason(host)
        if reason:
            raise RefusedRequest(f"refused: {reason} (found in content; pass --allow-private-networks to allow)")
