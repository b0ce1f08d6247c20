"""RateLimit-Policy, RateLimit and Retry-After header values from RL.* replies, following
draft-ietf-httpapi-ratelimit-headers-11 (structured fields). docs/headers.md explains each mapping.

The idea: the policy (`q`, `w`) depends on the spec alone; the service limit (`r`, `t`) on the spec and
one reply. `t` is the "effective window": the seconds within which the client can use no more than `r`,
that is the time until more quota becomes available, computed per algorithm from the reply."""

from typing import Any, Dict, Optional, Sequence, Tuple

from .limits import Leaky, Quota, Result, SlidingLog, Spec, Token, Window

PROBLEM_TYPE = "https://iana.org/assignments/http-problem-types#quota-exceeded"

# A calendar period's length in seconds, as RL.QUOTA's `w`. A month lasts 28 to 31 days; the policy
# depends on the spec alone, so it says 30 (`t`, from the reply, is exact).
PERIOD_SECONDS = {"DAY": 86_400, "WEEK": 7 * 86_400, "MONTH": 30 * 86_400}


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def seconds_up(ms: int) -> int:
    """Whole seconds, rounded up (the draft has no sub-second precision)."""
    return ceil_div(max(ms, 0), 1000)


def sf_string(name: str) -> str:
    """A structured-field String: printable ASCII, with `"` and `\\` escaped."""
    if any(ord(c) < 0x20 or ord(c) > 0x7E for c in name):
        raise ValueError(f"policy name {name!r}: must be printable ASCII")
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quota_policy(spec: Spec) -> Tuple[int, int]:
    """(q, w): the quota and its window in whole seconds (at least 1). A bucket's window is the time to
    refill (drain) it completely; a window limiter's is its window; a quota's its calendar period (a
    month as 30 days)."""
    if isinstance(spec, Token):
        if spec.interval:
            window_ms = ceil_div(spec.capacity, spec.refill_tokens) * spec.refill_ms
        else:
            window_ms = ceil_div(spec.capacity * spec.refill_ms, spec.refill_tokens)
        return spec.capacity, max(1, seconds_up(window_ms))
    if isinstance(spec, Leaky):
        return spec.capacity, max(1, seconds_up(ceil_div(spec.capacity * spec.leak_ms, spec.leak_tokens)))
    if isinstance(spec, (Window, SlidingLog)):
        return spec.limit, max(1, seconds_up(spec.window_ms))
    if isinstance(spec, Quota):
        period = str(spec.period).upper()
        if period not in PERIOD_SECONDS:
            raise ValueError(f"period: must be DAY, WEEK or MONTH, not {spec.period!r}")
        return spec.limit, PERIOD_SECONDS[period]
    raise TypeError(f"not a limiter spec: {spec!r}")


def next_quota_ms(spec: Spec, res: Result) -> Optional[int]:
    """Milliseconds until this limiter has more quota than `res.remaining`; None when it is full (no
    more can come). Buckets: until the next whole unit refills (drains); a fixed window or a calendar
    quota: until it ends; a sliding window or log: until it is fully restored (reset_after_ms), an upper
    bound, since the reply does not tell when the next unit frees up."""
    missing = res.limit - res.remaining
    if missing <= 0:
        return None
    if isinstance(spec, Token) and spec.interval:
        chunks_to_full = ceil_div(missing, spec.refill_tokens)
        return max(0, res.reset_after_ms - (chunks_to_full - 1) * spec.refill_ms)
    if isinstance(spec, (Token, Leaky)):
        amount, period = ((spec.refill_tokens, spec.refill_ms) if isinstance(spec, Token)
                          else (spec.leak_tokens, spec.leak_ms))
        return max(0, res.reset_after_ms - (missing - 1) * period // amount)
    return res.reset_after_ms if res.reset_after_ms > 0 else None


def policy_item(name: str, spec: Spec) -> str:
    q, w = quota_policy(spec)
    return f"{sf_string(name)};q={q};w={w}"


def service_item(name: str, spec: Spec, res: Result, cap_ms: Optional[int] = None) -> str:
    """One RateLimit item. cap_ms (a 429's retry) caps `t`, so that Retry-After never names a point
    before the end of the effective window."""
    item = f"{sf_string(name)};r={max(res.remaining, 0)}"
    t_ms = next_quota_ms(spec, res)
    if cap_ms is not None and cap_ms >= 0:
        t_ms = cap_ms if t_ms is None else min(t_ms, cap_ms)
    return item if t_ms is None else f"{item};t={seconds_up(t_ms)}"


def rate_limit_headers(items: Sequence[Tuple[str, Any, Result]], allowed: bool,
                       retry_after_ms: int) -> Dict[str, str]:
    """The response headers for one decision over (policy name, spec, result) items. On a denial,
    Retry-After is retry_after_ms rounded up to seconds (absent when the request can never be
    admitted: -1)."""
    cap = None if allowed else retry_after_ms
    headers = {
        "RateLimit-Policy": ", ".join(policy_item(n, s) for n, s, _ in items),
        "RateLimit": ", ".join(service_item(n, s, r, cap) for n, s, r in items),
    }
    if not allowed and retry_after_ms >= 0:
        headers["Retry-After"] = str(seconds_up(retry_after_ms))
    return headers


def problem(violated: Sequence[str]) -> Dict[str, Any]:
    """The draft's quota-exceeded problem details (RFC 9457) for a 429 body."""
    return {"type": PROBLEM_TYPE, "title": "Request cannot be satisfied as assigned quota has been exceeded",
            "status": 429, "violated-policies": list(violated)}
