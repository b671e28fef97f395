"""fetch_log rows for the robots.txt requests Scrapy makes on the crawl's behalf.

``RobotsTxtMiddleware`` fetches ``/robots.txt`` once per site outside the
spider, so no callback sees it. This downloader middleware sits next to the
engine (it sees a failure only after retries gave up) and records each of
those requests: outcome ``robots`` with the status, or the failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.outcomes import classify_failure
from pipelines.document.rows import fetch_row
from pipelines.writer import dataset_for
from schemas.items import FetchRecord

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response


def is_robots_request(request: Request) -> bool:
    return (
        bool(request.meta.get("dont_obey_robotstxt"))
        and "fc" not in request.meta
        and request.url.endswith("/robots.txt")
    )


class RobotsLogMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsLogMiddleware:
        return cls(crawler)

    def _record(self, rec: FetchRecord) -> None:
        from crawler.extensions.resume import resume_state

        state = resume_state(self.crawler)
        if state is not None and rec.url in state.done:
            return  # a resumed crawl reads robots.txt again (rules are not kept), but it is logged once
        self.crawler.stats.inc_value(f"feedcensus/outcome/{rec.outcome}")
        dataset_for(self.crawler).write("fetch_log", [fetch_row(rec)])

    def process_response(self, request: Request, response: Response) -> Response:
        if is_robots_request(request):
            redirects = request.meta.get("redirect_urls") or []
            self._record(
                FetchRecord(
                    url=redirects[0] if redirects else request.url,
                    outcome="robots",
                    final_url=response.url,
                    status=response.status,
                    source="robots.txt",
                    discovered_via="robots",
                    content_type=response.headers.get(b"Content-Type", b"").decode("latin-1") or None,
                    bytes=len(response.body),
                )
            )
        return response

    def process_exception(self, request: Request, exception: Exception) -> Any:
        if is_robots_request(request):
            from twisted.python.failure import Failure

            outcome, status, error = classify_failure(Failure(exception))
            redirects = request.meta.get("redirect_urls") or []
            self._record(
                FetchRecord(
                    url=redirects[0] if redirects else request.url,
                    outcome=outcome,
                    final_url=request.url,
                    status=status,
                    error=error,
                    source="robots.txt",
                    discovered_via="robots",
                )
            )
        return None
