"""AutoThrottle that takes a 304 or a 206 as the good answer it is (``AUTOTHROTTLE_ENABLED``).

Scrapy's AutoThrottle sets each host's delay from the latency of its answers, and lowers it only on a
200: a 304 (an error page, it assumes) may raise the delay but never lower it. Error pages are small
and fast, and lowering on them would speed a crawl up against a failing server. But a scheduled
re-crawl of known feeds is mostly 304s to conditional requests, and a Common Crawl census mostly 206s
to Range requests: answers that are the success of those requests. With Scrapy's rule they held every
host at ``AUTOTHROTTLE_START_DELAY`` (1 s): a re-crawl of 64 unchanged feeds of one host took 67 s,
13 times the 5 s it took without AutoThrottle (issue #41).

:class:`AdaptiveThrottle` is Scrapy's extension with that one rule changed: 200, 206 and 304 adjust the
delay both ways; every other status still only raises it. Nothing else differs (the settings, the
bounds, ``autothrottle_dont_adjust_delay``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.extensions.throttle import AutoThrottle

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.http import Response

#: Answers that are what the request asked for: the whole document, the range asked for, "not modified".
GOOD_ANSWERS = frozenset({200, 206, 304})


def next_delay(delay: float, latency: float, status: int, *, target: float, low: float, high: float) -> float:
    """A host's next delay after an answer with ``status`` that took ``latency`` s (AutoThrottle's rule).

    Half way to ``latency / target``, never below that target delay, within [low, high]; an answer
    that is not a :data:`GOOD_ANSWERS` one may raise the delay but not lower it.
    """
    target_delay = latency / target
    new = max(target_delay, (delay + target_delay) / 2.0)
    new = min(max(low, new), high)
    if status not in GOOD_ANSWERS and new <= delay:
        return delay
    return new


class AdaptiveThrottle(AutoThrottle):
    """Scrapy's AutoThrottle, lowering a host's delay on 206 and 304 answers as on 200s."""

    def _adjust_delay(self, slot: Slot, latency: float, response: Response) -> None:
        slot.delay = next_delay(
            slot.delay,
            latency,
            response.status,
            target=self.target_concurrency,
            low=self.mindelay,
            high=self.maxdelay,
        )
