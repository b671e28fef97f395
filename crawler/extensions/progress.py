"""Progress while a crawl runs, and a short summary when it ends.

On a terminal, one live status line on stderr (requests done and pending,
feeds parsed, errors, rate); otherwise a log line every
``FEEDCENSUS_PROGRESS_INTERVAL`` seconds. Every crawl ends with a summary of
inputs, pages, feeds, items, errors by kind and where the data went.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from twisted.internet import task

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: fetch_log outcomes that are not errors.
OK_OUTCOMES = ("feed", "page", "opml", "duplicate", "robots")


def outcome_counts(stats: dict[str, Any]) -> dict[str, int]:
    prefix = "feedcensus/outcome/"
    return {k[len(prefix) :]: v for k, v in sorted(stats.items()) if k.startswith(prefix)}


def status_line(stats: dict[str, Any], pending: int, elapsed: float) -> str:
    done = stats.get("response_received_count", 0)
    outcomes = outcome_counts(stats)
    errors = sum(v for k, v in outcomes.items() if k not in OK_OUTCOMES)
    rate = done / elapsed * 60 if elapsed > 0 else 0.0
    return (
        f"{done} responses, {pending} pending, {outcomes.get('feed', 0)} feeds, "
        f"{stats.get('feedcensus/items', 0)} items, {errors} errors, {rate:,.0f} responses/min"
    )


def summary_lines(stats: dict[str, Any], out: str, job_id: str) -> list[str]:
    outcomes = outcome_counts(stats)
    errors = {k: v for k, v in outcomes.items() if k not in OK_OUTCOMES}
    lines = [
        f"inputs: {stats.get('feedcensus/inputs', 0)}   requests: {stats.get('downloader/request_count', 0)}   "
        f"responses: {stats.get('response_received_count', 0)}",
        f"pages: {outcomes.get('page', 0)} ({stats.get('autodiscovery/pages_advertising', 0)} advertising feeds, "
        f"{stats.get('autodiscovery/links', 0)} feed links)   opml lists: {outcomes.get('opml', 0)}",
        f"feeds: {outcomes.get('feed', 0)}   items: {stats.get('feedcensus/items', 0)}   "
        f"not well-formed: {stats.get('feedcensus/not_well_formed', 0)}   duplicates skipped: {outcomes.get('duplicate', 0)}",
        "errors: " + (", ".join(f"{k} {v}" for k, v in errors.items()) if errors else "none"),
        f"data: {out} (job_id={job_id}; {stats.get('feedcensus/files_written', 0)} files)",
    ]
    failed_rules = rule_failures(stats)
    if failed_rules:
        lines.append(
            "profile rules that failed on a document (not counted in conformance): "
            + ", ".join(f"{rule} {n}" for rule, n in failed_rules.items())
        )
    return lines


def rule_failures(stats: dict[str, Any]) -> dict[str, int]:
    """Rule id -> documents it failed on instead of judging them (``feedcensus/checks/internal_error/<rule>``)."""
    prefix = "feedcensus/checks/internal_error/"
    return {k[len(prefix) :]: v for k, v in sorted(stats.items()) if k.startswith(prefix)}


class Progress:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.interval = crawler.settings.getfloat("FEEDCENSUS_PROGRESS_INTERVAL")
        self.live = sys.stderr.isatty() and crawler.settings.getbool("FEEDCENSUS_LIVE_PROGRESS")
        self.started = time.monotonic()
        self.loop: task.LoopingCall | None = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        # The dataset writer closes on spider_closed; the summary waits for its figures.
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)
        self.reason = "finished"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def spider_opened(self) -> None:
        self.started = time.monotonic()
        self.loop = task.LoopingCall(self.tick)
        self.loop.start(0.5 if self.live else self.interval, now=False)

    def _pending(self) -> int:
        """Requests scheduled and not yet dequeued, plus downloads in flight."""
        stats = self.crawler.stats
        engine = self.crawler.engine
        queued = int(stats.get_value("scheduler/enqueued", 0)) - int(stats.get_value("scheduler/dequeued", 0))
        active = len(engine.downloader.active) if engine is not None else 0
        return max(queued, 0) + active

    def tick(self) -> None:
        line = status_line(self.crawler.stats.get_stats(), self._pending(), time.monotonic() - self.started)
        if self.live:
            sys.stderr.write("\r\x1b[K" + line)
            sys.stderr.flush()
        else:
            logger.info("progress: %s", line)

    def spider_closed(self, reason: str) -> None:
        self.reason = reason
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        if self.live:
            sys.stderr.write("\r\x1b[K")

    def engine_stopped(self) -> None:
        from pipelines.writer import dataset_of

        ds = dataset_of(self.crawler)
        for line in summary_lines(self.crawler.stats.get_stats(), ds.out, ds.job_id):
            logger.info("summary: %s", line)
        logger.info("summary: %s in %.1f s", self.reason, time.monotonic() - self.started)
