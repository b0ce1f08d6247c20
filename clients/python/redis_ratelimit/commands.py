"""The package's command table: for each command of the module (each RL.POLICY subcommand on its own,
named "RL.POLICY|SET" as COMMAND DOCS names it), the call that sends it and every option token the
package can send with it, each with an example call that makes the package send that token.

The idea: the table is checked against the server, both ways (tests/test_commands.py): every command
and token of the live server's COMMAND DOCS must be here (or in EXCLUDED, with its reason), and every
example is run through a client that records what it sends, so an entry the package cannot really
send fails too. A new option of the module therefore fails the tests until the package sends it.
The examples are real calls: each is valid, on keys of its own under "cmdtable:"."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Tuple

from ._call import SyncClient
from .limits import (Leaky, Lockout, Quota, SlidingLog, Smooth, Spec, Token, Window, acquire, block,
                     leases, limit, limit_all, lockinfo, release, renew, reset, throttle, unblock)
from .stored_policy import check, policy_del, policy_flush, policy_get, policy_list, policy_set

# An example: a call on a sync client that sends the command (or the token).
Example = Callable[[SyncClient], object]
# An example that runs as the command (False) or as its read-only form (True).
Either = Callable[[SyncClient, bool], object]


@dataclass(frozen=True)
class Command:
    """One module command: its name as COMMAND DOCS spells it (upper case), the package's call for it, an
    example that sends it, and {token: example sending that token}."""
    name: str
    call: str
    example: Example
    options: Dict[str, Example] = field(default_factory=dict)


# Commands the package leaves out on purpose, with the reason.
EXCLUDED: Dict[str, str] = {
    "RL.SETSTATE": "how the module's effects reach replicas and the AOF; an application never sends it",
    "RL.CLOCK": "exists only with the test-clock module argument, for tests; send it as a plain command",
}

LOCK = Lockout(60_000, backoff=2, maxlock_ms=3_600_000, forgive_ms=86_400_000)
LOCKOUT_TOKENS = ("LOCKOUT", "BACKOFF", "MAXLOCK", "FORGIVE")


def _pair(name: str, call: str, key: str, spec: Callable[..., Spec], both: Dict[str, Either],
          write_only: Dict[str, Example]) -> List[Command]:
    """A limiter command and its _RO form. `spec(**options)` makes the spec; `both` are the options
    both forms take (COST and the lockout's are added here), `write_only` those of the command alone."""
    common: Dict[str, Either] = {"COST": lambda r, ro: limit(r, key, spec(), cost=2, readonly=ro)}
    for token in LOCKOUT_TOKENS:
        common[token] = lambda r, ro: limit(r, key, spec(lockout=LOCK), readonly=ro)
    common.update(both)

    def as_form(example: Either, readonly: bool) -> Example:
        return lambda r: example(r, readonly)

    write = {token: as_form(example, False) for token, example in common.items()}
    write.update(write_only)
    write["DRYRUN"] = lambda r: limit(r, key, spec(), dryrun=True)
    read = {token: as_form(example, True) for token, example in common.items()}
    return [Command(name, call, lambda r: limit(r, key, spec()), write),
            Command(name + "_RO", call + ", readonly=True", lambda r: limit(r, key, spec(), readonly=True), read)]


def _taken(key: str, spec: Callable[..., Spec], force_spec: Callable[..., Spec]) -> Dict[str, Either]:
    """REFUND and FORCE, for the limiters that take them (a forced Leaky must police: nodelay)."""
    return {"REFUND": lambda r, ro: limit(r, key, spec(), refund=1, readonly=ro),
            "FORCE": lambda r, ro: limit(r, key, force_spec(), cost=2, force=True, readonly=ro)}


def _token(**options: Any) -> Spec:
    return Token(10, 1, 1000, **options)


def _leaky(**options: Any) -> Spec:
    return Leaky(10, 1, 1000, **options)


def _window(**options: Any) -> Spec:
    return Window(60, 60_000, **options)


def _log(**options: Any) -> Spec:
    return SlidingLog(10, 1000, **options)


def _smooth(**options: Any) -> Spec:
    return Smooth(5, **options)


def _quota(period: str = "DAY", **options: Any) -> Spec:
    return Quota(1000, period, **options)


def _limiters() -> List[Command]:
    k = "cmdtable:"
    return [
        *_pair("RL.TOKEN", "limit(r, key, Token(...))", k + "token", _token, {
            **_taken(k + "token", _token, _token),
            "INTERVAL": lambda r, ro: limit(r, k + "token", _token(interval=True), readonly=ro),
            "ATMOST": lambda r, ro: limit(r, k + "token", _token(), cost=3, atmost=True, readonly=ro),
        }, {"WAIT": lambda r: limit(r, k + "token", _token(), wait_ms=100)}),
        *_pair("RL.LEAKY", "limit(r, key, Leaky(...))", k + "leaky", _leaky, {
            **_taken(k + "leaky", _leaky, lambda **o: _leaky(nodelay=True, **o)),
            "NODELAY": lambda r, ro: limit(r, k + "leaky", _leaky(nodelay=True), readonly=ro),
        }, {"BLOCK": lambda r: limit(r, k + "leaky:block", _leaky(), block=True)}),
        *_pair("RL.WINDOW", "limit(r, key, Window(...))", k + "window", _window, {
            **_taken(k + "window", _window, _window),
            "FIXED": lambda r, ro: limit(r, k + "window", _window(fixed=True), readonly=ro),
            "SLIDING": lambda r, ro: limit(r, k + "window", _window(), readonly=ro),
            "SUBWINDOWS": lambda r, ro: limit(r, k + "window:cells", _window(subwindows=6), readonly=ro),
            "ATMOST": lambda r, ro: limit(r, k + "window", _window(), cost=3, atmost=True, readonly=ro),
        }, {"WAIT": lambda r: limit(r, k + "window", _window(), wait_ms=100)}),
        *_pair("RL.SLIDINGLOG", "limit(r, key, SlidingLog(...))", k + "log", _log, {
            **_taken(k + "log", _log, _log),
            "MINGAP": lambda r, ro: limit(r, k + "log:gap", _log(mingap_ms=10), readonly=ro),
        }, {}),
        *_pair("RL.SMOOTH", "limit(r, key, Smooth(...))", k + "smooth", _smooth, {
            "WARMUP": lambda r, ro: limit(r, k + "smooth:warm", _smooth(warmup_ms=4000), readonly=ro),
            "COLDFACTOR": lambda r, ro: limit(r, k + "smooth:warm", _smooth(warmup_ms=4000, coldfactor=2),
                                              readonly=ro),
            "MAXBURST": lambda r, ro: limit(r, k + "smooth", _smooth(maxburst_ms=2000), readonly=ro),
            "MAXWAIT": lambda r, ro: limit(r, k + "smooth", _smooth(maxwait_ms=100), readonly=ro),
        }, {"BLOCK": lambda r: limit(r, k + "smooth:block", _smooth(), block=True)}),
        *_pair("RL.QUOTA", "limit(r, key, Quota(...))", k + "quota", _quota, {
            **_taken(k + "quota", _quota, _quota),
            "DAY": lambda r, ro: limit(r, k + "quota", _quota("DAY"), readonly=ro),
            "WEEK": lambda r, ro: limit(r, k + "quota:week", _quota("WEEK"), readonly=ro),
            "MONTH": lambda r, ro: limit(r, k + "quota:month", _quota("MONTH"), readonly=ro),
            "OFFSET": lambda r, ro: limit(r, k + "quota:tz", _quota("DAY", offset_minutes=60), readonly=ro),
        }, {}),
    ]


def _leases() -> List[Command]:
    k = "cmdtable:jobs"

    def held(r: SyncClient) -> str:
        """A lease of its own (the examples above may have filled `k`)."""
        return acquire(r, k + ":held", 1000, 30_000).lease or ""

    return [
        Command("RL.ACQUIRE", "acquire(r, key, limit, lease_ms)", lambda r: acquire(r, k, 5, 30_000), {
            "COST": lambda r: acquire(r, k, 5, 30_000, cost=2),
            "ID": lambda r: acquire(r, k, 5, 30_000, lease_id="job-7"),
            "WAIT": lambda r: acquire(r, k, 5, 30_000, wait_ms=100),
            "DRYRUN": lambda r: acquire(r, k, 5, 30_000, dryrun=True),
        }),
        Command("RL.ACQUIRE_RO", "acquire(r, key, limit, lease_ms, readonly=True)",
                lambda r: acquire(r, k, 5, 30_000, readonly=True), {
                    "COST": lambda r: acquire(r, k, 5, 30_000, cost=2, readonly=True),
                    "ID": lambda r: acquire(r, k, 5, 30_000, lease_id="job-7", readonly=True),
                }),
        Command("RL.RELEASE", "release(r, key, lease_id)", lambda r: release(r, k + ":held", held(r))),
        Command("RL.RENEW", "renew(r, key, lease_id, lease_ms)", lambda r: renew(r, k + ":held", held(r), 30_000)),
        Command("RL.LEASES", "leases(r, key)", lambda r: leases(r, k)),
        Command("RL.BLOCK", "block(r, key, ms)", lambda r: block(r, "cmdtable:locked", 1000)),
        Command("RL.UNBLOCK", "unblock(r, key)", lambda r: unblock(r, "cmdtable:locked")),
        Command("RL.LOCKINFO", "lockinfo(r, key)", lambda r: lockinfo(r, "cmdtable:locked")),
        Command("RL.RESET", "reset(r, *keys)", lambda r: reset(r, "cmdtable:token", "cmdtable:window")),
        Command("CL.THROTTLE", "throttle(r, key, max_burst, count_per_period, period)",
                lambda r: throttle(r, "cmdtable:cell", 15, 30, 60)),
    ]


def _all() -> List[Command]:
    pair: List[Tuple[str, Spec]] = [("{cmdtable}:s", Token(10, 1, 1000)), ("{cmdtable}:h", Window(1000, 3_600_000))]
    return [
        Command("RL.ALL", "limit_all(r, [(key, spec), ...])", lambda r: limit_all(r, pair), {
            "LIMIT": lambda r: limit_all(r, pair),
            "COST": lambda r: limit_all(r, pair, cost=2),
            "REFUND": lambda r: limit_all(r, pair, refund=1),
            "FORCE": lambda r: limit_all(r, pair, cost=2, force=True),
            "WAIT": lambda r: limit_all(r, pair, wait_ms=100),
            "DRYRUN": lambda r: limit_all(r, pair, dryrun=True),
        }),
        Command("RL.ALL_RO", "limit_all(r, [(key, spec), ...], readonly=True)",
                lambda r: limit_all(r, pair, readonly=True), {
                    "LIMIT": lambda r: limit_all(r, pair, readonly=True),
                    "COST": lambda r: limit_all(r, pair, cost=2, readonly=True),
                    "REFUND": lambda r: limit_all(r, pair, refund=1, readonly=True),
                    "FORCE": lambda r: limit_all(r, pair, cost=2, force=True, readonly=True),
                }),
    ]


def _policies() -> List[Command]:
    limits: List[Tuple[str, Spec]] = [("burst", Token(10, 10, 1000)), ("day", Quota(10_000, "DAY"))]
    key = "cmdtable:user"

    def stored(r: SyncClient) -> None:
        policy_set(r, "cmdtable", limits)

    def checked(r: SyncClient, **options: Any) -> object:
        stored(r)
        return check(r, "cmdtable", key, **options)

    return [
        Command("RL.POLICY", "policy_set, policy_get, policy_del, policy_list, policy_flush",
                lambda r: policy_list(r)),
        Command("RL.POLICY|SET", "policy_set(r, name, [(limit_name, spec), ...])", stored, {
            "LIMIT": stored,
            "SHADOW": lambda r: policy_set(r, "cmdtable_shadow", limits, shadow=True),
        }),
        Command("RL.POLICY|GET", "policy_get(r, name)", lambda r: policy_get(r, "cmdtable")),
        Command("RL.POLICY|DEL", "policy_del(r, name)", lambda r: policy_del(r, "cmdtable_gone")),
        Command("RL.POLICY|LIST", "policy_list(r)", lambda r: policy_list(r)),
        Command("RL.POLICY|FLUSH", "policy_flush(r)", lambda r: policy_flush(r)),
        Command("RL.CHECK", "check(r, policy, key)", checked, {
            "COST": lambda r: checked(r, cost=2),
            "WAIT": lambda r: checked(r, wait_ms=100),
            "DRYRUN": lambda r: checked(r, dryrun=True),
        }),
        Command("RL.CHECK_RO", "check(r, policy, key, readonly=True)", lambda r: checked(r, readonly=True), {
            "COST": lambda r: checked(r, cost=2, readonly=True),
        }),
    ]


COMMANDS: List[Command] = _limiters() + _leases() + _all() + _policies()
