"""The RL.* commands as Python calls: a limiter spec (Token, Leaky, Window, SlidingLog, Quota,
Concurrency) names the algorithm and its parameters, `limit()` runs one command for one key and
`limit_all()` runs RL.ALL for several, and both return typed results with the module's six reply fields.
A spec may carry a Lockout (LOCKOUT and its options): a denial then locks the key. The concurrency leases
have their own calls: `acquire()`, `release()`, `renew()` and `leases()`; the locks too: `block()`,
`unblock()` and `lockinfo()`.

The idea: a spec is a plain value (parameters are not stored in Redis, every call brings its own), so
the same spec object serves the command, the read-only form and the HTTP headers (headers.py). A lease
is the one thing a call hands back to be named again later, so its id travels as the exact bytes the
module gave (a str decoded with surrogateescape, encoded back the same way)."""

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple, Union

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


@dataclass(frozen=True)
class Token:
    """RL.TOKEN: a bucket of `capacity` tokens refilled by `refill_tokens` per `refill_ms` (continuously,
    or in whole chunks with interval=True)."""
    capacity: int
    refill_tokens: int
    refill_ms: int
    interval: bool = False
    lockout: Optional[Lockout] = None

    command = "RL.TOKEN"
    kind = "TOKEN"

    def params(self) -> List[object]:
        return [self.capacity, self.refill_tokens, self.refill_ms]

    def flags(self) -> List[object]:
        return (["INTERVAL"] if self.interval else []) + lockout_args(self.lockout)


@dataclass(frozen=True)
class Leaky:
    """RL.LEAKY: a bucket of `capacity` units draining `leak_tokens` per `leak_ms`; shaping by default
    (wait_ms says how long to hold the request), policing with nodelay=True."""
    capacity: int
    leak_tokens: int
    leak_ms: int
    nodelay: bool = False
    lockout: Optional[Lockout] = None

    command = "RL.LEAKY"
    kind = "LEAKY"

    def params(self) -> List[object]:
        return [self.capacity, self.leak_tokens, self.leak_ms]

    def flags(self) -> List[object]:
        return (["NODELAY"] if self.nodelay else []) + lockout_args(self.lockout)


@dataclass(frozen=True)
class Window:
    """RL.WINDOW: at most `limit` per window of `window_ms`, windows aligned to the Unix epoch; the
    sliding-window counter by default, a plain fixed window with fixed=True."""
    limit: int
    window_ms: int
    fixed: bool = False
    lockout: Optional[Lockout] = None

    command = "RL.WINDOW"
    kind = "WINDOW"

    def params(self) -> List[object]:
        return [self.limit, self.window_ms]

    def flags(self) -> List[object]:
        return ["FIXED" if self.fixed else "SLIDING"] + lockout_args(self.lockout)


@dataclass(frozen=True)
class SlidingLog:
    """RL.SLIDINGLOG: never more than `limit` in any `window_ms`; denied attempts are logged too;
    `mingap_ms` optionally spaces attempts."""
    limit: int
    window_ms: int
    mingap_ms: Optional[int] = None
    lockout: Optional[Lockout] = None

    command = "RL.SLIDINGLOG"
    kind = "SLIDINGLOG"

    def params(self) -> List[object]:
        return [self.limit, self.window_ms]

    def flags(self) -> List[object]:
        return ([] if self.mingap_ms is None else ["MINGAP", self.mingap_ms]) + lockout_args(self.lockout)


@dataclass(frozen=True)
class Quota:
    """RL.QUOTA: at most `limit` per calendar `period`, "DAY", "WEEK" (from Monday) or "MONTH", in UTC
    shifted by `offset_minutes` east (a fixed time zone: 60 is UTC+1). Counted as a fixed window."""
    limit: int
    period: str
    offset_minutes: Optional[int] = None
    lockout: Optional[Lockout] = None

    command = "RL.QUOTA"
    kind = "QUOTA"

    def params(self) -> List[object]:
        return [self.limit, self.period]

    def flags(self) -> List[object]:
        offset = [] if self.offset_minutes is None else ["OFFSET", self.offset_minutes]
        return offset + lockout_args(self.lockout)


@dataclass(frozen=True)
class Concurrency:
    """RL.ACQUIRE (a CONCURRENCY clause in RL.ALL): at most `limit` units held at once by leases that
    expire `lease_ms` after they are taken (or renewed) unless released first. `lease_id` names the
    lease to take, or to renew if it is still held; without it the module makes one."""
    limit: int
    lease_ms: int
    lease_id: Optional[Union[str, bytes]] = None

    command = "RL.ACQUIRE"
    kind = "CONCURRENCY"

    def params(self) -> List[object]:
        return [self.limit, self.lease_ms]

    def flags(self) -> List[object]:
        return [] if self.lease_id is None else ["ID", lease_bytes(self.lease_id)]


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


