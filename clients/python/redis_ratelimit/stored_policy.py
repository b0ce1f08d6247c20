"""Policies kept in Redis: RL.POLICY SET/GET/DEL/LIST/FLUSH store a named set of limits on the server,
and RL.CHECK (RL.CHECK_RO) applies every limit of a policy to one key, all or nothing, answering as
RL.ALL does (an AllResult, one Result per limit in the policy's order).

The idea: a limit of a stored policy is the same spec value as everywhere else (Token, Window, ...: an
RL.ALL clause without its key), named. policy_get reads the stored arguments back into those specs, so
`policy_get(r, "api") == StoredPolicy("api", limits)` says whether the server holds what the
application's configuration says. Decimals (Smooth's) come back as int or float."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._call import Call, SyncClient, any_true, run
from .limits import (AllResult, Concurrency, Leaky, Lockout, Quota, SlidingLog, Smooth, Spec, Token, Window, clause,
                     parse_all, parse_nothing, parse_yes)


@dataclass(frozen=True)
class StoredPolicy:
    """A policy as RL.POLICY GET reads it: its name, its (limit name, spec) pairs in order, and whether it
    is SHADOW (evaluated and kept up to date, never denying)."""
    name: str
    limits: List[Tuple[str, Spec]] = field(default_factory=list)
    shadow: bool = False


def policy_set_args(name: str, limits: Sequence[Tuple[str, Spec]], shadow: bool = False) -> List[object]:
    """The argument list of RL.POLICY SET: `LIMIT limit_name kind params options` per limit."""
    args: List[object] = ["RL.POLICY", "SET", name]
    if shadow:
        args.append("SHADOW")
    for limit_name, spec in limits:
        args += ["LIMIT", limit_name, *clause(spec)[1:]]
    return args


# RL.POLICY has no key: on a Redis Cluster each call goes to every primary (everywhere=True), since a
# cluster keeps policies per node (docs/policies.md), and the primaries' answers must agree.

def policy_set_call(name: str, limits: Sequence[Tuple[str, Spec]], shadow: bool = False) -> Call[None]:
    return Call(policy_set_args(name, limits, shadow), parse_nothing, everywhere=True)


def policy_set(client: SyncClient, name: str, limits: Sequence[Tuple[str, Spec]], shadow: bool = False) -> None:
    """Store (or replace, atomically) the policy `name`: 1 to 16 (limit name, spec) pairs, specs of any
    kind (a Concurrency without lease_id: each lease check() takes gets an id made by the module). A
    spec's own `cost` fixes that limit's cost. shadow=True evaluates the policy without ever denying.
    Keys already checked move to the new limits at their next check, keeping the state of each limit
    that keeps its name and kind. On Redis Cluster the policy is set on every primary."""
    run(client, policy_set_call(name, limits, shadow))


def policy_get_call(name: str) -> Call[Optional[StoredPolicy]]:
    return Call(["RL.POLICY", "GET", name], lambda words: None if words is None else parse_policy(name, words),
                everywhere=True)


def policy_get(client: SyncClient, name: str) -> Optional[StoredPolicy]:
    """The policy `name` as stored (RL.POLICY GET), or None when there is none. On Redis Cluster every
    primary is asked, and primaries that hold different policies are a ValueError."""
    return run(client, policy_get_call(name))


def policy_del_call(name: str) -> Call[bool]:
    return Call(["RL.POLICY", "DEL", name], parse_yes, everywhere=True, merge=any_true)


def policy_del(client: SyncClient, name: str) -> bool:
    """Delete the policy `name` (RL.POLICY DEL): True if it existed (on Redis Cluster: on any primary;
    it is deleted from every one). Keys checked under it keep their state; checking them answers `no
    such policy` until a policy of that name is set again."""
    return run(client, policy_del_call(name))


def policy_list_call() -> Call[List[str]]:
    return Call(["RL.POLICY", "LIST"], lambda words: [text(word) for word in words], everywhere=True)


def policy_list(client: SyncClient) -> List[str]:
    """The names of the stored policies (RL.POLICY LIST), sorted bytewise. On Redis Cluster every
    primary must list the same names (else a ValueError)."""
    return run(client, policy_list_call())


def policy_flush_call() -> Call[None]:
    return Call(["RL.POLICY", "FLUSH"], parse_nothing, everywhere=True)


def policy_flush(client: SyncClient) -> None:
    """Delete every policy (RL.POLICY FLUSH), on every primary of a cluster; the keys stay."""
    run(client, policy_flush_call())


def check_args(policy: str, key: str, cost: int = 1, dryrun: bool = False, readonly: bool = False,
               wait_ms: Optional[int] = None) -> List[object]:
    """The argument list of RL.CHECK (RL.CHECK_RO with readonly=True). WAIT is passed on as given, so
    that RL.CHECK_RO refuses it by name rather than the helper dropping it."""
    args: List[object] = ["RL.CHECK_RO" if readonly else "RL.CHECK", policy, key]
    if cost != 1:
        args += ["COST", cost]
    if wait_ms is not None:
        args += ["WAIT", wait_ms]
    if dryrun and not readonly:
        args.append("DRYRUN")
    return args


def check_call(policy: str, key: str, cost: int = 1, dryrun: bool = False, readonly: bool = False,
               wait_ms: Optional[int] = None) -> Call[AllResult]:
    return Call(check_args(policy, key, cost, dryrun, readonly, wait_ms), parse_all)


def check(client: SyncClient, policy: str, key: str, cost: int = 1, dryrun: bool = False, readonly: bool = False,
          wait_ms: Optional[int] = None) -> AllResult:
    """Apply every limit of the stored policy to `key` (RL.CHECK), all or nothing: the AllResult of
    RL.ALL, one Result per limit in the policy's order. cost is every limit's but one whose spec fixes
    its own; dryrun=True and readonly=True (RL.CHECK_RO, for replicas) only report; wait_ms waits
    server-side until every limit admits. Under a SHADOW policy `allowed` is always True and each
    limit's Result says what it really decided. A Concurrency limit's result is an AcquireResult: give
    its lease back with release(client, key, lease), or renew it, on the same key."""
    return run(client, check_call(policy, key, cost, dryrun, readonly, wait_ms))


# Reading RL.POLICY GET's words back into specs: per kind, the spec and its parameters' types; per
# option, its field, how many words it takes and their type. Option names never collide with LIMIT,
# and every option's arity is known, so a clause ends exactly where the next LIMIT begins.

def text(word: Any) -> str:
    return word.decode() if isinstance(word, bytes) else str(word)


def decimal_value(word: str) -> Any:
    """A decimal the module echoes: an int without a point, else a float."""
    return float(word) if "." in word else int(word)


KINDS: Dict[str, Tuple[Callable[..., Spec], Tuple[Callable[[str], Any], ...]]] = {
    "TOKEN": (Token, (int, int, int)), "LEAKY": (Leaky, (int, int, int)), "WINDOW": (Window, (int, int)),
    "SLIDINGLOG": (SlidingLog, (int, int)), "SMOOTH": (Smooth, (decimal_value,)), "QUOTA": (Quota, (int, str)),
    "CONCURRENCY": (Concurrency, (int, int)),
}

# option -> (spec field, or "lockout.<field>" for a Lockout's; its value's type, None for a flag)
OPTIONS: Dict[str, Tuple[Optional[str], Optional[Callable[[str], Any]]]] = {
    "INTERVAL": ("interval", None), "NODELAY": ("nodelay", None), "FIXED": ("fixed", None),
    "SLIDING": (None, None), "SUBWINDOWS": ("subwindows", int), "MINGAP": ("mingap_ms", int),
    "OFFSET": ("offset_minutes", int), "WARMUP": ("warmup_ms", int), "MAXBURST": ("maxburst_ms", int),
    "COLDFACTOR": ("coldfactor", decimal_value), "MAXWAIT": ("maxwait_ms", int), "COST": ("cost", int),
    "FORCE": ("force", None), "ID": ("lease_id", str), "LOCKOUT": ("lockout.ms", int),
    "BACKOFF": ("lockout.backoff", int), "MAXLOCK": ("lockout.maxlock_ms", int),
    "FORGIVE": ("lockout.forgive_ms", int),
}


def parse_policy(name: str, reply: Any) -> StoredPolicy:
    """RL.POLICY GET's reply (`[SHADOW] LIMIT limit_name spec ...`) as a StoredPolicy. A word this helper
    does not know (an option of a newer module) is a ValueError naming the policy and the limit."""
    words = [text(w) for w in reply]
    shadow = bool(words) and words[0].upper() == "SHADOW"
    at, limits = (1 if shadow else 0), []  # type: Tuple[int, List[Tuple[str, Spec]]]
    while at < len(words):
        if words[at].upper() != "LIMIT" or at + 2 >= len(words):
            raise ValueError(f"policy {name!r}: expected LIMIT limit_name kind ..., got {words[at:]!r}")
        limit_name = words[at + 1]
        spec, at = parse_clause(f"policy {name!r}, limit {limit_name!r}", words, at + 2)
        limits.append((limit_name, spec))
    return StoredPolicy(name, limits, shadow)


def parse_clause(where: str, words: List[str], at: int) -> Tuple[Spec, int]:
    """One clause from words[at] (its kind) to the next LIMIT or the end: (spec, where the next begins)."""
    kind = words[at].upper()
    if kind not in KINDS:
        raise ValueError(f"{where}: unknown kind {words[at]!r}")
    spec_type, param_types = KINDS[kind]
    params = words[at + 1:at + 1 + len(param_types)]
    if len(params) < len(param_types):
        raise ValueError(f"{where}: {kind} needs {len(param_types)} parameters, got {params!r}")
    values = [convert(value) for convert, value in zip(param_types, params)]
    options: Dict[str, Any] = {}
    lockout: Dict[str, Any] = {}
    at += 1 + len(param_types)
    while at < len(words) and words[at].upper() != "LIMIT":
        option = words[at].upper()
        if option not in OPTIONS:
            raise ValueError(f"{where}: {words[at]!r} is not an option this helper knows")
        field_name, convert = OPTIONS[option]
        if convert is not None and at + 1 >= len(words):
            raise ValueError(f"{where}: {option} needs a value")
        value = True if convert is None else convert(words[at + 1])
        if field_name is not None and field_name.startswith("lockout."):
            lockout[field_name[len("lockout."):]] = value
        elif field_name is not None:
            options[field_name] = value
        at += 1 if convert is None else 2
    try:
        if lockout:
            options["lockout"] = Lockout(**lockout)
        return spec_type(*values, **options), at
    except TypeError as err:
        raise ValueError(f"{where}: an option {kind} does not take ({err})") from None
