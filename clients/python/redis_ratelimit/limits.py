"""The RL.* commands as Python calls: a limiter spec (Token, Leaky, Window, SlidingLog, Smooth, Quota,
Concurrency) names the algorithm and its parameters, `limit()` runs one command for one key and
`limit_all()` runs RL.ALL for several, and both return typed results with the module's six reply fields
(seven with ATMOST: the units granted). A spec may carry a Lockout (LOCKOUT and its options): a denial
then locks the key; and its own `cost` (a clause's COST in RL.ALL and in a stored policy) or `force`. The
concurrency leases have their own calls: `acquire()`, `release()`, `renew()` and `leases()`; the locks
too: `block()`, `unblock()` and `lockinfo()`; and `reset()` (RL.RESET) and `throttle()` (CL.THROTTLE).

The idea: a spec is a plain value (parameters are not stored in Redis, every call brings its own), so
the same spec object serves the command, the read-only form and the HTTP headers (headers.py). A lease
is the one thing a call hands back to be named again later, so its id travels as the exact bytes the
module gave (a str decoded with surrogateescape, encoded back the same way)."""

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, List, Optional, Sequence, Tuple, Union

from ._call import Call, SyncClient, run

# A decimal the module reads as plain digits (RL.SMOOTH's rate and COLDFACTOR).
DecimalLike = Union[int, float, Decimal, str]
# A lease id as given: a str (surrogate escapes for bytes that are not UTF-8) or the raw bytes.
LeaseId = Union[str, bytes]

FIELDS = ("allowed", "limit", "remaining", "retry_after_ms", "reset_after_ms", "wait_ms")


@dataclass(frozen=True)
class Lockout:
    """LOCKOUT ms [BACKOFF factor] [MAXLOCK ms] [FORGIVE ms] on a spec: a denied request (cost 1 or more)
    locks the key, and every request is denied while the lock holds. The n-th lock in a row lasts
    ms * backoff^(n-1), at most maxlock_ms; the strikes are forgiven forgive_ms after the last lock
    ended. An option left None is left out (the module's default); the module checks the values."""
    ms: int
    backoff: Optional[int] = None
    maxlock_ms: Optional[int] = None
    forgive_ms: Optional[int] = None

    def args(self) -> List[object]:
        out: List[object] = ["LOCKOUT", self.ms]
        for name, value in (("BACKOFF", self.backoff), ("MAXLOCK", self.maxlock_ms), ("FORGIVE", self.forgive_ms)):
            if value is not None:
                out += [name, value]
        return out


def lockout_args(lockout: Optional[Lockout]) -> List[object]:
    """A spec's lockout options: none without one. Anything but a Lockout is refused here, since the
    module could only see its pieces."""
    if lockout is None:
        return []
    if not isinstance(lockout, Lockout):
        raise TypeError(f"lockout: must be a Lockout(ms, backoff, maxlock_ms, forgive_ms), not {lockout!r}")
    return lockout.args()


def clause_args(cost: Optional[int], force: bool = False) -> List[object]:
    """A spec's own COST (that limit's cost, whatever the call's: a clause's COST in RL.ALL, a limit's in
    a stored policy) and FORCE. In a single command they add to the call's own: a COST given both ways is
    the server's `COST: given more than once`."""
    weight: List[object] = [] if cost is None else ["COST", cost]
    return weight + (["FORCE"] if force else [])


