"""One module call as a value: its argument list, the parser of its reply, and where it goes on a Redis
Cluster. Every public call of the package (limit, acquire, policy_set, ...) is built as a Call by a
`*_call` function, then run by `run()` here (redis.Redis, redis.RedisCluster) or `arun()` in
redis_ratelimit.asyncio (redis.asyncio.Redis, redis.asyncio.RedisCluster).

The idea: the sync and async forms differ only in `await`, so everything else, the arguments, the
parsing and the cluster routing, is built once, here and in the `*_call` builders, and never written
twice. A command with a key goes where the cluster client's own routing sends it (the key's slot); a
command without one (RL.POLICY) goes to every primary, since a cluster keeps policies per node, and the
primaries' answers are merged into one (they must agree)."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, List, Protocol, TypeVar

from redis.cluster import RedisCluster

T = TypeVar("T")


class SyncClient(Protocol):
    """What a sync call needs of its client: redis.Redis, redis.RedisCluster, a pipeline-less wrapper."""

    def execute_command(self, *args: Any, **options: Any) -> Any: ...


def same_everywhere(replies: List[Any]) -> Any:
    """The one answer every primary gave; primaries that disagree (a policy set on some only) are an
    error naming the answers, since a single answer would hide that the cluster is inconsistent."""
    if any(reply != replies[0] for reply in replies[1:]):
        raise ValueError(f"the cluster's primaries answer differently: {replies!r}")
    return replies[0]


def any_true(replies: List[Any]) -> Any:
    """1 if any primary answered 1 (RL.POLICY DEL: the policy existed on one of them)."""
    return 1 if any(int(reply) == 1 for reply in replies) else 0


@dataclass(frozen=True)
class Call(Generic[T]):
    """One command: its words (the command name first), how its reply becomes the typed result, and,
    for a command without a key, that a cluster runs it on every primary and how their replies merge."""
    args: List[object]
    parse: Callable[[Any], T]
    everywhere: bool = False
    merge: Callable[[List[Any]], Any] = field(default=same_everywhere)


# redis-py's node flag for "every primary" (the same string in the sync and asyncio cluster clients).
PRIMARIES = "primaries"


def route(call: "Call[Any]", cluster: bool) -> Dict[str, Any]:
    """execute_command's keyword arguments: every primary for a keyless call on a cluster, else none
    (the client routes by the key)."""
    return {"target_nodes": PRIMARIES} if cluster and call.everywhere else {}


def merged(call: "Call[Any]", reply: Any, cluster: bool) -> Any:
    """A cluster's per-node replies ({node name: reply}; a lone primary's reply comes bare) as one."""
    if not (cluster and call.everywhere):
        return reply
    return call.merge(list(reply.values()) if isinstance(reply, dict) else [reply])


def run(client: SyncClient, call: "Call[T]") -> T:
    """Run a call on a sync client and parse its reply."""
    cluster = isinstance(client, RedisCluster)
    return call.parse(merged(call, client.execute_command(*call.args, **route(call, cluster)), cluster))
