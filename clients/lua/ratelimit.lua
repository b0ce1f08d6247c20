-- ratelimit.lua -- the module's RL.TOKEN (continuous), RL.LEAKY, RL.WINDOW (FIXED, SLIDING), RL.SLIDINGLOG
-- and RL.ALL over them as one Lua script, for servers that cannot load the module (managed Redis, Valkey
-- services). The client packages send it with EVALSHA (their mode="lua"); this file is the one copy, and
-- the packages carry byte-identical copies of it (scripts/lua-copy.sh writes them, their tests compare).
--
-- The idea: the same arguments after the key, the same six-field replies and the same decisions as the
-- module's algorithms (algorithms/*.c), in integer milliseconds. The module keeps microseconds and exact
-- rationals; here a state is kept as a count at an instant in ms (a bucket's tokens times its period, a
-- window's counts, a log's units), which is exact whenever the times are whole ms: the module's state at a
-- whole-ms time is then exactly 1000 times this one, and its replies, rounded up to ms once, are equal.
--
-- Call:  EVALSHA sha numkeys key [key ...] command now_ms arg [arg ...]
--   command  RL.TOKEN, RL.LEAKY, RL.WINDOW, RL.SLIDINGLOG (numkeys 1), their _RO forms (a DRYRUN), or
--            RL.ALL / RL.ALL_RO (numkeys = the limits, as the module's numkeys)
--   now_ms   "" (or the word TIME) for the server's clock (TIME, rounded down to the ms); a whole number of ms only for
--            tests, which follow the module's frozen test clock (RL.CLOCK) with it
--   args     the module command's arguments after its key(s): parameters, COST n, DRYRUN, and the mode
--            options NODELAY, FIXED, SLIDING, MINGAP ms. Any other option of the module is refused, named.
--
-- Numbers: Lua 5.1's are doubles, exact for integers below 2^53. Every product kept or compared stays
-- below that: a bucket's capacity * period (tokens and leaky) and a window's limit * window_ms must not
-- pass 2^51 (refused otherwise, naming the argument; sums of up to three such products stay below 2^53),
-- times are ms since the epoch (< 2^46). Divisions go through floor_div, exact for such integers.
--
-- Keys are the script's own, not the module's types: a bucket or window is a string "instant:state...",
-- written with its expiry (PX) at the instant it is idle, and deleted when idle; a sliding log is a sorted
-- set scored in ms, one member "ms:seq:units" per logged attempt. Writes happen only when a state changes
-- (an admitted cost, a log trimmed or added to); Redis 7 replicates a script's effects, not the script.

local MAX_COUNT = 1000000000000
local MAX_PERIOD = 1000000000000
local SLOG_MAX = 100000
local SAFE = 2 ^ 51
-- A time passed in (tests) is not the server's: keys then expire an hour after the instant they are idle
-- at, as the module's do under its frozen test clock, so that real time running on cannot expire a state
-- the test's time still needs. (An expired state and an idle one decide alike; expiry only frees memory.)
local TTL_EXTRA = 0

local function fail(msg) error({err = 'ERR ' .. msg}) end

-- An integer as Redis reads one (no exponent).
local function fmt(n) return string.format('%.0f', n) end

-- floor(a / b) for integers |a| < 2^53, 0 < b < 2^53: the double quotient may round across an integer,
-- the remainder puts it back.
local function floor_div(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then q = q - 1 elseif r >= b then q = q + 1 end
  return q
end
local function ceil_div(a, b) return -floor_div(-a, b) end

-- A strict decimal integer in [lo, hi], else the module's error naming it.
local function int_arg(s, name, lo, hi)
  local n = s and string.match(s, '^%d+$') and #s <= 16 and tonumber(s)
  if not n or n < lo or n > hi then
    fail(string.format('%s: must be an integer between %s and %s', name, fmt(lo), fmt(hi)))
  end
  return n
end

-- What each kind takes: its positional parameters (name, lo, hi), its own flags, its own valued options,
-- the module's options it lacks here, and the module command's name (for messages).
local KINDS = {
  TOKEN = {cmd = 'rl.token', params = {{'capacity', 1, MAX_COUNT}, {'refill_tokens', 1, MAX_COUNT},
           {'refill_ms', 1, MAX_PERIOD}}, cost_max = MAX_COUNT, flags = {},
           unsupported = {'INTERVAL', 'REFUND', 'ATMOST', 'FORCE', 'WAIT', 'LOCKOUT', 'BACKOFF', 'MAXLOCK', 'FORGIVE'}},
  LEAKY = {cmd = 'rl.leaky', params = {{'capacity', 1, MAX_COUNT}, {'leak_tokens', 1, MAX_COUNT},
           {'leak_ms', 1, MAX_PERIOD}}, cost_max = MAX_COUNT, flags = {NODELAY = true},
           unsupported = {'BLOCK', 'REFUND', 'FORCE', 'LOCKOUT', 'BACKOFF', 'MAXLOCK', 'FORGIVE'}},
  WINDOW = {cmd = 'rl.window', params = {{'limit', 1, MAX_COUNT}, {'window_ms', 1, MAX_PERIOD}},
            cost_max = MAX_COUNT, flags = {FIXED = 'SLIDING', SLIDING = 'FIXED'},
            unsupported = {'SUBWINDOWS', 'REFUND', 'ATMOST', 'FORCE', 'WAIT', 'LOCKOUT', 'BACKOFF', 'MAXLOCK', 'FORGIVE'}},
  SLIDINGLOG = {cmd = 'rl.slidinglog', params = {{'limit', 1, SLOG_MAX}, {'window_ms', 1, MAX_PERIOD}},
                cost_max = SLOG_MAX, flags = {}, mingap = true,
                unsupported = {'REFUND', 'FORCE', 'LOCKOUT', 'BACKOFF', 'MAXLOCK', 'FORGIVE'}},
}

local function unsupported(kind, word)
  for _, w in ipairs(kind.unsupported) do
    if w == word then fail(word .. ': not supported by the Lua mode (load the module for it)') end
  end
end

-- One option word at args[i] of a clause; returns the next index. allow_dryrun: a single command's.
local function clause_option(kind, c, args, i, allow_dryrun)
  local word = string.upper(args[i])
  local function value(name, lo, hi)
    if c.seen[name] then fail(name .. ': given more than once') end
    c.seen[name] = true
    if args[i + 1] == nil then fail(name .. ': needs a value') end
    return int_arg(args[i + 1], name, lo, hi)
  end
  if word == 'COST' then
    c.cost = value('COST', 0, kind.cost_max)
    return i + 2
  elseif word == 'MINGAP' and kind.mingap then
    c.mingap = value('MINGAP', 1, MAX_PERIOD)
    return i + 2
  elseif word == 'DRYRUN' and allow_dryrun then
    c.dry = true
  elseif kind.flags[word] then
    if c.seen[word] then fail(word .. ': given more than once') end
    local other = kind.flags[word]
    if type(other) == 'string' and c.seen[other] then fail(word .. ': cannot be combined with ' .. other) end
    c.seen[word] = true
    c[string.lower(word)] = true
  else
    unsupported(kind, word)
    fail("'" .. args[i] .. "': not an option of " .. kind.cmd)
  end
  return i + 1
end

-- The bounds the module checks beyond each argument's range, then the Lua mode's own (doubles).
local function validate(kind_name, c)
  local p = c.p
  if kind_name == 'TOKEN' or kind_name == 'LEAKY' then
    local tokens = kind_name == 'TOKEN' and 'refill_tokens' or 'leak_tokens'
    local ms = kind_name == 'TOKEN' and 'refill_ms' or 'leak_ms'
    local what = kind_name == 'TOKEN' and 'refill from empty to full' or 'draining from full to empty'
    if p[1] * p[3] > MAX_PERIOD * p[2] then
      fail(string.format('capacity: capacity / %s * %s must not exceed %s ms (%s would take longer than %d years)',
        tokens, ms, fmt(MAX_PERIOD), what, 31))
    end
    if p[1] * p[3] > SAFE then
      fail('capacity: capacity * ' .. ms .. ' must not exceed 2^51 in the Lua mode (its numbers are doubles)')
    end
  elseif kind_name == 'WINDOW' and p[1] * p[2] > SAFE then
    fail('limit: limit * window_ms must not exceed 2^51 in the Lua mode (its numbers are doubles)')
  end
end

-- A clause: kind name, key, then args[from..to] (parameters then options). cost defaults to call_cost.
local function parse_clause(kind_name, key, args, from, to, call_cost, single)
  local kind = KINDS[kind_name]
  local c = {kind = kind_name, key = key, p = {}, seen = {}, cost = nil, dry = false}
  local n = #kind.params
  if to - from + 1 < n then fail("wrong number of arguments for '" .. kind.cmd .. "' command") end
  for j = 1, n do
    local spec = kind.params[j]
    c.p[j] = int_arg(args[from + j - 1], spec[1], spec[2], spec[3])
  end
  local i = from + n
  while i <= to do i = clause_option(kind, c, args, i, single) end
  if c.cost == nil then c.cost = call_cost end
  validate(kind_name, c)
  return c
end

-- --- the decisions: each reads its key, writes nothing, and returns the reply and how to commit -----------

local function reply(allowed, limit, remaining, retry, reset, wait)
  return {allowed and 1 or 0, limit, remaining, allowed and -1 or retry, reset > 0 and reset or 0, wait or 0}
end

-- A "instant:n:n..." state as numbers, or nil.
local function read_state(key)
  local raw = redis.call('GET', key)
  if not raw then return nil end
  local out = {}
  for part in string.gmatch(raw, '[^:]+') do out[#out + 1] = tonumber(part) end
  return out
end

local function write_state(key, reset, parts)
  if reset <= 0 then
    redis.call('DEL', key)
    return
  end
  local words = {}
  for i, v in ipairs(parts) do words[i] = fmt(v) end
  redis.call('SET', key, table.concat(words, ':'), 'PX', fmt(reset + TTL_EXTRA))
end

-- Token bucket, continuous (algorithms/token.c): s = tokens * P at `now`, growing R per ms, capped at
-- C * P; the state is (instant, s). A clock behind the instant takes tokens away, as the module's does.
local function token_prepare(c, now)
  local cap, rate, per = c.p[1], c.p[2], c.p[3]
  local full, s = cap * per, cap * per
  local st = read_state(c.key)
  if st then
    local dt = now - st[1]
    if dt >= ceil_div(full - st[2], rate) then s = full else s = st[2] + dt * rate end
  end
  local cost = c.cost
  local need = cost <= cap and cost * per or 0
  local allowed = cost <= cap and s >= need
  if allowed then s = s - need end
  local retry = (not allowed and cost <= cap) and ceil_div(need - s, rate) or -1
  local r = reply(allowed, cap, s > 0 and floor_div(s, per) or 0, retry, ceil_div(full - s, rate))
  local changes = allowed and cost > 0
  return r, changes and function() write_state(c.key, r[5], {now, s}) end
end

-- Leaky bucket (algorithms/leaky.c): level = units * P at `now`, draining R per ms; shaping waits for the
-- level ahead, NODELAY polices.
local function leaky_prepare(c, now)
  local cap, rate, per = c.p[1], c.p[2], c.p[3]
  local full, level = cap * per, 0
  local st = read_state(c.key)
  if st then
    local dt = now - st[1]
    if dt >= ceil_div(st[2], rate) then level = 0 else level = st[2] - dt * rate end
  end
  local cost = c.cost
  local need = cost <= cap and cost * per or 0
  local allowed = cost <= cap and level + need <= full
  local wait = 0
  if allowed and not c.nodelay then wait = ceil_div(level, rate) end
  if allowed then level = level + need end
  local retry = -1
  if not allowed and cost <= cap then
    local target = full - need
    retry = level > target and ceil_div(level - target, rate) or 0
  end
  local remaining = level < full and floor_div(full - level, per) or 0
  local r = reply(allowed, cap, remaining, retry, level > 0 and ceil_div(level, rate) or 0, wait)
  local changes = allowed and cost > 0
  return r, changes and function() write_state(c.key, r[5], {now, level}) end
end

-- The sliding counter's first elapsed ms e >= from with prev * (W - e) <= room (W: not in this window).
local function first_fit(prev, room, from, w)
  if room < 0 then return w end
  local e = prev > 0 and w - floor_div(room, prev) or 0
  if e < from then e = from end
  return e < w and e or w
end

-- Window counters (algorithms/window.c), FIXED and SLIDING; the state is (start, curr, prev, fixed).
local function window_prepare(c, now)
  local limit, w = c.p[1], c.p[2]
  local start, e, curr, prev = now - now % w, now % w, 0, 0
  local st = read_state(c.key)
  if st then
    local stored = st[1] - st[1] % w
    if stored > start then start, e = stored, 0 end
    if start == stored then
      curr, prev = st[2], st[3]
    elseif start == stored + w and st[4] == 0 then
      prev = st[2]
    end
  end
  local cost, allowed, remaining, retry, idle = c.cost, false, 0, -1, 0
  if c.fixed then
    allowed = curr + cost <= limit
    if allowed then curr = curr + cost end
    remaining = curr < limit and limit - curr or 0
    if not allowed and cost <= limit then retry = start + w - now end
    if curr > 0 then idle = start + w - now end
  else
    local budget = limit * w
    local function weight(extra) return prev * (w - e) + (curr + extra) * w end
    allowed = cost <= limit and weight(cost) <= budget
    if allowed then curr = curr + cost end
    local fits = floor_div(budget - weight(0), w)
    remaining = fits > 0 and fits or 0
    if not allowed and cost <= limit then
      local at = first_fit(prev, (limit - curr - cost) * w, e + 1, w)
      if at < w then at = start + at else at = start + w + first_fit(curr, (limit - cost) * w, 0, w) end
      retry = at - now
    end
    if curr > 0 then idle = start + 2 * w - now elseif prev > 0 then idle = start + w - now end
  end
  local r = reply(allowed, limit, remaining, retry, idle)
  local changes = allowed and cost > 0
  return r, changes and function() write_state(c.key, r[5], {start, curr, prev, c.fixed and 1 or 0}) end
end

-- Sliding log (algorithms/slidinglog.c): the newest limit + 1 units decide everything, so only the
-- newest limit + 1 members in the window are read (each holds >= 1 unit). A score above now counts as now.
local function slog_prepare(c, now, nolog)
  local limit, w, gap, cost = c.p[1], c.p[2], c.mingap or 0, c.cost
  local cap, edge = limit + 1, now - w
  local rows = redis.call('ZREVRANGEBYSCORE', c.key, '+inf', '(' .. fmt(edge), 'WITHSCORES', 'LIMIT', 0, cap)
  local at, units, count = {}, {}, 0
  for i = 1, #rows, 2 do
    local t = tonumber(rows[i + 1])
    at[#at + 1] = t > now and now or t
    units[#units + 1] = tonumber(string.match(rows[i], ':(%d+)$')) or 1
    count = count + units[#units]
  end
  local held = count < cap and count or cap
  local function nth(k) -- the time of the k-th newest unit held (0-based)
    for j = 1, #at do
      if k < units[j] then return at[j] end
      k = k - units[j]
    end
  end
  local over = cost > limit
  local allowed = not over and held + cost <= limit
  if allowed and gap > 0 and held > 0 and now - at[1] < gap then allowed = false end
  local add = over and 0 or cost
  if not allowed and nolog then add = 0 end
  local keep = held < cap - add and held or cap - add
  local size = keep + add
  local function unit(k) if k < add then return now end return nth(k - add) end
  local idle = size > 0 and unit(0) + w - now or 0
  local retry = -1
  if not allowed and not over then
    local t = now
    local k = limit - cost
    if k < size and unit(k) + w > t then t = unit(k) + w end
    if gap > 0 and size > 0 then
      local over_at = unit(0) + (gap < w and gap or w)
      if over_at > t then t = over_at end
    end
    retry = t - now
  end
  local r = reply(allowed, limit, size < limit and limit - size or 0, retry, idle)
  local function commit()
    -- Members wholly beyond the `keep` units go; one cut in two stays whole (its older units are older
    -- than every unit kept, so they can never be counted while the kept ones leave the window first).
    local members, before = 0, 0
    while members < #units and before < keep do
      before = before + units[members + 1]
      members = members + 1
    end
    local changed = redis.call('ZREMRANGEBYSCORE', c.key, '-inf', fmt(edge))
    changed = changed + redis.call('ZREMRANGEBYRANK', c.key, 0, -members - 1)
    if add > 0 then
      local seq = redis.call('ZCOUNT', c.key, fmt(now), fmt(now))
      local name = fmt(now) .. ':' .. seq .. ':' .. add
      while redis.call('ZSCORE', c.key, name) do
        seq = seq + 1
        name = fmt(now) .. ':' .. seq .. ':' .. add
      end
      changed = changed + redis.call('ZADD', c.key, fmt(now), name)
    end
    if changed > 0 and size > 0 then redis.call('PEXPIRE', c.key, fmt(idle + TTL_EXTRA)) end
  end
  return r, commit
end

local PREPARE = {TOKEN = token_prepare, LEAKY = leaky_prepare, WINDOW = window_prepare, SLIDINGLOG = slog_prepare}

-- --- the commands ---------------------------------------------------------------------------------------

local function clock(arg)
  if arg ~= nil and arg ~= '' and arg ~= 'TIME' then
    TTL_EXTRA = 3600000
    return int_arg(arg, 'now_ms', 0, 2 ^ 46)
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- One limiter command on KEYS[1].
local function single(kind_name, readonly, args, now)
  if #KEYS ~= 1 then fail('numkeys: must be 1 for ' .. KINDS[kind_name].cmd) end
  local c = parse_clause(kind_name, KEYS[1], args, 3, #args, 1, true)
  local dry = c.dry or readonly
  local r, commit = PREPARE[kind_name](c, now, false)
  if commit and not dry then commit() end
  return r
end

-- RL.ALL: all or nothing over #KEYS clauses (module/call.c): every clause decided, then all committed, or
-- none and each described as it stands (its COST 0 reply when it alone admits; logging nothing).
local function all(readonly, args, now)
  local n = #KEYS
  if n < 1 or n > 16 then fail('numkeys: must be an integer between 1 and 16') end
  for i = 1, n do
    for j = 1, i - 1 do
      if KEYS[i] == KEYS[j] then fail(string.format('key %d: the same key as key %d (one limit per key)', i, j)) end
    end
  end
  local i, cost, dry, seen = 3, 1, readonly, {}
  while i <= #args and string.upper(args[i]) ~= 'LIMIT' do
    local word = string.upper(args[i])
    if word == 'COST' and not seen.COST then
      seen.COST = true
      cost = int_arg(args[i + 1], 'COST', 0, MAX_COUNT)
      i = i + 2
    elseif word == 'DRYRUN' and not readonly then
      dry = true
      i = i + 1
    elseif word == 'REFUND' or word == 'FORCE' or word == 'WAIT' then
      fail(word .. ': not supported by the Lua mode (load the module for it)')
    else
      fail("'" .. args[i] .. "': not an option of rl.all (before the first LIMIT: COST, DRYRUN or LIMIT)")
    end
  end
  local clauses = {}
  for k = 1, n do
    if args[i] == nil then fail(string.format('LIMIT: %d clauses for numkeys %d', k - 1, n)) end
    local stop = i + 1
    while args[stop + 1] ~= nil and string.upper(args[stop + 1]) ~= 'LIMIT' do stop = stop + 1 end
    local kind_name = string.upper(args[i + 1] or '')
    local ok, c = pcall(function()
      if not KINDS[kind_name] then fail('kind must be TOKEN, LEAKY, WINDOW or SLIDINGLOG in the Lua mode') end
      return parse_clause(kind_name, KEYS[k], args, i + 2, stop, cost, false)
    end)
    if not ok then
      local msg = type(c) == 'table' and c.err or tostring(c)
      error({err = string.format('ERR LIMIT %d: %s', k, string.gsub(msg, '^ERR ', ''))})
    end
    clauses[k] = c
    i = stop + 1
  end
  if args[i] ~= nil then fail(string.format('LIMIT: more LIMIT clauses than keys (numkeys is %d)', n)) end

  local replies, commits, allowed = {}, {}, true
  for k, c in ipairs(clauses) do
    replies[k], commits[k] = PREPARE[c.kind](c, now, false)
    allowed = allowed and replies[k][1] == 1
  end
  if allowed then
    if not dry then
      for k = 1, n do if commits[k] then commits[k]() end end
    end
  else
    for k, c in ipairs(clauses) do
      local alone = replies[k][1] == 1
      if alone then c.cost = 0 end
      replies[k] = PREPARE[c.kind](c, now, true)
      replies[k][6] = 0
      if alone then replies[k][1], replies[k][4] = 1, -1 end
    end
  end
  local retry, reset, never = -1, 0, false
  for k = 1, n do
    local r = replies[k]
    if r[5] > reset then reset = r[5] end
    if not allowed and r[1] == 0 then
      if r[4] < 0 then never = true elseif r[4] > retry then retry = r[4] end
    end
  end
  if never then retry = -1 end
  local out = {allowed and 1 or 0, retry, reset}
  for k = 1, n do out[3 + k] = replies[k] end
  return out
end

-- The script: an error raised anywhere above (fail, or a redis.call's WRONGTYPE) is answered as an error
-- reply, before anything was written (every clause is parsed and decided before any commit).
local function main()
  local command = string.upper(ARGV[1] or '')
  local now = clock(ARGV[2])
  local base, readonly = command, false
  if string.sub(command, -3) == '_RO' then base, readonly = string.sub(command, 1, -4), true end
  if base == 'RL.ALL' then return all(readonly, ARGV, now) end
  local kind_name = string.sub(base, 4)
  if string.sub(base, 1, 3) ~= 'RL.' or not KINDS[kind_name] then
    fail("command: the Lua mode runs RL.TOKEN, RL.LEAKY, RL.WINDOW, RL.SLIDINGLOG and RL.ALL, not '" ..
      (ARGV[1] or '') .. "' (load the module for it)")
  end
  return single(kind_name, readonly, ARGV, now)
end

local ok, result = pcall(main)
if ok then return result end
-- (Redis hands pcall an error raised as {err = ...} as its message string.)
if type(result) == 'table' then result = result.err end
return redis.error_reply(tostring(result))
