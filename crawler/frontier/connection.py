"""How one worker talks to its job's Redis: :class:`JobConnection` (the connection, the job's key prefix, the Lua
scripts registered once, and every failure of Redis turned into one :class:`FrontierError` line) and
:class:`CountingRedis`, the client that counts its round trips. :class:`~crawler.frontier.store.Frontier` builds
on it with what each script means.
"""

from __future__ import annotations

import itertools
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.retry import Retry

from crawler.frontier.scripts import (
    _CLAIM,
    _CLAIM_NOT_DUE,
    _CLAIM_ROBOTS,
    _FINISH,
    _HEARTBEAT,
    _LEASE,
    _PAUSE_HOST,
    _POP,
    _PRELUDE,
    _PUSH,
    _RECLAIM,
    _RELEASE,
    _REQUEUE_DEAD,
    _RESERVE_START,
    _SHARE_ROBOTS,
    _SNAPSHOT,
    _TAKE_OVER,
    _UNREGISTER,
)
from crawler.frontier.state import (
    CONNECT_TIMEOUT,
    DEFAULT_KEY_TTL,
    DEFAULT_LEASE,
    SOCKET_TIMEOUT,
    FrontierError,
    JobGone,
)
from crawler.frontier.urls import PASSWORD_ENV, _scrub, _secrets_of, display_url, has_password

if TYPE_CHECKING:
    from typing import Self


class CountingRedis(redis.Redis):
    """redis-py's client, counting the commands it sends (the frontier sends no pipelines: one round trip each)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._count_lock = threading.Lock()
        self.commands = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        with self._count_lock:
            self.commands += 1
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


class JobConnection:
    """One worker's connection to its job's keys in Redis: the scripts it runs and the errors it raises."""

    def __init__(
        self,
        client: CountingRedis,
        url: str,
        job: str,
        worker: str | None = None,
        *,
        lease: float = DEFAULT_LEASE,
        key_ttl: int = DEFAULT_KEY_TTL,
    ) -> None:
        if not job:
            raise FrontierError("a distributed crawl needs a job id")
        self.redis = client
        self.url = url
        self.display_url = display_url(url)
        self.job = job
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.lease_seconds = lease
        self.key_ttl = key_ttl
        self.prefix = f"feedcensus:{job}:"
        self.started = time.time()
        self._secrets = _secrets_of(url)
        self._tokens = itertools.count(1)
        self._scripts = {
            name: client.register_script(_PRELUDE + body)
            for name, body in (
                ("push", _PUSH),
                ("pop", _POP),
                ("lease", _LEASE),
                ("release", _RELEASE),
                ("heartbeat", _HEARTBEAT),
                ("pause_host", _PAUSE_HOST),
                ("reserve_start", _RESERVE_START),
                ("claim_robots", _CLAIM_ROBOTS),
                ("share_robots", _SHARE_ROBOTS),
                ("requeue_dead", _REQUEUE_DEAD),
                ("unregister", _UNREGISTER),
                ("snapshot", _SNAPSHOT),
                ("finish", _FINISH),
                ("claim_not_due", _CLAIM_NOT_DUE),
                ("claim", _CLAIM),
                ("take_over", _TAKE_OVER),
                ("reclaim", _RECLAIM),
            )
        }

    @classmethod
    def connect(
        cls,
        url: str,
        job: str,
        worker: str | None = None,
        *,
        lease: float = DEFAULT_LEASE,
        key_ttl: int = DEFAULT_KEY_TTL,
    ) -> Self:
        """A frontier on the Redis at ``url`` (``redis://HOST:PORT/DB``), checked with a PING.

        A URL without a password takes the one in ``FEEDCENSUS_REDIS_PASSWORD``, if set.
        """
        if not job:
            raise FrontierError("a distributed crawl needs a job id")
        env_password = os.environ.get(PASSWORD_ENV) or None
        try:
            client = CountingRedis.from_url(
                url,
                password=None if has_password(url) else env_password,
                decode_responses=True,
                socket_timeout=SOCKET_TIMEOUT,
                socket_connect_timeout=CONNECT_TIMEOUT,
                # A refused or reset connection is tried twice more (every script is safe to run again);
                # a timeout is not (the reactor would wait that long again).
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 2, (RedisConnectionError,)),
            )
        except (ValueError, RedisError) as exc:
            raise FrontierError(_scrub(f"bad frontier URL {display_url(url)}: {exc}", _secrets_of(url))) from None
        frontier = cls(client, url, job, worker, lease=lease, key_ttl=key_ttl)  # type: ignore[arg-type]
        frontier._call("connect", client.ping)
        return frontier

    def key(self, name: str) -> str:
        return self.prefix + name

    @property
    def commands(self) -> int:
        """Redis commands sent so far (each one round trip)."""
        return self.redis.commands

    def close(self) -> None:
        """Close the connections (the frontier's state stays in Redis)."""
        self.redis.close()

    def gone_error(self) -> JobGone:
        return JobGone(
            f"frontier {self.display_url} (job {self.job}): the job is gone from Redis (the server lost its data, "
            "or the job's keys were deleted): what was queued and leased went with it"
        )

    def _run(self, script: str, *args: str) -> Any:
        return self._call(script.replace("_", " "), self._scripts[script], args=[self.prefix, *args])

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RedisError as exc:
            message = f"frontier {self.display_url} (job {self.job}): {what} failed: {type(exc).__name__}: {exc}"
            raise FrontierError(_scrub(message, self._secrets)) from None
