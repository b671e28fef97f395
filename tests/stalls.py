"""A download handler for the crawls of tests: the project's own, with the event loop held before some downloads.

A busy worker (a quarter of a core, its document worker beside it) takes a while between starting a request
and having its connection: its event loop runs late. :class:`StalledHandler` makes that happen on cue, for
real: it holds the loop for :data:`STALL` seconds before every second download of a feed (paths ending in
``.xml``), so that request reaches the server that much after its start. Given to a crawl with
``-s DOWNLOAD_HANDLERS={"http": "tests.stalls.StalledHandler"}``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from crawler.handlers.guard import GuardedHTTPDownloadHandler

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response

#: Seconds the event loop is held before every second feed's download.
STALL = 0.2


class StalledHandler(GuardedHTTPDownloadHandler):
    """The project's HTTP handler; the loop is held :data:`STALL` seconds before every second feed's download."""

    feeds = 0

    async def download_request(self, request: Request) -> Response:
        if request.url.endswith(".xml"):
            self.feeds += 1
            if self.feeds % 2:
                time.sleep(STALL)  # the whole loop, as a busy one: nothing else runs meanwhile
        return await super().download_request(request)