def decimal_arg(value: DecimalLike) -> str:
    """RL.SMOOTH's decimals (permits_per_second, COLDFACTOR) as the plain digits the module reads, never an
    exponent (Python writes 0.000001 as 1e-06). Nothing is rounded: a value with more than 6 decimals, or
    out of range, goes as it is and the module refuses it, naming the argument. A str is sent as given."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        raise TypeError(f"a decimal number (int, float, Decimal or str) is needed, not {value!r}")
    if isinstance(value, (str, int)):
        return str(value)
    exact = Decimal(repr(value)) if isinstance(value, float) else value
    return format(exact, "f")


@dataclass(frozen=True)
class Token:
    """RL.TOKEN: a bucket of `capacity` tokens refilled by `refill_tokens` per `refill_ms` (continuously,
    or in whole chunks with interval=True)."""
    capacity: int
    refill_tokens: int
    refill_ms: int
    interval: bool = False
    lockout: Optional[Lockout] = None
    cost: Optional[int] = None
    force: bool = False

    command: ClassVar[str] = "RL.TOKEN"
    kind: ClassVar[str] = "TOKEN"

    def params(self) -> List[object]:
        return [self.capacity, self.refill_tokens, self.refill_ms]

    def flags(self) -> List[object]:
        interval: List[object] = ["INTERVAL"] if self.interval else []
        return interval + lockout_args(self.lockout) + clause_args(self.cost, self.force)


@dataclass(frozen=True)
class Leaky:
    """RL.LEAKY: a bucket of `capacity` units draining `leak_tokens` per `leak_ms`; shaping by default
    (wait_ms says how long to hold the request), policing with nodelay=True."""
    capacity: int
    leak_tokens: int
    leak_ms: int
    nodelay: bool = False
    lockout: Optional[Lockout] = None
    cost: Optional[int] = None
    force: bool = False

    command: ClassVar[str] = "RL.LEAKY"
    kind: ClassVar[str] = "LEAKY"

    def params(self) -> List[object]:
        return [self.capacity, self.leak_tokens, self.leak_ms]

    def flags(self) -> List[object]:
        nodelay: List[object] = ["NODELAY"] if self.nodelay else []
        return nodelay + lockout_args(self.lockout) + clause_args(self.cost, self.force)


@dataclass(frozen=True)
class Window:
    """RL.WINDOW: at most `limit` per window of `window_ms`, windows aligned to the Unix epoch; the
    sliding-window counter by default, a plain fixed window with fixed=True, a window of `subwindows`
    epoch-aligned cells (SUBWINDOWS n, 2 to 60; window_ms a multiple of n) with subwindows=n. Given
    with fixed=True both go, and the module refuses the pair by name."""
    limit: int
    window_ms: int
    fixed: bool = False
    lockout: Optional[Lockout] = None
    cost: Optional[int] = None
    force: bool = False
    subwindows: Optional[int] = None

    command: ClassVar[str] = "RL.WINDOW"
    kind: ClassVar[str] = "WINDOW"

    def params(self) -> List[object]:
        return [self.limit, self.window_ms]

    def flags(self) -> List[object]:
        mode: List[object] = ["FIXED"] if self.fixed else ([] if self.subwindows is not None else ["SLIDING"])
        cells: List[object] = [] if self.subwindows is None else ["SUBWINDOWS", self.subwindows]
        return mode + cells + lockout_args(self.lockout) + clause_args(self.cost, self.force)


@dataclass(frozen=True)
class SlidingLog:
    """RL.SLIDINGLOG: never more than `limit` in any `window_ms`; denied attempts are logged too;
    `mingap_ms` optionally spaces attempts."""
    limit: int
    window_ms: int
    mingap_ms: Optional[int] = None
    lockout: Optional[Lockout] = None
    cost: Optional[int] = None
    force: bool = False

    command: ClassVar[str] = "RL.SLIDINGLOG"
    kind: ClassVar[str] = "SLIDINGLOG"

    def params(self) -> List[object]:
        return [self.limit, self.window_ms]

    def flags(self) -> List[object]:
        gap: List[object] = [] if self.mingap_ms is None else ["MINGAP", self.mingap_ms]
        return gap + lockout_args(self.lockout) + clause_args(self.cost, self.force)


@dataclass(frozen=True)
class Smooth:
    """RL.SMOOTH: Guava's RateLimiter shared in Redis. `permits_per_second` is a decimal (int, float,
    Decimal or str; up to 6 decimals). Bursty by default, storing up to `maxburst_ms` worth of permits
    (the module's default: 1000); warming up with warmup_ms (and `coldfactor`, default 3). It reserves:
    a request is granted and its Result's wait_ms says how long to wait before the work, unless
    `maxwait_ms` (Guava's tryAcquire timeout) denies it. No REFUND, ATMOST or FORCE (a reservation is
    granted whole)."""
    permits_per_second: DecimalLike
    warmup_ms: Optional[int] = None
    maxburst_ms: Optional[int] = None
    coldfactor: Optional[DecimalLike] = None
    maxwait_ms: Optional[int] = None
    lockout: Optional[Lockout] = None
    cost: Optional[int] = None

    command: ClassVar[str] = "RL.SMOOTH"
    kind: ClassVar[str] = "SMOOTH"

    def params(self) -> List[object]:
        return [decimal_arg(self.permits_per_second)]

    def flags(self) -> List[object]:
        out: List[object] = []
        for name, value in (("WARMUP", self.warmup_ms), ("MAXBURST", self.maxburst_ms)):
            if value is not None:
                out += [name, value]
        if self.coldfactor is not None:
            out += ["COLDFACTOR", decimal_arg(self.coldfactor)]
        if self.maxwait_ms is not None:
            out += ["MAXWAIT", self.maxwait_ms]
        return out + lockout_args(self.lockout) + clause_args(self.cost)


@dataclass(frozen=True)
class Quota:
    """RL.QUOTA: at most `limit` per calendar `period`, "DAY", "WEEK" (from Monday) or "MONTH", in UTC
    shifted by `offset_minutes` east (a fixed time zone: 60 is UTC+1). Counted as a fixed window."""
    limit: int
    period: str
    offset_minutes: Optional[int] = None
    lockout: Optional[Lockout] = None
    cost: Optional[int] = None
    force: bool = False

    command: ClassVar[str] = "RL.QUOTA"
    kind: ClassVar[str] = "QUOTA"

    def params(self) -> List[object]:
        return [self.limit, self.period]

    def flags(self) -> List[object]:
        offset: List[object] = [] if self.offset_minutes is None else ["OFFSET", self.offset_minutes]
        return offset + lockout_args(self.lockout) + clause_args(self.cost, self.force)


@dataclass(frozen=True)
class Concurrency:
    """RL.ACQUIRE (a CONCURRENCY clause in RL.ALL): at most `limit` units held at once by leases that
    expire `lease_ms` after they are taken (or renewed) unless released first. `lease_id` names the
    lease to take, or to renew if it is still held; without it the module makes one."""
    limit: int
    lease_ms: int
    lease_id: Optional[LeaseId] = None
    cost: Optional[int] = None

    command: ClassVar[str] = "RL.ACQUIRE"
    kind: ClassVar[str] = "CONCURRENCY"

    def params(self) -> List[object]:
        return [self.limit, self.lease_ms]

    def flags(self) -> List[object]:
        lease: List[object] = [] if self.lease_id is None else ["ID", lease_bytes(self.lease_id)]
        return lease + clause_args(self.cost)


# Any limiter spec: what limit(), limit_all() and a stored policy take.
Spec = Union[Token, Leaky, Window, SlidingLog, Smooth, Quota, Concurrency]


@dataclass(frozen=True)
class Result:
    """One limiter's answer: the module's common reply."""
    allowed: bool
    limit: int
    remaining: int
    retry_after_ms: int
    reset_after_ms: int
    wait_ms: int


@dataclass(frozen=True)
class AcquireResult(Result):
    """RL.ACQUIRE's answer (and a CONCURRENCY limit's in RL.ALL): the common reply and the lease taken
    or renewed; None when denied, and under DRYRUN or RL.ACQUIRE_RO (nothing is recorded)."""
    lease: Optional[str] = None


@dataclass(frozen=True)
class AtMostResult(Result):
    """The answer of a call with ATMOST (RL.TOKEN, RL.WINDOW with a cost): the common reply of the request
    of COST granted, and `granted`, the units taken (1 to the cost; 0 when denied)."""
    granted: int = 0


@dataclass(frozen=True)
class ThrottleResult:
    """CL.THROTTLE's answer, redis-cell's five fields: limited (the request was denied), limit
    (max_burst + 1), remaining, and retry_after_s and reset_after_s in whole seconds (retry -1 when
    allowed, or when the quantity can never fit)."""
    limited: bool
    limit: int
    remaining: int
    retry_after_s: int
    reset_after_s: int

    @property
    def allowed(self) -> bool:
        return not self.limited


@dataclass(frozen=True)
class Lease:
    """One held lease, as RL.LEASES lists it: its id, the units it holds, and the ms until it expires."""
    lease_id: str
    units: int
    ttl_ms: int


@dataclass(frozen=True)
class LockInfo:
    """RL.LOCKINFO's answer: the ms left on the key's lock (0: none holds) and the strikes that count
    now (0 once forgiven)."""
    lock_ms: int
    strikes: int

    @property
    def locked(self) -> bool:
        return self.lock_ms > 0


@dataclass(frozen=True)
class AllResult:
    """RL.ALL's answer: the overall decision, then one Result per limit in the order given."""
    allowed: bool
    retry_after_ms: int
    reset_after_ms: int
    limits: List[Result] = field(default_factory=list)


