"""A distributed crawl's shared frontier: one job's queue, duplicate filter and leases in Redis.

Many processes, on many machines, crawl one job: each is a Scrapy crawl whose
scheduler is :class:`FrontierScheduler` and which runs the :class:`FrontierWorker`
extension; each writes its own files into the job's dataset. Without
``FEEDCENSUS_FRONTIER`` nothing here runs and Scrapy's in-memory scheduler is used.

This is the one package that knows scrapy-redis (its priority queue and duplicate
filter classes; none of its spiders) and the one that knows the keys, so an upstream
fix or a swap touches this package only. What scrapy-redis lacks is done here, each
part described in its module's docstring:

- ``store.py``: :class:`Frontier`, the job's state in Redis seen by one worker: the per-job keys,
  leases, a page read again that is not its own duplicate, retried connections, the known limits.
- ``connection.py``: its connection (:class:`JobConnection`: the scripts registered once, every Redis
  failure one :class:`FrontierError` line) and :class:`CountingRedis`, the client that counts round trips.
- ``jobs.py``: what the CLI asks of a frontier without joining a job (:func:`frontier_jobs`,
  :func:`marker_is_stale`).
- ``scripts.py``: the Lua scripts, one atomic round trip for every change of the shared state.
- ``scheduler.py``: :class:`FrontierScheduler` over scrapy-redis's queue and duplicate filter
  (:class:`FrontierQueue`, :class:`FrontierDupeFilter`): seeding first, pushes in batches.
- ``worker.py``: :class:`FrontierWorker`, the extension: heartbeats, releases, exactly-once claims
  of committed rows, the end of the job.
- ``releases.py``: :class:`ReleaseBook`, when the URLs of a worker's committed rows may be released.
- ``codec.py``: requests as JSON (:class:`RequestCodec`), never pickle.
- ``urls.py``: Redis URLs without their credentials (:func:`display_url`, :func:`shareable_url`).
- ``state.py``: worker states, defaults, stats keys, errors, and the statuses, claims and pushes.

Every name other modules use is imported from here (``crawler.frontier.X``, also in settings such as
``SCHEDULER``). A test that patches a constant patches it in the module that reads it
(``crawler.frontier.scheduler.PUSH_BATCH``): the names here are copies. Every module logs to the
``crawler.frontier`` logger.
"""

from __future__ import annotations

from crawler.frontier.codec import RequestCodec
from crawler.frontier.connection import CountingRedis
from crawler.frontier.jobs import frontier_jobs, marker_is_stale
from crawler.frontier.scheduler import FrontierDupeFilter, FrontierQueue, FrontierScheduler
from crawler.frontier.scripts import JOB_KEYS
from crawler.frontier.state import (
    BUSY,
    CLAIM_BATCH,
    CLOSED,
    CONNECT_TIMEOUT,
    DEFAULT_HEARTBEAT,
    DEFAULT_KEY_TTL,
    DEFAULT_LEASE,
    DEFAULT_PREFETCH,
    FRONTIER_ERROR,
    IDLE,
    PUSH_BATCH,
    PUSH_DELAY,
    SETTLE_TIMEOUT,
    SOCKET_TIMEOUT,
    STAT_ALREADY_QUEUED,
    STAT_COMMANDS,
    STAT_DROPPED,
    STAT_ERROR,
    STAT_JOB_GONE,
    STAT_LEASED,
    STAT_ORPHANED,
    STAT_QUEUED,
    STAT_RELEASED,
    STAT_REQUEUED,
    Claimed,
    FrontierError,
    FrontierStatus,
    JobGone,
    Push,
    Pushed,
    WorkerStatus,
)
from crawler.frontier.store import INPUT_WAIT, Frontier
from crawler.frontier.urls import PASSWORD_ENV, display_url, has_password, shareable_url
from crawler.frontier.worker import FrontierWorker

__all__ = [
    "BUSY",
    "CLAIM_BATCH",
    "CLOSED",
    "CONNECT_TIMEOUT",
    "DEFAULT_HEARTBEAT",
    "DEFAULT_KEY_TTL",
    "DEFAULT_LEASE",
    "DEFAULT_PREFETCH",
    "FRONTIER_ERROR",
    "IDLE",
    "INPUT_WAIT",
    "JOB_KEYS",
    "PASSWORD_ENV",
    "PUSH_BATCH",
    "PUSH_DELAY",
    "SETTLE_TIMEOUT",
    "SOCKET_TIMEOUT",
    "STAT_ALREADY_QUEUED",
    "STAT_COMMANDS",
    "STAT_DROPPED",
    "STAT_ERROR",
    "STAT_JOB_GONE",
    "STAT_LEASED",
    "STAT_ORPHANED",
    "STAT_QUEUED",
    "STAT_RELEASED",
    "STAT_REQUEUED",
    "Claimed",
    "CountingRedis",
    "Frontier",
    "FrontierDupeFilter",
    "FrontierError",
    "FrontierQueue",
    "FrontierScheduler",
    "FrontierStatus",
    "FrontierWorker",
    "JobGone",
    "Push",
    "Pushed",
    "RequestCodec",
    "WorkerStatus",
    "display_url",
    "frontier_jobs",
    "has_password",
    "marker_is_stale",
    "shareable_url",
]
