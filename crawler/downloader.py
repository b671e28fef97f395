"""Scrapy's downloader with its per-host concurrency limit held (``DOWNLOADER``), and in a distributed job
every start to a host kept within the job's budget for the host.

Scrapy 2.19 starts each download from a host's slot as an asyncio task, and the task adds its request to
the slot's ``transferring`` set only when it first runs, on a later turn of the event loop. The loop
that starts downloads asks the slot how many more it may start (``free_transfer_slots()``), and with no
delay between requests it goes on asking before any task has run: it starts every queued request of
the host at once. Measured on a loopback host with ``CONCURRENT_REQUESTS_PER_DOMAIN=1`` and no delay
(``AUTOTHROTTLE_ENABLED=False``, ``DOWNLOAD_DELAY=0``): 17 requests within 70 ms, each answered in
0.4 s, so 17 in flight at once. With a delay the loop starts one request a turn, which hid it.

:class:`PoliteDownloader` counts a request as transferring the moment it is taken from the slot's
queue, so the limit holds whatever the delay.

In a distributed job the frontier reserves a start at a host each time it hands out one of its requests
(crawler/frontier/scheduler.py): the worker keeps it as a ticket (:class:`StartTickets`). A request to a
host with a delay starts at once only while a ticket of its host is fresh (a quarter of the delay at
most). Any other start first reserves one in the frontier (one Redis round trip) and waits until then: the
robots.txt fetched for a request that waited before it was sent, a request that waited for robots.txt
past its ticket or whose ticket robots.txt dropped (a ``Crawl-delay`` longer than the delay the frontier
spaced the host's starts by: :meth:`PoliteDownloader.delay_raised`), or for a host's pause to end, one held
in this worker past its ticket, one that never came from the frontier. A started request is checked again
once its connection is up (:meth:`PoliteDownloader.connected`, asked by crawler/handlers/pacing.py): one that
got it later than a quarter of the delay after its start reserves its start again. So no request leaves for
a host within three quarters of its delay of another (less the time a Redis answer takes, and a turn of the
sender's event loop between its connection and its writing), whichever worker sends it
(tests/test_budget_distributed.py).
When the timer for a reserved start comes too late (a process held off the CPU), the start is reserved
again; while no other start at the host was reserved after the unused one, the new one is now, not a
delay later. So is a request whose take's ticket went stale before it could start: the take's start (its
time in Redis's clock comes with the take) is the unused one. The worker that fetched a host's robots.txt
reserves the start of the request it fetched it for in the round trip that shares robots.txt
(crawler/middlewares/robots.py): a ticket ahead of time (:meth:`PoliteDownloader.reserved`), which the
host's next request waits for, with no round trip of its own.
"""

from __future__ import annotations

import logging
from time import monotonic
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy.core.downloader import Downloader
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import _schedule_coro

from crawler.extensions.jobfrontier import job_frontier

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Slot

logger = logging.getLogger(__name__)

#: A ticket is fresh for this part of its host's delay after the start it stands for was reserved.
TICKET_SLACK = 0.25
#: Tickets are swept when this many hosts hold some; a ticket older than :data:`TICKET_MAX_AGE` seconds goes.
TICKET_SWEEP = 1024
TICKET_MAX_AGE = 5.0
#: A timer may fire this much before its time: a ticket reserved for then counts as due.
TIMER_EARLY = 0.01
#: A connected request waits at most this many seconds (and a third of ``DOWNLOAD_TIMEOUT``, which counts the
#: wait) for a start reserved again; one whose start is further off (its host was paused since it started) goes now.
#: How long its connection is held meanwhile is the pool's (crawler/handlers/pacing.py: HOLD_MAX).
CONNECTED_WAIT_MAX = 10.0
#: How many times a connected request reserves its start again: once, and once more if its timer for that start
#: came too late. Two requests of a host held in one busy worker would otherwise push each other back in turn.
CONNECTED_RENEWALS = 2


