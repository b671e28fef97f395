"""The Parquet pipeline: every item's rows, and a row for every request the scheduler drops, to the
crawl's :class:`~crawler.extensions.dataset.Dataset` (the one way rows are written)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request, signals

from crawler.extensions.dataset import Dataset, dataset_of
from pipelines.document.rows import TableRows, link_rows, page_rows
from schemas.items import FetchRecord, PageLinks, context_from_meta
from schemas.vocab import Outcome, Via

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class ParquetPipeline:
    """Writes TableRows, PageLinks (with the page's FetchRecord) and FetchRecord items; records dropped requests."""

    def __init__(self, crawler: Crawler, dataset: Dataset) -> None:
        self.crawler = crawler
        self.dataset = dataset
        crawler.signals.connect(self.request_dropped, signal=signals.request_dropped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, dataset_of(crawler))

    async def process_item(self, item: Any) -> Any:
        ds = self.dataset
        if isinstance(item, TableRows):
            ds.write_rows(item)
            # The tables a worker built into Arrow are the writer's now. An item exporter downstream
            # (scrapyd's items_dir) gets the rows that are Python values; it cannot encode the bytes.
            item.encoded = {}
        elif isinstance(item, PageLinks):
            if item.record is not None:
                ds.record(item.record)
            ds.write_many({"links": link_rows(item), "pages": page_rows(item)})
        elif isinstance(item, FetchRecord):
            ds.record(item)
        await ds.commit_if_due()
        return item

    def request_dropped(self, request: Request) -> None:
        """The scheduler refused a request (its URL was requested before): one fetch_log row.

        When a redirect leads to a URL already requested, the row is for the URL first
        requested: a redirect loop when the chain came back on itself, else a duplicate.
        A resumed crawl skipping what the interrupted run already wrote adds no row, nor does
        the reflexive pipeline's request for a page already on its way.
        """
        if self.dataset.is_done_request(request):
            return
        redirects = request.meta.get("redirect_urls") or []
        ctx = context_from_meta(request.meta)
        if ctx is not None and ctx.via == Via.REFLEXIVE and not redirects:
            # The reflexive pipeline asks for a feed's page only when it has not seen the page's
            # answer; dropped here, the page was requested before and is still on its way. Its own
            # row comes with that answer (which also releases the feed), so a row here would say
            # nothing but how the timing fell, and make two crawls of one web differ.
            self.crawler.stats.inc_value("feedcensus/reflexive/page_in_flight")
            return
        if redirects:
            url = redirects[0]
            chain = " -> ".join([*redirects, request.url])
            if request.url in redirects:
                outcome, error = Outcome.REDIRECT_LOOP, f"redirect loop: {chain}"
            else:
                outcome, error = Outcome.DUPLICATE, f"redirects to a URL already requested: {chain}"
        else:
            outcome, url, error = Outcome.DUPLICATE, request.url, "already requested in this crawl"
        self.dataset.record(
            FetchRecord(
                url=url,
                final_url=request.url,
                outcome=outcome,
                error=error[:500],
                source=ctx.source if ctx else None,
                discovered_via=ctx.via if ctx else None,
                depth=ctx.depth if ctx else None,
            )
        )
