"""The Lua scripts: every change of the shared state is one atomic round trip.

:class:`~crawler.frontier.store.Frontier` runs them; the keys they use are described in the docstring of
:mod:`crawler.frontier.store`."""

from __future__ import annotations

from typing import Final

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
# (see crawler/frontier/store.py's docstring). The whole batch is one call, with one token and one kept answer.
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
-- The hosts paused for the whole job (a 429 or 503 any worker got), with the seconds left and why; the
-- pauses that are over go. The hash holds the hosts paused now only.
local paused = {}
local flat = redis.call('HGETALL', p .. 'paused')
for i = 1, #flat, 2 do
  local left = tonumber(flat[i + 1]) - t
  if left > 0 then
    table.insert(paused, flat[i])
    table.insert(paused, tostring(left))
    table.insert(paused, redis.call('HGET', p .. 'paused_why', flat[i]) or '')
  else
    redis.call('HDEL', p .. 'paused', flat[i])
    redis.call('HDEL', p .. 'paused_why', flat[i])
  end
end
return {known, paused}
"""

# ARGV: prefix, host, seconds, why. Pause the host for the whole job, unless a longer pause stands.
# Returns the seconds the host's pause lasts from now (as a string: Lua numbers lose their fraction).
_PAUSE_HOST = """
local t = now()
local ends = t + tonumber(ARGV[3])
local current = tonumber(redis.call('HGET', p .. 'paused', ARGV[2]) or '0')
if current >= ends then return tostring(current - t) end
redis.call('HSET', p .. 'paused', ARGV[2], tostring(ends))
redis.call('HSET', p .. 'paused_why', ARGV[2], ARGV[4])
return tostring(ends - t)
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
for _, name in ipairs({'queue', 'dupefilter', 'not_due', 'leases', 'workers', 'meta', 'last', 'parents', 'done', 'dead_writers', 'paused', 'paused_why'}) do
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
    "queue", "dupefilter", "not_due", "leases", "workers", "meta", "last", "parents", "done", "dead_writers",
    "paused", "paused_why",
)  # fmt: skip
