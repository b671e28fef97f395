"""Progress while a crawl runs, and a short summary when it ends.

On a terminal, one live status line on stderr (requests done and pending,
feeds parsed, errors, rate, elapsed time and, once a rate is known, an
estimate of the time the pending requests take); otherwise a log line every
``FEEDCENSUS_PROGRESS_INTERVAL`` seconds. A log record printed to the same
terminal clears the live line first (:class:`LiveLine`), so the two never run
into each other. Every crawl ends with a summary of inputs, pages, feeds,
items, errors by kind and where the data went (what was committed), logged to
the ``crawler.extensions.progress.summary`` logger: the ``feedcensus`` command
prints it itself, once, and keeps those records off the terminal.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, TextIO

from scrapy import signals
from twisted.internet import task

from crawler.fetch.words import counted

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
#: The summary's records: a command that prints the summary itself keeps them off the terminal.
SUMMARY_LOGGER = f"{__name__}.summary"
summary_logger = logging.getLogger(SUMMARY_LOGGER)

#: fetch_log outcomes that are not errors.
OK_OUTCOMES = ("feed", "page", "opml", "duplicate", "robots", "not_modified", "not_due")


def outcome_counts(stats: dict[str, Any]) -> dict[str, int]:
    prefix = "feedcensus/outcome/"
    return {k[len(prefix) :]: v for k, v in sorted(stats.items()) if k.startswith(prefix)}


def clock(seconds: float) -> str:
    """A duration as m:ss, or h:mm:ss from an hour on."""
    minutes, secs = divmod(round(max(seconds, 0.0)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def status_line(stats: dict[str, Any], pending: int, elapsed: float) -> str:
    """Requests done and pending, feeds, items, errors, rate, elapsed time; the time left once a rate is known.

    The estimate is the pending requests at the current rate: the crawl may find more.
    """
    done = stats.get("response_received_count", 0)
    outcomes = outcome_counts(stats)
    errors = sum(v for k, v in outcomes.items() if k not in OK_OUTCOMES)
    rate = done / elapsed * 60 if elapsed > 0 else 0.0
    line = (
        f"{counted(done, 'response')}, {pending} pending, {counted(outcomes.get('feed', 0), 'feed')}, "
        f"{counted(stats.get('feedcensus/items', 0), 'item')}, {counted(errors, 'error')}, {rate:,.0f} responses/min, "
        f"elapsed {clock(elapsed)}"
    )
    if pending and rate > 0:
        line += f", ~{clock(math.ceil(pending / rate * 60))} left"
    paused = stats.get("politeness/hosts_paused", 0)
    if paused:  # hosts that answered 429/503 and wait out their Retry-After (crawler/middlewares/hostpause.py)
        line += f", {counted(paused, 'host')} paused"
    return line


def summary_lines(stats: dict[str, Any], out: str, job_id: str) -> list[str]:
    outcomes = outcome_counts(stats)
    errors = {k: v for k, v in outcomes.items() if k not in OK_OUTCOMES}
    lines = [
        f"inputs: {stats.get('feedcensus/inputs', 0)}   requests: {stats.get('downloader/request_count', 0)}   "
        f"responses: {stats.get('response_received_count', 0)}",
        f"{pages_line(stats, outcomes)}   opml lists: {outcomes.get('opml', 0)}",
        f"feeds: {outcomes.get('feed', 0)}   items: {stats.get('feedcensus/items', 0)}   "
        f"not well-formed: {stats.get('feedcensus/not_well_formed', 0)}   duplicates skipped: {outcomes.get('duplicate', 0)}",
        "errors: " + (", ".join(f"{k} {v}" for k, v in errors.items()) if errors else "none"),
    ]
    if stats.get("feedcensus/history/jobs"):
        lines.append(incremental_line(stats, outcomes))
    if stats.get("politeness/pauses"):
        lines.append(
            f"hosts that asked to slow down (429/503): {counted(stats['politeness/pauses'], 'pause')}, "
            f"{counted(stats.get('politeness/requests_waited', 0), 'request')} waited for one"
        )
    lines.append(data_line(stats, out, job_id))
    if "feedcensus/warc/dir" in stats:
        lines.append(
            f"warc: {stats['feedcensus/warc/dir']} ({counted(stats.get('feedcensus/warc/records', 0), 'record')} in "
            f"{counted(stats.get('feedcensus/warc/files', 0), 'file')}, {stats.get('feedcensus/warc/bytes', 0) / 1e6:.1f} MB)"
        )
    if stats.get("feedcensus/workers/processes"):
        lines.append(workers_line(stats))
    failed_rules = rule_failures(stats)
    if failed_rules:
        lines.append(
            "profile rules that failed on a document (not counted in conformance): "
            + ", ".join(f"{rule} {n}" for rule, n in failed_rules.items())
        )
    return lines


def pages_line(stats: dict[str, Any], outcomes: dict[str, int]) -> str:
    """The HTML pages read for feed links: those fetched as pages and, said apart, the HTML answers where a feed
    was expected (an OPML xmlUrl, an advertised link: outcome not_feed, counted among the errors), whose links
    are read too; ``pages: 0 (1 advertising feeds, 3 feed links)`` contradicted itself."""
    as_pages = outcomes.get("page", 0)
    read = max(stats.get("autodiscovery/pages", 0), as_pages)
    found = (
        f"{stats.get('autodiscovery/pages_advertising', 0)} advertising feeds, "
        f"{counted(stats.get('autodiscovery/links', 0), 'feed link')}"
    )
    if read == as_pages:
        return f"pages: {read} ({found})"
    return f"pages: {read} ({found}; {read - as_pages} of them HTML where a feed was expected, in errors as not_feed)"


def incremental_line(stats: dict[str, Any], outcomes: dict[str, int]) -> str:
    """What the earlier jobs saved this one: feeds not due, 304s, unchanged bodies; and the new items."""
    return (
        f"incremental: {counted(stats.get('feedcensus/history/feeds', 0), 'feed')} known from "
        f"{counted(stats['feedcensus/history/jobs'], 'earlier job')}; not due {outcomes.get('not_due', 0)}, "
        f"not modified {outcomes.get('not_modified', 0)}, unchanged {stats.get('feedcensus/unchanged', 0)}, "
        f"new items {stats.get('feedcensus/new_items', 0)}"
    )


def workers_line(stats: dict[str, Any]) -> str:
    """The document workers (FEEDCENSUS_WORKERS): how many, what they read (feeds and HTML pages), what they used."""
    # A worker reports its CPU time and peak RSS as it ends: workers killed by a forced stop reported none.
    peak = stats.get("feedcensus/workers/peak_rss_mb", 0)
    used = (
        f"CPU {stats.get('feedcensus/workers/cpu_seconds', 0):.1f} s, peak RSS of one {peak:.0f} MiB"
        if peak
        else "CPU and memory unknown: stopped before they reported"
    )
    return (
        f"workers: {counted(stats['feedcensus/workers/processes'], 'process', 'processes')} read "
        f"{counted(stats.get('feedcensus/workers/documents', 0), 'feed or page', 'feeds and pages')} "
        f"({used}; replaced {stats.get('feedcensus/workers/replaced', 0)})"
    )


def data_line(stats: dict[str, Any], out: str, job_id: str) -> str:
    """Where the data went and what was committed there: files, and rows of the main tables."""
    rows = {t: stats.get(f"feedcensus/rows/{t}", 0) for t in ("fetch_log", "feeds", "items")}
    return (
        f"data: {out} (job_id={job_id}; {counted(stats.get('feedcensus/files_written', 0), 'file')}; "
        f"fetch_log {rows['fetch_log']} rows, feeds {rows['feeds']}, items {rows['items']})"
    )


def rule_failures(stats: dict[str, Any]) -> dict[str, int]:
    """Rule id -> documents it failed on instead of judging them (``feedcensus/checks/internal_error/<rule>``)."""
    prefix = "feedcensus/checks/internal_error/"
    return {k[len(prefix) :]: v for k, v in sorted(stats.items()) if k.startswith(prefix)}


class LiveLine:
    """The one live status line on a terminal stream.

    :meth:`clear` is safe from any thread; :class:`ClearLiveLine` calls it
    before a log handler writes to the same terminal.
    """

    ERASE = "\r\x1b[K"

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = False
        self.ended = False
        self._lock = threading.Lock()

    def show(self, text: str) -> None:
        with self._lock:
            if self.ended:
                return
            self.stream.write(self.ERASE + text)
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        with self._lock:
            if self.shown:
                self.stream.write(self.ERASE)
                self.stream.flush()
                self.shown = False

    def end(self) -> None:
        """No more live line: one still shown (a forced stop never closed the spider) is ended with a newline,
        so that what is printed next (the summary) starts a line of its own instead of running on after it."""
        with self._lock:
            if self.shown:
                self.stream.write("\n")
                self.stream.flush()
                self.shown = False
            self.ended = True


class ClearLiveLine(logging.Filter):
    """A handler filter that clears the live line before the record is written (it drops nothing).

    Added last to a handler, it runs only for records the handler's other filters let through.
    """

    def __init__(self, line: LiveLine) -> None:
        super().__init__()
        self.line = line

    def filter(self, record: logging.LogRecord) -> bool:
        self.line.clear()
        return True


def terminal_handlers(stream: TextIO) -> list[logging.Handler]:
    """The root logger's handlers that write to ``stream`` (a file handler never does)."""
    return [
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler) and h.stream is stream
    ]


