"""A host that says "slow down" is slowed as a whole: the thin Scrapy component around ``crawler.fetch.politeness``.

Scrapy's retry middleware makes the one refused request wait before it is tried again, and the host's
other requests go on: a host answering 429 with ``Retry-After: 20`` got 36 more requests in those 20 s
(issue #41). ``HostPauseMiddleware`` pauses the host's download slot instead: after a 429 or a 503 no
request to that host starts until the pause ends (requests already being downloaded finish). The
requests queued for the host wait in its slot, where Scrapy's downloader-aware priority queue sees
them and hands out other hosts' requests meanwhile.

It sits just above the retry middleware (550), so it sees the 429 before the retry is made, and a
retried request, a redirect and robots.txt come through it like any other request.

In a distributed job (``FEEDCENSUS_FRONTIER``) a pause is the whole job's: the worker that got the answer
puts it in the frontier (one Redis round trip per 429/503), and every worker reads the job's paused hosts
with its heartbeat (no round trip more), so another worker stops asking the host within one heartbeat
(``FEEDCENSUS_FRONTIER_HEARTBEAT``, 5 s) of the answer.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from time import monotonic
from typing import TYPE_CHECKING, Any

from scrapy.utils.asyncio import call_later
from twisted.python.failure import Failure

from crawler.extensions.jobfrontier import job_frontier
from crawler.fetch.politeness import HostPauses, Pause
from crawler.outcomes import RefusedRequest
from schemas.items import WAITED_META_KEY
from schemas.vocab import Outcome

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.core.downloader import Downloader
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: The request's meta key saying why it waited (a pause it found its host in): its fetch_log row's waited_for.
WAITED_META = WAITED_META_KEY


class HostPauseMiddleware:
    """Pauses a host's download slot after a 429 or 503, for its Retry-After or a back-off (capped)."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.pauses = HostPauses(
            base=settings.getfloat("FEEDCENSUS_RETRY_BACKOFF_BASE"),
            cap=settings.getfloat("FEEDCENSUS_HOST_PAUSE_MAX"),
        )
        #: The pause each held slot is held for (by slot key); an entry goes when its host's pause is over.
        self._held: dict[str, Pause] = {}
        #: A distributed job's frontier (its paused hosts are the job's), found when the first request comes.
        self._distributed = bool(settings.get("FEEDCENSUS_FRONTIER"))
        self._frontier: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _downloader(self) -> Downloader | None:
        engine = self.crawler.engine
        return engine.downloader if engine is not None else None

    def paused_hosts(self) -> int:
        """How many hosts are paused now (for the progress line and the stats)."""
        return self.pauses.count(monotonic())

    async def process_request(self, request: Request) -> None:
        downloader = self._downloader()
        if downloader is None:
            return
        key = downloader.get_slot_key(request)
        now = monotonic()
        frontier = self._job_frontier()
        if frontier is not None and key in frontier.paused:  # paused by another worker of the job
            until, why = frontier.paused[key]
            if until > now:
                self.pauses.adopt(key, until, why)
        pause = self.pauses.paused(key, now)
        if self._held:
            self._count_paused(now)
        if pause is None:
            self._held.pop(key, None)
            return
        if pause.deferred:  # not sent, not dropped: a deferred row now, fetched by a later run
            raise self._deferred(pause, now)
        request.meta[WAITED_META] = pause.reason
        self.crawler.stats.inc_value("politeness/requests_waited")
        slot = downloader.slots.get(key)
        if slot is not None:
            self._hold(downloader, key, slot, pause, now)  # the request waits in the slot's queue
        else:  # the slot went idle and was dropped during a long pause: wait here
            from scrapy.utils.defer import maybe_deferred_to_future
            from twisted.internet import reactor
            from twisted.internet.task import deferLater

            await maybe_deferred_to_future(deferLater(reactor, pause.remaining(now), lambda: None))

    def process_response(self, request: Request, response: Response) -> Request | Response:
        downloader = self._downloader()
        if downloader is None:
            return response
        key = downloader.get_slot_key(request)
        header = response.headers.get(b"Retry-After")
        now = monotonic()
        pause = self.pauses.answered(
            key,
            response.status,
            header.decode("latin-1") if header else None,
            now=now,
            wall=datetime.now(UTC),
        )
        if pause is not None:
            frontier = self._job_frontier()
            if frontier is not None:  # the whole job leaves the host alone, not only this worker
                from crawler.frontier import FrontierError

                try:
                    left = frontier.pause_host(key, pause.remaining(now), pause.reason, deferred=pause.deferred)
                except FrontierError as exc:  # the frontier's own failure stops the crawl where it is next used
                    logger.warning("frontier: could not share the pause of %s: %s", key, exc)
                else:
                    pause = self.pauses.adopt(key, now + left, pause.reason)
            slot = downloader.slots.get(key)
            if slot is not None and pause.deferred:  # the requests waiting in its slot are recorded, not sent
                while slot.queue:
                    _, waiting = slot.queue.popleft()
                    waiting.errback(Failure(self._deferred(pause, now)))  # type: ignore[no-untyped-call]
            elif slot is not None:
                self._hold(downloader, key, slot, pause, now)
            self.crawler.stats.inc_value("politeness/pauses")
            self._count_paused(now)
            logger.info("%s: no request for %.1f s", pause.reason, pause.remaining(now))
        return response

    def _job_frontier(self) -> Any:
        """The distributed job's frontier (None on a plain crawl, or before the worker has joined the job)."""
        if self._distributed and self._frontier is None:
            self._frontier = job_frontier(self.crawler)
        return self._frontier

    def _count_paused(self, now: float) -> None:
        """The stat the progress line shows: hosts paused now (as of the last request or pause). The slots whose
        pause is over are forgotten, so once every pause has ended a request costs no more than before any."""
        self._held = {key: pause for key, pause in self._held.items() if pause.until > now}
        self.crawler.stats.set_value("politeness/hosts_paused", self.pauses.count(now))

    def _deferred(self, pause: Pause, now: float) -> RefusedRequest:
        """What a request to a deferred host raises: its fetch_log row, outcome ``deferred``."""
        self.crawler.stats.inc_value("politeness/requests_deferred")
        return RefusedRequest(f"{pause.reason} ({pause.remaining(now):.0f} s more)", outcome=Outcome.DEFERRED)

    def _hold(self, downloader: Downloader, key: str, slot: Any, pause: Pause, now: float) -> None:
        """Start nothing from ``slot`` until the pause ends (Scrapy's own delay mechanism: the slot's latercall).
        The requests waiting in the slot say so in their rows (``waited_for``)."""
        for request, _ in slot.queue:
            request.meta.setdefault(WAITED_META, pause.reason)
        if self._held.get(key) is pause and slot.latercall is not None:
            return  # already held for this pause
        if slot.latercall is not None:
            slot.latercall.cancel()
        slot.latercall = call_later(pause.remaining(now), self._resume, downloader, slot)
        self._held[key] = pause

    def _resume(self, downloader: Downloader, slot: Any) -> None:
        """The pause is over: the slot's requests go. In a distributed job each one first reserves its start in
        the frontier (crawler/downloader.py), so every worker holding requests of the host, resuming at the same
        moment, keeps the host's delay after the job's last start to it, one request at a time."""
        slot.latercall = None
        downloader._latercall(slot)
