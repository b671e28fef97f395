"""fetch_log rows for the robots.txt requests Scrapy makes on the crawl's behalf.

``RobotsTxtMiddleware`` fetches ``/robots.txt`` once per site outside the
spider, so no callback sees it. This downloader middleware sits next to the
engine (it sees a failure only after retries gave up) and records each of
those requests: outcome ``robots`` with the status, or the failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.extensions.archive import ArchiveLocations, archive_locations, warc_columns
from crawler.extensions.dataset import Dataset, dataset_of
from crawler.outcomes import classify_exception
from crawler.requests import first_url, has_context, response_headers
from schemas.items import FetchRecord, logged_headers
from schemas.vocab import Outcome, Via

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response


def is_robots_request(request: Request) -> bool:
    """Scrapy's own robots.txt request: it skips robots checks and carries no census context."""
    return (
        bool(request.meta.get("dont_obey_robotstxt"))
        and not has_context(request)
        and request.url.endswith("/robots.txt")
    )


class RobotsLogMiddleware:
    def __init__(self, dataset: Dataset, locations: ArchiveLocations | None = None) -> None:
        self.dataset = dataset
        self.locations = locations

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(dataset_of(crawler), archive_locations(crawler))

    def _record(self, rec: FetchRecord) -> None:
        if self.dataset.is_done(rec.url):
            return  # a resumed crawl reads robots.txt again (rules are not kept), but it is logged once
        self.dataset.record(rec)

    def process_response(self, request: Request, response: Response) -> Response:
        if is_robots_request(request):
            self._record(
                FetchRecord(
                    url=first_url(request),
                    outcome=Outcome.ROBOTS,
                    final_url=response.url,
                    status=response.status,
                    source="robots.txt",
                    discovered_via=Via.ROBOTS,
                    content_type=(response.headers.get(b"Content-Type") or b"").decode("latin-1") or None,
                    bytes=len(response.body),
                    **warc_columns(self.locations, response, request),
                    **logged_headers(response_headers(response)),
                )
            )
        return response

    def process_exception(self, request: Request, exception: Exception) -> Any:
        if is_robots_request(request):
            outcome, status, error = classify_exception(exception)
            self._record(
                FetchRecord(
                    url=first_url(request),
                    outcome=outcome,
                    final_url=request.url,
                    status=status,
                    error=error,
                    source="robots.txt",
                    discovered_via=Via.ROBOTS,
                )
            )
        return None
