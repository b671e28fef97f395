"""How often Python's cyclic garbage collector runs during a crawl (``FEEDCENSUS_GC_THRESHOLD``).

CPython frees almost every object of a crawl by reference counting; its cyclic collector only has
to find the few cycles (a crawl of 5,000 sites of the benchmark's loop web left about 6,000 objects
in cycles, from Twisted's Deferreds and Scrapy's Failures). But with the interpreter's default
threshold (a young-generation collection every 700 new container objects) it ran about 800 times
in that crawl, and its full collections walk every object the process holds (the imported code,
the earlier jobs' state, Scrapy's queues): 1.07 s of the reactor thread's 29 s of CPU. With a
young generation of 10,000 and everything that exists when the engine starts moved out of the
collector's sight (``gc.freeze``), the same crawl ran it 10 times, for 0.04 s.

Set when the engine starts (after the spider opened, so the earlier jobs' state read then is frozen
too) and put back when the last engine running in the process stops. ``0`` (or less) turns this off.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from crawler.extensions.scoped import WhileEngineRuns

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class GarbageCollection(WhileEngineRuns):
    """Raises the young generation's threshold and freezes the objects of the crawl's start while the
    engine runs (a Scrapy extension)."""

    def __init__(self, crawler: Crawler, threshold: int) -> None:
        super().__init__(crawler)
        self.threshold = threshold

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        threshold = crawler.settings.getint("FEEDCENSUS_GC_THRESHOLD")
        if threshold <= 0:
            raise NotConfigured
        return cls(crawler, threshold)

    def save(self) -> tuple[int, int, int]:
        return gc.get_threshold()

    def apply(self) -> None:
        _, older, oldest = gc.get_threshold()
        gc.freeze()  # what the crawl's start made lives as long as the crawl: no collection needs to walk it
        gc.set_threshold(self.threshold, older, oldest)

    def restore(self, saved: object) -> None:
        assert isinstance(saved, tuple)
        gc.set_threshold(*saved)
        gc.unfreeze()  # back in the oldest generation, where the collector sees them again