def lease_bytes(lease_id: LeaseId) -> bytes:
    """A lease id as the bytes the module holds: a str is encoded as lease_str decoded it."""
    return lease_id if isinstance(lease_id, bytes) else lease_id.encode("utf-8", "surrogateescape")


def lease_str(lease_id: Any) -> Optional[str]:
    """A lease id from a reply (bytes, or str from a decoding client; None for nil) as a str. Any bytes
    survive the round trip: those that are not UTF-8 become surrogates, and lease_bytes restores them."""
    if lease_id is None or isinstance(lease_id, str):
        return lease_id
    return bytes(lease_id).decode("utf-8", "surrogateescape")


def str_keys(reply: "dict[Any, Any]") -> "dict[str, Any]":
    """A RESP3 map with its keys as str (redis-py gives bytes unless it decodes responses)."""
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in reply.items()}


def parse_result(reply: Any) -> Result:
    """A six-field reply, or a seventh: RL.ACQUIRE's lease (an AcquireResult: a bulk string or nil) or
    ATMOST's granted (an AtMostResult: an integer); a RESP2 array or a RESP3 map (keys as bytes or str)."""
    if isinstance(reply, dict):
        values = str_keys(reply)
        seventh = tuple(name for name in ("lease", "granted") if name in values)
        reply = [values[name] for name in FIELDS + seventh]
        if seventh == ("lease",) and isinstance(reply[6], int):
            raise ValueError(f"a lease id must be a string, got {reply[6]!r}")
    if len(reply) not in (6, 7):
        raise ValueError(f"expected 6 or 7 fields, got {reply!r}")
    allowed, lim, remaining, retry, reset, wait = (int(v) for v in reply[:6])
    if len(reply) == 6:
        return Result(allowed == 1, lim, remaining, retry, reset, wait)
    if isinstance(reply[6], int):
        return AtMostResult(allowed == 1, lim, remaining, retry, reset, wait, reply[6])
    return AcquireResult(allowed == 1, lim, remaining, retry, reset, wait, lease_str(reply[6]))


