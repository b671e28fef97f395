"""What the frontier's parts share: worker states, the settings' defaults, batch sizes and timeouts, the
stats keys, the errors, and the job's state as read from Redis (:class:`FrontierStatus`, :class:`Claimed`)
or pushed to it (:class:`Push`)."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any, Final

#: Worker states in the ``workers`` hash.
BUSY: Final = "busy"
IDLE: Final = "idle"
CLOSED: Final = "closed"
#: The finish reason of a crawl stopped because its frontier failed.
FRONTIER_ERROR: Final = "frontier_error"
#: Defaults of the settings (crawler/settings.py has the same).
DEFAULT_LEASE: Final = 60.0
DEFAULT_HEARTBEAT: Final = 5.0
DEFAULT_KEY_TTL: Final = 604800
DEFAULT_PREFETCH: Final = 16
#: The most requests a worker holds back to push in one round trip (its inputs while it seeds the job, or
#: the requests its responses made); and the most seconds a request found in a response is held back.
PUSH_BATCH: Final = 500
PUSH_DELAY: Final = 1.0
#: The most keys one claim script takes (a commit with more makes more round trips; 200 keys take ~3 ms).
CLAIM_BATCH: Final = 2000
#: Seconds a Redis command may take; connecting may take; a closing worker waits for the dataset's last commit.
SOCKET_TIMEOUT: Final = 10.0
CONNECT_TIMEOUT: Final = 5.0
SETTLE_TIMEOUT: Final = 300.0

STAT_ERROR: Final = "feedcensus/frontier_error"
STAT_LEASED: Final = "feedcensus/frontier/leased"
STAT_RELEASED: Final = "feedcensus/frontier/released"
STAT_REQUEUED: Final = "feedcensus/frontier/requeued"
STAT_ORPHANED: Final = "feedcensus/frontier/orphaned"
STAT_COMMANDS: Final = "feedcensus/frontier/redis_commands"
#: The job's queue length at this worker's last heartbeat (the progress line shows it as pending).
STAT_QUEUED: Final = "feedcensus/frontier/queued"
#: Requests a page read again named, which its earlier, uncommitted reading had queued (no duplicate row).
STAT_ALREADY_QUEUED: Final = "feedcensus/frontier/already_queued"
#: Set (1) when the crawl stopped because the job's state was gone from Redis (:class:`JobGone`).
STAT_JOB_GONE: Final = "feedcensus/frontier/job_gone"
#: Keys of committed rows left out of this worker's commits because another worker's commit holds them.
STAT_DROPPED: Final = "feedcensus/frontier/dropped_committed"


class FrontierError(Exception):
    """The frontier cannot be used (one line; a Redis URL in it never carries its password)."""


class JobGone(FrontierError):
    """The job's state is gone from Redis although this worker joined it: the job cannot go on."""


class Pushed(enum.IntEnum):
    """What :meth:`Frontier.push` did; false only for a duplicate, which the scheduler drops (one row)."""

    DUPLICATE = 0  # its fingerprint was seen in this job: not queued
    QUEUED = 1
    #: Seen, but queued by an earlier reading of the same page, whose lease went back to the queue
    #: before its rows were committed: not queued again, and no duplicate (one process reads a page once).
    ALREADY_QUEUED = 2


# --- the job's state ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkerStatus:
    """One worker of a job, as the frontier sees it."""

    id: str
    host: str
    pid: int | None
    state: str  # busy | idle | closed
    heartbeat_age: float  # seconds since its last heartbeat (the Redis server's clock)
    requests: int  # requests it took from the queue
    leased: int = 0  # URLs it holds now
    live: bool = True  # heartbeat younger than the lease


@dataclass(frozen=True, slots=True)
class FrontierStatus:
    """One consistent view of a job on the frontier."""

    job: str
    display_url: str
    state: str  # running | done | absent (never started, or its keys expired)
    seeded: bool
    queued: int
    leased: int
    seen: int
    workers: list[WorkerStatus] = field(default_factory=list)

    @property
    def exists(self) -> bool:
        return self.state != "absent"

    @property
    def live_workers(self) -> list[WorkerStatus]:
        return [w for w in self.workers if w.live]

    @property
    def done(self) -> bool:
        """Seeded, nothing queued, nothing leased and every live worker idle."""
        return self.quiet and self.leased == 0

    @property
    def quiet(self) -> bool:
        """Seeded, nothing queued, every live worker idle and every lease held by one of them.

        Nothing can happen any more but the commits of what the idle workers hold.
        """
        live = self.live_workers
        return (
            self.seeded
            and self.queued == 0
            and all(w.state != BUSY for w in live)
            and sum(w.leased for w in live) == self.leased
        )

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["exists"] = self.exists
        return out


@dataclass(frozen=True, slots=True)
class Claimed:
    """A key of a commit's rows that another commit claimed first: ``claim`` is ``<worker>\\t<commit>``
    (``+`` first once settled); ``live`` whether that worker's heartbeat is younger than the lease."""

    key: str
    claim: str
    live: bool = False

    @property
    def worker(self) -> str:
        return self.claim.lstrip("+").partition("\t")[0]

    @property
    def commit(self) -> str:
        return self.claim.partition("\t")[2]


@dataclass(frozen=True, slots=True)
class Push:
    """One request for :meth:`Frontier.push_many`: its URL and encoded form, and what :meth:`Frontier.push` takes."""

    url: str  # the key it is leased under (crawler.requests.lease_key): the queue member is this key, a newline, ``encoded``
    encoded: str
    priority: int = 0
    fingerprint: str | None = None  # None: not filtered (dont_filter)
    release: tuple[str, ...] = ()  # the URLs whose leases it ends (its own, the redirects that led to it)
    parent: str | None = None  # the page whose response made it
    #: One of the job's inputs: queued behind every request found in a response (see :meth:`Frontier.push`).
    is_input: bool = False
    #: The host whose budget it counts against (its download slot); None: the URL's host name.
    host: str | None = None
