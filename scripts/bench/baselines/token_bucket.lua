-- token_bucket.lua -- a token bucket written the way users write one in Lua today: the token count (a
-- float) and the time of the last refill in a hash, refilled from redis.call('TIME'), with a TTL until the
-- bucket is full again. The baseline of RL.TOKEN in scripts/bench/rows.sh (same semantics, same reply).
--
--   EVALSHA <sha> 1 key capacity refill_tokens refill_ms [cost] [INTERVAL]
--
-- Continuous refill (default): refill_tokens per refill_ms flow back continuously, capped at capacity.
-- INTERVAL: refill_tokens arrive in one chunk at each full refill_ms since the anchor, the time of the
-- request that first took tokens from a full bucket (the anchor moves by whole periods as chunks arrive).
-- A request of `cost` tokens is admitted iff that many are present; a denied request takes nothing.
--
-- Reply, as RL.*: {allowed, limit, remaining, retry_after_ms, reset_after_ms, wait_ms}.
-- State: HASH key {tokens = <float>, ts = <ms, float>}, expiring when the bucket is full again.
local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local refill_tokens = tonumber(ARGV[2])
local refill_ms = tonumber(ARGV[3])
local cost = tonumber(ARGV[4] or '1')
local interval = ARGV[5] == 'INTERVAL'

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000 -- ms, with the microseconds as a fraction

local state = redis.call('HMGET', key, 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
    tokens = capacity -- a new bucket is full
    ts = now
end

local allowed, retry, reset
if not interval then
    local rate = refill_tokens / refill_ms -- tokens per ms
    if now > ts then -- a clock that went back refills nothing
        tokens = tokens + (now - ts) * rate
        ts = now
    end
    if tokens > capacity then tokens = capacity end
    allowed = cost <= tokens
    if allowed then tokens = tokens - cost end
    retry = -1
    if not allowed and cost <= capacity then retry = math.ceil((cost - tokens) / rate) end
    reset = math.ceil((capacity - tokens) / rate)
else
    if tokens >= capacity then
        tokens = capacity
    elseif now > ts then
        local periods = math.floor((now - ts) / refill_ms)
        if periods > 0 then
            tokens = math.min(capacity, tokens + periods * refill_tokens)
            ts = ts + periods * refill_ms
        end
    end
    allowed = cost <= tokens
    if allowed and cost > 0 then
        if tokens == capacity then ts = now end -- the first take from a full bucket sets the anchor
        tokens = tokens - cost
    end
    -- Time until the bucket holds n tokens: the chunks still missing, counted from the anchor.
    local function time_to(n)
        if tokens >= n then return 0 end
        return math.ceil(ts + math.ceil((n - tokens) / refill_tokens) * refill_ms - now)
    end
    retry = -1
    if not allowed and cost <= capacity then retry = time_to(cost) end
    reset = time_to(capacity)
end

if reset > 0 then
    redis.call('HSET', key, 'tokens', tokens, 'ts', ts)
    redis.call('PEXPIRE', key, reset)
elseif state[1] then
    redis.call('DEL', key) -- full: an idle bucket holds no key
end
if allowed then retry = -1 end
return {allowed and 1 or 0, capacity, math.floor(tokens), retry, reset, 0}
