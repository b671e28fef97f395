"""The feed pipeline: a fetched feed document becomes rows.

Parse (``pipelines.document.feedparse``), tally (done in the same pass), check against
the RSS Best Practices Profile (``pipelines.document.checks``), then rows for every
table (``pipelines.document.rows``). All of that is pure; this class only adds stats.

A profile rule that raises on an odd document does not stop the others or the
crawl (``check_feed`` reports it on its result): each failure is counted as
``feedcensus/checks/internal_error/<rule>`` and logged once per rule and crawl.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pipelines.dataset.schedule import Hints, Policy, items_per_week, next_due
from pipelines.document.checks import CheckResult, RuleFailure, check_feed
from pipelines.document.feedparse import parse_feed
from pipelines.document.rows import (
    Carried,
    Seen,
    TableRows,
    carried_rows,
    feed_rows,
    fetch_row,
    mark_novelty,
    warc_location,
)
from pipelines.history import History, history_of
from pipelines.writer import Dataset
from schemas.items import FeedDocument, FetchRecord, NotDue
from schemas.vocab import Outcome

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


logger = logging.getLogger(__name__)


def document_rows(
    doc: FeedDocument,
    now: datetime | None = None,
    *,
    job_id: str | None = None,
    content_hash: str | None = None,
) -> tuple[TableRows, tuple[RuleFailure, ...]]:
    """The whole per-feed path, as one pure function: the rows, and the profile rules that failed internally."""
    parsed = parse_feed(doc.body, doc.final_url, doc.headers, with_notes=True)
    findings = CheckResult()
    if parsed.root is not None:
        findings = check_feed(parsed.root, format=parsed.format, body=doc.body, now=now, notes=parsed.notes)
    parsed.root = parsed.notes = None  # the tree is not needed past this point: free it now
    return feed_rows(doc, parsed, findings, job_id=job_id, content_hash=content_hash), findings.failures


#: FeedRows.outcome of a 200 whose body hashes as last time (its fetch_log outcome is ``feed``).
UNCHANGED = "unchanged"


@dataclass(frozen=True, slots=True)
class Known:
    """What the earlier jobs knew of a feed, as the per-feed path needs it."""

    row: Mapping[str, Any]  # its latest feeds row, with parsed_job set
    content_hash: str | None
    items_per_week: float | None


@dataclass(slots=True)
class FeedRows:
    """The per-feed path's answer: rows, internal rule failures, and what happened (for the stats)."""

    rows: TableRows
    failures: tuple[RuleFailure, ...] = ()
    outcome: str = Outcome.FEED  # feed (parsed), not_modified, unchanged (same body), not_feed


def incremental_rows(
    doc: FeedDocument,
    *,
    job_id: str | None,
    known: Known | None,
    seen: Callable[[], Mapping[str, Seen]],
    policy: Policy,
    now: datetime | None = None,
) -> FeedRows:
    """The per-feed path of an incremental crawl (pure): parse only what changed, mark what is new.

    A 304 or a body that hashes as last time carries the previous facts forward and parses
    nothing; anything else is parsed and its items compared with the identities already seen
    (``seen`` is called only then). Every fetch_log row of a feed says when it is next due.
    """
    digest = hashlib.sha256(doc.body).hexdigest() if doc.status != 304 else None
    if known is not None and (doc.status == 304 or digest == known.content_hash):
        outcome = Outcome.NOT_MODIFIED if doc.status == 304 else Outcome.FEED
        record = FetchRecord(
            url=doc.url,
            outcome=outcome,
            final_url=doc.final_url,
            status=doc.status,
            source=doc.source,
            discovered_via=doc.discovered_via,
            depth=doc.depth,
            content_type=doc.headers.get("content-type"),
            bytes=len(doc.body),
            fetched_at=doc.fetched_at,
            **warc_location(doc),
        )
        rows = carried_rows(Carried(doc.url, known.row, record, doc.headers))
        result = FeedRows(rows, outcome=Outcome.NOT_MODIFIED if doc.status == 304 else UNCHANGED)
        rate = known.items_per_week
    elif doc.status == 304:
        # A 304 to a request that sent no validators of ours (or whose state is gone): nothing to carry.
        error = "304 Not Modified, but no earlier fetch of this feed is in the dataset"
        rec = FetchRecord(
            url=doc.url,
            outcome=Outcome.HTTP_ERROR,
            final_url=doc.final_url,
            status=304,
            error=error,
            source=doc.source,
            discovered_via=doc.discovered_via,
            depth=doc.depth,
            fetched_at=doc.fetched_at,
            **warc_location(doc),
        )
        rows = TableRows()
        rows.add("fetch_log", [fetch_row(rec)])
        return FeedRows(rows, outcome=Outcome.HTTP_ERROR)
    else:
        rows, failures = document_rows(doc, now, job_id=job_id, content_hash=digest)
        mark_novelty(rows, seen())
        feed = rows.rows["feeds"][0]
        result = FeedRows(rows, failures, Outcome.FEED if feed["format"] != "unknown" else Outcome.NOT_FEED)
        rate = items_per_week([it["pub_date"] for it in rows.rows.get("items", ())], doc.fetched_at)
    schedule(rows, rate, policy)
    return result


