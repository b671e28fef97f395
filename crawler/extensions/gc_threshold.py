"""How often Python's cyclic garbage collector runs during a crawl (``FEEDCENSUS_GC_THRESHOLD``).

CPython frees almost every object of a crawl by reference counting; its cyclic collector only has
to find the few cycles (a crawl of 5,000 sites of the benchmark's loop web left about 6,000 objects
in cycles, from Twisted's Deferreds and Scrapy's Failures). But with CPython 3.11's default threshold
(a young-generation collection once allocations outnumber deallocations of container objects by
700) it ran about 800 times in that crawl, and its full collections walk every object the process
holds (the imported code, Scrapy's queues): 1.07 s of the reactor thread's 29 s of CPU. With a young
generation of 10,000 and every object that exists when the engine starts moved out of the
collector's sight (``gc.freeze``), the same crawl ran it 10 times, for 0.04 s.

Both are the whole process's while the engine runs (crawler/extensions/interpreter.py): set when the
first engine starts, put back when the last one stops, when everything frozen is handed back to the
collector (``gc.unfreeze``; a garbage cycle that existed at the start is collected only then). A
process that froze objects itself (``gc.get_freeze_count()`` above 0: a server that forks, say) gets
only the threshold: its freeze is its own. ``0`` (or less) turns this off.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

from crawler.extensions.interpreter import InterpreterSetting


@dataclass(frozen=True, slots=True)
class Collector:
    """The collector as the crawl found it: its thresholds, and whether nothing was frozen (so the crawl freezes)."""

    thresholds: tuple[int, int, int]
    froze: bool


class GcThreshold(InterpreterSetting[Collector]):
    """Raises the young generation's threshold and freezes the live objects while the engine runs (a
    Scrapy extension)."""

    setting = "FEEDCENSUS_GC_THRESHOLD"

    def apply(self) -> Collector:
        before = Collector(gc.get_threshold(), froze=gc.get_freeze_count() == 0)
        if before.froze:  # else the process froze objects itself: leave its freeze alone
            gc.freeze()  # the imported code, the settings, the components: they live as long as the crawl
        # At least 1: a threshold of 0 (a setting of 0.5, say) would turn automatic collection off altogether.
        gc.set_threshold(max(int(self.value), 1), *before.thresholds[1:])
        return before

    def restore(self, saved: Collector) -> None:
        gc.set_threshold(*saved.thresholds)
        if saved.froze:
            gc.unfreeze()  # back in the oldest generation, where the collector sees them again
