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

When robots.txt cannot be fetched (a refused connection, a timeout), Scrapy
logs the error with its whole traceback at ERROR level and crawls the site as
if robots.txt allowed everything. The failure is data, not a crash: the
robots.txt log middleware records it in ``fetch_log``. So a filter on Scrapy's
logger makes that record one INFO line naming the site and the exception.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares import robotstxt
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.http import Request
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.robotstxt import RobotParser


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


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        scrapy_logger = logging.getLogger(robotstxt.__name__)
        if ROBOTS_ERROR_ON_ONE_LINE not in scrapy_logger.filters:
            scrapy_logger.addFilter(ROBOTS_ERROR_ON_ONE_LINE)

    async def robot_parser(self, request: Request) -> RobotParser | None:
        shared = self._parsers.get(urlparse_cached(request).netloc)
        if not isinstance(shared, Deferred):
            return await super().robot_parser(request)
        own: Deferred[Any] = Deferred()

        def relay(result: Any) -> Any:
            own.callback(result)
            return result  # leave the shared result in place for the next waiter

        shared.addBoth(relay)
        return await maybe_deferred_to_future(own)
