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
-- The job's budget per host (set by the job's first worker from its settings, :meth:`Frontier.set_budget`):
-- requests in flight at once, and seconds between two requests' starts. Without one, no limit. Read once
-- per script call (a take schedules many hosts).
local budget_read
local function budget()
  if not budget_read then
    local v = redis.call('HMGET', p .. 'meta', 'host_concurrency', 'host_delay')
    budget_read = {tonumber(v[1]) or 1000000, tonumber(v[2]) or 0}
  end
  return budget_read[1], budget_read[2]
end
-- A host's slot, ``slots`` host -> 'in_flight last_start [delay]': the requests taken and not yet
-- released (their responses not in), when the last was taken, and the host's own delay as the
-- workers last reported it (robots.txt Crawl-delay, the adaptive delay; none: the job's).
local function slot_get(host)
  local raw = redis.call('HGET', p .. 'slots', host)
  if not raw then return 0, 0, nil end
  local n, last, delay = string.match(raw, '^(%S+) (%S+) ?(%S*)$')
  return tonumber(n) or 0, tonumber(last) or 0, tonumber(delay)
end
local function slot_set(host, n, last, delay)
  local text = string.format('%d %.6f', n, last)
  if delay then text = text .. string.format(' %.6f', delay) end
  redis.call('HSET', p .. 'slots', host, text)
end
-- ``ready`` (zset: host -> the time it may be asked next) holds the hosts with queued requests and a
-- free slot; a host leaves it when its queue runs empty or its slots are all taken, and comes back
-- when a push or a release changes that. A paused host (``paused``) is ready when its pause ends.
local function schedule(host, t)
  if redis.call('EXISTS', p .. 'q:' .. host) == 0 then
    redis.call('ZREM', p .. 'ready', host)
    return
  end
  local conc, default_delay = budget()
  local n, last, delay = slot_get(host)
  if n >= conc then
    redis.call('ZREM', p .. 'ready', host)
    return
  end
  local pause = tonumber(redis.call('HGET', p .. 'paused', host) or '0')
  redis.call('ZADD', p .. 'ready', math.max(t, last + (delay or default_delay), pause), host)
end
-- Queue a member (score, host) for its host; 1 if it was not queued yet.
local function enqueue(score, host, member)
  local added = redis.call('ZADD', p .. 'q:' .. host, score, member)
  if added == 1 then redis.call('HINCRBY', p .. 'meta', 'queued', 1) end
  return added
end
-- Worker w's slots of host (``inflight:<w>``: host -> how many) are given back: n of them, or all.
local function give_back(w, host, n, delay, t)
  local key = p .. 'inflight:' .. w
  local held = tonumber(redis.call('HGET', key, host) or '0')
  if held <= 0 then return 0 end
  if not n or n > held then n = held end
  if held - n <= 0 then redis.call('HDEL', key, host) else redis.call('HSET', key, host, held - n) end
  local in_flight, last, own = slot_get(host)
  slot_set(host, math.max(in_flight - n, 0), last, delay or own)
  schedule(host, t)
  return n
end
local function give_back_all(w, t)
  local flat = redis.call('HGETALL', p .. 'inflight:' .. w)
  for i = 1, #flat, 2 do give_back(w, flat[i], nil, nil, t) end
  redis.call('DEL', p .. 'inflight:' .. w)
end
-- A held entry is 'score host member', or several joined by NUL when the worker took more than one request
-- for the URL (an archive's records of one WARC file share its URL): every one goes back to its host's
-- queue, and the worker's slots are given back.
local function requeue(worker, urls)
  local key, t, hosts = p .. 'held:' .. worker, now(), {}
  local held = redis.call('HGETALL', key)
  for i = 1, #held, 2 do
    local url, payload = held[i], held[i + 1]
    for entry in string.gmatch(payload, '[^%z]+') do
      local score, host, member = string.match(entry, '^(%S+) (%S*) (.*)$')
      enqueue(score, host, member)
      hosts[host] = true
    end
    if redis.call('HGET', p .. 'leases', url) == worker then
      redis.call('HDEL', p .. 'leases', url)
      reading_returned(url)
    end
    urls[#urls + 1] = url
  end
  redis.call('DEL', key)
  give_back_all(worker, t)
  for host in pairs(hosts) do schedule(host, t) end
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
-- A start at host reserved now (see _RESERVE_START): {the seconds to wait, the time reserved}.
local function reserve_start(host, delay_arg, unused_arg)
  local t = now()
  local n, last, delay = slot_get(host)
  if tonumber(delay_arg) then delay = tonumber(delay_arg) end
  local conc, default_delay = budget()
  local pause = tonumber(redis.call('HGET', p .. 'paused', host) or '0')
  local after = last + (delay or default_delay)
  local unused = tonumber(unused_arg)
  if unused and math.abs(last - unused) < 0.000002 then after = 0 end
  local at = math.max(t, after, pause)
  slot_set(host, n, at, delay)
  schedule(host, t)  -- the host's next take keeps the delay after this start too
  return {tostring(at - t), string.format('%.6f', at)}
end
"""

# Push and pop carry a token, and a worker's last push and pop are kept in the hash ``last``:
# the same call sent again (redis-py retries after a reset connection, when the reply may be
# all that was lost) returns what the first one did instead of running twice.

# ARGV: prefix, worker, token, then for each request pushed: fingerprint ('' for dont_filter), score,
# host, member, parent ('' for none), how many URLs it stands for, those URLs. Returns a string of one digit
# per request, a Pushed: 0 duplicate, 1 queued, 2 already queued by an earlier reading of the parent
# (see crawler/frontier/store.py's docstring). The whole batch is one call, with one token and one kept answer.
_PUSH = """
local w, token = ARGV[2], ARGV[3]
local last = redis.call('HGET', p .. 'last', w .. ':push')
if last then
  local was, kept = string.match(last, '^(%S+) ?(%d*)$')
  if was == token then return kept end
end
local answers, t = {}, now()
local i = 4
while i <= #ARGV do
  local fp, score, host, member, parent = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local n = tonumber(ARGV[i + 5])
  -- Noted only while this worker leases the parent: then the parent's commit ends the notes.
  local noted = fp ~= '' and reading(w, parent)
  local answer = 1
  if fp ~= '' and redis.call('SADD', p .. 'dupefilter', fp) == 0 then
    if noted and done_before(parent, fp) then answer = 2 else answer = 0 end
  else
    if enqueue(score, host, member) == 1 and not redis.call('ZSCORE', p .. 'ready', host) then schedule(host, t) end
    for j = i + 6, i + 5 + n do release(ARGV[j]) end
  end
  if answer ~= 0 and noted then note_child(parent, fp) end
  answers[#answers + 1] = answer
  i = i + 6 + n
end
local out = table.concat(answers)
redis.call('HSET', p .. 'last', w .. ':push', token .. ' ' .. out)
return out
"""

# ARGV: prefix, worker, token, '1' to mark the worker busy, how many to take, '1' if the worker joined the
# job (then a job gone from Redis answers 'gone'), then pairs of a host whose slot this worker gives back
# (a response came in) and the host's delay as this worker knows it ('' for the job's). Returns
# {requests, wait, time}: the requests taken as a flat list {member, score, member, score, ...} (empty: none
# may be taken now), when fewer than asked were the seconds until the next host may be asked ('-1': no host
# is waiting for its delay), and the time of the take (Redis's clock), which each host taken from keeps as
# its last start. Each request's URL is leased to the worker (``held:<worker>`` keeps what goes back if it
# dies), and takes a slot of its host.
#
# Only hosts whose delay has passed and that have a free slot are in ``ready``; of those that are, up to
# twice as many as asked are looked at, and their best requests taken highest priority first. A host
# with a delay gives one request per take; one without gives as many as its free slots.
_POP = """
local w, mark = ARGV[2], ARGV[2] .. ':pop'
local last = redis.call('HGET', p .. 'last', mark)
if last then
  local token, taken = string.match(last, '^(%S+) (.*)$')
  if token == ARGV[3] then return cjson.decode(taken) end
end
if ARGV[6] == '1' and redis.call('HEXISTS', p .. 'meta', 'created') == 0 then return 'gone' end
local t, want = now(), tonumber(ARGV[5])
for i = 7, #ARGV, 2 do give_back(w, ARGV[i], 1, tonumber(ARGV[i + 1]), t) end
local conc, default_delay = budget()
local hosts = redis.call('ZRANGEBYSCORE', p .. 'ready', '-inf', t, 'LIMIT', 0, math.min(want * 2, 512))
local heads = {}
for _, host in ipairs(hosts) do
  local head = redis.call('ZRANGE', p .. 'q:' .. host, 0, 0, 'WITHSCORES')
  if #head == 0 then redis.call('ZREM', p .. 'ready', host) else heads[#heads + 1] = {host, tonumber(head[2])} end
end
table.sort(heads, function(x, y) return x[2] < y[2] end)
local got = {}
for _, head in ipairs(heads) do
  if #got >= want * 2 then break end
  local host = head[1]
  local n, latest, delay = slot_get(host)
  local took = false
  while #got < want * 2 and n < conc and not (took and (delay or default_delay) > 0) do
    local popped = redis.call('ZPOPMIN', p .. 'q:' .. host, 1)
    if #popped == 0 then break end
    redis.call('HINCRBY', p .. 'meta', 'queued', -1)
    local member, score = popped[1], popped[2]
    local url = string.match(member, '^(.*)\\n')
    -- A URL whose rows are committed and whose lease was released after its commit (so the requests its
    -- response made are queued) is never fetched again in the job: dropped here.
    local done = url and redis.call('HGET', p .. 'done', url)
    if done and string.sub(done, 1, 1) == '+' then
      redis.call('HINCRBY', p .. 'meta', 'skipped_done', 1)
    else
      got[#got + 1] = member
      got[#got + 1] = score
      took, n, latest = true, n + 1, t
      redis.call('HINCRBY', p .. 'inflight:' .. w, host, 1)
      if url then
        local held, entry = p .. 'held:' .. w, score .. ' ' .. host .. ' ' .. member
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
  end
  if took then slot_set(host, n, latest, delay) end
  schedule(host, t)
end
local wait = '-1'
if #got < want * 2 then
  local first = redis.call('ZRANGE', p .. 'ready', 0, 0, 'WITHSCORES')
  if #first > 0 then wait = tostring(math.max(tonumber(first[2]) - t, 0)) end
end
if ARGV[4] == '1' or redis.call('HEXISTS', p .. 'workers', w) == 0 then set_state(w, 'busy') end
local answer = {got, wait, string.format('%.6f', t)}
redis.call('HSET', p .. 'last', mark, ARGV[3] .. ' ' .. cjson.encode(answer))
return answer
"""

# ARGV: prefix, worker, url, score, host, member.
_LEASE = """
release(ARGV[3])
redis.call('HSET', p .. 'leases', ARGV[3], ARGV[2])
redis.call('HSET', p .. 'held:' .. ARGV[2], ARGV[3], ARGV[4] .. ' ' .. ARGV[5] .. ' ' .. ARGV[6])
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

# ARGV: prefix, host, seconds, why, '1' when deferred (its requests are still handed out, to be recorded as
# deferred). Pause the host for the whole job, unless a longer pause stands.
# Returns the seconds the host's pause lasts from now (as a string: Lua numbers lose their fraction).
_PAUSE_HOST = """
local t = now()
local ends = t + tonumber(ARGV[3])
local current = tonumber(redis.call('HGET', p .. 'paused', ARGV[2]) or '0')
if current >= ends then return tostring(current - t) end
redis.call('HSET', p .. 'paused', ARGV[2], string.format('%.6f', ends))
redis.call('HSET', p .. 'paused_why', ARGV[2], ARGV[4])
if ARGV[5] ~= '1' then redis.call('ZADD', p .. 'ready', 'XX', 'GT', ends, ARGV[2]) end
return tostring(ends - t)
"""

# ARGV: prefix, host, the host's delay as the worker knows it ('' for none). A request of this host that
# waited in a worker (its host was paused, or its robots.txt was fetched first), or that no take reserved a
# start for (robots.txt itself), may start: when, so that it keeps the host's delay after the last start,
# whichever worker made it, and not before the host's pause ends. The start is reserved.
# ARGV[4] ('' for none) renews the start this worker reserved at that time and did not use (its timer came
# too late): while it is still the host's last start reserved, no start came since, and the new one may be now.
# Returns {the seconds to wait, the time reserved} (as strings: Lua numbers lose their fraction).
_RESERVE_START = """
return reserve_start(ARGV[2], ARGV[3], ARGV[4])
"""

# ARGV: prefix, netloc, 'pending <worker>'. The job's robots.txt of netloc: '' when this worker now claims its fetch
# (nobody had), else what the job holds ('pending <worker>', 'body <base64>' or 'error').
_CLAIM_ROBOTS = """
if redis.call('HSETNX', p .. 'robots', ARGV[2], ARGV[3]) == 1 then return '' end
return redis.call('HGET', p .. 'robots', ARGV[2])
"""

# ARGV: prefix, netloc, what its robots.txt gave ('body <base64>' or 'error'), and a host whose next start to
# reserve with it ('' for none) and its delay as the worker knows it ('' for none). The worker that fetched a
# host's robots.txt shares it with every worker; the request that waited for it (robots.txt took its start)
# gets its start in the same round trip, a delay after robots.txt's own, as _RESERVE_START would give it.
# Returns {} or {the seconds to wait, the time reserved}.
_SHARE_ROBOTS = """
redis.call('HSET', p .. 'robots', ARGV[2], ARGV[3])
if ARGV[4] == '' then return {} end
return reserve_start(ARGV[4], ARGV[5], '')
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
  give_back_all(ARGV[2], now())
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
  queued = tonumber(redis.call('HGET', p .. 'meta', 'queued') or '0'), leased = redis.call('HLEN', p .. 'leases'),
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
for _, name in ipairs({'ready', 'slots', 'dupefilter', 'not_due', 'leases', 'workers', 'meta', 'last', 'parents', 'done', 'dead_writers', 'paused', 'paused_why', 'robots'}) do
  redis.call('EXPIRE', p .. name, ttl)
end
for _, w in ipairs(redis.call('HKEYS', p .. 'workers')) do
  redis.call('EXPIRE', p .. 'held:' .. w, ttl)
  redis.call('EXPIRE', p .. 'inflight:' .. w, ttl)
end
-- a host's queue exists while it holds requests; its slot is known for every host the job asked
for _, host in ipairs(redis.call('HKEYS', p .. 'slots')) do redis.call('EXPIRE', p .. 'q:' .. host, ttl) end
for _, host in ipairs(redis.call('ZRANGE', p .. 'ready', 0, -1)) do redis.call('EXPIRE', p .. 'q:' .. host, ttl) end
for _, url in ipairs(redis.call('SMEMBERS', p .. 'parents')) do
  redis.call('EXPIRE', p .. 'children:' .. url, ttl)
  redis.call('EXPIRE', p .. 'children_before:' .. url, ttl)
end
return 1
"""

#: The job's keys besides the ``held:<worker>`` hashes.
JOB_KEYS: Final = (
    "ready", "slots", "dupefilter", "not_due", "leases", "workers", "meta", "last", "parents", "done",
    "dead_writers", "paused", "paused_why", "robots",
)  # fmt: skip
