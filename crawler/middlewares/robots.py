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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.robotstxt import RobotParser


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
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
