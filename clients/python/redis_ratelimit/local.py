"""In-process limiters with the module's semantics: RL.TOKEN (continuous and INTERVAL) and RL.WINDOW FIXED,
decided in this process, for when Redis cannot be reached (limiter.py's on_failure="local").

The idea: the same exact integer arithmetic as algorithms/token.c and algorithms/window.c, with time an
argument (integer ms, from an injected clock), so that the same trace of calls gives the same Result,
field for field, here and on the server (the tests replay random traces through both). Python's integers
have no width, so the module's 128-bit intermediates need no care. A state that the module would delete
(its limiter idle: reset_after_ms 0) is dropped here too, and the states kept are bounded by an LRU.

Supported per call: cost (a spec's own cost wins, as in RL.ALL), FORCE (a spec's force=True: into debt, with
the module's saturation), dryrun. Not here: LOCKOUT, REFUND, ATMOST, WAIT, the sliding window and
sub-windows, and the other limiters: `local_form_error(spec)` names what a spec lacks."""

import dataclasses
import threading
import time
from collections import OrderedDict
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from .limits import AllResult, Result, Token, Window

MAX_COUNT = 10**12            # RL_MAX_COUNT: the largest count, and the deepest debt (RL_MAX_DEBT)
MAX_IDLE_MS = 10**12          # RL_MAX_IDLE_MS: a bucket must refill within this
MAX_TIME_MS = 1 << 46         # RL_MAX_TIME_MS: the module's clock runs from 0 to this

LocalSpec = Union[Token, Window]


def local_form_error(spec: object) -> Optional[str]:
    """Why `spec` has no local form (None when it has one): only Token and a fixed Window do, and
    without a lockout (a lock is kept in Redis alone)."""
    if isinstance(spec, Token):
        pass
    elif isinstance(spec, Window):
        if not spec.fixed or spec.subwindows is not None:
            return "only a fixed Window (fixed=True, no subwindows) has a local form"
    else:
        return f"{type(spec).__name__} has no local form (only Token and a fixed Window)"
    if getattr(spec, "lockout", None) is not None:
        return "a lockout has no local form"
    return None


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def reply_times(retry_us: int, idle_us: int, allowed: bool) -> Tuple[int, int]:
    """rl_reply_times: retry_after_ms (-1 when allowed or never) and reset_after_ms, both rounded up to ms."""
    retry_ms = -1 if allowed or retry_us < 0 else max(0, ceil_div(retry_us, 1000))
    return retry_ms, max(0, ceil_div(max(idle_us, 0), 1000))


# --- the token bucket (algorithms/token.c) ----------------------------------------------------------------

# A continuous bucket's state is its empty instant E in units of 1/R µs, kept as the module keeps it:
# (e_us, e_rem) with E = e_us * R + e_rem. An INTERVAL bucket's is (anchor_us, tokens), tokens < 0 a debt.
ContinuousState = Tuple[str, int, int]   # ("C", e_us, e_rem)
IntervalState = Tuple[str, int, int]     # ("I", anchor_us, tokens)