def lease_bytes(lease_id: Union[str, bytes]) -> bytes:
    """A lease id as the bytes the module holds: a str is encoded as lease_str decoded it."""
    return lease_id if isinstance(lease_id, bytes) else lease_id.encode("utf-8", "surrogateescape")


def lease_str(lease_id) -> Optional[str]:
    """A lease id from a reply (bytes, or str from a decoding client; None for nil) as a str. Any bytes
    survive the round trip: those that are not UTF-8 become surrogates, and lease_bytes restores them."""
    if lease_id is None or isinstance(lease_id, str):
        return lease_id
    return lease_id.decode("utf-8", "surrogateescape")


def parse_result(reply) -> Result:
    """A six-field reply, or RL.ACQUIRE's seven (an AcquireResult), as a RESP2 array or a RESP3 map
    (keys as bytes or str)."""
    if isinstance(reply, dict):
        values = {(k.decode() if isinstance(k, bytes) else k): v for k, v in reply.items()}
        reply = [values[name] for name in FIELDS + (("lease",) if "lease" in values else ())]
    if len(reply) not in (6, 7):
        raise ValueError(f"expected 6 or 7 fields, got {reply!r}")
    allowed, lim, remaining, retry, reset, wait = (int(v) for v in reply[:6])
    if len(reply) == 6:
        return Result(allowed == 1, lim, remaining, retry, reset, wait)
    return AcquireResult(allowed == 1, lim, remaining, retry, reset, wait, lease_str(reply[6]))


def parse_all(reply) -> AllResult:
    """RL.ALL's reply: allowed, retry_after_ms, reset_after_ms, then the per-limit replies."""
    if isinstance(reply, dict):
        values = {(k.decode() if isinstance(k, bytes) else k): v for k, v in reply.items()}
        reply = [values["allowed"], values["retry_after_ms"], values["reset_after_ms"], *values["limits"]]
    allowed, retry, reset = (int(v) for v in reply[:3])
    return AllResult(allowed == 1, retry, reset, [parse_result(r) for r in reply[3:]])


def _weight(cost: int, refund: Optional[int], force: bool = False) -> List[object]:
    """COST n (left out for the default 1), or REFUND n in its place; FORCE after COST (the units are taken
    even past the limit: a debt, for usage that already happened)."""
    if refund is None:
        return ([] if cost == 1 else ["COST", cost]) + (["FORCE"] if force else [])
    if cost != 1:
        raise ValueError("cost and refund exclude each other: a call takes or gives back")
    if force:
        raise ValueError("force and refund exclude each other: a forced call takes, a refund gives back")
    return ["REFUND", refund]


def command_args(key: str, spec, cost: int = 1, dryrun: bool = False, readonly: bool = False,
                 refund: Optional[int] = None, force: bool = False) -> List[object]:
    """The argument list of one RL.* call (the command name first)."""
    name = spec.command + ("_RO" if readonly else "")
    args = [name, key, *spec.params(), *spec.flags(), *_weight(cost, refund, force)]
    if dryrun and not readonly:
        args.append("DRYRUN")
    return args


def limit(client, key: str, spec, cost: int = 1, dryrun: bool = False, readonly: bool = False,
          refund: Optional[int] = None, force: bool = False) -> Result:
    """Run one limiter for `key` and return its Result. dryrun=True looks without consuming;
    readonly=True uses the command's _RO form (same answer as DRYRUN; runs on replicas and for
    read-only users); refund=n gives back n units a failed request took, in place of cost; force=True
    takes cost even past the limit (a debt: Token, Leaky with nodelay, Window, SlidingLog, Quota). A
    Concurrency spec runs RL.ACQUIRE (an AcquireResult; acquire() also has WAIT).
    `client` is a redis.Redis (or anything with execute_command)."""
    return parse_result(client.execute_command(*command_args(key, spec, cost, dryrun, readonly, refund, force)))


def all_args(limits: Sequence[Tuple[str, object]], cost: int = 1, dryrun: bool = False, readonly: bool = False,
             refund: Optional[int] = None, force: bool = False) -> List[object]:
    """The argument list of RL.ALL (RL.ALL_RO with readonly=True) for (key, spec) pairs."""
    args: List[object] = ["RL.ALL_RO" if readonly else "RL.ALL", len(limits), *(key for key, _ in limits)]
    args += _weight(cost, refund, force)
    if dryrun and not readonly:
        args.append("DRYRUN")
    for _, spec in limits:
        args += ["LIMIT", spec.kind, *spec.params(), *spec.flags()]
    return args


