"""Scrapy with the census's shape and none of its work: the crawl benchmark's second reference.

The URL list is the bare spider's (a site's home page, then its feed). Only the home pages are
start requests; each home page's callback yields one item and the request for its feed, and each
feed's callback one item, as ``feedcensus crawl`` does (a page's ``PageLinks`` item and its feed
request; a feed's rows). Nothing reads the bodies and no pipeline is set, so the run measures what
Scrapy's own machinery for those items and requests costs (spider middlewares, the scraper, the
duplicate filter, the scheduler) on top of the bare spider's fetching, with the same settings
(``-s NAME=VALUE``, as ``bare_spider.py``).

    python benchmarks/shaped_spider.py URLS_FILE [-s NAME=VALUE]...
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from bare_spider import BareSpider, main
from scrapy import Request


class ShapedSpider(BareSpider):
    """Fetch the home pages in a file; from each, one item and a request for the feed after it; from each feed, one item."""

    name = "shaped"

    async def start(self) -> AsyncIterator[Any]:
        with open(self.urls_file, encoding="utf-8") as f:
            urls = [line.strip() for line in f if line.strip()]
        for home, feed in zip(urls[0::2], urls[1::2], strict=True):
            yield Request(home, callback=self.parse_home, cb_kwargs={"feed": feed})

    def parse_home(self, response: Any, feed: str) -> Iterator[Any]:
        yield {"page": response.url}
        yield Request(feed, callback=self.parse_feed)

    def parse_feed(self, response: Any) -> Iterator[Any]:
        yield {"feed": response.url}


if __name__ == "__main__":
    raise SystemExit(main(spider=ShapedSpider))
