"""One ``workers`` row per crawl process: who took part in a job and what each did.

A crawl on one machine writes one row; a distributed crawl (``--frontier``) one
per worker, so a job's totals are the sum of its rows whichever way it ran. The
row is written just before the dataset's last commit, from the crawl's stats.
"""

from __future__ import annotations

import os
import secrets
import socket
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scrapy import signals

from crawler.extensions.dataset import dataset_of
from schemas.vocab import FAILURE_OUTCOMES

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


def new_worker_id() -> str:
    """``host:pid:token``: unique among the processes of a job, readable in a status listing."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def worker_row(
    worker: str, stats: dict[str, Any], *, started: datetime, finished: datetime, frontier: str | None
) -> dict[str, Any]:
    """The ``workers`` row of one process, from its stats."""
    host, pid, _ = [*worker.split(":"), "", "", ""][:3]
    return {
        "worker": worker,
        "host": host or None,
        "pid": int(pid) if pid.isdigit() else None,
        "frontier": frontier,
        "started_at": started,
        "finished_at": finished,
        "finish_reason": stats.get("finish_reason"),
        "requests": stats.get("downloader/request_count", 0),
        "responses": stats.get("response_received_count", 0),
        "feeds": stats.get("feedcensus/outcome/feed", 0),
        "items": stats.get("feedcensus/items", 0),
        "errors": sum(stats.get(f"feedcensus/outcome/{o}", 0) for o in FAILURE_OUTCOMES),
        "requeued": stats.get("feedcensus/frontier/requeued", 0),
    }


class WorkerRecord:
    """Writes this process's ``workers`` row when the spider closes (a Scrapy extension)."""

    def __init__(self, crawler: Crawler, worker: str) -> None:
        self.crawler = crawler
        self.worker = worker
        self.started = datetime.now(UTC)
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler, crawler.settings.get("FEEDCENSUS_WORKER_ID") or new_worker_id())

    def _spider_opened(self) -> None:
        self.started = datetime.now(UTC)
        dataset_of(self.crawler).add_hook("before_close", "workers_row", self._write)

    def _write(self) -> None:
        stats = self.crawler.stats.get_stats() if self.crawler.stats else {}
        frontier = self.crawler.settings.get("FEEDCENSUS_FRONTIER_DISPLAY") or None
        row = worker_row(self.worker, stats, started=self.started, finished=datetime.now(UTC), frontier=frontier)
        dataset_of(self.crawler).write("workers", [row])