def limit_all(client, limits: Sequence[Tuple[str, object]], cost: int = 1, dryrun: bool = False,
              readonly: bool = False, refund: Optional[int] = None, force: bool = False) -> AllResult:
    """Check several (key, spec) limits in one atomic RL.ALL: admitted by all of them, or by none and
    nothing consumed. readonly=True uses RL.ALL_RO (the DRYRUN answer, for replicas and read-only
    users); refund=n gives n back to every limit in one atomic write, for a request that RL.ALL admitted
    and that failed downstream; force=True charges cost to every limit even past it (usage that already
    happened: each goes into debt). A Concurrency limit's result is an AcquireResult carrying its lease."""
    return parse_all(client.execute_command(*all_args(limits, cost, dryrun, readonly, refund, force)))


def acquire_args(key: str, limit: int, lease_ms: int, cost: int = 1, lease_id=None,
                 wait_ms: Optional[int] = None, dryrun: bool = False, readonly: bool = False) -> List[object]:
    """The argument list of RL.ACQUIRE (RL.ACQUIRE_RO with readonly=True). WAIT is passed on as given,
    so that RL.ACQUIRE_RO refuses it by name rather than the helper dropping it."""
    args = command_args(key, Concurrency(limit, lease_ms, lease_id), cost, readonly=readonly)
    if wait_ms is not None:
        args += ["WAIT", wait_ms]
    if dryrun and not readonly:
        args.append("DRYRUN")
    return args


def acquire(client, key: str, limit: int, lease_ms: int, cost: int = 1, lease_id=None,
            wait_ms: Optional[int] = None, dryrun: bool = False, readonly: bool = False) -> AcquireResult:
    """Take a lease of `cost` units on `key` if the unexpired leases leave room within `limit`; it ends
    `lease_ms` from now unless released (release) or renewed (renew) first. lease_id names the lease
    (one still held is renewed, taking no more units); wait_ms waits server-side, first in first out,
    for a release or an expiry to make room. dryrun=True and readonly=True (RL.ACQUIRE_RO) only report:
    the answer has no lease."""
    args = acquire_args(key, limit, lease_ms, cost, lease_id, wait_ms, dryrun, readonly)
    return parse_result(client.execute_command(*args))


def release(client, key: str, lease_id) -> bool:
    """Give a lease back (RL.RELEASE): True if it was held, False if it was unknown, released or expired."""
    return int(client.execute_command("RL.RELEASE", key, lease_bytes(lease_id))) == 1


def renew(client, key: str, lease_id, lease_ms: int) -> bool:
    """Make a held lease end `lease_ms` from now (RL.RENEW): True if it was held, False if not."""
    return int(client.execute_command("RL.RENEW", key, lease_bytes(lease_id), lease_ms)) == 1


def leases(client, key: str) -> List[Lease]:
    """The unexpired leases on `key` (RL.LEASES), oldest first."""
    return [Lease(lease_str(lease_id), int(units), int(ttl))
            for lease_id, units, ttl in client.execute_command("RL.LEASES", key)]


def block(client, key: str, ms: int) -> None:
    """Lock `key` for `ms` from now (RL.BLOCK), replacing the end of any lock it has: every limiter
    command is denied on it until then. No strike is counted, and the limiter's state is kept."""
    client.execute_command("RL.BLOCK", key, ms)


def unblock(client, key: str) -> bool:
    """End the key's lock and forgive its strikes (RL.UNBLOCK): True if a lock held, else False (the
    strikes are forgiven either way)."""
    return int(client.execute_command("RL.UNBLOCK", key)) == 1


def parse_lockinfo(reply) -> LockInfo:
    """RL.LOCKINFO's reply, a RESP2 array [lock_ms, strikes] or a RESP3 map (keys as bytes or str)."""
    if isinstance(reply, dict):
        values = {(k.decode() if isinstance(k, bytes) else k): v for k, v in reply.items()}
        reply = [values["lock_ms"], values["strikes"]]
    lock_ms, strikes = (int(v) for v in reply)
    return LockInfo(lock_ms, strikes)


def lockinfo(client, key: str) -> LockInfo:
    """The key's lock as it stands (RL.LOCKINFO): a missing key has none and no strikes."""
    return parse_lockinfo(client.execute_command("RL.LOCKINFO", key))