def parse_acquire(reply: Any) -> AcquireResult:
    """RL.ACQUIRE's reply, which always has its seventh field (the lease, or nil)."""
    result = parse_result(reply)
    if not isinstance(result, AcquireResult):
        raise ValueError(f"RL.ACQUIRE answered without a lease field: {reply!r}")
    return result


def parse_all(reply: Any) -> AllResult:
    """RL.ALL's reply (and RL.CHECK's): allowed, retry_after_ms, reset_after_ms, then the per-limit
    replies. In RESP3 `limits` is a list (RL.ALL) or a map from each limit's name (RL.CHECK), in order."""
    if isinstance(reply, dict):
        values = str_keys(reply)
        limits = values["limits"]
        limits = list(limits.values()) if isinstance(limits, dict) else limits
        reply = [values["allowed"], values["retry_after_ms"], values["reset_after_ms"], *limits]
    allowed, retry, reset = (int(v) for v in reply[:3])
    return AllResult(allowed == 1, retry, reset, [parse_result(r) for r in reply[3:]])


def parse_yes(reply: Any) -> bool:
    """An integer reply where 1 means yes (RL.RELEASE, RL.RENEW, RL.UNBLOCK, RL.POLICY DEL)."""
    return int(reply) == 1


def parse_count(reply: Any) -> int:
    return int(reply)


def parse_nothing(reply: Any) -> None:
    """A reply that says only that the call worked (+OK): errors come as exceptions."""
    return None


