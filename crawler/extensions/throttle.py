"""AutoThrottle that takes a 304 or a 206 as the good answer it is (``AUTOTHROTTLE_ENABLED``), and a host's
robots.txt ``Crawl-delay`` as the least delay it may have.

Scrapy's AutoThrottle sets each host's delay from the latency of its answers, and lowers it only on a
200: a 304 (an error page, it assumes) may raise the delay but never lower it. Error pages are small
and fast, and lowering on them would speed a crawl up against a failing server. But a scheduled
re-crawl of known feeds is mostly 304s to conditional requests, and a Common Crawl census mostly 206s
to Range requests: answers that are the success of those requests. With Scrapy's rule they held every
host at ``AUTOTHROTTLE_START_DELAY`` (1 s): a re-crawl of 64 unchanged feeds of one host took 67 s,
13 times the 5 s it took without AutoThrottle (issue #41).

:class:`AdaptiveThrottle` is Scrapy's extension with that one rule changed: 200, 206 and 304 adjust the
delay both ways; every other status still only raises it. Nothing else differs (the settings, the
bounds, ``autothrottle_dont_adjust_delay``), except that it never lowers a host's delay below the
``Crawl-delay`` its robots.txt asks of the crawl.

:class:`CrawlDelay` reads that ``Crawl-delay`` when robots.txt is parsed (Scrapy's ``robots_parsed``
signal; at most ``FEEDCENSUS_CRAWL_DELAY_MAX``) and makes it the host's delay: its download slot's now,
and the one a later slot for the host starts with (``DOWNLOAD_SLOTS``' per-host delay). Scrapy read
robots.txt for its rules only; a host asking for 10 s between requests got AutoThrottle's delay.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.extensions.throttle import AutoThrottle

from crawler.requests import ReservesStarts

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: The key of a host's entry in the downloader's per-slot settings holding its robots.txt Crawl-delay.
CRAWL_DELAY = "feedcensus_crawl_delay"

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

    _floor = 0.0  # the Crawl-delay of the host whose answer is being adjusted for

    def _response_downloaded(self, response: Response, request: Request, spider: Spider) -> None:
        self._floor = crawl_delay_of(self.crawler, request.meta.get("download_slot"))
        super()._response_downloaded(response, request, spider)

    def _adjust_delay(self, slot: Slot, latency: float, response: Response) -> None:
        slot.delay = next_delay(
            slot.delay,
            latency,
            response.status,
            target=self.target_concurrency,
            low=max(self.mindelay, self._floor),
            high=self.maxdelay,
        )


def crawl_delay_of(crawler: Crawler, key: str | None) -> float:
    """The ``Crawl-delay`` the host of download slot ``key`` asked for in its robots.txt (0 if none)."""
    engine = crawler.engine
    if key is None or engine is None:
        return 0.0
    per_slot: dict[str, dict[str, Any]] = engine.downloader.per_slot_settings
    return float(per_slot.get(key, {}).get(CRAWL_DELAY, 0.0))


class CrawlDelay:
    """Makes a host's robots.txt ``Crawl-delay`` (for the crawl's user agent) its delay between requests."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.cap = settings.getfloat("FEEDCENSUS_CRAWL_DELAY_MAX")
        self.agent = settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT") or "*"
        crawler.signals.connect(self.robots_parsed, signal=signals.robots_parsed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def robots_parsed(self, robotparser: Any, request: Request) -> None:
        read = getattr(robotparser, "crawl_delay", None)  # Protego's parser has it; Scrapy's others may not
        engine = self.crawler.engine
        if read is None or engine is None:
            return
        try:
            asked = read(self.agent)
        except Exception:  # a parser's own failure on a hostile file: the rules still apply, the delay does not
            return
        if not asked or asked <= 0:
            return
        seconds = min(float(asked), self.cap)
        downloader = engine.downloader
        key = downloader.get_slot_key(request)
        # A distributed job's starts reserved for the host so far kept the delay it had: longer now, they go.
        shared = downloader if isinstance(downloader, ReservesStarts) else None
        raised = shared is not None and seconds > shared.delay_of(key)
        entry = downloader.per_slot_settings.setdefault(key, {})
        entry[CRAWL_DELAY] = seconds
        entry["delay"] = max(float(entry.get("delay", 0.0)), seconds)  # a slot made later for the host starts so
        entry["jitter"] = 0  # Scrapy's ±50 % would let two requests come half a Crawl-delay apart
        slot = downloader.slots.get(key)
        if slot is not None:
            slot.delay = max(slot.delay, seconds)
            slot.jitter = 0
        if shared is not None and raised:
            shared.delay_raised(key)
        self.crawler.stats.inc_value("politeness/crawl_delay_hosts")
        logger.info("%s asks for Crawl-delay %s s in its robots.txt: %.1f s between requests", key, asked, seconds)
