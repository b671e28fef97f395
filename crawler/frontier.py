"""A distributed crawl's shared frontier: one job's queue, duplicate filter and leases in Redis.

Many processes, on many machines, crawl one job: each is a Scrapy crawl whose
scheduler is :class:`FrontierScheduler` and which runs the :class:`FrontierWorker`
extension; each writes its own files into the job's dataset. Without
``FEEDCENSUS_FRONTIER`` nothing here runs and Scrapy's in-memory scheduler is used.

This is the one module that knows scrapy-redis (its priority queue and duplicate
filter classes; none of its spiders) and the one that knows the keys, so an upstream
fix or a swap touches this file only. What scrapy-redis lacks is done here:

- **Per-job keys** ``feedcensus:<job>:`` + ``queue`` (a scrapy-redis priority zset),
  ``dupefilter`` (a set of Scrapy 2.19 request fingerprints), ``leases`` (hash: URL
  -> the worker holding it), ``held:<worker>`` (hash: URL -> score and queue member,
  what goes back to the queue if that worker dies), ``workers`` (hash: worker -> JSON
  host, pid, started, state, heartbeat, requests), ``not_due`` (set: the feeds recorded
  as not due, so one worker records each) and ``meta`` (hash: created, state
  running|done, seeded, input_hosts), ``children:<url>`` and ``children_before:<url>`` (sets of
  fingerprints and ``not_due <url>`` marks, see below) with ``parents`` (set: the URLs that have them), ``done``
  (hash: the key of a committed row -> ``<worker>\t<commit>``, ``+`` first once settled, see below) and
  ``dead_writers`` (set: the writer tokens of dead workers whose leftovers are not removed yet). A scheduled re-crawl
  is a new job, so it never inherits the previous one's duplicate filter; :meth:`Frontier.finish`
  makes every key of a job expire ``FEEDCENSUS_FRONTIER_KEY_TTL`` seconds after it ends.
- **Leases.** Taking requests leases their URLs to the worker, in one Lua script (one
  round trip for up to ``FEEDCENSUS_FRONTIER_PREFETCH`` requests, handed to Scrapy one by
  one): a worker killed with SIGKILL loses nothing, because a worker whose
  heartbeat is older than ``FEEDCENSUS_FRONTIER_LEASE`` seconds is dead and any live
  worker puts what it held back in the queue (:meth:`Frontier.requeue_dead`). A lease
  ends when a request standing for the URL is queued (a redirect target, a retry), or
  one heartbeat after the URL's ``fetch_log`` row is committed (its ``url`` or
  ``final_url``; a redirect chain dropped as a duplicate is released with its row): by
  then the requests its response made are queued, and once a later commit is done (or nothing waits to be
  committed), so the ``duplicate`` rows those requests got are committed too. A row naming a URL the worker has taken
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
- **The end of the job.** scrapy-redis never closes a spider that has nothing to do.
  Here a worker is busy from the moment it joins (so a coordinator still queueing its
  inputs keeps the job open) or takes a request, until it has nothing to do; then it
  asks whether the whole job is quiet: seeded (the coordinator queued every input),
  nothing queued, every live worker idle, and every lease held by a live worker (all
  idle, so those leases only wait for their rows to be committed, which each worker
  does when it closes). Then it closes: it commits, releases, unregisters and, when
  :meth:`Frontier.is_done` (nothing leased either), marks the job done. A worker that
  stops for another reason (Ctrl-C, a shutdown) puts what it holds back in the queue.
- **Exactly once.** A commit claims the keys of its rows (:mod:`pipelines.dataset.claims`) in one script
  before it writes its files (:meth:`FrontierWorker.claim_rows`); the rows of a key another commit claimed
  first are left out when that commit is published, and a dead worker's unpublished claim is taken over. A
  URL whose lease is released after its commit is *settled*: taken from the queue again, it is dropped. A
  commit's URLs are released once the rows their reading made are committed (a later commit done, or
  nothing waiting). After Redis restarted (a new ``run_id``: it may have lost its last writes) the first
  worker to join claims again every committed row's key. docs/distributed.md, "Exactly once".
- **Requests as JSON**, never pickle (what scrapy-redis does by default: a shared
  Redis would run code in every worker). ``meta["fc"]`` (:class:`~schemas.items.FetchContext`),
  bytes, tuples and dicts with non-string keys are tagged; a meta value of another type
  is dropped from the queued copy, counted and logged once.

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
Leases are kept by URL (an archive's record by the URL it holds, :func:`lease_key`, not by its
WARC file's), so requests for one URL (``dont_filter``) share one: anything that ends it early (a
sibling's retry queued, another worker taking a sibling) leaves the siblings this worker holds to
it alone, lost if it then dies.
"""

from __future__ import annotations

import base64
import enum
import itertools
import json
import logging
import os
import secrets
import socket
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.retry import Retry
from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.request import request_from_dict
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue
from twisted.internet import task
from twisted.internet.base import DelayedCall

from pipelines.dataset import faults
from pipelines.dataset.claims import commit_keys
from pipelines.dataset.store import committed_claims
from pipelines.history import history_of
from pipelines.writer import ClaimRefused, Dataset
from schemas.items import FetchContext, context_from_meta
from schemas.vocab import Outcome

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from pipelines.dataset.store import Batch

logger = logging.getLogger(__name__)

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


# --- Redis URLs -------------------------------------------------------------------------------

_SECRET_PARAMS = frozenset({"password", "pass", "auth", "token", "username", "user"})
_PASSWORD_PARAMS = frozenset({"password", "pass", "auth", "token"})
#: Where a frontier's Redis password may come from instead of its URL (kept out of ``ps`` and logs).
PASSWORD_ENV: Final = "FEEDCENSUS_REDIS_PASSWORD"


@dataclass(frozen=True)
class _UrlParts:
    """A Redis URL split around its credentials."""

    parts: SplitResult
    host: str  # the netloc without the user info
    user: str | None  # None when the URL has no user info
    password: str | None  # None when the user info has no ':'
    query: list[tuple[str, str]]


def _split(url: str) -> _UrlParts | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    userinfo, at, host = parts.netloc.rpartition("@")
    user, colon, password = userinfo.partition(":")
    return _UrlParts(
        parts,
        host,
        user if at else None,
        password if colon else None,
        parse_qsl(parts.query, keep_blank_values=True),
    )


def _join(url: _UrlParts, userinfo: str | None, query: list[tuple[str, str]]) -> str:
    netloc = f"{userinfo}@{url.host}" if userinfo else url.host
    return urlunsplit((url.parts.scheme, netloc, url.parts.path, urlencode(query, safe="*"), ""))


def display_url(url: str) -> str:
    """``url`` with its credentials replaced by ``***`` (user info, and password in the query)."""
    split = _split(url)
    if split is None:
        return "<unreadable redis URL>"
    userinfo = None
    if split.user is not None:
        userinfo = f"{split.user}:***" if split.password is not None else "***"
    query = [(k, "***" if k.lower() in _SECRET_PARAMS else v) for k, v in split.query]
    return _join(split, userinfo, query)