def parse_leases(reply: Any) -> List[Lease]:
    """RL.LEASES' reply: [lease id, units, ttl_ms] per lease, oldest first."""
    return [Lease(lease_str(lease_id) or "", int(units), int(ttl)) for lease_id, units, ttl in reply]


def _weight(cost: int, refund: Optional[int], force: bool = False) -> List[object]:
    """COST n (left out for the default 1), or REFUND n in its place; FORCE after COST (the units are taken
    even past the limit: a debt, for usage that already happened)."""
    if refund is None:
        weight: List[object] = [] if cost == 1 else ["COST", cost]
        return weight + (["FORCE"] if force else [])
    if cost != 1:
        raise ValueError("cost and refund exclude each other: a call takes or gives back")
    if force:
        raise ValueError("force and refund exclude each other: a forced call takes, a refund gives back")
    return ["REFUND", refund]


def _wait(wait_ms: Optional[int]) -> List[object]:
    """WAIT timeout_ms, passed on as given (a read-only form refuses it by name rather than the helper
    dropping it)."""
    return [] if wait_ms is None else ["WAIT", wait_ms]


def command_args(key: str, spec: Spec, cost: int = 1, dryrun: bool = False, readonly: bool = False,
                 refund: Optional[int] = None, force: bool = False, atmost: bool = False,
                 wait_ms: Optional[int] = None, block: bool = False) -> List[object]:
    """The argument list of one RL.* call (the command name first). BLOCK is passed on as given, like
    WAIT: the module refuses it by name where it does not apply (RL.TOKEN, NODELAY, the _RO forms)."""
    name = spec.command + ("_RO" if readonly else "")
    args: List[object] = [name, key, *spec.params(), *spec.flags(), *_weight(cost, refund, force)]
    if atmost:
        args.append("ATMOST")
    args += _wait(wait_ms)
    if block:
        args.append("BLOCK")
    if dryrun and not readonly:
        args.append("DRYRUN")
    return args


def limit_call(key: str, spec: Spec, cost: int = 1, dryrun: bool = False, readonly: bool = False,
               refund: Optional[int] = None, force: bool = False, atmost: bool = False,
               wait_ms: Optional[int] = None, block: bool = False) -> Call[Result]:
    return Call(command_args(key, spec, cost, dryrun, readonly, refund, force, atmost, wait_ms, block), parse_result)


def limit(client: SyncClient, key: str, spec: Spec, cost: int = 1, dryrun: bool = False, readonly: bool = False,
          refund: Optional[int] = None, force: bool = False, atmost: bool = False,
          wait_ms: Optional[int] = None, block: bool = False) -> Result:
    """Run one limiter for `key` and return its Result. dryrun=True looks without consuming;
    readonly=True uses the command's _RO form (same answer as DRYRUN; runs on replicas and for
    read-only users); refund=n gives back n units a failed request took, in place of cost; force=True
    takes cost even past the limit (a debt: Token, Leaky with nodelay, Window, SlidingLog, Quota);
    atmost=True (Token, Window) takes what is there, 1 to cost, and answers an AtMostResult (its
    `granted`); wait_ms (Token, Window) waits server-side, first in first out, up to that long for the
    budget. block=True (Leaky without nodelay, Smooth) has the server hold the reply for the admitted
    request's wait_ms, so the answer comes when the work may start: this call, and the thread making it,
    wait that long (the asyncio form waits without holding a thread). A Concurrency spec runs
    RL.ACQUIRE (an AcquireResult; acquire() also has WAIT).
    `client` is a redis.Redis or redis.RedisCluster (or anything with execute_command)."""
    return run(client, limit_call(key, spec, cost, dryrun, readonly, refund, force, atmost, wait_ms, block))


def clause(spec: Spec) -> List[object]:
    """A spec as RL.ALL's (and a stored policy's) `LIMIT kind params options` clause."""
    if not all(hasattr(spec, name) for name in ("kind", "params", "flags")):
        raise TypeError(f"not a limiter spec (Token, Window, ...): {spec!r}")
    return ["LIMIT", spec.kind, *spec.params(), *spec.flags()]


