"""Scrapy's scheduler on the job's frontier (:class:`FrontierScheduler`), over scrapy-redis's priority
queue and duplicate filter (:class:`FrontierQueue`, :class:`FrontierDupeFilter`): the one module that knows
scrapy-redis (its queue and duplicate filter classes; none of its spiders).

- **Seeding first.** The coordinator (the process with inputs) queues every input before it
  takes any request itself (:attr:`FrontierWorker.seeding`); Scrapy reads ``start()`` lazily,
  so otherwise each input would be popped again by the coordinator as soon as it was pushed
  and the other workers would find the queue empty. Inputs are queued behind every request
  found in a response (:data:`INPUT_WAIT`), as a crawl without a frontier gives Scrapy an
  input only when its scheduler has run empty.
- **Pushes in batches.** The scheduler holds back the requests the engine gives it and pushes
  them in one round trip (:meth:`FrontierScheduler.push_pending`): inputs :data:`PUSH_BATCH` at
  a time; the requests responses make with the next take from the queue, after
  :data:`PUSH_DELAY` seconds, and before any lease is released, so a page's lease still ends
  only once the requests it made are queued. A duplicate among them is dropped when its batch
  goes (Scrapy's ``request_dropped`` signal, sent as the engine sends it).
- **One budget per host for the job.** Every request taken holds a slot of its host (its download
  slot's key) in Redis until its response is in: the job's ``CONCURRENT_REQUESTS_PER_DOMAIN`` and
  ``DOWNLOAD_DELAY`` (or the host's own delay: its robots.txt ``Crawl-delay``, the adaptive delay) hold
  across every worker, as Scrapy's downloader holds them in one process. The slots of the requests whose
  responses came in are given back with the next take, or alone :data:`GIVE_BACK_DELAY` seconds later
  when no take comes. When no host may be asked yet, the worker waits until one may (at most
  :data:`IDLE_POLL` seconds) instead of asking Redis again at every turn of the engine.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import redis
from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.request import request_from_dict
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue
from twisted.internet.base import DelayedCall

from crawler.frontier.codec import RequestCodec
from crawler.frontier.state import (
    BUSY,
    DEFAULT_PREFETCH,
    PUSH_BATCH,
    PUSH_DELAY,
    STAT_ALREADY_QUEUED,
    STAT_LEASED,
    FrontierError,
    Push,
    Pushed,
)
from crawler.frontier.store import Frontier, host_of
from crawler.frontier.worker import FrontierWorker, _reactor
from crawler.requests import lease_key, parent_key
from pipelines.dataset import faults
from schemas.items import context_from_meta

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

#: The package's one logger (``crawler.frontier``), as before the module became a package.
logger = logging.getLogger("crawler.frontier")

#: Seconds a given-back slot waits for a take to carry it before it goes alone (one round trip).
GIVE_BACK_DELAY = 0.05
#: The longest a worker waits before asking the frontier again when no host could be asked.
IDLE_POLL = 1.0
#: The shortest: on a web paced by its hosts' delays, a take then finds several hosts ready, not one.
IDLE_MIN = 0.05
#: While a worker has requests in flight it takes at most once in this many seconds: each take then carries
#: the slots of several responses back and takes several requests, instead of one round trip per response.
TAKE_INTERVAL = 0.05


def slot_of(request: Request) -> str:
    """The host ``request`` counts against: its download slot, as Scrapy's downloader names it."""
    slot = request.meta.get("download_slot")
    return "".join(str(slot).split()) if slot else host_of(request.url)


def _method_name(func: Any, spider: Spider) -> str | None:
    """The name of the spider method ``func`` is (None for no callback); ValueError otherwise."""
    if func is None:
        return None
    name = getattr(func, "__name__", "")
    if getattr(func, "__self__", None) is spider and getattr(spider, name, None) == func:
        return str(name)
    raise ValueError(f"{func!r} is not a method of the spider")


