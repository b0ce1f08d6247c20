-- gcra.lua -- the generic cell rate algorithm (GCRA) written the way users write it in Lua today: one
-- string key holding the theoretical arrival time (TAT, a float in ms), read and moved forward with the
-- time from redis.call('TIME'), expiring at the TAT. The baseline of RL.LEAKY in scripts/bench/rows.sh (same
-- semantics, same reply).
--
--   EVALSHA <sha> 1 key capacity leak_tokens leak_ms [cost] [NODELAY]
--
-- A leaky bucket of `capacity` units draining leak_tokens per leak_ms: one unit every T = leak_ms /
-- leak_tokens ms. The TAT is the instant the bucket is empty; the level now is (TAT - now) / T. A request
-- of `cost` units is admitted iff level + cost <= capacity, i.e. max(TAT, now) + cost*T - now <=
-- capacity*T, and then TAT becomes max(TAT, now) + cost*T; a denied request changes nothing. Shaping
-- (default): an admitted request waits for the units ahead of it, wait_ms = ceil(TAT - now); NODELAY:
-- wait_ms is always 0 (policing, GCRA proper).
--
-- Reply, as RL.*: {allowed, limit, remaining, retry_after_ms, reset_after_ms, wait_ms}.
local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local leak_tokens = tonumber(ARGV[2])
local leak_ms = tonumber(ARGV[3])
local cost = tonumber(ARGV[4] or '1')
local nodelay = ARGV[5] == 'NODELAY'

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000 -- ms, with the microseconds as a fraction

local T = leak_ms / leak_tokens -- ms per unit (the emission interval)
local tolerance = capacity * T  -- a full bucket, in ms
local tat = tonumber(redis.call('GET', key))
if tat == nil or tat < now then tat = now end

local new_tat = tat + cost * T
local allowed = cost <= capacity and new_tat - now <= tolerance
local wait, retry = 0, -1
if allowed then
    if not nodelay then wait = math.ceil(tat - now) end
    tat = new_tat
    if tat > now then redis.call('SET', key, tat, 'PX', math.ceil(tat - now)) end
elseif cost <= capacity then
    retry = math.ceil(new_tat - now - tolerance) -- until the level is down to capacity - cost
end
local remaining = math.floor((tolerance - (tat - now)) / T)
if remaining < 0 then remaining = 0 end
return {allowed and 1 or 0, capacity, remaining, retry, math.ceil(tat - now), wait}
