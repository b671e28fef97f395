"""The Parquet pipeline: every item becomes rows in the run's dataset.

One ``DatasetWriter`` serves a whole crawl (``dataset_for(crawler)``): the
pipeline writes through it, and so do components that produce rows outside
the item flow (held reflexive rows, requests the scheduler dropped). It is
closed on ``spider_closed``, after every pipeline has closed, so nothing a
pipeline releases at close time is lost.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from pipelines.dataset.store import DatasetWriter
from pipelines.document.rows import TableRows, fetch_row, link_rows
from schemas.items import FetchRecord, PageLinks

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

_WRITERS: WeakKeyDictionary[Crawler, DatasetWriter] = WeakKeyDictionary()


def default_job_id(now: datetime | None = None) -> str:
    """The UTC start time, sortable and safe in a path: 20261122T001500Z."""
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")


def dataset_for(crawler: Crawler) -> DatasetWriter:
    """The crawl's one dataset writer, created on first use and closed with the spider."""
    writer = _WRITERS.get(crawler)
    if writer is None:
        from scrapy import signals

        settings = crawler.settings
        writer = DatasetWriter(
            settings.get("FEEDCENSUS_OUT"),
            settings.get("FEEDCENSUS_JOB_ID") or default_job_id(),
            batch_rows=settings.getint("FEEDCENSUS_BATCH_ROWS"),
            flush_seconds=settings.getfloat("FEEDCENSUS_FLUSH_SECONDS"),
            resume=bool(settings.get("FEEDCENSUS_RESUME_DIR")),
        )
        _WRITERS[crawler] = writer

        def close(**_: Any) -> None:
            writer.close()
            crawler.stats.set_value("feedcensus/files_written", writer.files_written)
            for table, n in writer.rows_written.items():
                crawler.stats.set_value(f"feedcensus/rows/{table}", n)

        crawler.signals.connect(close, signal=signals.spider_closed, weak=False)
    return writer


class ParquetPipeline:
    """Writes TableRows, PageLinks and FetchRecord items; records dropped requests."""

    def __init__(self, crawler: Crawler) -> None:
        from scrapy import signals

        self.crawler = crawler
        self.dataset = dataset_for(crawler)
        crawler.signals.connect(self.request_dropped, signal=signals.request_dropped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ParquetPipeline:
        return cls(crawler)

    def open_spider(self) -> None:
        logger.info("Writing datasets to %s (job_id=%s)", self.dataset.out, self.dataset.job_id)

    def process_item(self, item: Any) -> Any:
        ds = self.dataset
        if isinstance(item, TableRows):
            ds.write_many(item.rows)
        elif isinstance(item, PageLinks):
            ds.write("links", link_rows(item))
        elif isinstance(item, FetchRecord):
            ds.write("fetch_log", [fetch_row(item)])
        ds.flush_due()
        return item

    def request_dropped(self, request: Request) -> None:
        """The scheduler refused a request (its URL was requested before): one fetch_log row.

        When a redirect leads to a URL already requested, the row is for the URL first
        requested: a redirect loop when the chain came back on itself, else a duplicate.
        """
        if request.meta.get("fc_done"):
            return  # a resumed crawl skipping what the interrupted run already wrote
        ctx = request.meta.get("fc", {})
        redirects = request.meta.get("redirect_urls") or []
        if redirects:
            url = redirects[0]
            chain = " -> ".join([*redirects, request.url])
            if request.url in redirects:
                outcome, error = "redirect_loop", f"redirect loop: {chain}"
            else:
                outcome, error = "duplicate", f"redirects to a URL already requested: {chain}"
        else:
            outcome, url, error = "duplicate", request.url, "already requested in this crawl"
        self.crawler.stats.inc_value(f"feedcensus/outcome/{outcome}")
        self.dataset.write(
            "fetch_log",
            [
                fetch_row(
                    FetchRecord(
                        url=url,
                        final_url=request.url,
                        outcome=outcome,
                        error=error[:500],
                        source=ctx.get("source"),
                        discovered_via=ctx.get("via"),
                        depth=ctx.get("depth"),
                    )
                )
            ],
        )