class StartTickets:
    """The starts the job reserved for this worker, by host: ``time.monotonic()`` when each was reserved, with the
    same moment in Redis's clock where it is known; and for a host whose tickets came with takes, the time of the
    last such take in Redis's clock, while the host holds tickets (or until :meth:`forget_take`, once they all
    went stale)."""

    def __init__(self) -> None:
        self._by_host: dict[str, list[tuple[float, str]]] = {}
        self._taken: dict[str, str] = {}
        self._sweep_at = TICKET_SWEEP  # hosts holding tickets; twice what a sweep left, so a sweep is rare

    def add(self, host: str, at: float, taken: str = "") -> None:
        """A start reserved for ``host`` at ``at``; ``taken``: by the take made then (its time in Redis's clock)."""
        self._by_host.setdefault(host, []).append((at, taken))
        if taken:
            self._taken[host] = taken
        if len(self._by_host) > self._sweep_at:
            self.sweep(monotonic())
            self._sweep_at = max(TICKET_SWEEP, 2 * len(self._by_host))

    def use(self, host: str, now: float, slack: float) -> tuple[float, str] | None:
        """A ticket of ``host`` reserved at most ``slack`` seconds ago (and not in the future), used up: when it was
        reserved and the take's time in Redis's clock ('' when it came with none). None if there is none. Older
        ones go."""
        held = self._by_host.get(host)
        if not held:
            return None
        fresh = [ticket for ticket in held if now - ticket[0] <= slack]
        found = next((ticket for ticket in fresh if ticket[0] <= now + TIMER_EARLY), None)
        if found is not None:
            fresh.remove(found)
        if fresh:
            self._by_host[host] = fresh
        else:
            del self._by_host[host]
            if found is not None:  # the last one used: no take's start is left unused
                self._taken.pop(host, None)
        return found

    def upcoming(self, host: str, now: float) -> float | None:
        """The earliest start reserved for ``host`` ahead of ``now`` (one it must wait for), if any."""
        ahead = [at for at, _ in self._by_host.get(host, ()) if at > now + TIMER_EARLY]
        return min(ahead) if ahead else None

    def holds(self, host: str) -> bool:
        return host in self._by_host

    def forget_take(self, host: str) -> str:
        """The time (Redis's clock) of the last take that gave ``host`` a ticket, forgotten now ('' for none).
        Once the host's tickets all went stale, that take's start went unused (a used ticket is the oldest
        fresh one, so once the last take's is used no older one is left)."""
        return self._taken.pop(host, "")

    def drop(self, host: str) -> None:
        self._by_host.pop(host, None)
        self._taken.pop(host, None)

    def sweep(self, now: float) -> None:
        self._by_host = {
            host: kept
            for host, held in self._by_host.items()
            if (kept := [ticket for ticket in held if now - ticket[0] <= TICKET_MAX_AGE])
        }
        self._taken = {host: taken for host, taken in self._taken.items() if host in self._by_host}

    def __len__(self) -> int:
        return sum(len(held) for held in self._by_host.values())


