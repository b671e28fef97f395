"""The feed pipeline: a fetched feed document becomes rows.

Parse (``pipelines.document.feedparse``), tally (done in the same pass), check against
the RSS Best Practices Profile (``pipelines.document.checks``), then rows for every
table (``pipelines.document.rows``). All of that is pure; this class only adds stats.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pipelines.document.checks import check_feed
from pipelines.document.feedparse import parse_feed
from pipelines.document.rows import TableRows, feed_rows
from schemas.items import FeedDocument

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


def process_document(doc: FeedDocument, now: datetime | None = None) -> TableRows:
    """The whole per-feed path, as one pure function (also what the benchmarks time)."""
    parsed = parse_feed(doc.body, doc.final_url, doc.headers, with_notes=True)
    findings = []
    if parsed.root is not None:
        findings = check_feed(
            parsed.root, format=parsed.format, version=parsed.version, body=doc.body, now=now, notes=parsed.notes
        )
    parsed.root = parsed.notes = None  # the tree is not needed past this point: free it now
    return feed_rows(doc, parsed, findings)


class FeedPipeline:
    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FeedPipeline:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, FeedDocument):
            return item
        rows = process_document(item, now=datetime.now(UTC))
        stats = self.stats
        (feed,) = rows.rows["feeds"]
        if feed["format"] == "unknown":
            stats.inc_value("feedcensus/outcome/not_feed")
        else:
            stats.inc_value("feedcensus/outcome/feed")
            stats.inc_value(f"feedcensus/format/{feed['format']}")
            stats.inc_value("feedcensus/items", feed["item_count"])
            if not feed["well_formed"]:
                stats.inc_value("feedcensus/not_well_formed")
        return rows
