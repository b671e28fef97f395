"""Scrapy's downloader with its per-host concurrency limit held (``DOWNLOADER``).

Scrapy 2.19 starts each download from a host's slot as an asyncio task, and the task adds its request to
the slot's ``transferring`` set only when it first runs, on a later turn of the event loop. The loop
that starts downloads asks the slot how many more it may start (``free_transfer_slots()``), and with no
delay between requests it goes on asking before any task has run: it starts every queued request of
the host at once. Measured on a loopback host with ``CONCURRENT_REQUESTS_PER_DOMAIN=1`` and no delay
(``AUTOTHROTTLE_ENABLED=False``, ``DOWNLOAD_DELAY=0``): 17 requests within 70 ms, each answered in
0.4 s, so 17 in flight at once. With a delay the loop starts one request a turn, which hid it.

:class:`PoliteDownloader` counts a request as transferring the moment it is taken from the slot's
queue, so the limit holds whatever the delay. Nothing else changes.
"""

from __future__ import annotations

from time import monotonic
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader import Downloader
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import _schedule_coro

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot


class PoliteDownloader(Downloader):
    """Scrapy's downloader; a request counts against its host's concurrency from the moment it is started.

    In a distributed job (``FEEDCENSUS_FRONTIER``) the delay between two requests to a host is the job's,
    kept by the frontier when it hands requests out (crawler/frontier/scheduler.py): a request starts as
    soon as it is taken. Waiting here again, from this process's own last request to the host (with
    Scrapy's random 0.5-1.5x), would move its start away from the time the job reserved for it, and
    another worker's request could then come right after it. A slot's ``delay`` is still kept (the
    Crawl-delay, the adaptive delay): the worker reports it to the frontier as the host's delay."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.shared_delay = bool(crawler.settings.get("FEEDCENSUS_FRONTIER"))

    def _process_queue(self, slot: Slot) -> None:
        if slot.latercall:
            return  # a delay (or a host's pause) is running: its call processes the queue
        now = monotonic()
        delay = 0.0 if self.shared_delay else slot.download_delay()
        if delay and slot.lastseen + delay > now:
            slot.latercall = call_later(slot.lastseen + delay - now, self._latercall, slot)
            return
        while slot.queue and slot.free_transfer_slots() > 0:
            slot.lastseen = now
            request, queue_dfd = slot.queue.popleft()
            slot.transferring.add(request)  # now, not when the task first runs: the next turn of this loop counts it
            _schedule_coro(self._wait_for_download(slot, request, queue_dfd))
            if delay:  # one request per delay: the next one waits for it
                self._process_queue(slot)
                break
