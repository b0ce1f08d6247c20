-- sliding_window.lua -- the sliding-window counter (Cloudflare's, Kong's) written the way users write it
-- in Lua today: one hash per client with a count per window, its field named by the window's number
-- (windows aligned to the Unix epoch: window k covers [k*W, (k+1)*W) ms, W = window_ms); the previous
-- window's count is weighed by how much of it still overlaps the last W ms. The baseline of RL.WINDOW
-- SLIDING in scripts/bench/rows.sh (same semantics, same reply).
--
--   EVALSHA <sha> 1 key limit window_ms [cost]
--
-- With p the previous window's count, c the current one's and e the ms elapsed in the current window, a
-- request of n is admitted iff p*(W-e)/W + c + n <= limit, tested as p*(W-e) + (c+n)*W <= limit*W (whole
-- numbers: exact in Lua's doubles for any realistic limit and window). Denied requests are not counted.
-- The hash expires two windows after the start of the newest window it counts in.
--
-- Reply, as RL.*: {allowed, limit, remaining, retry_after_ms, reset_after_ms, wait_ms}.
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local W = tonumber(ARGV[2])
local cost = tonumber(ARGV[3] or '1')

local t = redis.call('TIME')
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now_ms = math.floor(now_us / 1000)
local k = math.floor(now_ms / W)
local start = k * W
local e = now_ms - start

local counts = redis.call('HMGET', key, k - 1, k)
local p = tonumber(counts[1]) or 0
local c = tonumber(counts[2]) or 0
local budget = limit * W

local allowed = cost <= limit and p * (W - e) + (c + cost) * W <= budget
if allowed and cost > 0 then
    c = redis.call('HINCRBY', key, k, cost)
    if c == cost then -- the window's first count: forget the one before the previous, move the expiry
        redis.call('HDEL', key, k - 2)
        redis.call('PEXPIREAT', key, start + 2 * W)
    end
end

-- The first elapsed ms f >= from with prev*(W - f) <= room, or W if none in this window.
local function first_fit(prev, room, from)
    if room < 0 then return W end
    local f = 0
    if prev > 0 then f = W - math.floor(room / prev) end
    if f < from then f = from end
    if f > W then f = W end
    return f
end

local retry = -1
if not allowed and cost <= limit then
    local at = start + first_fit(p, (limit - c - cost) * W, e + 1) -- later in this window
    if at >= start + W then -- in the next one, where c has become the previous count
        at = start + W + first_fit(c, (limit - cost) * W, 0)
    end
    retry = math.ceil((at * 1000 - now_us) / 1000)
end
local remaining = math.floor((budget - p * (W - e) - c * W) / W)
if remaining < 0 then remaining = 0 end
local idle_at = 0
if c > 0 then idle_at = start + 2 * W elseif p > 0 then idle_at = start + W end
local reset = 0
if idle_at > 0 then reset = math.ceil((idle_at * 1000 - now_us) / 1000) end
return {allowed and 1 or 0, limit, remaining, retry, reset, 0}
