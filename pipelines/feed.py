"""The feed pipeline: a fetched feed document becomes rows.

Parse (``pipelines.document.feedparse``), tally (done in the same pass), check against
the RSS Best Practices Profile (``pipelines.document.checks``), then rows for every
table (``pipelines.document.rows``). All of that is pure; this class only adds stats.

A profile rule that raises on an odd document does not stop the others or the
crawl (``check_feed`` reports it on its result): each failure is counted as
``feedcensus/checks/internal_error/<rule>`` and logged once per rule and crawl.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pipelines.document.checks import CheckResult, RuleFailure, check_feed
from pipelines.document.feedparse import parse_feed
from pipelines.document.rows import TableRows, feed_rows
from schemas.items import FeedDocument

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


logger = logging.getLogger(__name__)


def document_rows(doc: FeedDocument, now: datetime | None = None) -> tuple[TableRows, tuple[RuleFailure, ...]]:
    """The whole per-feed path, as one pure function: the rows, and the profile rules that failed internally."""
    parsed = parse_feed(doc.body, doc.final_url, doc.headers, with_notes=True)
    findings = CheckResult()
    if parsed.root is not None:
        findings = check_feed(parsed.root, format=parsed.format, body=doc.body, now=now, notes=parsed.notes)
    parsed.root = parsed.notes = None  # the tree is not needed past this point: free it now
    return feed_rows(doc, parsed, findings), findings.failures


def process_document(doc: FeedDocument, now: datetime | None = None) -> TableRows:
    """The rows of :func:`document_rows` (what the benchmarks time)."""
    return document_rows(doc, now)[0]


class FeedPipeline:
    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats
        self._logged_rules: set[str] = set()  # profile rules whose internal failure was logged already

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FeedPipeline:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, FeedDocument):
            return item
        rows, failures = document_rows(item, now=datetime.now(UTC))
        self._count_rule_failures(item.final_url, failures)
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

    def _count_rule_failures(self, url: str, failures: tuple[RuleFailure, ...]) -> None:
        """Count each rule that failed internally; log the first failure of each rule."""
        for failure in failures:
            key = f"feedcensus/checks/internal_error/{failure.rule}"
            self.stats.inc_value(key, failure.count)
            if failure.rule not in self._logged_rules:
                self._logged_rules.add(failure.rule)
                logger.warning(
                    "Profile rule %s failed internally on %s: %s (counted in %s; not logged again)",
                    failure.rule,
                    url,
                    failure.error,
                    key,
                )