def shareable_url(url: str) -> str:
    """``url`` without its password (in the user info or the query): what a command line may show.

    The password then comes from ``FEEDCENSUS_REDIS_PASSWORD`` (:data:`PASSWORD_ENV`).
    """
    split = _split(url)
    if split is None:
        return "<unreadable redis URL>"
    return _join(split, split.user, [(k, v) for k, v in split.query if k.lower() not in _PASSWORD_PARAMS])


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (then ``ps`` shows it to every user of the machine)."""
    split = _split(url)
    if split is None:
        return False
    return bool(split.password) or any(k.lower() in _PASSWORD_PARAMS for k, _ in split.query)


def _secrets_of(url: str) -> list[str]:
    """Every credential written in ``url``, raw and unquoted, and the one in the environment (to scrub from messages)."""
    split = _split(url)
    if split is None:
        return [url]
    found = [v for k, v in split.query if k.lower() in _SECRET_PARAMS]
    if split.user is not None:
        found += [split.parts.netloc.rpartition("@")[0], split.password or ""]
    found += [unquote(s) for s in found]
    found.append(os.environ.get(PASSWORD_ENV) or "")
    return sorted({s for s in found if s}, key=len, reverse=True)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- the Lua scripts: every change of the shared state is one atomic round trip ----------------

# ARGV[1] is always the job's key prefix. Keys are built inside the scripts (held:<worker> is
# only known there), which a standalone Redis allows.
_PRELUDE = """
local p = ARGV[1]
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function release(url)
  local owner = redis.call('HGET', p .. 'leases', url)
  if not owner then return 0 end
  redis.call('HDEL', p .. 'held:' .. owner, url)
  redis.call('HDEL', p .. 'leases', url)
  return 1
end
-- The requests a reading of url queued (children:<url>) become those an earlier reading queued
-- (children_before:<url>): its lease goes back to the queue uncommitted, the page will be read again.
local function reading_returned(url)
  if redis.call('SISMEMBER', p .. 'parents', url) == 0 then return end
  local kids, before = p .. 'children:' .. url, p .. 'children_before:' .. url
  if redis.call('EXISTS', kids) == 1 then
    redis.call('SUNIONSTORE', before, before, kids)
    redis.call('DEL', kids)
  end
end
-- The page's rows are committed (or let go): it will not be read again, its notes go.
local function forget_children(url)
  if redis.call('SREM', p .. 'parents', url) == 1 then
    redis.call('DEL', p .. 'children:' .. url, p .. 'children_before:' .. url)
  end
end
-- Whether worker w is reading the page parent (it leases it): only then is what the reading does noted.
local function reading(w, parent)
  return parent ~= '' and redis.call('HGET', p .. 'leases', parent) == w
end
-- An earlier, uncommitted reading of parent did this (a fingerprint pushed, a 'not_due <url>' claimed):
-- its note is used up, so the same page naming it twice still gets one answer each way.
local function done_before(parent, note)
  return redis.call('SREM', p .. 'children_before:' .. parent, note) == 1
end
local function note_child(parent, note)
  redis.call('SADD', p .. 'children:' .. parent, note)
  redis.call('SADD', p .. 'parents', parent)
end
-- A call of a kind ('claim'; a push batch keeps its answers its own way) that carries a token: the answer of worker w's last such call when
-- this one is that call sent again (redis-py resends after a reset connection), else nil.
local function repeated(w, kind, token)
  local last = redis.call('HGET', p .. 'last', w .. ':' .. kind)
  if not last then return nil end
  local was, answer = string.match(last, '^(%S+) ?(%d*)$')
  if was == token then return tonumber(answer) or 1 end
  return nil
end
local function answered(w, kind, token, answer)
  redis.call('HSET', p .. 'last', w .. ':' .. kind, token .. ' ' .. answer)
  return answer
end
-- Worker w is gone: the answers kept for its repeated calls go too.
local function forget_calls(w)
  redis.call('HDEL', p .. 'last', w .. ':push', w .. ':pop', w .. ':claim')
