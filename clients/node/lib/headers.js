// RateLimit-Policy, RateLimit and Retry-After header values from RL.* replies, following
// draft-ietf-httpapi-ratelimit-headers-11 (structured fields); docs/headers.md explains each mapping.
//
// The idea: the policy (q, w) depends on the spec alone, the service limit (r, t) on the spec and one
// reply. `t` is the draft's effective window: the seconds within which the client can use no more than
// `r`, i.e. the time until more quota comes back, computed per algorithm (the same rules as the Python
// helper's headers.py).
'use strict';

const PROBLEM_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

// A calendar period's length in seconds, as RL.QUOTA's w. A month lasts 28 to 31 days; the policy
// depends on the spec alone, so it says 30 (t, from the reply, is exact).
const PERIOD_SECONDS = { DAY: 86400, WEEK: 7 * 86400, MONTH: 30 * 86400 };

const ceilDiv = (a, b) => Math.ceil(a / b);
const secondsUp = (ms) => Math.ceil(Math.max(ms, 0) / 1000);

// A structured-field String: printable ASCII, `"` and `\` escaped.
function sfString(name) {
  if (!/^[\x20-\x7e]*$/.test(name)) throw new Error(`policy name ${name}: must be printable ASCII`);
  return `"${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

// [q, w]: the quota and its window in whole seconds (at least 1). A bucket's window is the time to
// refill (drain) it completely; a window limiter's is its window; a quota's its calendar period (a month
// as 30 days).
function quotaPolicy(spec) {
  if (spec.kind === 'QUOTA') {
    const seconds = PERIOD_SECONDS[String(spec.period).toUpperCase()];
    if (seconds === undefined) throw new Error(`period: must be DAY, WEEK or MONTH, not ${spec.period}`);
    return [spec.limit, seconds];
  }
  let q;
  let windowMs;
  if (spec.kind === 'TOKEN') {
    q = spec.capacity;
    windowMs = spec.interval ? ceilDiv(spec.capacity, spec.refillTokens) * spec.refillMs
      : ceilDiv(spec.capacity * spec.refillMs, spec.refillTokens);
  } else if (spec.kind === 'LEAKY') {
    q = spec.capacity;
    windowMs = ceilDiv(spec.capacity * spec.leakMs, spec.leakTokens);
  } else {
    q = spec.limit;
    windowMs = spec.windowMs;
  }
  return [q, Math.max(1, secondsUp(windowMs))];
}

// Milliseconds until the limiter holds more than `remaining`, or null when it is full. Buckets: until
// the next whole unit refills (drains); a fixed window or a calendar quota: until it ends; a sliding
// window or log: until it is fully restored (reset), an upper bound, since the reply does not say when
// the next unit frees.
function nextQuotaMs(spec, res) {
  const missing = res.limit - res.remaining;
  if (missing <= 0) return null;
  if (spec.kind === 'TOKEN' && spec.interval) {
    return Math.max(0, res.resetAfterMs - (ceilDiv(missing, spec.refillTokens) - 1) * spec.refillMs);
  }
  if (spec.kind === 'TOKEN' || spec.kind === 'LEAKY') {
    const [amount, period] = spec.kind === 'TOKEN' ? [spec.refillTokens, spec.refillMs] : [spec.leakTokens, spec.leakMs];
    return Math.max(0, res.resetAfterMs - Math.floor(((missing - 1) * period) / amount));
  }
  return res.resetAfterMs > 0 ? res.resetAfterMs : null;
}

function policyItem(name, spec) {
  const [q, w] = quotaPolicy(spec);
  return `${sfString(name)};q=${q};w=${w}`;
}

// capMs (a 429's retry) caps t, so that Retry-After never names a point before the window's end.
function serviceItem(name, spec, res, capMs) {
  const item = `${sfString(name)};r=${Math.max(res.remaining, 0)}`;
  let t = nextQuotaMs(spec, res);
  if (capMs !== undefined && capMs !== null && capMs >= 0) t = t === null ? capMs : Math.min(t, capMs);
  return t === null ? item : `${item};t=${secondsUp(t)}`;
}

// The headers of one decision over [name, spec, result] items; Retry-After only on a denial that can
// ever be admitted (retryAfterMs >= 0).
function rateLimitHeaders(items, allowed, retryAfterMs) {
  const cap = allowed ? null : retryAfterMs;
  const headers = {
    'RateLimit-Policy': items.map(([n, s]) => policyItem(n, s)).join(', '),
    RateLimit: items.map(([n, s, r]) => serviceItem(n, s, r, cap)).join(', '),
  };
  if (!allowed && retryAfterMs >= 0) headers['Retry-After'] = String(secondsUp(retryAfterMs));
  return headers;
}

// The draft's quota-exceeded problem details (RFC 9457), the body of a 429.
function problem(violated) {
  return { type: PROBLEM_TYPE, title: 'Request cannot be satisfied as assigned quota has been exceeded',
    status: 429, 'violated-policies': violated };
}

module.exports = { quotaPolicy, nextQuotaMs, sfString, rateLimitHeaders, problem };
