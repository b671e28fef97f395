"""Resuming an interrupted crawl, even one killed with SIGKILL.

Scrapy's ``JOBDIR`` keeps the scheduler queue on disk but writes its
bookkeeping only on a clean shutdown, so a killed crawl cannot continue from
it. feedcensus keeps its own state in the ``--resume`` folder instead:

- ``state.json``: the job id, the output, the inputs (local paths made
  absolute, so a resume from another folder reads the same files) and every
  option of the run (``options``: the flags, ``-s`` settings, log level and
  log file), which a resume with only ``--resume DIR`` uses again;
- ``journal.jsonl``: every request the crawl scheduled (URL and context), one
  JSON line each, synced to disk before every dataset commit.

The dataset is the record of what is done: a URL with a committed
``fetch_log`` row is done. On resume the dataset extension
(``crawler.extensions.dataset.Dataset``) first deletes files of an unfinished commit and
reads the done URLs; then the inputs and every journal entry are requested
again, and the duplicate filter drops those the dataset says are written,
without a new row. Because the journal is synced before each
commit, every committed page's discoveries are in the journal; because a
feed's rows share one commit, a feed is either wholly written or fetched
again. So nothing written is fetched twice, and nothing is missing.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.dupefilters import RFPDupeFilter
from scrapy.exceptions import NotConfigured

from schemas.items import FetchContext, context_from_meta

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

    from crawler.extensions.dataset import Dataset

STATE_FILE = "state.json"
JOURNAL_FILE = "journal.jsonl"


class ResumeError(Exception):
    """The resume folder does not fit the crawl asked for."""


def read_state(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    path = Path(folder, STATE_FILE)
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeError(f"cannot read {path}: {exc}") from None
    if not isinstance(state, dict):
        raise ResumeError(f"cannot read {path}: not a JSON object")
    problem = _state_problem(state)
    if problem:
        raise ResumeError(f"{path} is not a feedcensus resume state: {problem}")
    return state


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _state_problem(state: dict[str, Any]) -> str | None:
    """What is wrong with a state read from disk (None: nothing)."""
    for key in ("job_id", "out"):
        if not isinstance(state.get(key), str) or not state[key]:
            return f"{key} is not a string"
    for key in ("seeds", "opml", "url"):
        if not _is_str_list(state.get(key)):
            return f"{key} is not a list of strings"
    options = state.get("options", {})
    if not isinstance(options, dict) or not _is_str_list(options.get("set", [])):
        return "options is not an object with a list of settings"
    return None


def write_state(folder: str | os.PathLike[str], state: dict[str, Any]) -> None:
    Path(folder).mkdir(parents=True, exist_ok=True)
    tmp = Path(folder, f".{STATE_FILE}.tmp")
    tmp.write_text(json.dumps(state, indent=2), encoding="utf-8")
    tmp.replace(Path(folder, STATE_FILE))


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One request the interrupted run scheduled."""

    url: str
    context: FetchContext


def read_journal(path: str | os.PathLike[str]) -> Iterator[JournalEntry]:
    """Journal entries; a last line cut short by a kill (or any line that is not an entry) is skipped."""
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
                try:
                    yield JournalEntry(entry["url"], FetchContext.from_json(entry.get("fc") or {}))
                except (TypeError, ValueError):
                    continue


class ResumeDupeFilter(RFPDupeFilter):
    """Scrapy's duplicate filter that also drops what a resumed job already wrote (without a new row).

    It never uses Scrapy's ``JOBDIR`` file: requests seen but not finished
    before a kill must be allowed again. What is written is the dataset's
    word (``Dataset.is_done_request``), not a list of its own.
    """

    def __init__(
        self,
        path: str | None = None,
        debug: bool = False,
        *,
        fingerprinter: Any = None,
        dataset: Dataset | None = None,
    ) -> None:
        super().__init__(None, debug, fingerprinter=fingerprinter)
        self.dataset = dataset

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        from crawler.extensions.dataset import Dataset

        return cls(
            None,
            crawler.settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=crawler.request_fingerprinter,
            dataset=crawler.get_extension(Dataset),
        )

    def request_seen(self, request: Request) -> bool:
        if self.dataset is not None and self.dataset.is_done_request(request):
            return True
        return super().request_seen(request)


class CrawlJournal:
    """Appends every scheduled request to the journal; syncs it before each dataset commit.

    :attr:`previous` holds the journal as the interrupted run left it (read
    before this run appends): the spider requests all of it again.
    """

    def __init__(self, crawler: Crawler, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.crawler = crawler
        self.path = folder / JOURNAL_FILE
        self.previous: list[JournalEntry] = list(read_journal(self.path))
        self.fh = open(self.path, "ab")  # noqa: SIM115 - closed on spider_closed
        self._lock = threading.Lock()
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.request_scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        folder = crawler.settings.get("FEEDCENSUS_RESUME_DIR")
        if not folder:
            raise NotConfigured
        return cls(crawler, Path(folder))

    def spider_opened(self) -> None:
        """Keep the journal ahead of the data: flushed when the dataset takes a batch, fsynced before it is written."""
        from crawler.extensions.dataset import dataset_of

        dataset = dataset_of(self.crawler)
        dataset.add_hook("on_take", "journal", self.flush)
        dataset.add_hook("before_commit", "journal", self.fsync)

    def request_scheduled(self, request: Request) -> None:
        meta = request.meta
        ctx = context_from_meta(meta)
        if ctx is None or "redirect_urls" in meta or "retry_times" in meta:
            return  # redirects and retries are redone by requesting the original again
        line = json.dumps({"url": request.url, "fc": ctx.to_json()}, separators=(",", ":"))
        with self._lock:
            self.fh.write(line.encode() + b"\n")

    def flush(self) -> None:
        with self._lock:
            if not self.fh.closed:
                self.fh.flush()

    def fsync(self) -> None:
        with self._lock:
            if not self.fh.closed:
                os.fsync(self.fh.fileno())

    def spider_closed(self) -> None:
        with self._lock:
            self.fh.flush()
            os.fsync(self.fh.fileno())
            self.fh.close()
