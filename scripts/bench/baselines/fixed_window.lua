-- fixed_window.lua -- a fixed-window counter written the way users write it in Lua today: INCR on a
-- string counter and PEXPIRE(AT) when the window's first request creates it. Windows are aligned to the
-- Unix epoch (window k covers [k*W, (k+1)*W) ms, W = window_ms), as RL.WINDOW FIXED's, so the counter
-- expires at its window's end; denied requests are not counted. The baseline of RL.WINDOW FIXED in
-- scripts/bench/rows.sh (same semantics, same reply).
--
--   EVALSHA <sha> 1 key limit window_ms [cost]
--
-- Reply, as RL.*: {allowed, limit, remaining, retry_after_ms, reset_after_ms, wait_ms}.
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])
local cost = tonumber(ARGV[3] or '1')

local t = redis.call('TIME')
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now_ms = math.floor(now_us / 1000)
local window_end = now_ms - now_ms % window_ms + window_ms -- ms

local count = tonumber(redis.call('GET', key) or '0')
local allowed = count + cost <= limit
if allowed and cost > 0 then
    count = redis.call('INCRBY', key, cost)
    if count == cost then redis.call('PEXPIREAT', key, window_end) end -- new window: its first request
end

local until_end = math.ceil((window_end * 1000 - now_us) / 1000)
local retry = -1
if not allowed and cost <= limit then retry = until_end end
local remaining = limit - count
if remaining < 0 then remaining = 0 end
return {allowed and 1 or 0, limit, remaining, retry, count > 0 and until_end or 0, 0}
