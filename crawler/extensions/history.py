"""What the dataset's earlier jobs say about each feed: the state of an incremental crawl.

feedcensus runs again and again into the same ``--out``; the jobs already
there are the state (``pipelines/dataset/state.py`` indexes them). This
extension opens that state when the spider opens and answers, per URL:

- is the feed due (``pipelines/dataset/schedule.py`` decides from the
  publisher's hints and the policy bounds), and if not, what to record
  instead of a request (a :class:`~schemas.items.NotDue`);
- which validators to send (``If-None-Match`` / ``If-Modified-Since``);
- what was known of it (the latest ``feeds`` row, carried forward when the
  feed has not changed) and which item identities were already seen.

A URL with no state (a page, a list, a feed never fetched) is simply fetched.
Off (``FEEDCENSUS_INCREMENTAL = False``), every answer is "fetch it anew".
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pyarrow as pa
from scrapy import signals
from scrapy.utils.defer import deferred_from_coro

from crawler.extensions.dataset import dataset_of
from crawler.requests import parent_key
from pipelines.dataset.schedule import Due, Hints, Policy, next_due
from pipelines.dataset.state import FeedState, SeenItem, StateIndex, conditional_headers, hints_of
from schemas.items import FetchContext, FetchRecord, NotDue
from schemas.vocab import Outcome

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: The stat holding why the earlier jobs could not be read (then the crawl stopped before fetching), and
#: the spider's close reason.
STAT_ERROR = "feedcensus/history_error"
HISTORY_ERROR = "history_error"


class History:
    """The incremental crawl's view of the earlier jobs (a Scrapy extension; see the module docstring)."""

    def __init__(self, crawler: Crawler, *, enabled: bool, conditional: bool, policy: Policy) -> None:
        self.crawler = crawler
        self.enabled = enabled
        self.conditional = conditional
        self.policy = policy
        self.index: StateIndex | None = None
        #: URLs already recorded as not due in this run (a feed named twice is recorded once).
        self._not_due: set[str] = set()
        #: True the first time a URL is recorded as not due in this job (the second argument: the page
        #: that named it, if any). A distributed crawl's worker replaces it with the frontier's claim,
        #: which every worker of the job shares and which knows a page read again.
        self.claim_not_due: Callable[[str, str | None], bool] = self._claim_here
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        policy = Policy(
            min_interval=timedelta(seconds=settings.getfloat("FEEDCENSUS_MIN_INTERVAL")),
            max_interval=timedelta(seconds=settings.getfloat("FEEDCENSUS_MAX_INTERVAL")),
            # Without conditional requests (--refetch) every feed is fetched and parsed anew: all are due.
            ignore_hints=settings.getbool("FEEDCENSUS_IGNORE_HINTS") or not settings.getbool("FEEDCENSUS_CONDITIONAL"),
        )
        return cls(
            crawler,
            enabled=settings.getbool("FEEDCENSUS_INCREMENTAL"),
            conditional=settings.getbool("FEEDCENSUS_CONDITIONAL"),
            policy=policy,
        )

    def _spider_opened(self) -> None:
        if not self.enabled:
            return
        dataset = dataset_of(self.crawler)
        started = time.monotonic()
        try:
            self.index = StateIndex.open(dataset.out, exclude_job=dataset.job_id)
        except (OSError, pa.ArrowException) as exc:  # a part file cut short or not Parquet, an unreadable folder
            self._stop(f"cannot read the earlier jobs of {dataset.out}: {' '.join(str(exc).split())}")
            return
        known = self.index.count()
        stats = self.crawler.stats
        assert stats is not None
        stats.set_value("feedcensus/history/jobs", len(self.index.jobs))
        stats.set_value("feedcensus/history/feeds", known)
        if not self.index.jobs:
            # The first job of a dataset: there is nothing to look up, so no query is made for each
            # request and feed (what they cost a first crawl: benchmarks/RESULTS.md, section 11).
            self.index.close()
            self.index = None
        else:
            logger.info(
                "incremental: %d known feeds from %d earlier jobs (state read in %.1f s)",
                known,
                len(self.index.jobs),
                time.monotonic() - started,
            )

    def _stop(self, message: str) -> None:
        """The earlier jobs cannot be read: stop before fetching. Crawling on would fetch every feed anew
        and write a job that knows nothing of them (exit 2, ``STAT_ERROR``)."""
        logger.error("%s; stopping the crawl", message)
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(STAT_ERROR, message)
        engine = self.crawler.engine
        if engine is not None:
            deferred_from_coro(engine.close_spider_async(reason=HISTORY_ERROR))

    def _spider_closed(self) -> None:
        if self.index is not None:
            self.index.close()

    # --- what the spider and the feed pipeline ask ---------------------------------

    def previous(self, url: str) -> FeedState | None:
        """What the earlier jobs know of the feed at ``url`` (None: nothing, or incremental crawls are off)."""
        if self.index is None:
            return None
        state = self.index.feed(url)
        return state if state is not None and state.row is not None else None

    def seen_items(self, url: str) -> dict[str, SeenItem]:
        return self.index.seen_items(url) if self.index is not None else {}

    def due(self, state: FeedState | None, *, retry_after: str | None = None, now: datetime | None = None) -> Due:
        """When a feed is next due after a fetch: from its state, or after a 429/503 carrying ``retry_after``."""
        hints = hints_of(state) if state is not None else Hints(fetched_at=None)
        if retry_after is not None:
            at = now or datetime.now(UTC)
            hints = replace(hints, fetched_at=hints.fetched_at or at, retry_after=retry_after, retry_at=at)
        return next_due(hints, self.policy)

    def before_request(
        self, url: str, ctx: FetchContext, now: datetime | None = None
    ) -> NotDue | FetchRecord | dict[str, str]:
        """Before requesting ``url``: the headers to send, or what to record when the feed is not due.

        Returns request headers (possibly empty) when the URL is to be fetched; a ``NotDue`` the first
        time a known feed is not due; a ``duplicate`` record when it was already recorded as not due.
        """
        if self.index is None:
            return {}
        state = self.index.feed(url)
        if state is None:
            return self._redirected_here(url, ctx, now or datetime.now(UTC))
        now = now or datetime.now(UTC)
        due = next_due(hints_of(state), self.policy)
        if due.is_due(now):
            return conditional_headers(state) if self.conditional and state.row is not None else {}
        if not self.claim_not_due(url, parent_key(ctx)):
            return FetchRecord.for_context(ctx, url, Outcome.DUPLICATE, error="already recorded as not due")
        record = FetchRecord.for_context(
            ctx,
            url,
            Outcome.NOT_DUE,
            fetched_at=now,
            next_due=due.at,
            due_hint=due.hint,
            due_reason=due.reason,
        )
        previous = None if state.row is None else {**state.row, "parsed_job": state.parsed_job}
        return NotDue(record=record, previous=previous)

    def _redirected_here(self, url: str, ctx: FetchContext, now: datetime) -> NotDue | FetchRecord | dict[str, str]:
        """A URL no earlier job had as a feed, which a known feed's latest fetch was redirected to.

        Two URLs can reach one feed (a list names ``/rss``, which redirects to the ``/feed.xml`` a page
        advertises): the one requested first is the feed, the other, redirected to a URL already
        requested, a duplicate. When that feed is not due it is not requested, so nothing makes the
        other URL a duplicate any more, and it was fetched as a new feed with every item new. Now it
        stands for the known feed: that feed's ``NotDue`` (carried forward under its own URL) the
        first time, a duplicate after. A due feed is requested as before.
        """
        assert self.index is not None  # before_request looked
        known = self.index.feed_ending_at(url)
        state = self.index.feed(known) if known is not None else None
        if known is None or state is None or state.row is None or state.row.get("final_url") != url:
            return {}
        due = next_due(hints_of(state), self.policy)
        if due.is_due(now):
            return {}
        if not self.claim_not_due(known, parent_key(ctx)):
            return FetchRecord.for_context(
                ctx, url, Outcome.DUPLICATE, error=f"already recorded as not due: the feed at {known}, redirected here"
            )
        record = FetchRecord.for_context(
            ctx, known, Outcome.NOT_DUE, fetched_at=now, next_due=due.at, due_hint=due.hint, due_reason=due.reason
        )
        return NotDue(record=record, previous={**state.row, "parsed_job": state.parsed_job})

    def _claim_here(self, url: str, parent: str | None) -> bool:
        """One process: the first claim of ``url`` records it (a page is read once here, so ``parent`` does not matter)."""
        if url in self._not_due:
            return False
        self._not_due.add(url)
        return True


def history_of(crawler: Crawler) -> History | None:
    """The crawl's History extension (None when it is not enabled in EXTENSIONS)."""
    return crawler.get_extension(History)
