"""The shared state of one job in Redis, seen by one worker: :class:`Frontier`, the one class that knows
the keys and what each script (:mod:`crawler.frontier.scripts`) means. Its connection, the scripts'
registration and Redis's errors are :class:`~crawler.frontier.connection.JobConnection`'s.

- **Per-job keys** ``feedcensus:<job>:`` + ``queue`` (a scrapy-redis priority zset),
  ``dupefilter`` (a set of Scrapy 2.19 request fingerprints), ``leases`` (hash: URL
  -> the worker holding it; a web archive's record is ``archive <url>``, see the end of this docstring),
  ``held:<worker>`` (hash: URL -> score and queue member,
  what goes back to the queue if that worker dies), ``workers`` (hash: worker -> JSON
  host, pid, started, state, heartbeat, requests), ``not_due`` (set: the feeds recorded
  as not due, so one worker records each) and ``meta`` (hash: created, state
  running|done, seeded, input_hosts), ``children:<url>`` and ``children_before:<url>`` (sets of
  fingerprints and ``not_due <url>`` marks, see below) with ``parents`` (set: the URLs that have them), ``done``
  (hash: the key of a committed row -> ``<worker>\t<commit>``, ``+`` first once settled, see below) and
  ``dead_writers`` (set: the writer tokens of dead workers whose leftovers are not removed yet), ``paused`` and
  ``paused_why`` (hashes: a host a 429/503 paused for the whole job -> when its pause ends, and why; only the
  hosts paused now, read with every heartbeat: ``crawler/middlewares/hostpause.py``). A scheduled re-crawl
  is a new job, so it never inherits the previous one's duplicate filter; :meth:`Frontier.finish`
  makes every key of a job expire ``FEEDCENSUS_FRONTIER_KEY_TTL`` seconds after it ends.
- **Leases.** Taking requests leases their URLs to the worker, in one Lua script (one
  round trip for up to ``FEEDCENSUS_FRONTIER_PREFETCH`` requests, handed to Scrapy one by
  one): a worker killed with SIGKILL loses nothing, because a worker whose
  heartbeat is older than ``FEEDCENSUS_FRONTIER_LEASE`` seconds is dead and any live
  worker puts what it held back in the queue (:meth:`Frontier.requeue_dead`). A lease
  ends when a request standing for the URL is queued (a redirect target, a retry), or
  one heartbeat after the URL's ``fetch_log`` row is committed (its ``url`` or
  ``final_url``; a redirect chain dropped as a duplicate is released with its row), once Scrapy is done
  with its response (every request its callback made is queued) and a commit taken after that is done (or
  nothing waits to be committed), so the ``duplicate`` rows those requests got are committed too
  (:class:`~crawler.frontier.releases.ReleaseBook`). A row naming a URL the worker has taken
  and not yet started (another page's duplicate of it) does not end that lease. Every time is the Redis server's
  clock, so machines need not agree on the time.
- **A page read again is not its own duplicate.** A worker killed after it read a page and
  queued the feeds it names, but before the page's rows were committed, has its lease of the
  page put back: another worker reads the page again and names the same feeds, whose
  fingerprints are in the duplicate filter. A single process reads the page once and writes
  no ``duplicate`` row for them, so neither must the job. So a request pushed with the page
  that named it (``parent``: its context's ``source``, which is the page's response URL) while
  this worker leases that page is noted in ``children:<page>``; when the lease goes back to the
  queue uncommitted those notes move to ``children_before:<page>``, and the next reading's push
  of one of them is answered :attr:`Pushed.ALREADY_QUEUED`: not queued again (it was queued,
  leased or fetched once), no ``duplicate`` row. Each note is used once, so a page that names a
  URL twice still gives the second mention its ``duplicate`` row, as in one process. A feed the
  page names that is not due is noted the same way (``not_due <url>``), so the next reading records
  it as not due again instead of as a duplicate of a ``not_due`` row that was never committed
  (:meth:`Frontier.claim_not_due`). The notes are deleted when the page's lease is released after
  its commit (or let go).

A refused or reset connection is tried again (every script is safe to run twice: push, pop
and the not-due claim carry a token and answer a repeated call as the first); any other failure of Redis stops
the crawl with ``frontier_error``, and what the worker held comes back through its lease. So does a job
gone from Redis (:class:`JobGone`: its ``meta`` is missing at a heartbeat of a worker that joined it, as
after a restart without its data), which no worker could otherwise see end.
Known limits (at least once): a worker that stops heartbeating for longer
than the lease (a reactor blocked that long) is taken for dead, so what it held may be
fetched twice (including the requests it had taken and not started, up to
``FEEDCENSUS_FRONTIER_PREFETCH``: it still fetches them); a lease no committed row names is let go
when its worker finishes (``feedcensus/frontier/orphaned``), as refetching it would change nothing.
Leases are kept by URL (an archive's record by ``archive <url>`` of the URL it holds,
:func:`crawler.requests.lease_key`, not by its WARC file's: a live fetch of that URL is another
lease), so requests for one URL (``dont_filter``) share one: anything that ends it early (a
sibling's retry queued, another worker taking a sibling) leaves the siblings this worker holds to
it alone, lost if it then dies.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import socket
import time
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from crawler.frontier.connection import CountingRedis, JobConnection
from crawler.frontier.state import (
    BUSY,
    CLAIM_BATCH,
    DEFAULT_KEY_TTL,
    DEFAULT_LEASE,
    Claimed,
    FrontierError,
    FrontierStatus,
    Push,
    Pushed,
    WorkerStatus,
)


class Frontier(JobConnection):
    """The shared state of one job in Redis, seen by one worker (see the module's docstring)."""

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
        super().__init__(client, url, job, worker, lease=lease, key_ttl=key_ttl)
        #: The token of this worker's dataset writer (its part files and ``.running`` markers carry it), kept
        #: with its heartbeat: whoever finds the worker dead removes what it left (:meth:`dead_writers`).
        self.writer_token: str | None = None
        #: Whether this worker registered (joined the job): then a job gone from Redis is an error.
        self.joined = False
        #: Seconds until a host may next be asked, as the last take found (None: no host waits for its delay).
        self.wait: float | None = None
        #: The time of the last take (Redis's clock): the start it reserved at each host it took from, which
        #: :meth:`reserve_start` may be told went unused ('' before the first take).
        self.taken_at = ""
        #: The hosts paused for the whole job, as of the last heartbeat: host -> (time.monotonic() it ends, why).
        self.paused: dict[str, tuple[float, str]] = {}

    # --- workers --------------------------------------------------------------------------

    def register(self, state: str = BUSY, requests: int = 0) -> None:
        """Join the job (creating it if it is new). A new worker is busy until it first finds nothing to do."""
        self._heartbeat(state, requests, register=True)
        self.joined = True

    def heartbeat(self, state: str, requests: int = 0) -> bool:
        """Say this worker is alive and ``state``; False when it had been taken for dead (its leases requeued).

        :class:`JobGone` when the job is gone from Redis although this worker joined it (the server lost its
        data, or the job's keys were deleted): its queue, duplicate filter and leases went with it, so no
        worker could ever see the job end."""
        return self._heartbeat(state, requests, register=False)

    def _heartbeat(self, state: str, requests: int, *, register: bool) -> bool:
        host, pid = socket.gethostname(), os.getpid()
        info: dict[str, Any] = {"host": host, "pid": pid, "started": self.started, "state": state, "requests": requests}
        if self.writer_token is not None:
            info["writer"] = self.writer_token
        answer = self._run("heartbeat", self.worker, json.dumps(info), "1" if register else "0")
        if not isinstance(answer, list):  # -1: the job is gone
            raise self.gone_error()
        known, flat = answer
        self._note_paused(flat)
        return bool(int(known))

    def _note_paused(self, flat: Sequence[Any]) -> None:
        """The job's paused hosts as the heartbeat read them: host -> (time.monotonic() it ends, why)."""
        at = time.monotonic()
        self.paused = {str(flat[i]): (at + float(flat[i + 1]), str(flat[i + 2])) for i in range(0, len(flat) - 2, 3)}

    def pause_host(self, host: str, seconds: float, why: str, *, deferred: bool = False) -> float:
        """Pause ``host`` for every worker of the job for ``seconds`` (a longer pause already there stands);
        the seconds its pause lasts from now. Workers learn of it at their next heartbeat. No worker is
        handed the host's requests meanwhile, but for a ``deferred`` host: those are handed out, to be
        recorded as deferred."""
        left = float(self._run("pause_host", host, repr(float(seconds)), why, "1" if deferred else "0"))
        self.paused[host] = (time.monotonic() + left, why)
        return left

    def reserve_start(self, host: str, delay: float | None = None, unused: str = "") -> tuple[float, str]:
        """A request of ``host`` whose start no take reserved just now (one that waited in this worker for a pause
        or robots.txt, robots.txt itself: crawler/downloader.py) may start: the seconds to wait first, so that it
        keeps the host's delay (``delay``: as this worker knows it, e.g. the robots.txt Crawl-delay it just read)
        after the job's last start to it, and the host's pause; and the time reserved (Redis's clock). The start
        is reserved. ``unused``: the time of a start this worker reserved and did not use; while no start was
        reserved after it, the new one may be now."""
        wait, at = self._run("reserve_start", host, "" if delay is None else repr(float(delay)), unused)
        return float(wait), str(at)

    def unregister(self, *, requeue: bool = True) -> list[str]:
        """Leave the job. What this worker still holds goes back to the queue, or with ``requeue=False``
        (a worker that finished: everything it fetched is committed) is let go. Returns those URLs."""
        return list(self._run("unregister", self.worker, "1" if requeue else "0"))

    def dead_writers(self) -> list[str]:
        """The writer tokens of workers found dead whose leftovers (``.running`` markers, temporary
        part files) nobody has removed yet (:meth:`forget_dead_writer` once removed)."""
        return sorted(self._call("read dead writers", self.redis.smembers, self.key("dead_writers")))

    def forget_dead_writer(self, token: str) -> None:
        self._call("forget a dead writer", self.redis.srem, self.key("dead_writers"), token)

    def requeue_dead(self) -> list[str]:
        """Put back in the queue what workers silent for longer than the lease held, and forget them."""
        return list(self._run("requeue_dead", repr(self.lease_seconds)))

    # --- the job ----------------------------------------------------------------------------

    def set_budget(self, concurrency: int, delay: float) -> tuple[int, float]:
        """The job's budget per host, the same for every worker: at most ``concurrency`` requests to a host in
        flight at once, ``delay`` seconds between the starts of two (a host's robots.txt Crawl-delay or its
        adaptive delay, reported with its slots, replaces it for that host). The first worker's stands; the
        job's budget is returned."""
        key = self.key("meta")
        self._call("set the budget", self.redis.hsetnx, key, "host_concurrency", str(max(1, int(concurrency))))
        self._call("set the budget", self.redis.hsetnx, key, "host_delay", repr(max(0.0, float(delay))))
        conc, wait = self._call("read the budget", self.redis.hmget, key, "host_concurrency", "host_delay")
        return int(conc), float(wait)

    def robots(self, netloc: str) -> tuple[str, bytes | None]:
        """The job's robots.txt of ``netloc``, read once for every worker: ('mine', None) when this worker
        is now the one to fetch it, ('body', bytes) when a worker read it, ('error', None) when its fetch
        failed (the site is crawled as if it allowed everything), ('pending', None) while another fetches it.
        One round trip: the claim and the read are one script."""
        value = str(self._run("claim_robots", netloc, f"pending {self.worker}") or "")
        if not value:
            return "mine", None
        kind, _, rest = value.partition(" ")
        if kind == "body":
            return "body", base64.b64decode(rest)
        if kind == "error":
            return "error", None
        if kind == "pending" and rest == self.worker:
            return "mine", None
        return "pending", None

    def share_robots(
        self, netloc: str, body: bytes | None, start: tuple[str, float | None] | None = None
    ) -> tuple[float, str] | None:
        """What this worker's fetch of ``netloc``'s robots.txt gave (None: it failed), for every worker.

        ``start``: a host and its delay (as :meth:`reserve_start` takes them) whose next start is reserved in
        the same round trip, for the request that waited for robots.txt; then the seconds to wait for it and
        the time reserved, as :meth:`reserve_start` answers."""
        value = "error" if body is None else "body " + base64.b64encode(body[:ROBOTS_MAX]).decode("ascii")
        host, delay = start if start is not None else ("", None)
        got = self._run("share_robots", netloc, value, host, "" if delay is None else repr(float(delay)))
        if not got:
            return None
        wait, at = got
        return float(wait), str(at)

    def share_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Fix the job's settings (``crawler/cli/jobsettings.py``) unless they are fixed already; the job's."""
        key = self.key("meta")
        self._call("share the settings", self.redis.hsetnx, key, "settings", json.dumps(dict(settings), sort_keys=True))
        return self.job_settings() or {}

    def job_settings(self) -> dict[str, Any] | None:
        """The settings the job runs with, as the process that started it fixed them (None: not fixed)."""
        raw = self._call("read the settings", self.redis.hget, self.key("meta"), "settings")
        if not raw:
            return None
        value = json.loads(raw)
        return value if isinstance(value, dict) else None

    def mark_seeded(self) -> None:
        """Every input of the job is queued: the job may end once the queue and the leases are empty."""
        self._call("mark seeded", self.redis.hset, self.key("meta"), "seeded", "1")

    @property
    def seeded(self) -> bool:
        return bool(self._call("read meta", self.redis.hget, self.key("meta"), "seeded") == "1")

    def hosts_shared(self) -> bool:
        """Whether a coordinator has shared its input hosts (its first step, before any input is queued)."""
        return bool(self._call("read input hosts", self.redis.hexists, self.key("meta"), "input_hosts"))

    def share_hosts(self, hosts: Iterable[str]) -> None:
        """The hosts the inputs name (trusted even when private): every worker of the job trusts them too."""
        known = set(self.shared_hosts()) | set(hosts)
        self._call("share input hosts", self.redis.hset, self.key("meta"), "input_hosts", json.dumps(sorted(known)))

    def shared_hosts(self) -> list[str]:
        raw = self._call("read input hosts", self.redis.hget, self.key("meta"), "input_hosts")
        return [str(h) for h in json.loads(raw)] if raw else []

    def queued(self) -> int:
        return int(self._call("count the queue", self.redis.hget, self.key("meta"), "queued") or 0)

    def claim_not_due(self, url: str, parent: str | None = None) -> bool:
        """True for the first worker of the job to record ``url`` as not due (the others record a duplicate).

        ``parent`` is the page that named the feed: while this worker leases it the claim is noted as
        that reading's, and a reading of the page after its lease came back uncommitted claims the feed
        again (see the module's docstring), as :meth:`push` does for the requests a page queues.
        """
        return bool(self._run("claim_not_due", self.worker, str(next(self._tokens)), url, parent or ""))

    def status(self) -> FrontierStatus:
        """The job as it is now: one atomic snapshot."""
        raw = json.loads(self._run("snapshot"))
        now = float(raw["now"])
        meta = _pairs(raw["meta"])
        names = list(_pairs(raw["workers"]).items())
        held = raw["held"] if isinstance(raw["held"], list) else []
        workers = [
            _worker_status(wid, info, now, held[i] if i < len(held) else 0, self.lease_seconds)
            for i, (wid, info) in enumerate(names)
        ]
        return FrontierStatus(
            job=self.job,
            display_url=self.display_url,
            state=meta.get("state") or ("running" if set(meta) - _COUNTERS else "absent"),
            seeded=meta.get("seeded") == "1",
            queued=int(raw["queued"]),
            leased=int(raw["leased"]),
            seen=int(raw["seen"]),
            workers=sorted(workers, key=lambda w: w.id),
        )

    def is_done(self) -> bool:
        """Seeded, nothing queued, nothing leased, every live worker idle."""
        return self.status().done

    def is_quiet(self) -> bool:
        """:attr:`FrontierStatus.quiet`: the idle workers may close (the job is done once they have)."""
        return self.status().quiet

    def finish(self) -> None:
        """Mark the job done; every key of the job expires ``key_ttl`` seconds from now."""
        self._run("finish", str(int(self.key_ttl)))

    # --- exactly once: the claims of committed rows ----------------------------------------------

    def claim(self, commit: str, keys: Sequence[str]) -> list[Claimed]:
        """Claim ``keys`` (those of one commit's rows, :func:`pipelines.dataset.claims.row_keys`) for
        ``commit`` (``<seq>-<writer token>``, its marker's name), in one round trip; the keys another worker's
        commit claimed first, with that claim (see :class:`Claimed`). :class:`JobGone` when the job is gone."""
        flat: list[str] = []
        for start in range(0, len(keys), CLAIM_BATCH):  # one script holds Redis: a big commit goes in parts
            got = self._run("claim", self.worker, commit, repr(self.lease_seconds), *keys[start : start + CLAIM_BATCH])
            if got == "gone":
                raise self.gone_error()
            flat += [str(x) for x in got or ()]
        return [Claimed(flat[i], flat[i + 1], live=flat[i + 2] == "1") for i in range(0, len(flat) - 2, 3)]

    def take_over(self, commit: str, claims: Sequence[Claimed]) -> int:
        """Make ``claims`` (of dead workers, whose commits were never published) ``commit``'s, each unless it
        changed meanwhile; how many were."""
        args = [x for c in claims for x in (c.key, c.claim)]
        return int(self._run("take_over", self.worker, commit, *args)) if args else 0

    def worker_live(self, worker: str) -> bool:
        """Whether ``worker`` is registered and its heartbeat younger than the lease."""
        return any(w.id == worker and w.live for w in self.status().workers)

    def reclaim(self, claims: Iterable[tuple[str, str]]) -> int:
        """Claim keys whose rows the dataset holds, each unless claimed already (after Redis lost the last
        writes before a restart); how many were missing. One round trip per 1,000 keys."""
        added, batch = 0, []
        for key, claim in claims:
            batch += [key, claim]
            if len(batch) >= 2000:
                added += int(self._run("reclaim", *batch))
                batch = []
        if batch:
            added += int(self._run("reclaim", *batch))
        return added

    def server_restarted(self) -> bool:
        """Whether the Redis server restarted (or failed over) since the job was created or last reconciled:
        it may have lost its last writes (``appendfsync everysec``: about a second), claims among them."""
        run_id = str(self._call("read the server's run id", self.redis.info, "server").get("run_id") or "")
        known = self._call("read meta", self.redis.hget, self.key("meta"), "run_id")
        if known is None:
            self._call("write meta", self.redis.hsetnx, self.key("meta"), "run_id", run_id)
            return False
        return bool(known != run_id)

    def mark_reconciled(self) -> None:
        run_id = str(self._call("read the server's run id", self.redis.info, "server").get("run_id") or "")
        self._call("write meta", self.redis.hset, self.key("meta"), "run_id", run_id)

    # --- requests -----------------------------------------------------------------------------

    def push(
        self,
        url: str,
        encoded: str,
        *,
        priority: int = 0,
        fingerprint: str | None = None,
        release: Iterable[str] = (),
        parent: str | None = None,
        is_input: bool = False,
    ) -> Pushed:
        """Queue a request unless ``fingerprint`` was seen; the URLs in ``release`` are no longer leased.

        ``parent`` is the page whose response made the request: while this worker leases it,
        the request is noted as that reading's, so that a reading of the page after its lease
        came back uncommitted gets :attr:`Pushed.ALREADY_QUEUED`, not a duplicate (see the
        module's docstring).

        Within one priority, requests go in an order spread by a hash of the URL, so the
        queue's head is not one site's (which ``CONCURRENT_REQUESTS_PER_DOMAIN`` would serialise).
        The job's inputs (``is_input``) go behind every request found in a response, whatever its
        priority: a plain crawl gives Scrapy an input only when its scheduler has run empty
        (``CensusSpider.paced``), so the feeds a page names are fetched next, not after every other
        input; and the document workers get feeds and pages mixed, not every feed at the end.
        """
        push = Push(url, encoded, priority, fingerprint, tuple(release), parent=parent, is_input=is_input)
        return self.push_many([push])[0]

    def push_many(self, pushes: Sequence[Push]) -> list[Pushed]:
        """:meth:`push` for each of ``pushes``, in order, in one round trip (one atomic script); what each did."""
        if not pushes:
            return []
        args: list[str] = []
        for push in pushes:
            member = f"{push.url}\n{push.encoded}"
            score = repr(_score(push.url, push.priority, is_input=push.is_input))
            host = push.host if push.host is not None else host_of(push.url)
            args += [
                push.fingerprint or "",
                score,
                host,
                member,
                push.parent or "",
                str(len(push.release)),
                *push.release,
            ]
        answers = str(self._run("push", self.worker, str(next(self._tokens)), *args))
        if len(answers) != len(pushes):
            raise FrontierError(f"frontier {self.display_url}: push answered {len(answers)} of {len(pushes)} requests")
        return [Pushed(int(answer)) for answer in answers]

    def pop(self, *, mark_busy: bool = False) -> tuple[str, str] | None:
        """Take the next request and lease its URL to this worker: (url, encoded), None when the queue is empty."""
        taken = self.take(1, mark_busy=mark_busy)
        return taken[0] if taken else None

    def take(
        self, count: int, *, mark_busy: bool = False, done: Sequence[tuple[str, float | None]] = ()
    ) -> list[tuple[str, str]]:
        """Take up to ``count`` requests, highest priority first among the hosts that may be asked now, in one
        round trip, and lease their URLs to this worker: [(url, encoded), ...], empty when none may be taken.

        Each takes a slot of its host (the job's budget: :meth:`set_budget`). ``done`` gives slots back in
        the same round trip: (host, the host's delay as this worker knows it, None for the job's), one per
        request whose response came in. After the call, :attr:`wait` says when a host may next be asked."""
        token, busy = str(next(self._tokens)), "1" if mark_busy else "0"
        flat_done = [text for host, delay in done for text in (host, "" if delay is None else repr(float(delay)))]
        got = self._run("pop", self.worker, token, busy, str(max(count, 0)), "1" if self.joined else "0", *flat_done)
        if got == "gone":  # at the first take, not the next heartbeat
            raise self.gone_error()
        members, wait = (got[0], got[1]) if isinstance(got, list) and len(got) >= 2 else ((), "-1")
        self.wait = None if float(wait) < 0 else float(wait)
        self.taken_at = str(got[2]) if isinstance(got, list) and len(got) >= 3 else ""
        taken = []
        for member in itertools.islice(members or (), 0, None, 2):  # member, score, member, score, ...
            url, _, encoded = str(member).rpartition("\n")  # as the script splits it: at the last newline
            taken.append((url, encoded))
        return taken

    def give_back(self, done: Sequence[tuple[str, float | None]]) -> None:
        """Give back the slots of requests whose responses came in, when no take carries them (:meth:`take`)."""
        if done:
            self.take(0, done=done)

    def lease(self, url: str, encoded: str, *, priority: int = 0) -> None:
        """Lease ``url`` to this worker, with the request that goes back to the queue if the worker dies."""
        self._run("lease", self.worker, url, repr(_score(url, priority)), host_of(url), f"{url}\n{encoded}")

    def release(self, urls: Iterable[str]) -> int:
        """End this worker's leases of ``urls`` (their rows are committed); how many there were.

        Only this worker's: a row of ours may name a URL another worker is fetching (a page's link
        dropped as a duplicate while that feed downloads elsewhere), and its lease must hold until
        that worker's own row is committed, or its death would lose the request.
        """
        todo = list(dict.fromkeys(u for u in urls if u))
        return int(self._run("release", self.worker, *todo)) if todo else 0

    def held_host(self, url: str) -> str:
        """The host whose slot this worker's request for ``url`` holds: the queue it was taken from (a request's
        download slot, which may not be its URL's host: an archive's records share the archive's). Its URL's
        host when this worker holds no request for it."""
        held = self._call("read held", self.redis.hget, self.key(f"held:{self.worker}"), url)
        entry = str(held).split("\0", 1)[0] if held else ""  # 'score host member', NUL-joined when several
        parts = entry.split(" ", 2)
        return (parts[1] if len(parts) == 3 else "") or host_of(url)

    def leases(self) -> dict[str, str]:
        """URL -> worker, every lease of the job."""
        return dict(self._call("read leases", self.redis.hgetall, self.key("leases")))


#: Added to the score of the job's inputs: they wait behind every request found in a response.
INPUT_WAIT: Final = 2**20


def _score(url: str, priority: int, *, is_input: bool = False) -> float:
    """Lower is sooner: higher priority first, then a hash of the URL in [0, 1); the job's inputs after
    every other request (``is_input``)."""
    return -priority + zlib.crc32(url.encode("utf-8", "surrogatepass")) / 2**32 + (INPUT_WAIT if is_input else 0)


#: The most of a robots.txt the job keeps (Google reads the first 500 KiB).
ROBOTS_MAX: Final = 512 * 1024

#: Fields of ``meta`` that a push or a take writes: a job with nothing else there was never started.
_COUNTERS: Final = frozenset({"queued", "skipped_done", "host_concurrency", "host_delay", "settings"})


def host_of(url: str) -> str:
    """The host a request for ``url`` counts against: its download slot in Scrapy's downloader (the host name,
    lower case, without port)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _pairs(value: Any) -> dict[str, str]:
    """A Redis flat reply [k1, v1, k2, v2...] as a dict (an empty Lua table comes out of cjson as {})."""
    if not isinstance(value, list):
        return {}
    return dict(zip(value[::2], value[1::2], strict=False))


def _worker_status(wid: str, raw: str, now: float, leased: int, lease: float) -> WorkerStatus:
    try:
        info = json.loads(raw)
    except ValueError:
        info = {}
    if not isinstance(info, dict):
        info = {}
    age = max(0.0, now - float(info.get("heartbeat") or 0.0))
    pid = info.get("pid")
    return WorkerStatus(
        id=wid,
        host=str(info.get("host") or ""),
        pid=int(pid) if isinstance(pid, int | float) else None,
        state=str(info.get("state") or BUSY),
        heartbeat_age=age,
        requests=int(info.get("requests") or 0),
        leased=int(leased),
        live=age <= lease,
    )
