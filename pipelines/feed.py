"""The feed pipeline: a fetched feed document becomes rows.

Parse (``pipelines.document.feedparse``), tally (done in the same pass), check against
the RSS Best Practices Profile (``pipelines.document.checks``), then rows for every
table (``pipelines.document.rows``): :func:`pipelines.document.process.document_rows`,
pure. It runs in a pool of worker processes (``FEEDCENSUS_WORKERS``, see
:mod:`pipelines.document.pool`; the default, ``auto``, gives cores - 1), or in this process
when that is 0 (and on one core). What needs the earlier jobs of the dataset is added here, in the
crawling process: which items are new (when no earlier job saw any item of the feed, the worker
marks them all new and sends the items as Arrow) and when the feed is next due; this class also adds
stats.

A profile rule that raises on an odd document does not stop the others or the
crawl (``check_feed`` reports it on its result): each failure is counted as
``feedcensus/checks/internal_error/<rule>`` and logged once per rule and crawl. A
document whose worker dies or runs out of time is recorded as ``parse_error`` or
``parse_timeout`` (a fetch_log row, no other rows) and the crawl goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crawler.extensions.dataset import Dataset
from crawler.extensions.documentpool import document_workers
from crawler.extensions.history import History, history_of
from pipelines.dataset.schedule import Hints, Policy, next_due
from pipelines.document.jobs import Answer, Job, Lost, Parsed, content_digest, job_rows
from pipelines.document.rows import Carried, Seen, TableRows, carried_rows, fetch_row, mark_novelty, warc_location
from schemas.items import FeedDocument, FetchRecord, NotDue, logged_headers
from schemas.vocab import Outcome

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from pipelines.document.checks import RuleFailure

logger = logging.getLogger(__name__)

__all__ = ["FeedPipeline", "FeedRows", "Known", "parsed_rows", "process_document", "settled_rows"]


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


def settled_rows(doc: FeedDocument, digest: str | None, known: Known | None, policy: Policy) -> FeedRows | None:
    """The rows of a feed that needs no parse (a 304, or the body hashes as last time); None: parse it."""
    if known is not None and (doc.status == 304 or digest == known.content_hash):
        record = fetch_record(doc, Outcome.NOT_MODIFIED if doc.status == 304 else Outcome.FEED)
        rows = carried_rows(Carried(doc.url, known.row, record, doc.headers))
        schedule(rows, known.items_per_week, policy)
        return FeedRows(rows, outcome=Outcome.NOT_MODIFIED if doc.status == 304 else UNCHANGED)
    if doc.status == 304:
        # A 304 to a request that sent no validators of ours (or whose state is gone): nothing to carry.
        error = "304 Not Modified, but no earlier fetch of this feed is in the dataset"
        return lost_rows(doc, Outcome.HTTP_ERROR, error)
    return None


def parsed_rows(parsed: Parsed, seen: Mapping[str, Seen], policy: Policy) -> FeedRows:
    """A parsed document's rows (:func:`pipelines.document.jobs.job_rows`), its items compared with the
    ones earlier jobs saw (when there are any: else the job marked them) and its next fetch scheduled."""
    rows = parsed.rows
    if seen:
        mark_novelty(rows, seen)
    feed = rows.rows["feeds"][0]
    result = FeedRows(rows, parsed.failures, Outcome.FEED if feed["format"] != "unknown" else Outcome.NOT_FEED)
    schedule(rows, parsed.items_per_week, policy)
    return result


def lost_rows(doc: FeedDocument, outcome: Outcome, error: str) -> FeedRows:
    """A fetched document that yields no rows but its fetch_log row, with this outcome and error."""
    rows = TableRows()
    rows.add("fetch_log", [fetch_row(fetch_record(doc, outcome, error))])
    return FeedRows(rows, outcome=outcome)


def fetch_record(doc: FeedDocument, outcome: Outcome, error: str | None = None) -> FetchRecord:
    """The fetch record of a fetched document, with this outcome (and error)."""
    return FetchRecord(
        url=doc.url,
        outcome=outcome,
        final_url=doc.final_url,
        status=doc.status,
        error=error,
        source=doc.source,
        discovered_via=doc.discovered_via,
        depth=doc.depth,
        content_type=doc.headers.get("content-type"),
        bytes=len(doc.body),
        fetched_at=doc.fetched_at,
        waited_for=doc.waited_for,
        **warc_location(doc),
        **logged_headers(doc.headers),
    )


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
    # The hints, not --ignore-hints: a copy of the policy only when it ignores them (replace() is not free).
    due = next_due(row_hints(feeds[0], rate), replace(policy, ignore_hints=False) if policy.ignore_hints else policy)
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
    """The rows of :func:`pipelines.document.process.document_rows` (what the benchmarks time)."""
    from pipelines.document.process import document_rows  # imported where used: with workers, only they parse

    return document_rows(doc, now)[0]


class FeedPipeline:
    """Feed documents become rows: in the document pool when there is one, else in this process."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.workers = document_workers(crawler)
        self._logged_rules: set[str] = set()  # profile rules whose internal failure was logged already

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FeedPipeline:
        return cls(crawler)

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, NotDue):
            self.stats.inc_value(f"feedcensus/outcome/{item.record.outcome}")
            return not_due_rows(item)
        if not isinstance(item, FeedDocument):
            return item
        history = history_of(self.crawler)
        # A URL first met this run that redirects to a known feed (an alias) is that feed.
        urls = dict.fromkeys((item.url, item.final_url))
        policy = history.policy if history is not None else Policy()
        known = next(filter(None, (_known(history, u) for u in urls)), None)
        # Hashed here only to compare with the last fetch; else with the parse (in a worker when there are workers).
        digest = content_digest(item) if known is not None else None
        result = settled_rows(item, digest, known, policy)
        if result is None:
            seen = _seen(history, urls)
            job = Job(item, datetime.now(UTC), self._job_id(), digest, known_items=bool(seen))
            answer = await self._answer(job)
            if isinstance(answer, Lost):
                logger.warning("%s: %s (recorded as %s)", item.url, answer.error, answer.outcome)
                result = lost_rows(item, answer.outcome, answer.error)
            else:
                result = parsed_rows(answer, seen, policy)
        self._count_rule_failures(item.final_url, result.failures)
        self._count(result)
        return result.rows

    async def _answer(self, job: Job) -> Answer:
        """The document's rows, from the crawl's document workers or computed here."""
        pool = self.workers.pool if self.workers is not None else None
        if pool is None:
            return job_rows(job)
        return await pool.run(job)

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
