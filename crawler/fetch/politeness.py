"""When a host has asked the crawl to slow down: pure decisions over statuses, headers and clocks.

A 429 (Too Many Requests) or a 503 (Service Unavailable) speaks for the whole host, not for the one
URL it answered: every request to that host waits until the host may be asked again. With a
``Retry-After`` header (seconds, or an HTTP date) the pause lasts that long; without one it is an
exponential back-off per host (``base``, then twice that, ... after each throttling answer in a row),
reset by the host's next good answer, capped (``cap``). A host whose ``Retry-After`` asks for longer
than ``cap`` is *deferred* until then: its requests are not sent, and each is recorded as ``deferred``
at once (a later run fetches them), so a host that asks for a week neither holds the crawl for a week
nor gets asked again after an hour.

:class:`HostPauses` holds the pauses of one crawl process; ``crawler/middlewares/hostpause.py`` applies
them to Scrapy's downloader. Times are the caller's: a monotonic clock for the pauses, the wall clock
only to read an HTTP date. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["DEFERRED_MARK", "THROTTLE_STATUSES", "HostPauses", "Pause", "retry_after_seconds"]

#: The words a deferred pause's reason ends with: another process of a job reads a pause it adopts by them.
DEFERRED_MARK = "its requests are deferred"

#: Answers that ask the whole host to be left alone for a while.
THROTTLE_STATUSES = frozenset({429, 503})
#: Throttling answers in a row counted at most: 2**63 times any base is past any cap, and 2.0**1024 overflows.
_MOST_STRIKES = 64


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Seconds a ``Retry-After`` header asks for (``now``: the wall clock, for an HTTP date); None if unreadable.

    A date in the past is 0 s. Negative or fractional numbers are not the header's grammar: unreadable.
    """
    if not value:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():  # str.isdigit() is true of '²' too, which float() refuses
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True, slots=True)
class Pause:
    """A host left alone until ``until`` (the caller's monotonic clock), and why, in words."""

    until: float
    reason: str
    #: Longer than the cap: the host's requests are recorded as ``deferred`` instead of waiting.
    deferred: bool = False

    def remaining(self, now: float) -> float:
        return max(0.0, self.until - now)


class HostPauses:
    """The hosts of one crawl that asked to be left alone, until when, and their throttling answers in a row.

    Memory grows with the hosts paused or throttling now, not with the hosts of the crawl: a host's entry
    goes with its next good answer, and an expired pause is dropped when it is next looked at.
    """

    def __init__(self, *, base: float, cap: float) -> None:
        self.base = base
        self.cap = cap
        self._pauses: dict[str, Pause] = {}
        self._strikes: dict[str, int] = {}

    def answered(self, host: str, status: int, retry_after: str | None, *, now: float, wall: datetime) -> Pause | None:
        """Note an answer from ``host``: the pause a 429 or 503 starts (or extends), None for any other answer."""
        if status not in THROTTLE_STATUSES:
            if status < 400:
                self._strikes.pop(host, None)
            return None
        strikes = min(self._strikes.get(host, 0) + 1, _MOST_STRIKES)
        self._strikes[host] = strikes
        asked = retry_after_seconds(retry_after, wall)
        if asked is not None:
            seconds, why = asked, f"{status} with Retry-After {retry_after.strip() if retry_after else ''}"
        else:
            seconds = self.base * 2.0 ** (strikes - 1)
            why = f"{status} without Retry-After, back-off {strikes} in a row"
        deferred = False
        if seconds > self.cap and asked is not None:
            why += f", more than FEEDCENSUS_HOST_PAUSE_MAX ({self.cap:g} s): {DEFERRED_MARK}"
            deferred = True
        elif seconds > self.cap:
            why += f", capped at {self.cap:g} s"
            seconds = self.cap
        pause = Pause(now + seconds, f"{host} asked to slow down: {why}", deferred)
        current = self._pauses.get(host)
        if current is not None and current.until >= pause.until:
            return current  # an earlier, longer pause stands
        self._pauses[host] = pause
        return pause

    def adopt(self, host: str, until: float, reason: str) -> Pause:
        """A pause another process started (a distributed job's): kept unless a longer one stands here."""
        current = self._pauses.get(host)
        if current is not None and current.until >= until:
            return current
        pause = Pause(until, reason, reason.endswith(DEFERRED_MARK))
        self._pauses[host] = pause
        return pause

    def paused(self, host: str, now: float) -> Pause | None:
        """The pause ``host`` is in at ``now``, or None."""
        pause = self._pauses.get(host)
        if pause is None:
            return None
        if pause.until <= now:
            del self._pauses[host]
            return None
        return pause

    def count(self, now: float) -> int:
        """How many hosts are paused at ``now``."""
        for host in [h for h, p in self._pauses.items() if p.until <= now]:
            del self._pauses[host]
        return len(self._pauses)
