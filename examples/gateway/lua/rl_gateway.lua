-- rl_gateway.lua -- the gateway's rate limiting, per API key (X-API-Key), in nginx's access phase: one
-- RL.* call to the shared Redis (resp.lua, non-blocking), then either the request goes on to the
-- upstream with the RateLimit headers added to its response, or nginx answers 429 itself with
-- RateLimit-Policy, RateLimit, Retry-After and a problem+json body.
--
-- Configured once from init_by_lua (see nginx-gateway.conf.in):
--   require("rl_gateway").configure{redis_host =, redis_port =, policy = "default", spec = {...}}
-- For the demo's report it sets three nginx variables the access log writes: $rl_now_ms (when the reply
-- arrived, Unix ms), $rl_reset (reset_after_ms) and $rl_us (the Redis round trip in microseconds).
local resp = require "resp"
local rl_policy = require "rl_policy"
local ffi = require "ffi"

pcall(ffi.cdef, "struct rl_timespec { long tv_sec; long tv_nsec; };"
    .. "int clock_gettime(int clk_id, struct rl_timespec *tp);")
local ts = ffi.new("struct rl_timespec")
local CLOCK_MONOTONIC = 1

local M = {}
local conf

local PROBLEM = '{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",'
    .. '"title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,'
    .. '"violated-policies":["%s"]}\n'

function M.configure(c)
    conf = c
    conf.prefix = conf.prefix or "rl:"
    conf.policy = conf.policy or "default"
end

local function now_us()
    ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
    return tonumber(ts.tv_sec) * 1000000 + tonumber(ts.tv_nsec) / 1000
end

local function check(api_key)
    local key = conf.prefix .. "{" .. api_key .. "}:" .. conf.policy
    local reply, err = resp.call(conf.redis_host, conf.redis_port, rl_policy.command(conf.spec, key))
    if reply == nil then
        return nil, err
    end
    return rl_policy.result(reply)
end

local function deny(headers)
    for name, value in pairs(headers) do
        ngx.header[name] = value
    end
    ngx.status = 429
    ngx.header["Content-Type"] = "application/problem+json"
    ngx.print(string.format(PROBLEM, conf.policy))
    return ngx.exit(429)
end

function M.access()
    local api_key = ngx.var.http_x_api_key
    if not api_key or api_key == "" then
        ngx.status = 401
        ngx.say("missing X-API-Key")
        return ngx.exit(401)
    end
    local start = now_us()
    local res, err = check(api_key)
    ngx.var.rl_us = string.format("%d", now_us() - start)
    if not res then
        ngx.log(ngx.ERR, "rate limiter: ", err)
        return ngx.exit(503)
    end
    ngx.update_time()
    ngx.var.rl_now_ms = string.format("%d", ngx.now() * 1000)
    ngx.var.rl_reset = res.reset_after_ms
    local headers = rl_policy.headers(conf.policy, conf.spec, res)
    if not res.allowed then
        return deny(headers)
    end
    ngx.ctx.rl_headers = headers
end

-- Adds the headers of an admitted request to the upstream's response.
function M.header_filter()
    local headers = ngx.ctx.rl_headers
    if headers then
        for name, value in pairs(headers) do
            ngx.header[name] = value
        end
    end
end

return M
