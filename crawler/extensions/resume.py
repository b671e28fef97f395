"""Resuming an interrupted crawl, even one killed with SIGKILL.

Scrapy's ``JOBDIR`` keeps the scheduler queue on disk but writes its
bookkeeping only on a clean shutdown, so a killed crawl cannot continue from
it. feedcensus keeps its own state in the ``--resume`` folder instead:

- ``state.json``: the job id, the output and the inputs of the run;
- ``journal.jsonl``: every request the crawl scheduled (URL and context), one
  JSON line each, synced to disk before every dataset commit.

The dataset is the record of what is done: a URL with a committed
``fetch_log`` row is done. On resume the writer first deletes files of an
unfinished commit; then the inputs and every journal entry are requested
again, and a duplicate filter seeded with the done URLs drops those already
written, without a new row. Because the journal is synced before each
commit, every committed page's discoveries are in the journal; because a
feed's rows share one commit, a feed is either wholly written or fetched
again. So nothing written is fetched twice, and nothing is missing.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.dupefilters import RFPDupeFilter
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

STATE_FILE = "state.json"
JOURNAL_FILE = "journal.jsonl"


class ResumeError(Exception):
    """The resume folder does not fit the crawl asked for."""


def read_state(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    path = Path(folder, STATE_FILE)
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeError(f"cannot read {path}: {exc}") from None


def write_state(folder: str | os.PathLike[str], state: dict[str, Any]) -> None:
    Path(folder).mkdir(parents=True, exist_ok=True)
    tmp = Path(folder, f".{STATE_FILE}.tmp")
    tmp.write_text(json.dumps(state, indent=2), encoding="utf-8")
    tmp.replace(Path(folder, STATE_FILE))


def read_journal(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Journal entries; a last line cut short by a kill is skipped."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, generator
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                yield entry


@dataclass
class ResumeState:
    folder: Path
    #: URLs with a committed fetch_log row in this job (requested URL and final URL).
    done: set[str] = field(default_factory=set)
    #: The journal as the interrupted run left it (read before this run appends to it).
    journal: list[dict[str, Any]] = field(default_factory=list)


_STATES: WeakKeyDictionary[Crawler, ResumeState | None] = WeakKeyDictionary()


def resume_state(crawler: Crawler) -> ResumeState | None:
    """What is already done in this job, or None when the crawl is not resumable."""
    if crawler in _STATES:
        return _STATES[crawler]
    folder = crawler.settings.get("FEEDCENSUS_RESUME_DIR")
    state = None
    if folder:
        from pipelines.dataset.store import open_table
        from pipelines.writer import dataset_for

        writer = dataset_for(crawler)  # discards an unfinished commit first
        state = ResumeState(Path(folder), journal=list(read_journal(Path(folder, JOURNAL_FILE))))
        try:
            table = open_table(writer.out, "fetch_log", writer.job_id).to_table(columns=["url", "final_url"])
        except FileNotFoundError:
            table = None
        if table is not None:
            for col in ("url", "final_url"):
                state.done.update(u for u in table.column(col).to_pylist() if u)
        if state.done:
            logger.info("resume: %d URLs already written in job %s", len(state.done), writer.job_id)
    _STATES[crawler] = state
    return state


class ResumeDupeFilter(RFPDupeFilter):
    """Scrapy's duplicate filter, seeded with the URLs a resumed job already wrote.

    It never uses Scrapy's ``JOBDIR`` file: requests seen but not finished
    before a kill must be allowed again.
    """

    def __init__(
        self, path: str | None = None, debug: bool = False, *, fingerprinter: Any = None, done: set[bytes] | None = None
    ) -> None:
        super().__init__(None, debug, fingerprinter=fingerprinter)
        self.done = done or set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        from scrapy import Request

        state = resume_state(crawler)
        fingerprinter = crawler.request_fingerprinter
        done = {fingerprinter.fingerprint(Request(u)) for u in state.done} if state else set()
        return cls(None, crawler.settings.getbool("DUPEFILTER_DEBUG"), fingerprinter=fingerprinter, done=done)

    def request_seen(self, request: Request) -> bool:
        if self.done and self._fingerprint(request) in self.done:
            request.meta["fc_done"] = True  # written by the interrupted run: no new fetch_log row
            return True
        return super().request_seen(request)


class CrawlJournal:
    """Appends every scheduled request to the journal; syncs it before each dataset commit."""

    def __init__(self, crawler: Crawler) -> None:
        folder = crawler.settings.get("FEEDCENSUS_RESUME_DIR")
        if not folder:
            raise NotConfigured
        Path(folder).mkdir(parents=True, exist_ok=True)
        self.crawler = crawler
        self.path = Path(folder, JOURNAL_FILE)
        self.fh = open(self.path, "ab")  # noqa: SIM115 - closed on spider_closed
        crawler.signals.connect(self.request_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def spider_opened(self) -> None:
        from pipelines.writer import dataset_for

        dataset_for(self.crawler).before_commit.insert(0, self.sync)

    def request_scheduled(self, request: Request) -> None:
        meta = request.meta
        if "redirect_urls" in meta or "retry_times" in meta or "fc" not in meta:
            return  # redirects and retries are redone by requesting the original again
        self.fh.write(json.dumps({"url": request.url, "fc": meta["fc"]}, separators=(",", ":")).encode() + b"\n")

    def sync(self) -> None:
        if not self.fh.closed:
            self.fh.flush()
            os.fsync(self.fh.fileno())

    def spider_closed(self) -> None:
        self.sync()
        self.fh.close()
