"""The autodiscovery spider middleware: the thin Scrapy component around ``crawler.fetch.discovery``.

``AutodiscoveryMiddleware`` runs ``crawler.fetch.discovery.read_page`` on
every HTML response the spider marked (in the crawl's document workers when there are some,
``FEEDCENSUS_WORKERS``; a page that kills or outlasts its worker gets its fetch_log row with that
error and no links), hands one ``PageLinks`` item to the pipelines (the page's
``fetch_log``, ``links`` and ``pages`` rows, and what the reflexive pipeline learns of the page),
and yields requests for the feeds the page advertises. One item per page, not one per table: each
item costs Scrapy's item machinery on the reactor thread, so the spider's fetch record of the
page is held back and travels in the ``PageLinks`` item.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured

from crawler.extensions.documentpool import document_workers
from crawler.fetch.discovery import PageRead, PageTask
from crawler.fetch.guess import guess_feed_urls
from crawler.fetch.urls import DEFAULT_MAX_URL_LENGTH
from crawler.requests import FollowsFeedLinks, SpiderRole, context_of, first_url, response_headers
from pipelines.document.jobs import Lost
from schemas.items import WAITED_META_KEY, FeedDocument, FeedLink, FetchRecord, PageLinks
from schemas.vocab import Expect, Via

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


class AutodiscoveryMiddleware:
    """Finds advertised feeds on HTML pages and requests them.

    It runs on the responses whose spider output holds a ``FetchRecord``
    marked ``html``: the spider's word that the response is an HTML page.
    """

    def __init__(self, crawler: Crawler, *, follow_body: bool, guess: bool, follow: bool = True) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.follow_body = follow_body
        self.guess = guess
        #: False: links are recorded (``followed`` false) but not requested (a survey of archived pages).
        self.follow = follow
        #: A feed link longer than this is judged href-too-long and not followed, as its request would be refused.
        self.max_url_length = crawler.settings.getint("FEEDCENSUS_MAX_URL_LENGTH", DEFAULT_MAX_URL_LENGTH)
        #: The crawl's document workers, which read the pages (in this process when there are none).
        self.workers = document_workers(crawler)
        self._warned = False  # said once that the spider cannot follow links
        self._follower = SpiderRole[FollowsFeedLinks](FollowsFeedLinks)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        if not settings.getbool("AUTODISCOVERY_ENABLED"):
            raise NotConfigured
        return cls(
            crawler,
            follow_body=settings.getbool("FEEDCENSUS_FOLLOW_BODY_LINKS"),
            guess=settings.getbool("FEEDCENSUS_GUESS"),
            follow=settings.getbool("FEEDCENSUS_FOLLOW_LINKS", True),
        )

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        if response.meta.get(WAITED_META_KEY):
            result = _waited(response, result)
        page: FetchRecord | None = None
        for o in result:
            if page is None and _html_record(o) is not None:
                page = o  # held back: it goes out in the page's PageLinks item
                continue
            yield o
        if page is not None:
            task = self._task(response)
            yield from self._discover(response, page, task, task.run() if task is not None else None)

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        if response.meta.get(WAITED_META_KEY):
            result = _waited_async(response, result)
        page: FetchRecord | None = None
        async for o in result:
            if page is None and _html_record(o) is not None:
                page = o  # held back: it goes out in the page's PageLinks item
                continue
            yield o
        if page is not None:
            task = self._task(response)
            pool = self.workers.pool if self.workers is not None and task is not None else None
            read = None if task is None else task.run() if pool is None else await pool.run(task)
            if isinstance(read, Lost):  # the worker died or ran out of time on this page: its fetch_log row says so
                logger.warning(
                    "%s: %s (the page's links were not read; recorded as %s)", response.url, read.error, read.outcome
                )
                page.outcome, page.error, page.html = read.outcome, read.error, False
                yield page
                return
            for o in self._discover(response, page, task, read):
                yield o

    def _task(self, response: Response) -> PageTask | None:
        """What reading the page takes (None when the spider cannot follow links: the page is not read)."""
        if self._follower.of(self.crawler.spider) is None:
            if not self._warned:
                self._warned = True
                logger.warning(
                    "autodiscovery: spider %s has no follow(url, ctx): pages are recorded, their feed links are not read",
                    type(self.crawler.spider).__name__,
                )
            return None
        headers = response_headers(response)
        # The encoding is decided on the last Content-Type header alone, as before the other headers came along.
        headers["content-type"] = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
        return PageTask(response.body, response.url, headers, self.follow_body, self.max_url_length)

    def _discover(
        self, response: Response, record: FetchRecord, task: PageTask | None, read: PageRead | None
    ) -> Iterator[Any]:
        spider = self._follower.of(self.crawler.spider)
        if task is None or read is None or spider is None:
            yield record
            return
        ctx = context_of(response)
        links = read.links
        self._count(links)
        page = PageLinks(
            page_url=response.url,
            requested_url=first_url(response),
            links=links,
            followed=[link.followable and self.follow for link in links],
            facts=read.facts,
            fetched_at=record.fetched_at,  # the page's fetch_log row and its pages row tell the same time
            record=record,
        )
        yield page  # its fetch_log, links and pages rows, written together by the Parquet pipeline
        if not self.follow:
            return
        # A feed link of an archived page (feedcensus commoncrawl --sites --live) is fetched live: archive-link.
        via = Via.ARCHIVE_LINK if ctx.via == Via.ARCHIVE else Via.AUTODISCOVERY
        for link in links:
            if link.followable and link.href:
                self.stats.inc_value("autodiscovery/followed")
                yield spider.follow(link.href, ctx.child(via, response.url, Expect.FEED))
        if self.guess and not links and ctx.via != Via.GUESS:
            for url in guess_feed_urls(response.body, response.url, task.headers):
                self.stats.inc_value("autodiscovery/guessed")
                yield spider.follow(url, ctx.child(Via.GUESS, response.url, Expect.FEED), priority_bias=-1)

    def _count(self, links: list[FeedLink]) -> None:
        stats = self.stats
        stats.inc_value("autodiscovery/pages")
        if links:
            stats.inc_value("autodiscovery/pages_advertising")
        stats.inc_value("autodiscovery/links", len(links))
        for link in links:
            for reason in link.reasons:
                stats.inc_value(f"autodiscovery/reason_count/{reason}")


def _html_record(o: object) -> FetchRecord | None:
    return o if isinstance(o, FetchRecord) and o.html else None


def _tag_waited(o: Any, why: str) -> None:
    """The fetch_log row of a response whose request waited for its host's pause says so (``waited_for``)."""
    if isinstance(o, FetchRecord | FeedDocument) and o.waited_for is None:
        o.waited_for = why


def _waited(response: Response, result: Iterable[Any]) -> Iterator[Any]:
    why = str(response.meta[WAITED_META_KEY])
    for o in result:
        _tag_waited(o, why)
        yield o


async def _waited_async(response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
    why = str(response.meta[WAITED_META_KEY])
    async for o in result:
        _tag_waited(o, why)
        yield o