class TokenMath:
    """One Token spec's parameters and the decisions of token.c."""

    def __init__(self, spec: Token):
        self.capacity, self.rate, self.period_us = spec.capacity, spec.refill_tokens, spec.refill_ms * 1000
        self.interval = spec.interval
        if min(self.capacity, self.rate, spec.refill_ms) < 1:
            raise ValueError(f"{spec!r}: capacity, refill_tokens and refill_ms must be positive integers")
        if self.capacity * self.period_us > MAX_IDLE_MS * 1000 * self.rate:
            raise ValueError("capacity: capacity / refill_tokens * refill_ms must not exceed "
                             f"{MAX_IDLE_MS} ms")

    # continuous refill
    def scaled(self, state: Tuple[str, int, int], now_us: int) -> int:
        """Scaled tokens (tokens * P) at now, capped at C*P (rl_instant_read clamps e_rem below R)."""
        _, e_us, e_rem = state
        e = e_us * self.rate + min(e_rem, self.rate - 1)
        return min(now_us * self.rate - e, self.capacity * self.period_us)

    def store(self, now_us: int, scaled: int) -> ContinuousState:
        e = now_us * self.rate - scaled
        return ("C", e // self.rate, e % self.rate)

    def forced(self, scaled: int, need: int) -> int:
        full = self.capacity * self.period_us
        deepest = max(full - MAX_IDLE_MS * 1000 * self.rate, -MAX_COUNT * self.period_us)
        left = scaled - need
        return left if left >= deepest else min(scaled, deepest)

    def continuous(self, scaled: int, now_us: int, cost: int, force: bool) -> Tuple[Result, ContinuousState, int]:
        full, need = self.capacity * self.period_us, cost * self.period_us
        if force:
            allowed, scaled = True, self.forced(scaled, need)
        else:
            allowed = cost <= self.capacity and scaled >= need
            if allowed:
                scaled -= need
        remaining = scaled // self.period_us if scaled > 0 else 0
        retry_us = ceil_div(need - scaled, self.rate) if not allowed and cost <= self.capacity else -1
        idle_us = ceil_div(full - scaled, self.rate)
        retry_ms, reset_ms = reply_times(retry_us, idle_us, allowed)
        return Result(allowed, self.capacity, remaining, retry_ms, reset_ms, 0), self.store(now_us, scaled), idle_us

    # interval refill
    def most_debt(self) -> int:
        most = (MAX_IDLE_MS * 1000 // self.period_us) * self.rate - self.capacity
        return max(0, min(most, MAX_COUNT))

    def read_interval(self, state: Tuple[str, int, int]) -> Tuple[int, int]:
        _, anchor, tokens = state
        return anchor, (-min(-tokens, self.most_debt()) if tokens < 0 else tokens)

    def refill(self, anchor: int, tokens: int, now_us: int) -> Tuple[int, int]:
        if tokens >= self.capacity:
            return anchor, self.capacity
        if now_us <= anchor:
            return anchor, tokens
        periods = (now_us - anchor) // self.period_us
        missing = self.capacity - tokens
        if periods >= ceil_div(missing, self.rate):
            return anchor, self.capacity
        return anchor + periods * self.period_us, tokens + periods * self.rate

    def time_to(self, anchor: int, tokens: int, want: int, now_us: int) -> int:
        if tokens >= want:
            return 0
        return anchor + ceil_div(want - tokens, self.rate) * self.period_us - now_us

    def intervals(self, anchor: int, tokens: int, now_us: int, cost: int,
                  force: bool) -> Tuple[Result, IntervalState, int]:
        anchor, tokens = self.refill(anchor, tokens, now_us)
        allowed = force or cost <= tokens
        if allowed and cost > 0:
            if tokens == self.capacity:
                anchor = now_us
            if force:
                deepest, left = -self.most_debt(), tokens - cost
                tokens = left if left >= deepest else min(tokens, deepest)
            else:
                tokens -= cost
        retry_us = self.time_to(anchor, tokens, cost, now_us) if not allowed and cost <= self.capacity else -1
        idle_us = self.time_to(anchor, tokens, self.capacity, now_us)
        retry_ms, reset_ms = reply_times(retry_us, idle_us, allowed)
        return Result(allowed, self.capacity, max(tokens, 0), retry_ms, reset_ms, 0), ("I", anchor, tokens), idle_us

    def decide(self, state: Optional[Tuple[str, int, int]], now_us: int, cost: int,
               force: bool) -> Tuple[Result, Tuple[str, int, int], int]:
        """token_decide: a new bucket is full; a key switching modes keeps its whole tokens (a debt whole)."""
        tokens = self.capacity
        if state is not None and (state[0] == "I") != self.interval:
            if state[0] == "I":
                tokens = self.refill(*self.read_interval(state), now_us)[1]
            else:
                tokens = max(self.scaled(state, now_us) // self.period_us, -self.most_debt())
            state = None
        if self.interval:
            anchor, have = (now_us, tokens) if state is None else self.read_interval(state)
            return self.intervals(anchor, have, now_us, cost, force)
        scaled = tokens * self.period_us if state is None else self.scaled(state, now_us)
        return self.continuous(scaled, now_us, cost, force)


# --- the fixed window (algorithms/window.c, FIXED) ------------------------------------------------------

WindowState = Tuple[str, int, int]   # ("W", start_ms, count)


def window_decide(spec: Window, state: Optional[Tuple[str, int, int]], now_us: int, cost: int,
                  force: bool) -> Tuple[Result, WindowState, int]:
    """fixed_decide over window_view_at: windows aligned to the epoch; a clock behind the stored window
    decides at its start; the count only falls, to 0, when the window ends."""
    limit, window_ms = spec.limit, spec.window_ms
    if limit < 1 or window_ms < 1:
        raise ValueError(f"{spec!r}: limit and window_ms must be positive integers")
    t_ms = min(max(now_us // 1000, 0), MAX_TIME_MS - 1)
    start, count = t_ms - t_ms % window_ms, 0
    if state is not None and state[0] == "W":
        stored_start = state[1] - state[1] % window_ms
        start = max(start, stored_start)
        count = state[2] if start == stored_start else 0
    allowed = force or count + cost <= limit
    if allowed:
        count = min(count + cost, max(count, MAX_COUNT)) if force else count + cost
    end_us = (start + window_ms) * 1000
    retry_us = end_us - now_us if not allowed and cost <= limit else -1
    idle_us = end_us - now_us if count > 0 else 0
    retry_ms, reset_ms = reply_times(retry_us, idle_us, allowed)
    return Result(allowed, limit, max(limit - count, 0), retry_ms, reset_ms, 0), ("W", start, count), idle_us


# --- the limiter ----------------------------------------------------------------------------------------

class LocalLimiter:
    """Limiters kept in this process, one state per key, at most `max_keys` of them (the least recently
    used goes first: a forgotten key starts full, as an idle one does on the server). Thread-safe: each
    call is one step under a lock. `clock()` gives the time in integer ms (the wall clock by default);
    `now_ms=` on a call overrides it."""

    def __init__(self, max_keys: int = 10_000, clock: Callable[[], int] = wall_ms):
        if max_keys < 1:
            raise ValueError("max_keys: must be at least 1")
        self.max_keys, self.clock = max_keys, clock
        self.states: "OrderedDict[str, Tuple[str, int, int]]" = OrderedDict()
        self.lock = threading.Lock()
        self.math: Dict[Token, TokenMath] = {}

    def __len__(self) -> int:
        return len(self.states)

    def clear(self) -> None:
        with self.lock:
            self.states.clear()

    def token_math(self, spec: Token) -> TokenMath:
        math = self.math.get(spec)
        if math is None:
            if len(self.math) >= 1000:  # specs made on the fly: keep the cache bounded
                self.math.clear()
            math = self.math[spec] = TokenMath(spec)
        return math

    def decide(self, key: str, spec: object, now_us: int, cost: int) -> Tuple[Result, Tuple[str, int, int], int]:
        """One spec on one key, nothing stored (the caller is under the lock)."""
        error = local_form_error(spec)
        if error is not None:
            raise ValueError(f"{spec!r}: {error}")
        own_cost = getattr(spec, "cost", None)
        cost = own_cost if own_cost is not None else cost
        if cost < 0:
            raise ValueError(f"cost: must be a non-negative integer, not {cost}")
        force = bool(getattr(spec, "force", False))
        state = self.states.get(key)
        if isinstance(spec, Token):
            return self.token_math(spec).decide(state if state is None or state[0] != "W" else None,
                                                now_us, cost, force)
        assert isinstance(spec, Window)
        return window_decide(spec, state if state is None or state[0] == "W" else None, now_us, cost, force)

    def store(self, key: str, state: Tuple[str, int, int], idle_us: int) -> None:
        """Keep a state, or drop it when its limiter is idle (the module deletes the key then)."""
        if idle_us <= 0:
            self.states.pop(key, None)
            return
        self.states[key] = state
        self.states.move_to_end(key)
        while len(self.states) > self.max_keys:
            self.states.popitem(last=False)

    def now_us(self, now_ms: Optional[int]) -> int:
        return (self.clock() if now_ms is None else now_ms) * 1000

    def limit(self, key: str, spec: LocalSpec, cost: int = 1, now_ms: Optional[int] = None,
              dryrun: bool = False) -> Result:
        """limits.limit() decided here: RL.TOKEN or RL.WINDOW ... FIXED on `key`."""
        with self.lock:
            result, state, idle_us = self.decide(key, spec, self.now_us(now_ms), cost)
            if not dryrun:
                self.store(key, state, idle_us)
            return result

    def limit_all(self, limits: Sequence[Tuple[str, LocalSpec]], cost: int = 1, now_ms: Optional[int] = None,
                  dryrun: bool = False) -> AllResult:
        """limits.limit_all() decided here, all or nothing as RL.ALL: admitted, every limit is charged;
        denied, nothing is, and each limit is described as it stands (one that alone would admit by its
        COST 0 answer), the call's retry the largest of the denying limits' (-1 if one never admits)."""
        with self.lock:
            now_us = self.now_us(now_ms)
            decided = [self.decide(key, spec, now_us, cost) for key, spec in limits]
            allowed = all(result.allowed for result, _, _ in decided)
            if allowed:
                if not dryrun:
                    for (key, _), (_, state, idle_us) in zip(limits, decided):
                        self.store(key, state, idle_us)
                results = [result for result, _, _ in decided]
            else:
                results = [self.describe(key, spec, now_us, result) for (key, spec), (result, _, _)
                           in zip(limits, decided)]
        return all_result(allowed, results)

    def describe(self, key: str, spec: LocalSpec, now_us: int, alone: Result) -> Result:
        """A limit of a denied call as it stands: one that alone admits, by its COST 0 answer (retry -1)."""
        if not alone.allowed:
            return alone
        look = dataclasses.replace(spec, cost=0, force=False)
        result = self.decide(key, look, now_us, 0)[0]
        return Result(True, result.limit, result.remaining, -1, result.reset_after_ms, 0)


def all_result(allowed: bool, results: List[Result]) -> AllResult:
    """RL.ALL's overall fields from its limits' (call.c's fill_all)."""
    reset = max([r.reset_after_ms for r in results] + [0])
    retry = -1
    if not allowed:
        denying = [r.retry_after_ms for r in results if not r.allowed]
        retry = -1 if any(r < 0 for r in denying) else max(denying)
    return AllResult(allowed, retry, reset, results)
