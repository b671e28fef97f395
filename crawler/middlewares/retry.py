"""Retries with exponential backoff that honour ``Retry-After``.

Scrapy's ``RetryMiddleware`` retries a 5xx/429 or a dropped connection at
once. A crawler that hits a struggling or rate-limiting server again
immediately is a bad guest, so this subclass waits before handing the retry
back: ``Retry-After`` when the server sent one (seconds or an HTTP date,
capped), otherwise ``base * 2**(attempt - 1)``. The wait does not hold a
download slot: other requests keep flowing while this one sleeps.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.response import response_status_message
from twisted.internet import reactor
from twisted.internet.task import deferLater

from crawler.fetch.politeness import retry_after_seconds

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response
    from scrapy.settings import BaseSettings


def retry_delay(
    attempt: int, retry_after: str | None, *, base: float, cap: float, now: datetime | None = None
) -> float:
    """Seconds to wait before retry number ``attempt`` (1 for the first retry)."""
    seconds = retry_after_seconds(retry_after, now or datetime.now(UTC))
    if seconds is not None:
        return min(seconds, cap)
    return min(base * 2.0 ** max(attempt - 1, 0), cap)


class BackoffRetryMiddleware(RetryMiddleware):
    """Scrapy's retry decisions (its settings, ``get_retry_request()``), with a wait before each retry."""

    def __init__(self, settings: BaseSettings) -> None:
        super().__init__(settings)
        self.base = settings.getfloat("FEEDCENSUS_RETRY_BACKOFF_BASE")
        self.cap = settings.getfloat("FEEDCENSUS_RETRY_AFTER_MAX")

    def _retry_request(self, request: Request, reason: str | Exception) -> Request | None:
        """The retry of ``request`` (None when it has had its tries), honouring per-request meta overrides."""
        meta = request.meta
        spider = self.crawler.spider
        assert spider is not None
        return get_retry_request(
            request,
            spider=spider,
            reason=reason,
            max_retry_times=meta.get("max_retry_times", self.max_retry_times),
            priority_adjust=meta.get("priority_adjust", self.priority_adjust),
            give_up_log_level=meta.get("give_up_log_level", self.give_up_log_level),
        )

    async def _wait(self, seconds: float) -> None:
        if seconds > 0:
            await maybe_deferred_to_future(deferLater(reactor, seconds, lambda: None))

    async def process_response(self, request: Request, response: Response) -> Request | Response:  # type: ignore[override]
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        retry = self._retry_request(request, response_status_message(response.status))
        if retry is None:
            return response
        header = response.headers.get(b"Retry-After")
        await self._wait(
            retry_delay(
                retry.meta.get("retry_times", 1),
                header.decode("latin-1") if header else None,
                base=self.base,
                cap=self.cap,
            )
        )
        return retry

    async def process_exception(self, request: Request, exception: Exception) -> Request | Response | None:  # type: ignore[override]
        if not isinstance(exception, self.exceptions_to_retry) or request.meta.get("dont_retry", False):
            return None
        retry = self._retry_request(request, exception)
        if retry is not None:
            await self._wait(retry_delay(retry.meta.get("retry_times", 1), None, base=self.base, cap=self.cap))
        return retry