class PoliteDownloader(Downloader):
    """Scrapy's downloader; a request counts against its host's concurrency from the moment it is started.

    In a distributed job (``FEEDCENSUS_FRONTIER``) the delay between two requests to a host is the job's,
    kept by the frontier when it hands requests out (crawler/frontier/scheduler.py): a request starts as
    soon as it is taken. Waiting here again, from this process's own last request to the host (with
    Scrapy's random 0.5-1.5x), would move its start away from the time the job reserved for it, and
    another worker's request could then come right after it. A request that would start without a fresh
    ticket reserves a start first (see the module's docstring). A slot's ``delay`` is still kept (the
    Crawl-delay, the adaptive delay): the worker reports it to the frontier as the host's delay."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.shared_delay = bool(crawler.settings.get("FEEDCENSUS_FRONTIER"))
        #: The starts the frontier reserved for this worker (the scheduler adds one per request it takes).
        self.starts = StartTickets()
        #: Host -> the time (Redis's clock) of the start reserved for its slot's timer, until the timer comes.
        self._waiting: dict[str, str] = {}
        #: A started request -> the start it used (``time.monotonic()``, Redis's clock or ''), and how many times it
        #: reserved it again once connected, until it is sent.
        self._started: WeakKeyDictionary[Request, tuple[float, str, int]] = WeakKeyDictionary()
        self._frontier: Any = None
        self._connected_wait_max = min(CONNECTED_WAIT_MAX, crawler.settings.getfloat("DOWNLOAD_TIMEOUT") / 3)

    def delay_raised(self, key: str) -> None:
        """Host ``key``'s delay grew (its robots.txt asks for a longer ``Crawl-delay``: crawler/extensions/throttle.py):
        the starts the frontier reserved for its requests so far kept the shorter one. Those requests reserve
        their starts again, with the host's delay as this worker now knows it. A robots.txt that asks for no
        longer delay leaves them: reading it costs no round trip more."""
        self.starts.drop(key)
        self._waiting.pop(key, None)  # reserved with the delay known before: not to be renewed

    def ticket(self, key: str, at: float, taken: str = "") -> None:
        """The frontier reserved a start at host ``key`` for this worker at ``at`` (``time.monotonic()``; ``taken``:
        the same moment in Redis's clock): it handed out one of its requests. Kept only for a host with a delay
        (see :meth:`_may_start`)."""
        if self.delay_of(key) > 0:
            self.starts.add(key, at, taken)

    def start_to_reserve(self, request: Request) -> tuple[str, float] | None:
        """The host (slot key) and delay with which a start for ``request`` would be reserved in the frontier,
        or None when its start needs no reservation (no frontier, or its host has no delay). The robots.txt
        middleware reserves it with the round trip that shares robots.txt (:meth:`reserved`)."""
        if not self.shared_delay:
            return None
        key = self.get_slot_key(request)
        delay = self.delay_of(key)
        return (key, delay) if delay > 0 else None

    def reserved(self, key: str, wait: float, at: str) -> None:
        """A start at host ``key`` was reserved for this worker elsewhere, ``wait`` seconds from now (``at``: the
        time reserved, Redis's clock): the host's next request waits for it (:meth:`_may_start`), and renews
        it if its timer comes too late, as one it reserved itself."""
        self.crawler.stats.inc_value("feedcensus/frontier/starts_reserved_with_robots")
        self.starts.add(key, monotonic() + max(wait, 0.0))
        self._waiting[key] = at

    def delay_of(self, key: str) -> float:
        """The delay of host ``key``: its slot's, or before its slot exists its own setting, or the job's."""
        slot = self.slots.get(key)
        if slot is not None:
            return float(slot.delay)
        return float(self.per_slot_settings.get(key, {}).get("delay", self.settings.getfloat("DOWNLOAD_DELAY")))

    def _process_queue(self, slot: Slot) -> None:
        if slot.latercall:
            return  # a delay (or a host's pause) is running: its call processes the queue
        now = monotonic()
        delay = 0.0 if self.shared_delay else slot.download_delay()
        if delay and slot.lastseen + delay > now:
            slot.latercall = call_later(slot.lastseen + delay - now, self._latercall, slot)
            return
        while slot.queue and slot.free_transfer_slots() > 0:
            if self.shared_delay and not self._may_start(slot, slot.queue[0][0], now):
                return
            slot.lastseen = now
            request, queue_dfd = slot.queue.popleft()
            slot.transferring.add(request)  # now, not when the task first runs: the next turn of this loop counts it
            _schedule_coro(self._wait_for_download(slot, request, queue_dfd))
            if delay:  # one request per delay: the next one waits for it
                self._process_queue(slot)
                break

    def _may_start(self, slot: Slot, request: Request, now: float) -> bool:
        """Whether ``request`` may start now: its host has no delay, or a fresh ticket. Otherwise a start is
        reserved in the frontier; if it is not now, the slot waits for it (False)."""
        if slot.delay <= 0:
            return True
        key = self.get_slot_key(request)
        held = self.starts.holds(key)
        ticket = self.starts.use(key, now, slot.delay * TICKET_SLACK)
        if ticket is not None:
            waited = self._waiting.pop(key, "")  # the start reserved for the slot's timer (if it was one) is used
            self._started[request] = (ticket[0], ticket[1] or waited, 0)
            return True
        upcoming = self.starts.upcoming(key, now)
        if upcoming is not None:  # a start reserved ahead (with robots.txt's share: :meth:`reserved`)
            slot.latercall = call_later(upcoming - now, self._latercall, slot)
            return False
        late = self._waiting.pop(key, "")  # the start reserved for the slot's timer, if it came too late
        taken = self.starts.forget_take(key)
        stale = taken if held else ""  # the tickets it held all went stale: the last take's start went unused
        why = "late" if late else "stale" if held else "none"
        self.crawler.stats.inc_value(f"feedcensus/frontier/starts_reserved/{why}")
        wait, at = self._reserve(key, slot.delay, late or stale)
        if wait <= 0:
            self._started[request] = (now, at, 0)
            return True
        self.starts.add(key, now + wait)
        self._waiting[key] = at
        slot.latercall = call_later(wait, self._latercall, slot)
        return False

    def connected(self, request: Request) -> float:
        """``request`` has its connection: the seconds it waits before it is sent (0: now). Its start kept the
        host's delay in the frontier, but a busy worker may take a while to connect (a new TCP connection takes a
        few turns of its event loop), and the host would then get it close to the next start, another worker's.
        So a request connected later than a quarter of the delay after the start it used gives that start back
        as unused and reserves one again: at once while no start at the host was reserved after it, else a delay
        after the last. Called again when the wait is over (at most :data:`CONNECTED_RENEWALS` reservations). A
        start further off than :data:`CONNECTED_WAIT_MAX` (the host was paused since the request started) is not
        waited for: the request goes now, as one already under way at a host when it is paused does, and the
        start reserved for it goes unused (the host's first start after the pause comes a delay later)."""
        start = self._started.pop(request, None)
        if start is None:
            return 0.0
        reserved, when, renewed = start
        key = self.get_slot_key(request)
        delay = self.delay_of(key)
        now = monotonic()
        if now - reserved <= delay * TICKET_SLACK:
            return 0.0
        self.crawler.stats.inc_value("feedcensus/frontier/starts_reserved/connected")
        wait, at = self._reserve(key, delay, when)
        if wait > self._connected_wait_max:
            self.crawler.stats.inc_value("feedcensus/frontier/connected_not_held")
            return 0.0
        if wait > 0 and renewed + 1 < CONNECTED_RENEWALS:
            self._started[request] = (now + wait, at, renewed + 1)
        return max(wait, 0.0)

    def _reserve(self, key: str, delay: float, unused: str) -> tuple[float, str]:
        """Reserve a start at host ``key`` in the frontier: the seconds to wait for it (0 without a frontier) and
        the time reserved (``unused``: see :meth:`Frontier.reserve_start`)."""
        if self._frontier is None:
            self._frontier = job_frontier(self.crawler)
            if self._frontier is None:
                return 0.0, ""
        from crawler.frontier import FrontierError

        self.crawler.stats.inc_value("feedcensus/frontier/starts_reserved")
        try:
            wait, at = self._frontier.reserve_start(key, delay, unused)
        except FrontierError as exc:  # the frontier's own failure stops the crawl where it is next used
            logger.warning("frontier: could not reserve a start at %s: %s", key, exc)
            return 0.0, ""
        return float(wait), str(at)
