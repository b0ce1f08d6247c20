-- rl_policy.lua -- limiter specs, their RL.* command, the reply's six fields, and the RateLimit headers
-- (draft-ietf-httpapi-ratelimit-headers-11), for the gateway. The same rules as the Python and Node
-- helpers (clients/), explained in docs/headers.md.
--
-- A spec is a table: {kind = "WINDOW", limit = 100, window_ms = 1000, fixed = true},
-- {kind = "TOKEN", capacity =, refill_tokens =, refill_ms =, interval =},
-- {kind = "LEAKY", capacity =, leak_tokens =, leak_ms =, nodelay =},
-- {kind = "SLIDINGLOG", limit =, window_ms =, mingap_ms =}.
local M = {}

local floor, ceil, max, min = math.floor, math.ceil, math.max, math.min

-- The RL.* command for one key.
function M.command(spec, key)
    local k = spec.kind
    if k == "TOKEN" then
        return { "RL.TOKEN", key, spec.capacity, spec.refill_tokens, spec.refill_ms, spec.interval and "INTERVAL" or nil }
    elseif k == "LEAKY" then
        return { "RL.LEAKY", key, spec.capacity, spec.leak_tokens, spec.leak_ms, spec.nodelay and "NODELAY" or nil }
    elseif k == "WINDOW" then
        return { "RL.WINDOW", key, spec.limit, spec.window_ms, spec.fixed and "FIXED" or "SLIDING" }
    elseif k == "SLIDINGLOG" then
        local args = { "RL.SLIDINGLOG", key, spec.limit, spec.window_ms }
        if spec.mingap_ms then
            args[5], args[6] = "MINGAP", spec.mingap_ms
        end
        return args
    end
    error("unknown limiter kind " .. tostring(k))
end

-- The six-field reply as a table, or nil, message.
function M.result(reply)
    if type(reply) ~= "table" or #reply ~= 6 then
        return nil, "expected 6 fields"
    end
    return { allowed = reply[1] == 1, limit = reply[2], remaining = reply[3], retry_after_ms = reply[4],
             reset_after_ms = reply[5], wait_ms = reply[6] }
end

local function seconds_up(ms)
    return ceil(max(ms, 0) / 1000)
end

local function sf_string(name)
    return '"' .. name:gsub("\\", "\\\\"):gsub('"', '\\"') .. '"'
end

-- q, w: the quota, and its window in whole seconds (at least 1): a bucket's time to refill (drain)
-- completely, a window limiter's window.
function M.quota_policy(spec)
    local q, window_ms
    if spec.kind == "TOKEN" then
        q = spec.capacity
        window_ms = spec.interval and ceil(spec.capacity / spec.refill_tokens) * spec.refill_ms
            or ceil(spec.capacity * spec.refill_ms / spec.refill_tokens)
    elseif spec.kind == "LEAKY" then
        q, window_ms = spec.capacity, ceil(spec.capacity * spec.leak_ms / spec.leak_tokens)
    else
        q, window_ms = spec.limit, spec.window_ms
    end
    return q, max(1, seconds_up(window_ms))
end

-- ms until more than `remaining` is available, nil when full: buckets, the next whole unit; a fixed
-- window, its end; a sliding window or log, full restoration (an upper bound).
function M.next_quota_ms(spec, res)
    local missing = res.limit - res.remaining
    if missing <= 0 then
        return nil
    end
    if spec.kind == "TOKEN" and spec.interval then
        return max(0, res.reset_after_ms - (ceil(missing / spec.refill_tokens) - 1) * spec.refill_ms)
    elseif spec.kind == "TOKEN" or spec.kind == "LEAKY" then
        local amount = spec.refill_tokens or spec.leak_tokens
        local period = spec.refill_ms or spec.leak_ms
        return max(0, res.reset_after_ms - floor((missing - 1) * period / amount))
    end
    return res.reset_after_ms > 0 and res.reset_after_ms or nil
end

-- The headers for one policy's decision: RateLimit-Policy, RateLimit, and Retry-After on a denial that
-- can ever be admitted (t capped by it, so Retry-After never precedes the effective window's end).
function M.headers(name, spec, res)
    local q, w = M.quota_policy(spec)
    local item = sf_string(name) .. ";r=" .. max(res.remaining, 0)
    local t = M.next_quota_ms(spec, res)
    local retry = (not res.allowed and res.retry_after_ms >= 0) and res.retry_after_ms or nil
    if retry then
        t = t and min(t, retry) or retry
    end
    local h = {
        ["RateLimit-Policy"] = sf_string(name) .. ";q=" .. q .. ";w=" .. w,
        ["RateLimit"] = t and (item .. ";t=" .. seconds_up(t)) or item,
    }
    if retry then
        h["Retry-After"] = tostring(seconds_up(retry))
    end
    return h
end

return M