class Progress:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.interval = crawler.settings.getfloat("FEEDCENSUS_PROGRESS_INTERVAL")
        live = sys.stderr.isatty() and crawler.settings.getbool("FEEDCENSUS_LIVE_PROGRESS")
        self.line = LiveLine(sys.stderr) if live else None
        self._clear_filter = ClearLiveLine(self.line) if self.line is not None else None
        self.started = time.monotonic()
        self.loop: task.LoopingCall | None = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        # The dataset writer closes on spider_closed; the summary waits for its figures.
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)
        self.reason = "finished"

    @property
    def live(self) -> bool:
        return self.line is not None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def spider_opened(self) -> None:
        self.started = time.monotonic()
        if self._clear_filter is not None:
            for handler in terminal_handlers(sys.stderr):
                handler.addFilter(self._clear_filter)
        self.loop = task.LoopingCall(self.tick)
        self.loop.start(0.5 if self.live else self.interval, now=False)

    def _pending(self) -> int:
        """Requests scheduled and not yet dequeued, plus downloads in flight.

        On a distributed crawl's frontier, the job's queue (shared by every worker) as of this
        worker's last heartbeat.
        """
        stats = self.crawler.stats
        engine = self.crawler.engine
        shared = stats.get_value("feedcensus/frontier/queued")
        if shared is not None:
            queued = int(shared)
        else:
            queued = int(stats.get_value("scheduler/enqueued", 0)) - int(stats.get_value("scheduler/dequeued", 0))
        active = len(engine.downloader.active) if engine is not None else 0
        return max(queued, 0) + active

    def tick(self) -> None:
        line = status_line(self.crawler.stats.get_stats(), self._pending(), time.monotonic() - self.started)
        if self.line is not None:
            self.line.show(line)
        else:
            logger.info("progress: %s", line)

    def spider_closed(self, reason: str) -> None:
        self.reason = reason
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        if self.line is not None:
            self.line.clear()
        if self._clear_filter is not None:
            for handler in logging.getLogger().handlers:
                handler.removeFilter(self._clear_filter)

    def stop(self) -> None:
        """The crawl is over, closed or not (a second Ctrl-C stops the reactor without closing the spider):
        no more ticks, and the live line ends before the command prints the summary."""
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        if self.line is not None:
            self.line.end()

    def engine_stopped(self) -> None:
        from crawler.extensions.dataset import dataset_of

        ds = dataset_of(self.crawler)
        for line in summary_lines(self.crawler.stats.get_stats(), ds.out, ds.job_id):
            summary_logger.info("summary: %s", line)
        summary_logger.info("summary: %s in %s", self.reason, clock(time.monotonic() - self.started))