def all_args(limits: Sequence[Tuple[str, Spec]], cost: int = 1, dryrun: bool = False, readonly: bool = False,
             refund: Optional[int] = None, force: bool = False, wait_ms: Optional[int] = None) -> List[object]:
    """The argument list of RL.ALL (RL.ALL_RO with readonly=True) for (key, spec) pairs."""
    args: List[object] = ["RL.ALL_RO" if readonly else "RL.ALL", len(limits), *(key for key, _ in limits)]
    args += _weight(cost, refund, force) + _wait(wait_ms)
    if dryrun and not readonly:
        args.append("DRYRUN")
    for _, spec in limits:
        args += clause(spec)
    return args


def limit_all_call(limits: Sequence[Tuple[str, Spec]], cost: int = 1, dryrun: bool = False,
                   readonly: bool = False, refund: Optional[int] = None, force: bool = False,
                   wait_ms: Optional[int] = None) -> Call[AllResult]:
    return Call(all_args(limits, cost, dryrun, readonly, refund, force, wait_ms), parse_all)


def limit_all(client: SyncClient, limits: Sequence[Tuple[str, Spec]], cost: int = 1, dryrun: bool = False,
              readonly: bool = False, refund: Optional[int] = None, force: bool = False,
              wait_ms: Optional[int] = None) -> AllResult:
    """Check several (key, spec) limits in one atomic RL.ALL: admitted by all of them, or by none and
    nothing consumed. readonly=True uses RL.ALL_RO (the DRYRUN answer, for replicas and read-only
    users); refund=n gives n back to every limit in one atomic write, for a request that RL.ALL admitted
    and that failed downstream; force=True charges cost to every limit even past it (usage that already
    happened: each goes into debt); wait_ms waits server-side until every limit admits (at most that
    long). A spec's own cost is its limit's cost instead of the call's. A Concurrency limit's result is
    an AcquireResult carrying its lease. On Redis Cluster the keys must share a slot: give them one hash
    tag ("{user42}:s", "{user42}:h")."""
    return run(client, limit_all_call(limits, cost, dryrun, readonly, refund, force, wait_ms))


def acquire_args(key: str, limit: int, lease_ms: int, cost: int = 1, lease_id: Optional[LeaseId] = None,
                 wait_ms: Optional[int] = None, dryrun: bool = False, readonly: bool = False) -> List[object]:
    """The argument list of RL.ACQUIRE (RL.ACQUIRE_RO with readonly=True). WAIT is passed on as given,
    so that RL.ACQUIRE_RO refuses it by name rather than the helper dropping it."""
    return command_args(key, Concurrency(limit, lease_ms, lease_id), cost, dryrun, readonly, wait_ms=wait_ms)


def acquire_call(key: str, limit: int, lease_ms: int, cost: int = 1, lease_id: Optional[LeaseId] = None,
                 wait_ms: Optional[int] = None, dryrun: bool = False,
                 readonly: bool = False) -> Call[AcquireResult]:
    return Call(acquire_args(key, limit, lease_ms, cost, lease_id, wait_ms, dryrun, readonly), parse_acquire)


def acquire(client: SyncClient, key: str, limit: int, lease_ms: int, cost: int = 1,
            lease_id: Optional[LeaseId] = None, wait_ms: Optional[int] = None, dryrun: bool = False,
            readonly: bool = False) -> AcquireResult:
    """Take a lease of `cost` units on `key` if the unexpired leases leave room within `limit`; it ends
    `lease_ms` from now unless released (release) or renewed (renew) first. lease_id names the lease
    (one still held is renewed, taking no more units); wait_ms waits server-side, first in first out,
    for a release or an expiry to make room. dryrun=True and readonly=True (RL.ACQUIRE_RO) only report:
    the answer has no lease. lease() (held_lease.py) holds one for a `with` block, renewing it."""
    return run(client, acquire_call(key, limit, lease_ms, cost, lease_id, wait_ms, dryrun, readonly))


def release_call(key: str, lease_id: LeaseId) -> Call[bool]:
    return Call(["RL.RELEASE", key, lease_bytes(lease_id)], parse_yes)


def release(client: SyncClient, key: str, lease_id: LeaseId) -> bool:
    """Give a lease back (RL.RELEASE): True if it was held, False if it was unknown, released or expired."""
    return run(client, release_call(key, lease_id))


