"""robots.txt obeyed for every request, also those that wait for robots.txt to arrive.

Scrapy 2.19's ``RobotsTxtMiddleware`` keeps one Deferred per site while
robots.txt downloads, and every request to that site awaits it through
``maybe_deferred_to_future``. That adapter consumes the Deferred's result:
the first waiter gets the parser, every later one gets ``None``, which the
middleware reads as "no robots.txt: allow everything". So with several
requests to a site in flight at the start, all but one ignored robots.txt
(tests/test_hostile_crawl.py caught a disallowed feed being fetched). This
subclass gives each waiter its own Deferred, fed from the shared one without
consuming it.

In a distributed job robots.txt is read once per host for the whole job: the first
worker to need it claims it in the frontier, fetches it (its ``fetch_log`` row is the
job's one) and shares the body; the others parse the shared body (and so apply its
Crawl-delay too) without asking the host. A worker that waits longer than
:data:`ROBOTS_WAIT` seconds for another's fetch fetches it itself. Every request that waited here, and
robots.txt itself, keeps the host's delay after the job's last start to it: the downloader reserves its
start in the frontier when it has no fresh one of its own (crawler/downloader.py). The worker that fetched
robots.txt reserves the next start for the request it fetched it for in the round trip that shares it.

When robots.txt cannot be fetched (a refused connection, a timeout), Scrapy
logs the error with its whole traceback at ERROR level and crawls the site as
if robots.txt allowed everything. The failure is data, not a crash: the
robots.txt log middleware records it in ``fetch_log``. So a filter on Scrapy's
logger makes that record one INFO line naming the site and the exception.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.downloadermiddlewares import robotstxt
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.http import Request
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet.defer import Deferred

from crawler.extensions.jobfrontier import job_frontier
from crawler.requests import ReservesStarts

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser


logger = logging.getLogger(__name__)


class RobotsErrorOnOneLine(logging.Filter):
    """Turns Scrapy's "Error downloading <request>" record (ERROR, with a traceback) into one INFO line."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = record.args.get("request") if isinstance(record.args, dict) else None
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None or not isinstance(request, Request):
            return True
        netloc = urlparse_cached(request).netloc
        record.msg = "robots.txt of %s could not be fetched (%s: %s); the site is crawled as if it allowed everything"
        record.args = (netloc, type(exc).__name__, " ".join(str(exc).split()))
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return True


ROBOTS_ERROR_ON_ONE_LINE = RobotsErrorOnOneLine()


#: The longest a worker waits for another worker's fetch of a robots.txt before it fetches it itself (seconds).
ROBOTS_WAIT = 30.0


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        scrapy_logger = logging.getLogger(robotstxt.__name__)
        if ROBOTS_ERROR_ON_ONE_LINE not in scrapy_logger.filters:
            scrapy_logger.addFilter(ROBOTS_ERROR_ON_ONE_LINE)
        self._frontier: Any = None
        self._fetching: set[str] = set()  # hosts whose robots.txt this worker claimed for the job

    async def robot_parser(self, request: Request) -> RobotParser | None:
        netloc = urlparse_cached(request).netloc
        if netloc not in self._parsers and self._job_frontier() is not None:
            await self._from_job(netloc, request)
        shared = self._parsers.get(netloc)
        if not isinstance(shared, Deferred):
            return await super().robot_parser(request)
        own: Deferred[Any] = Deferred()

        def relay(result: Any) -> Any:
            own.callback(result)
            return result  # leave the shared result in place for the next waiter

        shared.addBoth(relay)
        return await maybe_deferred_to_future(own)

    async def _from_job(self, netloc: str, request: Request) -> None:
        """The job's robots.txt of ``netloc``: parsed from what another worker read, or fetched by this
        worker (then shared). This worker's other requests to the host wait for it meanwhile."""
        from crawler.frontier import FrontierError

        frontier = self._job_frontier()
        waiting: Deferred[Any] = Deferred()
        self._parsers[netloc] = waiting
        deadline = time.monotonic() + ROBOTS_WAIT
        try:
            kind, body = frontier.robots(netloc)
            while kind == "pending" and time.monotonic() < deadline:
                await _sleep(0.2)
                kind, body = frontier.robots(netloc)
        except FrontierError as exc:  # the frontier's own failure stops the crawl where it is next used
            logger.warning("frontier: could not read the job's robots.txt of %s: %s", netloc, exc)
            kind, body = "mine", None
        parser: RobotParser | None = None
        if kind in ("mine", "pending"):  # fetched here: Scrapy's own fetch, its row, then shared
            self._fetching.add(netloc)
            del self._parsers[netloc]
            parser = await super().robot_parser(request)
        else:
            if kind == "body":
                parser = build_from_crawler(self._parserimpl, self.crawler, body or b"")
                await self.crawler.signals.send_catch_log_async(
                    signal=signals.robots_parsed, robotparser=parser, request=request
                )
            self._parsers[netloc] = parser
            self.crawler.stats.inc_value("robotstxt/from_job")
        waiting.callback(parser)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        await super()._parse_robots(response, netloc, request)  # robots_parsed: the host's delay is known now
        self._share(netloc, response.body, request)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        super()._robots_error(exc, netloc)
        self._share(netloc, None, None)

    def _share(self, netloc: str, body: bytes | None, waiting: Request | None) -> None:
        """Share what this worker's fetch of robots.txt gave. robots.txt took the start the frontier reserved
        for ``waiting`` (the request it was fetched for): the same round trip reserves that request's start,
        which the downloader then waits for instead of reserving one itself."""
        if netloc not in self._fetching:
            return
        self._fetching.discard(netloc)
        from crawler.frontier import FrontierError

        downloader = getattr(self.crawler.engine, "downloader", None)
        if not isinstance(downloader, ReservesStarts):
            downloader = None
        start = downloader.start_to_reserve(waiting) if downloader is not None and waiting is not None else None
        try:
            reserved = self._job_frontier().share_robots(netloc, body, start)
        except FrontierError as exc:
            logger.warning("frontier: could not share the robots.txt of %s: %s", netloc, exc)
            return
        if downloader is not None and start is not None and reserved is not None:
            downloader.reserved(start[0], *reserved)

    def _job_frontier(self) -> Any:
        if self._frontier is None:
            self._frontier = job_frontier(self.crawler)
        return self._frontier


async def _sleep(seconds: float) -> None:
    from twisted.internet import reactor, task

    await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))
