"""The crawl's document workers (``FEEDCENSUS_WORKERS``): one pool of worker processes, shared by
the components that hand work to it, the thin Scrapy side of :mod:`pipelines.document.pool`.

Two components send it work, from the reactor thread, and await the answer there: the feed
pipeline (pipelines/feed.py) sends every feed document (parse, tally, checks, rows), and the
autodiscovery middleware (crawler/middlewares/autodiscovery.py) every HTML page (its feed links and
facts). Either falls back to doing the work in the crawling process when there is no pool
(``FEEDCENSUS_WORKERS=0``, and on a single core).

The pool starts its first worker's process as the crawler is made, before Scrapy builds its engine
and opens the spider (so the worker's imports, 0.25-0.45 s, overlap the crawl's own start instead of
holding up its first pages), joins it to the event loop when the spider opens, stops its workers
when the spider closes (their CPU and memory go to the ``feedcensus/workers/*`` stats), and kills
them when the reactor stops without closing the spider (a forced stop, or a crawl that failed
before its spider opened).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.reactor import is_asyncio_reactor_installed, is_reactor_installed

from pipelines.document.jobs import workers_setting
from pipelines.document.pool import DocumentPool

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class DocumentWorkers:
    """The crawl's :class:`DocumentPool` (a Scrapy extension); :func:`document_workers` finds it."""

    def __init__(self, crawler: Crawler, workers: int, timeout: float) -> None:
        self.stats = crawler.stats
        self.workers = workers
        self.pool: DocumentPool | None = DocumentPool(workers, timeout=timeout)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        workers = workers_setting(settings.get("FEEDCENSUS_WORKERS"))
        if workers < 1:
            raise NotConfigured
        extension = cls(crawler, workers, settings.getfloat("FEEDCENSUS_PARSE_TIMEOUT"))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        if is_reactor_installed() and is_asyncio_reactor_installed():  # the loop the crawl will run on
            extension._launch()
        return extension

    def _launch(self) -> None:
        """Start the first worker's process now, and make sure it stops with the reactor."""
        from twisted.internet import reactor

        assert self.pool is not None
        self.pool.launch()
        # A forced stop (a second Ctrl-C) stops the reactor without closing the spider, and a crawl
        # that fails before its spider opens may never close it: either way the workers stop here.
        trigger: Any = reactor.addSystemEventTrigger  # typed by twisted as IReactorCore's (self taken as phase)
        trigger("before", "shutdown", self._kill)

    async def spider_opened(self) -> None:
        if self.pool is None:
            return
        if not is_asyncio_available():  # the pool runs on the asyncio event loop
            self.pool = None
            logger.warning("FEEDCENSUS_WORKERS needs Scrapy's asyncio reactor: documents are parsed in this process")
            return
        logger.info("Parsing feeds and reading pages in %d worker process(es) (FEEDCENSUS_WORKERS)", self.workers)
        await self.pool.start()

    async def spider_closed(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            await pool.close()
            self._record(pool)

    def _kill(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.kill()
            self._record(pool)

    def _record(self, pool: DocumentPool) -> None:
        stats = self.stats
        stats.set_value("feedcensus/workers/processes", pool.ran)
        stats.set_value("feedcensus/workers/documents", pool.documents)
        stats.set_value("feedcensus/workers/replaced", pool.replaced)
        stats.set_value("feedcensus/workers/cpu_seconds", round(pool.cpu_seconds, 2))
        stats.set_value("feedcensus/workers/peak_rss_mb", round(pool.peak_rss / 2**20, 1))


def document_workers(crawler: Crawler) -> DocumentWorkers | None:
    """The crawl's extension (None when ``FEEDCENSUS_WORKERS`` is 0); its ``pool`` is there from when the
    crawler is made until the spider closes, and None without Scrapy's asyncio reactor."""
    return crawler.get_extension(DocumentWorkers)