def row_hints(row: Mapping[str, Any], rate: float | None) -> Hints:
    """The scheduling hints a feeds row carries."""
    return Hints(
        fetched_at=row["fetched_at"],
        ttl=row.get("ttl"),
        skip_hours=tuple(row.get("skip_hours") or ()),
        skip_days=tuple(row.get("skip_days") or ()),
        update_period=row.get("update_period"),
        update_frequency=row.get("update_frequency"),
        cache_control=row.get("cache_control"),
        expires=row.get("expires"),
        items_per_week=rate,
    )


def schedule(rows: TableRows, rate: float | None, policy: Policy) -> None:
    """Write on the feed's fetch_log row when its hints next let it be fetched (the hints, not --ignore-hints)."""
    feeds = rows.rows.get("feeds")
    if not feeds or feeds[0]["format"] == "unknown":
        return
    due = next_due(row_hints(feeds[0], rate), replace(policy, ignore_hints=False))
    for log in rows.rows.get("fetch_log", ()):
        log.update(next_due=due.at, due_hint=due.hint, due_reason=due.reason)


def not_due_rows(item: NotDue) -> TableRows:
    """A feed not due: its not_due record, and its previous row carried forward (when there is one)."""
    if item.previous is None:
        rows = TableRows()
        rows.add("fetch_log", [fetch_row(item.record)])
        return rows
    return carried_rows(Carried(item.record.url, item.previous, item.record, None))


def process_document(doc: FeedDocument, now: datetime | None = None) -> TableRows:
    """The rows of :func:`document_rows` (what the benchmarks time)."""
    return document_rows(doc, now)[0]


class FeedPipeline:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self._logged_rules: set[str] = set()  # profile rules whose internal failure was logged already

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FeedPipeline:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if isinstance(item, NotDue):
            self.stats.inc_value(f"feedcensus/outcome/{item.record.outcome}")
            return not_due_rows(item)
        if not isinstance(item, FeedDocument):
            return item
        history = history_of(self.crawler)
        # A URL first met this run that redirects to a known feed (an alias) is that feed.
        urls = dict.fromkeys((item.url, item.final_url))
        result = incremental_rows(
            item,
            job_id=self._job_id(),
            known=next(filter(None, (_known(history, u) for u in urls)), None),
            seen=lambda: _seen(history, urls),
            policy=history.policy if history is not None else Policy(),
            now=datetime.now(UTC),
        )
        self._count_rule_failures(item.final_url, result.failures)
        self._count(result)
        return result.rows

    def _job_id(self) -> str | None:
        """The job being written (the parsed_job of what this run parses)."""
        dataset = self.crawler.get_extension(Dataset)
        return dataset.job_id if dataset is not None else self.crawler.settings.get("FEEDCENSUS_JOB_ID") or None

    def _count(self, result: FeedRows) -> None:
        stats = self.stats
        if result.outcome == UNCHANGED:
            stats.inc_value("feedcensus/outcome/feed")
            stats.inc_value("feedcensus/unchanged")
            return
        feeds = result.rows.rows.get("feeds")
        if result.outcome != Outcome.FEED or not feeds:
            stats.inc_value(f"feedcensus/outcome/{result.outcome}")
            return
        feed = feeds[0]
        if feed["format"] == "unknown":
            stats.inc_value("feedcensus/outcome/not_feed")
            return
        stats.inc_value("feedcensus/outcome/feed")
        stats.inc_value(f"feedcensus/format/{feed['format']}")
        stats.inc_value("feedcensus/items", feed["item_count"])
        stats.inc_value("feedcensus/new_items", feed["new_items"] or 0)
        if not feed["well_formed"]:
            stats.inc_value("feedcensus/not_well_formed")

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


def _seen(history: History | None, urls: Iterable[str]) -> dict[str, Seen]:
    """The item identities earlier jobs saw under any of a document's URLs."""
    seen: dict[str, Seen] = {}
    if history is None:
        return seen
    for url in urls:
        for identity, item in history.seen_items(url).items():
            seen.setdefault(identity, item)
    return seen


def _known(history: History | None, url: str) -> Known | None:
    state = history.previous(url) if history is not None and history.conditional else None
    if state is None or state.row is None:
        return None
    row = {**state.row, "parsed_job": state.parsed_job}
    return Known(row=row, content_hash=state.content_hash, items_per_week=state.items_per_week)