def renew_call(key: str, lease_id: LeaseId, lease_ms: int) -> Call[bool]:
    return Call(["RL.RENEW", key, lease_bytes(lease_id), lease_ms], parse_yes)


def renew(client: SyncClient, key: str, lease_id: LeaseId, lease_ms: int) -> bool:
    """Make a held lease end `lease_ms` from now (RL.RENEW): True if it was held, False if not."""
    return run(client, renew_call(key, lease_id, lease_ms))


def leases_call(key: str) -> Call[List[Lease]]:
    return Call(["RL.LEASES", key], parse_leases)


def leases(client: SyncClient, key: str) -> List[Lease]:
    """The unexpired leases on `key` (RL.LEASES), oldest first."""
    return run(client, leases_call(key))


def block_call(key: str, ms: int) -> Call[None]:
    return Call(["RL.BLOCK", key, ms], parse_nothing)


def block(client: SyncClient, key: str, ms: int) -> None:
    """Lock `key` for `ms` from now (RL.BLOCK), replacing the end of any lock it has: every limiter
    command is denied on it until then. No strike is counted, and the limiter's state is kept."""
    run(client, block_call(key, ms))


def unblock_call(key: str) -> Call[bool]:
    return Call(["RL.UNBLOCK", key], parse_yes)


def unblock(client: SyncClient, key: str) -> bool:
    """End the key's lock and forgive its strikes (RL.UNBLOCK): True if a lock held, else False (the
    strikes are forgiven either way)."""
    return run(client, unblock_call(key))


def parse_lockinfo(reply: Any) -> LockInfo:
    """RL.LOCKINFO's reply, a RESP2 array [lock_ms, strikes] or a RESP3 map (keys as bytes or str)."""
    if isinstance(reply, dict):
        values = str_keys(reply)
        reply = [values["lock_ms"], values["strikes"]]
    lock_ms, strikes = (int(v) for v in reply)
    return LockInfo(lock_ms, strikes)


def lockinfo_call(key: str) -> Call[LockInfo]:
    return Call(["RL.LOCKINFO", key], parse_lockinfo)


def lockinfo(client: SyncClient, key: str) -> LockInfo:
    """The key's lock as it stands (RL.LOCKINFO): a missing key has none and no strikes."""
    return run(client, lockinfo_call(key))


def reset_call(*keys: str) -> Call[int]:
    return Call(["RL.RESET", *keys], parse_count)


def reset(client: SyncClient, *keys: str) -> int:
    """Delete limiter keys (RL.RESET), as if each limiter had long been idle (locks included), and
    answer how many held a limiter. All or nothing: a key holding anything else is WRONGTYPE and no key
    is deleted. Clients waiting on a deleted key are served at once. On Redis Cluster the keys of one
    call must share a slot."""
    return run(client, reset_call(*keys))


def throttle_args(key: str, max_burst: int, count_per_period: int, period: int,
                  quantity: Optional[int] = None) -> List[object]:
    """The argument list of CL.THROTTLE (quantity left out for redis-cell's default, 1)."""
    args: List[object] = ["CL.THROTTLE", key, max_burst, count_per_period, period]
    return args + ([] if quantity is None else [quantity])


def parse_throttle(reply: Any) -> ThrottleResult:
    """CL.THROTTLE's five integers."""
    limited, lim, remaining, retry, reset_after = (int(v) for v in reply)
    return ThrottleResult(limited == 1, lim, remaining, retry, reset_after)


def throttle_call(key: str, max_burst: int, count_per_period: int, period: int,
                  quantity: Optional[int] = None) -> Call[ThrottleResult]:
    return Call(throttle_args(key, max_burst, count_per_period, period, quantity), parse_throttle)


def throttle(client: SyncClient, key: str, max_burst: int, count_per_period: int, period: int,
             quantity: Optional[int] = None) -> ThrottleResult:
    """CL.THROTTLE, redis-cell's command on redis-cell's keys: max_burst + 1 units regained at
    count_per_period per `period` seconds (GCRA); quantity 0 looks without writing. For code moving
    from redis-cell: new code had better use limit() with Leaky(..., nodelay=True)."""
    return run(client, throttle_call(key, max_burst, count_per_period, period, quantity))