class FrontierQueue(PriorityQueue):  # type: ignore[misc]  # scrapy-redis has no type information
    """scrapy-redis's priority queue on the job's key, with pops that lease (through :class:`Frontier`)."""

    def __init__(self, frontier: Frontier, spider: Spider, codec: RequestCodec) -> None:
        # scrapy-redis formats the key with %(spider)s: a '%' in the job id must survive that.
        super().__init__(frontier.redis, spider, frontier.key("queue").replace("%", "%%"), serializer=codec)
        self.frontier = frontier

    def encode(self, request: Request, key: str | None = None) -> str:
        """The request as JSON; ``key``: the URL it is leased under, when known (:func:`lease_key`)."""
        try:
            names = (_method_name(request.callback, self.spider), _method_name(request.errback, self.spider))
        except ValueError:
            return str(self._encode_request(request))  # scrapy-redis's way: to_dict(spider=...) finds the names
        # Request.to_dict() with the callbacks' names found above, built from the request's public
        # attributes as to_dict builds it (to_dict itself would need a copy of the request without
        # callbacks: a third of the cost); without the URL when the member's lease key is the URL.
        obj = {name: getattr(request, name) for name in request.attributes}
        obj["headers"] = dict(request.headers)
        obj["callback"], obj["errback"] = names
        if (key if key is not None else lease_key(request)) == request.url:
            del obj["url"]  # the queue member is "URL\nJSON": the URL is there once
        if type(request) is not Request:
            obj["_class"] = f"{type(request).__module__}.{type(request).__name__}"
        return str(self.serializer.dumps(obj))

    def decode(self, url: str, encoded: str) -> Request:
        """The request queued as ``URL\\nJSON`` (the JSON may carry the URL too: scrapy-redis's own encoding)."""
        obj = self.serializer.loads(encoded)
        obj.setdefault("url", url)
        return request_from_dict(obj, spider=self.spider)

    def push(
        self, request: Request, fingerprint: str | None = None, *, is_input: bool = False
    ) -> Pushed:  # scrapy-redis's push(request), plus the duplicate check, the leases it ends and its parent
        return self.frontier.push_many([self.push_later(request, fingerprint, is_input=is_input)])[0]

    def pop(self, timeout: int = 0, *, mark_busy: bool = False) -> tuple[str, str] | None:
        return self.frontier.pop(mark_busy=mark_busy)

    def push_later(self, request: Request, fingerprint: str | None = None, *, is_input: bool = False) -> Push:
        """What :meth:`push` sends, for :meth:`Frontier.push_many`; ValueError (or TypeError) when the request
        cannot go to Redis, now rather than when its batch goes. Queued, it ends the leases of the URLs it
        stands for: its own (:func:`lease_key`) and those of the redirects that led to it."""
        key = lease_key(request)
        push = Push(
            url=key,
            encoded=self.encode(request, key),
            priority=request.priority,
            fingerprint=fingerprint,
            release=(key, *(str(u) for u in request.meta.get("redirect_urls") or ())),
            parent=_parent_of(request),
            is_input=is_input,
            host=slot_of(request),
        )
        for text in (push.url, push.parent or "", *push.release):
            text.encode("utf-8")  # UnicodeEncodeError (a ValueError) for a lone surrogate, as redis-py would raise
        return push


def _parent_of(request: Request) -> str | None:
    """The key of the page whose response made ``request``: its context's ``source`` (that response's URL),
    as :func:`lease_key` leased it (a web archive's record as ``archive <url>``).

    None for an input, and for a redirect target: the response that made it is the redirect's,
    not the page named as its source, and the redirect's own URL goes through its lease.
    """
    ctx = context_from_meta(request.meta)
    if ctx is None or ctx.depth == 0 or request.meta.get("redirect_urls"):
        return None  # an input's source is the file or list that named it, never a page
    return parent_key(ctx)


class FrontierDupeFilter(RFPDupeFilter):  # type: ignore[misc]  # scrapy-redis has no type information
    """scrapy-redis's Redis duplicate filter on the job's key, with Scrapy's request fingerprints.

    It is never cleared at close: the job's keys expire with the job instead.
    """

    def __init__(self, server: redis.Redis, key: str, fingerprinter: Any, *, debug: bool = False) -> None:
        super().__init__(server, key, debug=debug)
        self.fingerprinter = fingerprinter

    def request_fingerprint(self, request: Request) -> str:
        return str(self.fingerprinter.fingerprint(request).hex())

    def close(self, reason: str = "") -> None:
        pass


# --- the Scrapy scheduler -----------------------------------------------------------------------


