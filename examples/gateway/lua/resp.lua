-- resp.lua -- a minimal Redis client for nginx's Lua module: RESP2 over a cosocket, so a request that
-- waits for Redis never blocks the nginx worker (other requests run meanwhile).
--
--   local resp = require "resp"
--   local reply, err = resp.call("127.0.0.1", 6379, {"RL.WINDOW", key, 100, 1000, "FIXED"})
--
-- The idea: one command per call on a pooled keepalive connection. A Redis error reply (-ERR ...)
-- comes back as nil, message (the connection stays in the pool); a network error also closes it.
local M = {}

local TIMEOUT_MS = 1000
local POOL_IDLE_MS = 60000
local POOL_SIZE = 64

local function encode(args)
    local out = { "*", #args, "\r\n" }
    for _, a in ipairs(args) do
        local s = tostring(a)
        out[#out + 1] = "$" .. #s .. "\r\n"
        out[#out + 1] = s
        out[#out + 1] = "\r\n"
    end
    return out
end

-- One reply: a number, a string, a table (array) or ngx.null; nil, message, is_network on failure.
local function read_reply(sock)
    local line, err = sock:receive("*l")
    if not line then
        return nil, err, true
    end
    local kind, rest = line:sub(1, 1), line:sub(2)
    if kind == ":" then
        return tonumber(rest)
    elseif kind == "+" then
        return rest
    elseif kind == "-" then
        return nil, rest, false
    elseif kind == "$" then
        local n = tonumber(rest)
        if n < 0 then
            return ngx.null
        end
        local data, rerr = sock:receive(n + 2)
        if not data then
            return nil, rerr, true
        end
        return data:sub(1, n)
    elseif kind == "*" then
        local n = tonumber(rest)
        if n < 0 then
            return ngx.null
        end
        local arr = {}
        for i = 1, n do
            local v, verr, net = read_reply(sock)
            if v == nil then
                return nil, verr, net
            end
            arr[i] = v
        end
        return arr
    end
    return nil, "unexpected reply: " .. line, true
end

-- Sends one command and reads its reply.
function M.call(host, port, args)
    local sock = ngx.socket.tcp()
    sock:settimeouts(TIMEOUT_MS, TIMEOUT_MS, TIMEOUT_MS)
    local ok, err = sock:connect(host, port)
    if not ok then
        return nil, "connect: " .. tostring(err)
    end
    local sent, serr = sock:send(encode(args))
    if not sent then
        sock:close()
        return nil, "send: " .. tostring(serr)
    end
    local reply, rerr, network = read_reply(sock)
    if network then
        sock:close()
        return nil, "receive: " .. tostring(rerr)
    end
    sock:setkeepalive(POOL_IDLE_MS, POOL_SIZE)
    return reply, rerr
end

return M