end
-- A held entry is 'score member', or several joined by NUL when the worker took more than one request
-- for the URL (an archive's records of one WARC file share its URL): every one goes back.
local function requeue(worker, urls)
  local key = p .. 'held:' .. worker
  local held = redis.call('HGETALL', key)
  for i = 1, #held, 2 do
    local url, payload = held[i], held[i + 1]
    for entry in string.gmatch(payload, '[^%z]+') do
      local cut = string.find(entry, ' ', 1, true)
      redis.call('ZADD', p .. 'queue', string.sub(entry, 1, cut - 1), string.sub(entry, cut + 1))
    end
    if redis.call('HGET', p .. 'leases', url) == worker then
      redis.call('HDEL', p .. 'leases', url)
      reading_returned(url)
    end
    urls[#urls + 1] = url
  end
  redis.call('DEL', key)
end
local function decode(raw)
  if not raw then return {} end
  local ok, info = pcall(cjson.decode, raw)
  if ok and type(info) == 'table' then return info end
  return {}
end
local function set_state(worker, state)
  local info = decode(redis.call('HGET', p .. 'workers', worker))
  info.state = state
  info.heartbeat = now()
  redis.call('HSET', p .. 'workers', worker, cjson.encode(info))
end
"""

# Push and pop carry a token, and a worker's last push and pop are kept in the hash ``last``:
# the same call sent again (redis-py retries after a reset connection, when the reply may be
# all that was lost) returns what the first one did instead of running twice.

# ARGV: prefix, worker, token, then for each request pushed: fingerprint ('' for dont_filter), score,
# member, parent ('' for none), how many URLs it stands for, those URLs. Returns a string of one digit
# per request, a Pushed: 0 duplicate, 1 queued, 2 already queued by an earlier reading of the parent
# (see the module's docstring). The whole batch is one call, with one token and one kept answer.
_PUSH = """
local w, token = ARGV[2], ARGV[3]
local last = redis.call('HGET', p .. 'last', w .. ':push')
if last then
  local was, kept = string.match(last, '^(%S+) ?(%d*)$')
  if was == token then return kept end
end
local answers = {}
local i = 4
while i <= #ARGV do
  local fp, score, member, parent, n = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4])
  -- Noted only while this worker leases the parent: then the parent's commit ends the notes.
  local noted = fp ~= '' and reading(w, parent)
  local answer = 1
  if fp ~= '' and redis.call('SADD', p .. 'dupefilter', fp) == 0 then
    if noted and done_before(parent, fp) then answer = 2 else answer = 0 end
  else
    redis.call('ZADD', p .. 'queue', score, member)
    for j = i + 5, i + 4 + n do release(ARGV[j]) end
  end
  if answer ~= 0 and noted then note_child(parent, fp) end
  answers[#answers + 1] = answer
  i = i + 5 + n
end
local out = table.concat(answers)
redis.call('HSET', p .. 'last', w .. ':push', token .. ' ' .. out)
return out
"""

# ARGV: prefix, worker, token, '1' to mark the worker busy, how many to take, '1' if the worker joined the
# job (then a job gone from Redis answers 'gone'). Returns the requests
# taken, highest priority first, as a flat list {member, score, member, score, ...} (empty: none queued).
# Each one's URL is leased to the worker (``held:<worker>`` keeps what goes back if it dies).
_POP = """
local w, mark = ARGV[2], ARGV[2] .. ':pop'
local last = redis.call('HGET', p .. 'last', mark)
if last then
  local token, taken = string.match(last, '^(%S+) (.*)$')
  if token == ARGV[3] then return cjson.decode(taken) end
end
if ARGV[6] == '1' and redis.call('HEXISTS', p .. 'meta', 'created') == 0 then return 'gone' end
local popped = redis.call('ZPOPMIN', p .. 'queue', tonumber(ARGV[5]))
if #popped == 0 then return {} end
local got = {}
for i = 1, #popped, 2 do
  local member, score = popped[i], popped[i + 1]
  local url = string.match(member, '^(.*)\\n')
  -- A URL whose rows are committed and whose lease was released after its commit (so the requests its
  -- response made are queued) is never fetched again in the job: dropped here.
  local done = url and redis.call('HGET', p .. 'done', url)
  if done and string.sub(done, 1, 1) == '+' then
    redis.call('HINCRBY', p .. 'meta', 'skipped_done', 1)
  else
    got[#got + 1] = member
    got[#got + 1] = score
  end
  if url and not (done and string.sub(done, 1, 1) == '+') then
    local held, entry = p .. 'held:' .. w, score .. ' ' .. member
    if redis.call('HGET', p .. 'leases', url) == w then
      -- another request for a URL this worker holds (taken in this batch or before): both go back if it dies
      local before = redis.call('HGET', held, url)
      if before then entry = before .. '\\0' .. entry end
    else
      release(url)
      redis.call('HSET', p .. 'leases', url, w)
    end
    redis.call('HSET', held, url, entry)
  end
end
if ARGV[4] == '1' or redis.call('HEXISTS', p .. 'workers', w) == 0 then set_state(w, 'busy') end
redis.call('HSET', p .. 'last', mark, ARGV[3] .. ' ' .. cjson.encode(got))
return got
"""

# ARGV: prefix, worker, url, score, member.
_LEASE = """
release(ARGV[3])
redis.call('HSET', p .. 'leases', ARGV[3], ARGV[2])
redis.call('HSET', p .. 'held:' .. ARGV[2], ARGV[3], ARGV[4] .. ' ' .. ARGV[5])
return 1
"""

# ARGV: prefix, worker, URLs. Ends the leases of those URLs this worker holds (their rows are
# committed: the pages will not be read again, so their children notes go too); returns how many.
_RELEASE = """
local n = 0
for i = 3, #ARGV do
  if redis.call('HGET', p .. 'leases', ARGV[i]) == ARGV[2] then
    n = n + release(ARGV[i])
    forget_children(ARGV[i])
  end
  -- Its rows were claimed by this worker's commit: the URL is settled, never taken from the queue again.
  local done = redis.call('HGET', p .. 'done', ARGV[i])
  if done and string.sub(done, 1, #ARGV[2] + 1) == ARGV[2] .. '\t' then
    redis.call('HSET', p .. 'done', ARGV[i], '+' .. done)
  end
end
return n
"""

# ARGV: prefix, worker, commit, lease seconds, then the keys of the rows of one commit (see
# pipelines/dataset/claims.py). Each key not claimed yet, or claimed by this worker, is claimed by this
# commit: ``done`` key -> '<worker>\t<commit>' ('+' first once settled). Returns the others (another commit's,
# also one of this worker's: a URL it fetched twice), as a flat list {key, their claim, '1' when its worker
# is live else '0', ...}.
_CLAIM = """
local w, commit, lease, t = ARGV[2], ARGV[3], tonumber(ARGV[4]), now()
if redis.call('HEXISTS', p .. 'meta', 'created') == 0 then return 'gone' end
local mine, out = w .. '\t', {}
for i = 5, #ARGV do
  local key = ARGV[i]
  local done = redis.call('HGET', p .. 'done', key)
  local claim = done and (string.sub(done, 1, 1) == '+' and string.sub(done, 2) or done)
  if not done then
    redis.call('HSET', p .. 'done', key, mine .. commit)
  elseif claim ~= mine .. commit then
    local owner = string.match(claim, '^(.-)\t')
    local beat = tonumber(decode(redis.call('HGET', p .. 'workers', owner or '')).heartbeat)
    out[#out + 1] = key
    out[#out + 1] = done
    out[#out + 1] = (beat and t - beat <= lease) and '1' or '0'
  end
end
return out
"""

# ARGV: prefix, worker, commit, then pairs of a key and the claim it must still have. A claim whose
# commit was never published and whose worker is dead becomes this commit's. Returns how many did.
_TAKE_OVER = """
local n = 0
for i = 4, #ARGV, 2 do
  if redis.call('HGET', p .. 'done', ARGV[i]) == ARGV[i + 1] then
    redis.call('HSET', p .. 'done', ARGV[i], ARGV[2] .. '\t' .. ARGV[3])
    n = n + 1
  end
end
return n
"""

# ARGV: prefix, then (key, claim) pairs: rows the dataset holds whose claims Redis lost (a restart
# that lost the last writes before it). Claimed unless claimed already. Returns how many were added.
_RECLAIM = """
local n = 0
for i = 2, #ARGV, 2 do n = n + redis.call('HSETNX', p .. 'done', ARGV[i], ARGV[i + 1]) end
return n
"""

# ARGV: prefix, worker, JSON info, '1' to register. Returns 1 if the worker was known (its row is the
# one its own heartbeats write, with its host: a take by a worker taken for dead writes a row without
# one), 0 if not, -1 if the job itself is gone (no ``meta`` although this worker joined it: Redis lost
# its data, or the keys were deleted): then nothing is written.
_HEARTBEAT = """
local info = cjson.decode(ARGV[3])
local t = now()
info.heartbeat = t
if ARGV[4] == '1' then
  redis.call('HSETNX', p .. 'meta', 'created', tostring(t))
  redis.call('HSETNX', p .. 'meta', 'state', 'running')
elseif redis.call('HEXISTS', p .. 'meta', 'created') == 0 then
  return -1
end
local known = 0
if decode(redis.call('HGET', p .. 'workers', ARGV[2])).host then known = 1 end
redis.call('HSET', p .. 'workers', ARGV[2], cjson.encode(info))
return known
"""

# ARGV: prefix, lease seconds. Returns the URLs put back.
_REQUEUE_DEAD = """
local t, lease = now(), tonumber(ARGV[2])
local workers = redis.call('HGETALL', p .. 'workers')
local urls = {}
for i = 1, #workers, 2 do
  local beat = tonumber(decode(workers[i + 1]).heartbeat) or 0
  if t - beat > lease then
    local writer = decode(workers[i + 1]).writer
    if writer then redis.call('SADD', p .. 'dead_writers', writer) end
    requeue(workers[i], urls)
    redis.call('HDEL', p .. 'workers', workers[i])
    forget_calls(workers[i])
  end
end
return urls
"""

# ARGV: prefix, worker, '1' to requeue what it holds ('0': release it). Returns those URLs.
_UNREGISTER = """
local urls = {}
if ARGV[3] == '1' then
  requeue(ARGV[2], urls)
else
  urls = redis.call('HKEYS', p .. 'held:' .. ARGV[2])
  for _, url in ipairs(urls) do
    release(url)
    forget_children(url)
  end
  redis.call('DEL', p .. 'held:' .. ARGV[2])
end
redis.call('HDEL', p .. 'workers', ARGV[2])
forget_calls(ARGV[2])
return urls
"""

# ARGV: prefix. One consistent view of the job, as JSON.
_SNAPSHOT = """
local workers = redis.call('HGETALL', p .. 'workers')
local held = {}
for i = 1, #workers, 2 do held[#held + 1] = redis.call('HLEN', p .. 'held:' .. workers[i]) end
return cjson.encode({
  now = now(), meta = redis.call('HGETALL', p .. 'meta'), workers = workers, held = held,
  queued = redis.call('ZCARD', p .. 'queue'), leased = redis.call('HLEN', p .. 'leases'),
  seen = redis.call('SCARD', p .. 'dupefilter')})
"""

# ARGV: prefix, worker, token, url, parent ('' for none). Returns 1 when this reading records url as
# not due: the first claim of the job, or the claim of a reading of the parent whose earlier reading's
# lease came back uncommitted (its note moved to children_before); else 0. Like push, the same call sent
# again answers as the first did (the worker's last claim is kept in ``last``).
_CLAIM_NOT_DUE = """
local w, token, url, parent = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local again = repeated(w, 'claim', token)
if again then return again end
local noted = reading(w, parent)
local note = 'not_due ' .. url
local answer = 1
if redis.call('SADD', p .. 'not_due', url) == 0 and not (noted and done_before(parent, note)) then answer = 0 end
if noted and answer == 1 then note_child(parent, note) end
return answered(w, 'claim', token, answer)
"""

# ARGV: prefix, ttl seconds.
_FINISH = """
local ttl = tonumber(ARGV[2])
redis.call('HSET', p .. 'meta', 'state', 'done', 'finished', tostring(now()))
for _, name in ipairs({'queue', 'dupefilter', 'not_due', 'leases', 'workers', 'meta', 'last', 'parents', 'done', 'dead_writers'}) do
  redis.call('EXPIRE', p .. name, ttl)
end
for _, w in ipairs(redis.call('HKEYS', p .. 'workers')) do redis.call('EXPIRE', p .. 'held:' .. w, ttl) end
for _, url in ipairs(redis.call('SMEMBERS', p .. 'parents')) do
  redis.call('EXPIRE', p .. 'children:' .. url, ttl)
  redis.call('EXPIRE', p .. 'children_before:' .. url, ttl)
end
return 1
"""

#: The job's keys besides the ``held:<worker>`` hashes.
JOB_KEYS: Final = (
    "queue", "dupefilter", "not_due", "leases", "workers", "meta", "last", "parents", "done", "dead_writers"
)  # fmt: skip


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

    url: str  # the URL it is leased under (:func:`lease_key`): the queue member is this URL, a newline, ``encoded``
    encoded: str
    priority: int = 0
    fingerprint: str | None = None  # None: not filtered (dont_filter)
    release: tuple[str, ...] = ()  # the URLs whose leases it ends (its own, the redirects that led to it)
    parent: str | None = None  # the page whose response made it
    #: One of the job's inputs: queued behind every request found in a response (see :meth:`Frontier.push`).
    is_input: bool = False


class Frontier:
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
        #: The token of this worker's dataset writer (its part files and ``.running`` markers carry it), kept
        #: with its heartbeat: whoever finds the worker dead removes what it left (:meth:`dead_writers`).
        self.writer_token: str | None = None
        #: Whether this worker registered (joined the job): then a job gone from Redis is an error.
        self.joined = False
        self._scripts = {
            name: client.register_script(_PRELUDE + body)
            for name, body in (
                ("push", _PUSH),
                ("pop", _POP),
                ("lease", _LEASE),
                ("release", _RELEASE),
                ("heartbeat", _HEARTBEAT),
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
    ) -> Frontier:
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
        known = int(self._run("heartbeat", self.worker, json.dumps(info), "1" if register else "0"))
        if known < 0:
            raise self.gone_error()
        return bool(known)

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
        return int(self._call("count the queue", self.redis.zcard, self.key("queue")))

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
            state=meta.get("state") or ("running" if meta else "absent"),
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

    def gone_error(self) -> JobGone:
        return JobGone(
            f"frontier {self.display_url} (job {self.job}): the job is gone from Redis (the server lost its data, "
            "or the job's keys were deleted): what was queued and leased went with it"
        )

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
            args += [push.fingerprint or "", score, member, push.parent or "", str(len(push.release)), *push.release]
        answers = str(self._run("push", self.worker, str(next(self._tokens)), *args))
        if len(answers) != len(pushes):
            raise FrontierError(f"frontier {self.display_url}: push answered {len(answers)} of {len(pushes)} requests")
        return [Pushed(int(answer)) for answer in answers]

    def pop(self, *, mark_busy: bool = False) -> tuple[str, str] | None:
        """Take the next request and lease its URL to this worker: (url, encoded), None when the queue is empty."""
        taken = self.take(1, mark_busy=mark_busy)
        return taken[0] if taken else None

    def take(self, count: int, *, mark_busy: bool = False) -> list[tuple[str, str]]:
        """Take up to ``count`` requests, highest priority first, in one round trip, and lease their URLs to
        this worker: [(url, encoded), ...], empty when the queue is."""
        token, busy = str(next(self._tokens)), "1" if mark_busy else "0"
        got = self._run("pop", self.worker, token, busy, str(max(count, 1)), "1" if self.joined else "0")
        if got == "gone":  # at the first take, not the next heartbeat
            raise self.gone_error()
        taken = []
        for member in itertools.islice(got or (), 0, None, 2):  # member, score, member, score, ...
            url, _, encoded = str(member).rpartition("\n")  # as the script splits it: at the last newline
            taken.append((url, encoded))
        return taken

    def lease(self, url: str, encoded: str, *, priority: int = 0) -> None:
        """Lease ``url`` to this worker, with the request that goes back to the queue if the worker dies."""
        self._run("lease", self.worker, url, repr(_score(url, priority)), f"{url}\n{encoded}")

    def release(self, urls: Iterable[str]) -> int:
        """End this worker's leases of ``urls`` (their rows are committed); how many there were.

        Only this worker's: a row of ours may name a URL another worker is fetching (a page's link
        dropped as a duplicate while that feed downloads elsewhere), and its lease must hold until
        that worker's own row is committed, or its death would lose the request.
        """
        todo = list(dict.fromkeys(u for u in urls if u))
        return int(self._run("release", self.worker, *todo)) if todo else 0

    def leases(self) -> dict[str, str]:
        """URL -> worker, every lease of the job."""
        return dict(self._call("read leases", self.redis.hgetall, self.key("leases")))

    # --- plumbing -----------------------------------------------------------------------------

    def _run(self, script: str, *args: str) -> Any:
        return self._call(script.replace("_", " "), self._scripts[script], args=[self.prefix, *args])

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RedisError as exc:
            message = f"frontier {self.display_url} (job {self.job}): {what} failed: {type(exc).__name__}: {exc}"
            raise FrontierError(_scrub(message, self._secrets)) from None


def _scrub(message: str, secrets_: list[str]) -> str:
    for secret in secrets_:
        message = message.replace(secret, "***")
    return _one_line(message)


#: Added to the score of the job's inputs: they wait behind every request found in a response.
INPUT_WAIT: Final = 2**20


def _score(url: str, priority: int, *, is_input: bool = False) -> float:
    """Lower is sooner: higher priority first, then a hash of the URL in [0, 1); the job's inputs after
    every other request (``is_input``)."""
    return -priority + zlib.crc32(url.encode("utf-8", "surrogatepass")) / 2**32 + (INPUT_WAIT if is_input else 0)


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


# --- requests as JSON -------------------------------------------------------------------------

_TAG: Final = "__t"


class _Unencodable(TypeError):
    """A value the JSON codec has no form for."""


def _pack(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, FetchContext):
        return {_TAG: "fc", "v": value.to_json()}
    if isinstance(value, bytes):
        return {_TAG: "b", "v": base64.b64encode(value).decode("ascii")}
    if isinstance(value, list):
        return [_pack(v) for v in value]
    if isinstance(value, tuple):
        return {_TAG: "t", "v": [_pack(v) for v in value]}
    if isinstance(value, dict):
        return _pack_dict({k: _pack(v) for k, v in value.items()})
    raise _Unencodable(type(value).__name__)


def _pack_dict(packed: dict[Any, Any]) -> Any:
    """A dict whose values are packed: as a JSON object when its keys allow it."""
    if all(isinstance(k, str) for k in packed) and _TAG not in packed:
        return packed
    return {_TAG: "d", "v": [[_pack(k), v] for k, v in packed.items()]}


_UNPACK: dict[str, Callable[[Any], Any]] = {
    "fc": lambda v: FetchContext.from_json(v),
    "b": lambda v: base64.b64decode(v),
    "t": lambda v: tuple(_unpack(x) for x in v),
    "d": lambda v: {_unpack(k): _unpack(x) for k, x in v},
}


def _unpack(value: Any) -> Any:
    if isinstance(value, list):
        return [_unpack(v) for v in value]
    if isinstance(value, dict):
        tag = value.get(_TAG)
        if tag is None:
            return {k: _unpack(v) for k, v in value.items()}
        if tag not in _UNPACK:
            raise ValueError(f"unknown tag {tag!r} in a queued request")
        return _UNPACK[tag](value["v"])
    return value


#: ``Request.to_dict()`` fields at their defaults: left out of the JSON (``request_from_dict`` restores them).
_REQUEST_DEFAULTS: Final[dict[str, Any]] = {
    "callback": None,
    "errback": None,
    "method": "GET",
    "headers": {},
    "body": b"",
    "cookies": {},
    "encoding": "utf-8",
    "priority": 0,
    "dont_filter": False,
    "flags": [],
    "cb_kwargs": {},
}


def _is_default(key: str, value: Any) -> bool:
    default = _REQUEST_DEFAULTS.get(key, _REQUEST_DEFAULTS)  # the dict itself: no field's value
    return type(value) is type(default) and bool(value == default)


class RequestCodec:
    """scrapy-redis's serializer interface (``dumps``/``loads``): request dicts as JSON.

    Fields at their defaults are left out (``request_from_dict`` gives them back), so a queued
    request costs Redis only what differs from a plain GET.

    A ``meta`` value of a type JSON cannot carry is left out of the queued copy and
    ``on_drop(key, type_name)`` is told; any other field that cannot be carried raises ``TypeError``.
    """

    def __init__(self, on_drop: Callable[[str, str], None] | None = None) -> None:
        self.on_drop = on_drop

    def dumps(self, obj: Mapping[str, Any]) -> str:
        meta: dict[Any, Any] = {}
        for key, value in (obj.get("meta") or {}).items():
            try:
                meta[key] = _pack(value)
            except _Unencodable as exc:
                if self.on_drop is not None:
                    self.on_drop(str(key), str(exc))
        out = {k: _pack(v) for k, v in obj.items() if k != "meta" and not _is_default(k, v)}
        if meta:
            out["meta"] = _pack_dict(meta)
        return json.dumps(out, separators=(",", ":"))

    def loads(self, data: str | bytes) -> dict[str, Any]:
        obj = _unpack(json.loads(data))
        if not isinstance(obj, dict):
            raise ValueError("a queued request is not a JSON object")
        return obj


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
        )
        for text in (push.url, push.parent or "", *push.release):
            text.encode("utf-8")  # UnicodeEncodeError (a ValueError) for a lone surrogate, as redis-py would raise
        return push


def _parent_of(request: Request) -> str | None:
    """The page whose response made ``request``: its context's ``source`` (that response's URL).

    None for an input, and for a redirect target: the response that made it is the redirect's,
    not the page named as its source, and the redirect's own URL goes through its lease.
    """
    ctx = context_from_meta(request.meta)
    if ctx is None or ctx.depth == 0 or request.meta.get("redirect_urls"):
        return None  # an input's source is the file or list that named it, never a page
    return ctx.source


def lease_key(request: Request) -> str:
    """The URL ``request`` is leased under: its own, or for a web archive's record (``feedcensus
    commoncrawl``, whose requests all have their WARC file's URL) the URL the record holds, which
    the record's ``fetch_log`` row names, so that its commit ends this record's lease alone."""
    archived = request.cb_kwargs.get("archived")
    url = archived.get("url") if isinstance(archived, dict) else None
    return url if isinstance(url, str) and url else request.url


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
        #: Requests the engine gave and not yet pushed (:meth:`push_pending`), and the call that pushes them
        #: :data:`PUSH_DELAY` seconds after the first.
        self.pending: list[tuple[Request, Push]] = []
        self._push_call: DelayedCall | None = None
        self._warned: set[str] = set()

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
        try:
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
        duplicate (no row: see the module's docstring). After a frontier error the request is
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
        if not self.taken:
            if not self.push_pending():  # with the take: two round trips where one push each would cost many
                return None
            try:
                self.taken.extend(self.frontier.take(self.prefetch, mark_busy=self.worker.state != BUSY))
                faults.reached("take")
            except FrontierError as exc:
                self.worker.fail(exc)
                return None
        while self.taken:
            url, encoded = self.taken.popleft()
            self.worker.took_request()
            try:
                request = self.queue.decode(url, encoded)
            except (TypeError, ValueError, KeyError) as exc:
                self._bad_request(url, exc)
                continue
            self._inc(STAT_LEASED)
            self._inc("scheduler/dequeued/frontier")
            return request
        return None

    def _bad_request(self, url: str, exc: Exception) -> None:
        """A queued request that cannot be read: logged, counted and let go (it would never end otherwise)."""
        self._warn_once("bad", "frontier: a queued request cannot be read (%s: %s); dropped", type(exc).__name__, exc)
        self._inc("feedcensus/frontier/unreadable")
        try:
            self.frontier.release([url])
        except FrontierError as error:
            self.worker.fail(error)

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


# --- the worker: heartbeat, releases, the end of the job --------------------------------------------


class FrontierWorker:
    """This process as a worker of the job (a Scrapy extension; does nothing without ``FEEDCENSUS_FRONTIER``).

    At ``spider_opened`` it registers (busy until it first finds nothing to do, so a job does
    not end while its coordinator is still queueing inputs) and starts a heartbeat that also
    puts dead workers' requests back. After each dataset commit it notes the URLs of the
    committed ``fetch_log`` rows; it releases them at the heartbeat after next (by then the
    requests their responses made are queued) or when the spider is idle. At ``spider_idle``
    it lets the spider close only when the job is quiet; at ``spider_closed``, after the
    dataset's last commit, it releases, hands back what it still holds, unregisters and marks
    the job done when it is.
    """

    def __init__(self, crawler: Crawler, frontier: Frontier | None, *, heartbeat: float = DEFAULT_HEARTBEAT) -> None:
        self.crawler = crawler
        self.frontier = frontier
        self.interval = heartbeat
        self.state: str = BUSY
        self.requests = 0
        #: The error that stopped the frontier, one line; None while it works.
        self.failed: str | None = None
        self.dataset: Dataset | None = None
        self._lock = threading.Lock()
        #: (commit seq, URLs) committed since the last heartbeat (appended on the writer thread), and before it.
        self._fresh: list[tuple[int, list[str]]] = []
        self._aliases: dict[str, list[str]] = {}  # a row's URL -> more URLs its commit releases
        self._ready: list[tuple[int, list[str]]] = []
        self._last_seq = 0  # the latest commit's
        self._loop: task.LoopingCall | None = None
        self._warned_dead = False
        #: True while this process queues its inputs: it takes no request until they are all in.
        self.seeding = False
        #: The crawl's scheduler (set when it opens). Before this worker releases leases, says it is idle or
        #: marks the job seeded, the scheduler pushes the requests it holds back for a batch; and a committed
        #: row naming a URL it has taken and not yet given to Scrapy (another page's duplicate of it) does
        #: not end that lease.
        self.scheduler: FrontierScheduler | None = None
        if frontier is not None:
            crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
            crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)
            crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        url = str(settings.get("FEEDCENSUS_FRONTIER") or "")
        if not url:
            return cls(crawler, None)
        lease = settings.getfloat("FEEDCENSUS_FRONTIER_LEASE", DEFAULT_LEASE)
        heartbeat = settings.getfloat("FEEDCENSUS_FRONTIER_HEARTBEAT", DEFAULT_HEARTBEAT)
        if not 0 < heartbeat < lease:
            raise FrontierError(
                f"FEEDCENSUS_FRONTIER_HEARTBEAT ({heartbeat:g}) must be above 0 and below FEEDCENSUS_FRONTIER_LEASE ({lease:g})"
            )
        frontier = Frontier.connect(
            url,
            str(settings.get("FEEDCENSUS_JOB_ID") or ""),
            str(settings.get("FEEDCENSUS_WORKER_ID") or "") or None,
            lease=lease,
            key_ttl=settings.getint("FEEDCENSUS_FRONTIER_KEY_TTL", DEFAULT_KEY_TTL),
        )
        return cls(crawler, frontier, heartbeat=heartbeat)

    # --- what the spider and the scheduler call --------------------------------------------

    def input_hosts(self, mine: set[str], *, share: bool) -> set[str]:
        """The hosts the job's inputs name: this process's (shared with the others when it has inputs,
        even none: workers wait for that) and the others'."""
        if self.frontier is None or self.failed is not None:
            return mine
        try:
            if share:
                self.frontier.share_hosts(mine)
            return mine | set(self.frontier.shared_hosts())
        except FrontierError as exc:
            self.fail(exc)
            return mine

    def seeding_started(self) -> None:
        """This process has inputs to queue (the spider calls this before ``start()`` yields the first).

        Until :meth:`seeded`, its scheduler takes no request: Scrapy asks ``start()`` for the next
        input only once its downloader has room, so a coordinator that also fetched would pop
        every input again as soon as it pushed it, and the job's other workers would starve.
        """
        if self.frontier is not None:
            self.seeding = True

    def seeded(self) -> None:
        """The coordinator has queued every input (the spider calls this at the end of ``start()``)."""
        self.seeding = False
        if self.scheduler is not None:  # on failure the crawl stops with frontier_error (and the job is not seeded)
            self.scheduler.push_pending()
        if self.frontier is None or self.failed is not None:
            return
        try:
            self.frontier.mark_seeded()
        except FrontierError as exc:
            self.fail(exc)

    def alias(self, url: str, urls: Iterable[str]) -> None:
        """When the row of ``url`` is committed, release ``urls`` too (a redirect chain dropped as a duplicate)."""
        with self._lock:
            self._aliases.setdefault(url, []).extend(urls)

    def claim_not_due(self, url: str, parent: str | None = None) -> bool:
        """Whether this worker records ``url`` as not due: the first of the job's workers to ask does
        (or a reading of ``parent``, the page that named it, after an earlier one was lost)."""
        if self.frontier is None or self.failed is not None:
            return True
        try:
            return self.frontier.claim_not_due(url, parent)
        except FrontierError as exc:
            self.fail(exc)
            return True

    def took_request(self) -> None:
        """The scheduler leased a request to this worker (the pop marked it busy)."""
        self.state = BUSY
        self.requests += 1

    def fail(self, exc: Exception, *, stop: bool = True) -> None:
        """The frontier failed: one stats line, one log line, and the crawl stops with ``frontier_error``."""
        message = _one_line(str(exc))
        if self.failed is not None:
            logger.debug("frontier: %s", message)
            return
        self.failed = message
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value(STAT_ERROR, message)
            if isinstance(exc, JobGone):
                stats.set_value(STAT_JOB_GONE, 1)
        logger.error("%s; stopping the crawl", message)
        try:
            engine = self.crawler.engine
        except RuntimeError:  # no engine yet: the crawl has not started
            return
        if stop and engine is not None and engine.running and engine.spider is not None:
            deferred_from_coro(engine.close_spider_async(reason=FRONTIER_ERROR))

    # --- signals -----------------------------------------------------------------------------------

    def spider_opened(self) -> None:
        assert self.frontier is not None
        self.dataset = self.crawler.get_extension(Dataset)
        if self.dataset is not None:
            self.dataset.after_commit.append(self.committed)
            self.dataset.on_take.append(self.before_take)
            self.dataset.claim = self.claim_rows
            self.frontier.writer_token = self.dataset.writer.token
            self.dataset.writer.marker_info = {
                "frontier": shareable_url(self.frontier.url),
                "worker": self.frontier.worker,
            }
        history = history_of(self.crawler)
        if history is not None:
            history.claim_not_due = self.claim_not_due  # one not_due row per feed in the whole job
        try:
            self.frontier.register(BUSY)
            self._reconcile()
        except FrontierError as exc:
            self.fail(exc)
            return
        logger.info(
            "frontier %s: worker %s joined job %s", self.frontier.display_url, self.frontier.worker, self.frontier.job
        )
        self._loop = task.LoopingCall(self.tick)
        self._loop.clock = _reactor()
        self._loop.start(self.interval, now=False)

    def committed(self, batch: Batch) -> None:
        """After a dataset commit (writer thread): its ``fetch_log`` rows' URLs are done.

        Not the URL of a plain duplicate row (a page named a URL already requested): that request was
        never queued nor leased, and the URL's lease, if this worker holds one, is the request being
        fetched, which its own row releases. (A duplicate at the end of a redirect chain names the
        chain's first URL, which this worker leased: that one is released.)"""
        urls: list[str] = []
        for row in batch.tables.get("fetch_log") or ():
            url, final_url = row.get("url"), row.get("final_url")
            if row.get("outcome") == Outcome.DUPLICATE and url == final_url:
                continue
            urls += [u for u in (url, final_url) if isinstance(u, str) and u]
        with self._lock:
            for url in list(urls):
                urls += self._aliases.pop(url, ())
            self._fresh.append((batch.seq, urls))
            self._last_seq = max(self._last_seq, batch.seq)

    def before_take(self) -> None:
        """Before the dataset takes a batch (reactor thread): push the requests held back, so that the
        ``duplicate`` rows of those among them already requested land in the batch with their page's rows."""
        if self.scheduler is not None and self.failed is None:
            self.scheduler.push_pending()

    def claim_rows(self, commit: str, batch: Batch) -> set[str]:
        """Claim the keys of a commit's rows (writer thread): the keys whose rows another commit holds.

        A key claimed by another worker's commit is that commit's when the commit is published (its
        marker is in the dataset); when it is not, and that worker is dead, the claim is taken over;
        while that worker lives (it is between its claim and its publishing), this waits for one or
        the other, at most twice the lease. :class:`ClaimRefused` when the frontier failed: the rows
        are not written, and the URLs they are for, still leased to this worker, are fetched again.
        """
        frontier, dataset = self.frontier, self.dataset
        assert frontier is not None and dataset is not None
        if self.failed is not None:
            raise ClaimRefused(self.failed)
        try:
            others = frontier.claim(commit, commit_keys(batch.tables.get("fetch_log") or ()))
            faults.reached("claimed")
            drop: set[str] = set()
            by_commit: dict[str, list[Claimed]] = {}
            for other in others:
                by_commit.setdefault(other.claim, []).append(other)
            for claims in by_commit.values():
                if self._published(claims[0]):
                    drop.update(c.key for c in claims)
                else:
                    # Its files, if that worker renamed some before it died, are no commit's: they go first.
                    dataset.writer.discard_commit(claims[0].commit)
                    taken = frontier.take_over(commit, claims)
                    logger.info("frontier: %d rows' claims of a dead worker's unpublished commit taken over", taken)
                    if taken < len(claims):  # changed meanwhile: ask again
                        drop.update(c.key for c in frontier.claim(commit, [c.key for c in claims]))
        except FrontierError as exc:
            raise ClaimRefused(_one_line(str(exc))) from None
        if drop:
            self._inc(STAT_DROPPED, len(drop))
            logger.info(
                "frontier: %d URLs of commit %s were committed by another worker: their rows left out",
                len(drop),
                commit,
            )
        return drop

    def _published(self, claim: Claimed) -> bool:
        """Whether the commit that made ``claim`` is published; waits while its worker lives and it is not."""
        assert self.frontier is not None and self.dataset is not None
        writer = self.dataset.writer
        deadline = time.monotonic() + 2 * self.frontier.lease_seconds
        live = claim.live and claim.worker != self.frontier.worker  # its own commits are done or failed
        while True:
            if writer.commit_published(claim.commit):
                return True
            if not live or time.monotonic() > deadline:
                return False
            time.sleep(0.05)
            live = self.frontier.worker_live(claim.worker)

    def _reconcile(self) -> None:
        """After Redis restarted (it may have lost its last second of writes, commits' claims among them):
        claim the keys of every row the dataset holds for the job, unless claimed."""
        frontier, dataset = self.frontier, self.dataset
        assert frontier is not None
        if dataset is None or not frontier.server_restarted():
            return
        started = time.monotonic()
        claims = committed_claims(dataset.out, dataset.job_id)
        added = frontier.reclaim(claims)
        frontier.mark_reconciled()
        logger.warning(
            "frontier: Redis restarted since job %s began: %d committed rows' keys checked, %d claims restored (%.1f s)",
            frontier.job, len(claims), added, time.monotonic() - started,
        )  # fmt: skip

    def clean_up_dead(self) -> None:
        """Remove what dead workers left in the dataset (``.running`` markers, temporary part files)."""
        frontier, dataset = self.frontier, self.dataset
        if frontier is None or dataset is None:
            return
        for token in frontier.dead_writers():
            if token == dataset.writer.token:
                continue  # this worker was taken for dead and came back: its markers are its own
            try:
                removed = dataset.writer.remove_leftovers(token)
            except OSError as exc:
                logger.warning("frontier: cannot remove what dead writer %s left: %s", token, exc)
                continue
            frontier.forget_dead_writer(token)
            if removed:
                logger.info("frontier: removed %d markers and temporary files dead writer %s left", removed, token)

    def tick(self) -> None:
        """Every ``FEEDCENSUS_FRONTIER_HEARTBEAT`` seconds: release, heartbeat, requeue dead workers' leases."""
        if self.frontier is None or self.failed is not None:
            return
        try:
            self._release(staged=True)
            self._heartbeat(self.state)
            self._requeue_dead()
            self.clean_up_dead()
            self._set(STAT_QUEUED, self.frontier.queued())
        except FrontierError as exc:
            self.fail(exc)

    def spider_idle(self) -> None:
        """Nothing to do here: close if the job is quiet, else keep waiting (``DontCloseSpider``).

        After a frontier error the spider closes with ``frontier_error`` (also when the error came
        before the engine ran, when :meth:`fail` could not close it).
        """
        if self.frontier is None:
            return
        if self.failed is None:
            try:
                if self.idle():
                    return
            except FrontierError as exc:
                self.fail(exc)
        if self.failed is not None:
            raise CloseSpider(FRONTIER_ERROR)
        raise DontCloseSpider

    def idle(self) -> bool:
        """Release everything committed (the scraper is idle: every request it made is queued), say idle,
        requeue dead workers' leases; True when the job is quiet and this worker may close."""
        assert self.frontier is not None
        dataset = self.dataset
        if self.scheduler is not None and not self.scheduler.push_pending():
            raise FrontierError(self.failed or "the frontier failed")
        if dataset is not None and dataset.writer.pending:
            dataset.commit_now()  # idle: what it holds is all there is (its leases end once it is committed)
        self._release()
        self._requeue_dead()
        self.state = IDLE
        self._heartbeat(IDLE)
        status = self.frontier.status()
        if status.quiet:
            logger.info(
                "frontier: job %s is quiet (%d leases wait for their commits); worker %s closes",
                self.frontier.job,
                status.leased,
                self.frontier.worker,
            )
        return status.quiet

    async def spider_closed(self, reason: str) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        settled = await self._dataset_settled()
        self.close(reason, settled=settled)

    def close(self, reason: str, *, settled: bool = True) -> None:
        """After the dataset's last commit: release, leave, and end the job if it is done.

        A worker that finished (and whose dataset closed) has committed every row it will
        write: a lease it still holds is one no row named, let go (``feedcensus/frontier/orphaned``).
        Otherwise (Ctrl-C, a shutdown, a dataset error) what it holds goes back to the queue.
        """
        frontier = self.frontier
        if frontier is None:
            return
        stats = self.crawler.stats
        try:
            if self.failed is None:
                self._release()
                self._heartbeat(CLOSED)
                self._leave(reason, requeue=reason != "finished" or not settled)
                if frontier.is_done():
                    self._requeue_dead()  # every dead worker forgotten, its leftovers found
                    self.clean_up_dead()
                    frontier.finish()
                    logger.info("frontier: job %s is done", frontier.job)
        except FrontierError as exc:
            self.fail(exc, stop=False)
        finally:
            if stats is not None:
                stats.set_value(STAT_COMMANDS, frontier.commands)
            frontier.close()

    # --- helpers -----------------------------------------------------------------------------------

    def _leave(self, reason: str, *, requeue: bool) -> None:
        assert self.frontier is not None
        back = self.frontier.unregister(requeue=requeue)
        if not back:
            return
        if requeue:
            self._inc(STAT_REQUEUED, len(back))
            logger.info("frontier: %d requests this worker held went back to the queue (%s)", len(back), reason)
        else:
            self._inc(STAT_ORPHANED, len(back))
            logger.warning("frontier: %d leases no committed row named were let go, e.g. %s", len(back), back[0])

    def _take_releasable(self, *, staged: bool) -> list[str]:
        """The committed URLs whose leases may end now (after the requests held back were pushed).

        A URL's release settles it (the queue skips it from then on), so every row its reading made must
        be committed first: the ``duplicate`` rows of the requests its page made are written when those
        are pushed, which may be after the page's own commit was taken. So a commit's URLs are released
        once a later commit is done (taken after that push), or once nothing is buffered nor in flight.
        ``staged``: only the commits already seen at the previous heartbeat (the requests a response
        makes reach the scheduler just after its rows)."""
        dataset = self.dataset
        settled = dataset is None or (dataset.writer.pending == 0 and dataset.uncommitted_rows == 0)
        with self._lock:
            candidates = self._ready if staged else self._ready + self._fresh
            go = [urls for seq, urls in candidates if settled or seq < self._last_seq]
            wait = [(seq, urls) for seq, urls in candidates if not (settled or seq < self._last_seq)]
            self._ready, self._fresh = (wait + self._fresh, []) if staged else (wait, [])
        return [url for urls in go for url in urls]

    def _release(self, *, staged: bool = False) -> None:
        """End this worker's leases of the URLs committed (:meth:`_take_releasable`), once the requests held
        back for a batch are queued (the requests a page's response made are queued before its lease ends):
        none if that push failed."""
        assert self.frontier is not None
        scheduler = self.scheduler
        if scheduler is not None and not scheduler.push_pending():
            raise FrontierError(self.failed or "the frontier failed")
        urls = self._take_releasable(staged=staged)
        if scheduler is not None:
            waiting = scheduler.taken_urls()
            urls = [u for u in urls if u not in waiting]  # their own rows end their leases, once fetched
        if urls:
            self._inc(STAT_RELEASED, self.frontier.release(urls))
            faults.reached("released")

    def _heartbeat(self, state: str) -> None:
        assert self.frontier is not None
        if not self.frontier.heartbeat(state, self.requests) and not self._warned_dead:
            self._warned_dead = True
            logger.warning(
                "frontier: worker %s had been taken for dead (silent for over %g s): what it held was requeued",
                self.frontier.worker,
                self.frontier.lease_seconds,
            )

    def _requeue_dead(self) -> None:
        assert self.frontier is not None
        back = self.frontier.requeue_dead()
        if back:
            self._inc(STAT_REQUEUED, len(back))
            logger.warning("frontier: %d requests of dead workers went back to the queue", len(back))

    async def _dataset_settled(self) -> bool:
        """Wait for the dataset's last commit (it runs in its own ``spider_closed`` handler, concurrently)."""
        dataset = self.dataset
        if dataset is None:
            return True
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while not dataset.closed and time.monotonic() < deadline:
            await maybe_deferred_to_future(task.deferLater(_reactor(), 0.05, lambda: None))
        if not dataset.closed:
            logger.warning("frontier: the dataset did not close within %g s; leaving the job anyway", SETTLE_TIMEOUT)
        return bool(dataset.closed)

    def _inc(self, name: str, count: int = 1) -> None:
        stats = self.crawler.stats
        if stats is not None and count:
            stats.inc_value(name, count)

    def _set(self, name: str, value: int) -> None:
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value(name, value)


def marker_is_stale(info: Mapping[str, Any]) -> bool:
    """Whether the ``.running`` marker of a distributed worker (its ``frontier``, ``job_id`` and ``worker``)
    names a writer that is gone: the job is done or gone from Redis, or the worker is not a live one of it.
    False when the marker names no frontier, or the frontier cannot be asked (then it is left alone)."""
    url, job, worker = info.get("frontier"), info.get("job_id"), info.get("worker")
    if not (isinstance(url, str) and isinstance(job, str) and isinstance(worker, str) and url and job):
        return False
    try:
        frontier = Frontier.connect(url, job)
    except FrontierError:
        return False
    try:
        status = frontier.status()
    except FrontierError:
        return False
    finally:
        frontier.close()
    return status.state != "running" or not any(w.id == worker and w.live for w in status.workers)


def _reactor() -> Any:
    from twisted.internet import reactor

    return reactor


def frontier_jobs(url: str) -> list[FrontierStatus]:
    """The status of every job on the frontier at ``url``, by job id (``feedcensus status`` without ``--job``).

    A job is found by its ``meta`` hash (``<prefix><job>:meta``: every job has one from its start until its
    keys expire), scanned with SCAN, which does not hold the server up as KEYS would."""
    probe = Frontier.connect(url, "-")
    try:
        head = probe.prefix.removesuffix("-:")

        def scan() -> set[str]:
            keys = probe.redis.scan_iter(match=f"{head}*:meta", count=1000)
            return {key[len(head) : -len(":meta")] for key in keys if probe.redis.type(key) == "hash"}

        jobs = sorted(job for job in probe._call("list the jobs", scan) if job)
        found = [Frontier(probe.redis, url, job).status() for job in jobs]
    finally:
        probe.close()
    return [status for status in found if status.exists]