class FrontierScheduler(BaseScheduler):
    """Scrapy's scheduler interface on the job's frontier (``SCHEDULER = "crawler.frontier.FrontierScheduler"``).

    Needs the :class:`FrontierWorker` extension (it holds the worker's one :class:`Frontier`).
    A request that cannot go to Redis as JSON stays in this process (like Scrapy's
    memory fallback for a disk queue). A Redis error stops the crawl with ``frontier_error``.
    """

    def __init__(self, crawler: Crawler, worker: FrontierWorker, frontier: Frontier) -> None:
        self.crawler = crawler
        self.worker = worker
        self.frontier = frontier
        self.stats = crawler.stats
        self.spider: Spider | None = None
        self.queue: FrontierQueue | None = None
        self.df: FrontierDupeFilter | None = None
        self.local: deque[Request] = deque()
        #: Requests taken from the job's queue (leased to this worker) and not yet given to the engine:
        #: (url, encoded). One round trip takes up to ``prefetch`` of them.
        self.taken: deque[tuple[str, str]] = deque()
        self.prefetch = max(1, crawler.settings.getint("FEEDCENSUS_FRONTIER_PREFETCH", DEFAULT_PREFETCH))
        #: While requests are in flight, a take waits until it may take this many (a quarter of what the
        #: downloader holds, at most a quarter of ``prefetch``): fewer round trips, each carrying more.
        self.min_take = max(1, min(self.prefetch, crawler.settings.getint("CONCURRENT_REQUESTS")) // 4)
        #: Requests the engine gave and not yet pushed (:meth:`push_pending`), and the call that pushes them
        #: :data:`PUSH_DELAY` seconds after the first.
        self.pending: list[tuple[Request, Push]] = []
        self._push_call: DelayedCall | None = None
        self._warned: set[str] = set()
        #: Requests handed to the engine whose responses are not in yet -> the host whose slot each holds.
        self.out: dict[Request, str] = {}
        #: Slots to give back (host, its delay here), with the next take or :meth:`give_back`.
        self.done: list[tuple[str, float | None]] = []
        self._give_back_call: DelayedCall | None = None
        #: No take before this (``time.monotonic()``): no host could be asked at the last one.
        self._idle_until = 0.0
        self._last_take = 0.0
        #: When the requests in :attr:`taken` were taken (``time.monotonic()``): the frontier reserved their starts.
        self._taken_at = 0.0
        self._wake_call: DelayedCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        worker = crawler.get_extension(FrontierWorker)
        if worker is None or worker.frontier is None:
            raise FrontierError(
                "crawler.frontier.FrontierScheduler needs FEEDCENSUS_FRONTIER and the crawler.frontier.FrontierWorker extension"
            )
        return cls(crawler, worker, worker.frontier)

    def open(self, spider: Spider) -> None:
        self.spider = spider
        self.queue = FrontierQueue(self.frontier, spider, RequestCodec(self._meta_dropped))
        self.df = FrontierDupeFilter(
            self.frontier.redis,
            self.frontier.key("dupefilter"),
            self.crawler.request_fingerprinter,
            debug=self.crawler.settings.getbool("DUPEFILTER_DEBUG"),
        )
        self.worker.scheduler = self
        self.crawler.signals.connect(self._left_downloader, signal=signals.request_left_downloader)
        settings = self.crawler.settings
        try:
            self.budget = self.frontier.set_budget(
                settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"), settings.getfloat("DOWNLOAD_DELAY")
            )
            queued = self.frontier.queued()
        except FrontierError as exc:
            self.worker.fail(exc)
            return
        logger.info("frontier %s: job %s, %d requests queued", self.frontier.display_url, self.frontier.job, queued)

    def close(self, reason: str) -> None:
        """The queue persists: other workers go on with it (and it expires with the job).

        Requests not yet pushed go now (the engine took them as scheduled); requests taken and not
        fetched stay leased to this worker: its leaving puts them back in the queue (after a
        frontier error, their lease running out does)."""
        self.push_pending()
        self.note_done()
        self.give_back()
        for call in (self._wake_call, self._give_back_call):
            if call is not None and call.active():
                call.cancel()
        if self.taken:
            logger.info("frontier: %d requests taken from the queue were not fetched; they go back", len(self.taken))
        if self.local:
            logger.warning("frontier: %d requests that could not be queued in Redis were not fetched", len(self.local))

    def taken_urls(self) -> set[str]:
        """The URLs of the requests taken from the queue and not yet given to Scrapy."""
        return {url for url, _ in self.taken}

    def has_pending_requests(self) -> bool:
        if self.worker.failed is not None:  # the crawl is stopping: only what stays in this process counts
            return bool(self.local)
        if self.local or self.taken or self.pending:
            return True
        try:
            return self.frontier.queued() > 0
        except FrontierError as exc:
            self.worker.fail(exc)
            return False

    def enqueue_request(self, request: Request) -> bool:
        """Take a request for the job's queue: always True (a duplicate is dropped later, see below).

        The URLs it stands for (its own, and those of the redirects that led to it) are no
        longer leased once it is queued: the queued request will give their row. A request that
        an earlier, uncommitted reading of the same page queued is not queued again and is no
        duplicate (no row: see crawler/frontier/store.py's docstring). After a frontier error the request is
        let go (the crawl is stopping; it comes back through the lease of the page that made it).

        A request is pushed later, with others, in one round trip (:meth:`push_pending`): with the
        next take from the queue, :data:`PUSH_DELAY` seconds after the first of a batch was held
        back, at :data:`PUSH_BATCH` requests, and before this worker releases a lease (so a page's
        lease ends only once the requests its response made are queued) or says it is idle. A
        duplicate is dropped when its batch goes: Scrapy's ``request_dropped`` signal, sent as the
        engine sends it for a request the scheduler refuses (one ``duplicate`` row). While this
        process seeds the job, its inputs are queued behind every request found in a response
        (:meth:`Frontier.push`). A request that cannot go to Redis stays in this process.
        """
        assert self.queue is not None and self.df is not None, "the scheduler is not open"
        if self.worker.failed is not None:
            return True
        fingerprint = None if request.dont_filter else self.df.request_fingerprint(request)
        try:
            push = self.queue.push_later(request, fingerprint, is_input=self.worker.seeding)
        except (TypeError, ValueError) as exc:
            self._warn_once("local", "frontier: a request cannot be queued in Redis (%s); this worker fetches it", exc)
            self._inc("feedcensus/frontier/kept_local")
            self.local.append(request)
            return True
        if not self.pending:
            self._push_call = _reactor().callLater(PUSH_DELAY, self.push_pending)
        self.pending.append((request, push))
        if len(self.pending) >= PUSH_BATCH:
            self.push_pending()
        return True

    def push_pending(self) -> bool:
        """Push the requests waiting in :attr:`pending`, in one round trip, and drop the duplicates among
        them; False when the frontier failed (the crawl stops: nothing this worker holds is released)."""
        if self._push_call is not None and self._push_call.active():
            self._push_call.cancel()
        self._push_call = None
        batch, self.pending = self.pending, []
        if self.worker.failed is not None:
            return False
        if not batch:
            return True
        try:
            answers = self.frontier.push_many([push for _, push in batch])
        except FrontierError as exc:
            self.worker.fail(exc)
            return False
        for (request, push), added in zip(batch, answers, strict=True):
            if not self._pushed(request, list(push.release), added):
                self.crawler.signals.send_catch_log(signals.request_dropped, request=request, spider=self.spider)
        return True

    def _pushed(self, request: Request, release: list[str], added: Pushed) -> bool:
        """What :meth:`enqueue_request` answers for a request the frontier answered ``added``."""
        assert self.df is not None, "the scheduler is not open"
        if not added:
            if len(release) > 2:
                # Its row names the first URL of the chain (ParquetPipeline.request_dropped): the hop
                # leased now is released with that row.
                self.worker.alias(release[1], release[1:])
            self.df.log(request, self.spider)
            self._inc("dupefilter/filtered")
            return False
        if added == Pushed.ALREADY_QUEUED:
            logger.debug("frontier: %s was queued by an earlier reading of %s", request.url, _parent_of(request))
            self._inc(STAT_ALREADY_QUEUED)
            return True
        self._inc("scheduler/enqueued/frontier")
        return True

    def next_request(self) -> Request | None:
        """The next request of the job, its URL now leased to this worker.

        Requests are taken from the job's queue up to ``FEEDCENSUS_FRONTIER_PREFETCH`` at a time, one
        round trip, and handed out one by one; each is leased from the moment it is taken.
        """
        if self.local:
            return self.local.popleft()
        if self.worker.failed is not None or self.queue is None or self.worker.seeding:
            return None
        self.note_done()
        if not self.taken:
            if self.out and self.room() < self.min_take:
                return None  # a take for one or two requests costs as much as one for several: a few more first
            since = time.monotonic() - self._last_take
            if self.out and since < TAKE_INTERVAL:
                self._sleep(TAKE_INTERVAL - since)  # while requests are in flight, at most one take per interval
                return None
            if time.monotonic() < self._idle_until and not self.done:
                return None  # no host could be asked at the last take: :meth:`_wake` comes when one may
            if not self.push_pending():  # with the take: two round trips where one push each would cost many
                return None
            done, self.done = self.done, []
            self._last_take = time.monotonic()
            try:
                self.taken.extend(self.frontier.take(self.room(), mark_busy=self.worker.state != BUSY, done=done))
                self._taken_at = time.monotonic()
                faults.reached("take")
            except FrontierError as exc:
                self.worker.fail(exc)
                return None
            self._inc("feedcensus/frontier/takes")
            if not self.taken:
                self._inc("feedcensus/frontier/takes_empty")
                self._sleep(self.frontier.wait)
        while self.taken:
            url, encoded = self.taken.popleft()
            self.worker.took_request()
            try:
                request = self.queue.decode(url, encoded)
            except (TypeError, ValueError, KeyError) as exc:
                self.done.append((self._bad_request(url, exc), None))
                continue
            self._inc(STAT_LEASED)
            self._inc("scheduler/dequeued/frontier")
            engine = self._engine()
            if engine is not None:  # (a scheduler driven by hand, in a test, has no engine to finish them)
                self.out[request] = host = slot_of(request)
                ticket = getattr(engine.downloader, "ticket", None)
                if ticket is not None:  # the start the take reserved at the host (crawler/downloader.py)
                    ticket(host, self._taken_at, self.frontier.taken_at)
            return request
        return None

    def room(self) -> int:
        """How many requests to take: what the downloader can start now, at most ``prefetch``. A request
        taken holds a slot of its host until its response is in, so a worker takes no more than it can start."""
        free = self.crawler.settings.getint("CONCURRENT_REQUESTS") - len(self.out)
        return max(1, min(self.prefetch, free))

    def note_done(self) -> None:
        """The requests handed to the engine that it no longer holds (dropped before the download: a robots.txt
        rule, the network guard): their hosts' slots are given back with the next take, or alone soon. Those
        that were downloaded are noted as they leave the downloader (:meth:`_left_downloader`)."""
        if not self.out:
            return
        holding = getattr(getattr(self._engine(), "_slot", None), "inprogress", None)
        if holding is None:
            return
        for request in [r for r in self.out if r not in holding]:
            self._done(request)

    def _left_downloader(self, request: Request) -> None:
        """Scrapy's ``request_left_downloader``: the response is in (or the download failed), so its host's
        slot goes back now, not when the engine next asks for a request (a whole download later)."""
        if request in self.out:
            self._done(request)

    def _done(self, request: Request) -> None:
        host = self.out.pop(request)
        downloader = getattr(self._engine(), "downloader", None)
        local = getattr(downloader, "slots", {}).get(host)
        self.done.append((host, getattr(local, "delay", None)))
        if self._give_back_call is None or not self._give_back_call.active():
            self._give_back_call = _reactor().callLater(GIVE_BACK_DELAY, self.give_back)

    def give_back(self) -> None:
        """Give back the slots in :attr:`done` now (no take carried them)."""
        if self._give_back_call is not None and self._give_back_call.active():
            self._give_back_call.cancel()
        self._give_back_call = None
        done, self.done = self.done, []
        if not done or self.worker.failed is not None:
            return
        self._inc("feedcensus/frontier/give_backs_alone")
        try:
            self.frontier.give_back(done)
        except FrontierError as exc:
            self.worker.fail(exc)
            return
        self._idle_until = 0.0  # a slot given back may let this worker take again
        self._kick()

    def _sleep(self, wait: float | None) -> None:
        """No host could be asked: take again when the first may (at most :data:`IDLE_POLL` seconds)."""
        seconds = IDLE_POLL if wait is None else min(max(wait, IDLE_MIN), IDLE_POLL)
        self._idle_until = time.monotonic() + seconds
        if self._wake_call is not None and self._wake_call.active():
            self._wake_call.cancel()
        self._wake_call = _reactor().callLater(seconds, self._wake)

    def _wake(self) -> None:
        self._idle_until = 0.0
        self._kick()

    def _engine(self) -> Any:
        """The crawl's engine, None before the crawl starts (a scheduler driven by hand, in a test)."""
        try:
            return self.crawler.engine
        except RuntimeError:
            return None

    def _kick(self) -> None:
        """Let the engine ask this scheduler for a request now rather than at its next heartbeat."""
        slot = getattr(self._engine(), "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    def _bad_request(self, url: str, exc: Exception) -> str:
        """A queued request that cannot be read: logged, counted and let go (it would never end otherwise). The
        host whose slot it took, to be given back (read before the release forgets it)."""
        self._warn_once("bad", "frontier: a queued request cannot be read (%s: %s); dropped", type(exc).__name__, exc)
        self._inc("feedcensus/frontier/unreadable")
        host = host_of(url)
        try:
            host = self.frontier.held_host(url)
            self.frontier.release([url])
        except FrontierError as error:
            self.worker.fail(error)
        return host

    def _meta_dropped(self, key: str, type_name: str) -> None:
        self._inc(f"feedcensus/frontier/meta_dropped/{key}")
        self._warn_once(f"meta:{key}", "frontier: meta[%r] (%s) cannot be queued as JSON; left out", key, type_name)

    def _warn_once(self, what: str, message: str, *args: Any) -> None:
        if what not in self._warned:
            self._warned.add(what)
            logger.warning(message, *args)

    def _inc(self, name: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(name, count)
