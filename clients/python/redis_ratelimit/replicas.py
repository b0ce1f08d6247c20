"""Grants that survive a failover: `with_replicas(client, replicas=1, timeout_ms=100)` wraps a redis.Redis
or redis.RedisCluster; every call of the package takes the wrapper in place of the client
(`limit(with_replicas(r), key, Token(...))`); redis_ratelimit.asyncio.with_replicas does the same for
redis.asyncio (AsyncReplicaClient).

The idea: replication is asynchronous, so a primary killed before its replica received a grant leaves a
promoted replica that never saw it, and that admits the same requests again. Redis's own `WAIT numreplicas
timeout` answers how many replicas acknowledged every write the connection made so far. The wrapper sends
each module command that may write and `WAIT replicas timeout_ms` together, in one pipeline on one
connection (one round trip): the WAIT runs after the command's reply, whenever the module sends it (its own
WAIT and BLOCK included). A grant (an admission, a lease acquired or renewed) that fewer than `replicas`
replicas acknowledged raises NotReplicated: the caller decides, and the package's Limiter takes it as a
failure of Redis (its on_failure answer). A denial, a release, a reset, a lock cannot over-admit: they are
returned whatever WAIT answered. Read-only calls (the _RO forms, RL.LEASES, RL.LOCKINFO, RL.POLICY, and any
call with DRYRUN) pass through untouched: they write nothing, so nothing is waited for.

WAIT names no key: on a cluster it must reach the node that ran the command. So the pair goes to the
node that owns the command's key, on that node's own client, and a failed connection or a MOVED answer (a
failover moved the slot) refreshes the cluster client's slot map before the error is raised."""

import asyncio
from typing import Any, Dict, List, Optional, Tuple

import redis.asyncio
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster
from redis.exceptions import ConnectionError, ResponseError

# The module's commands that write (keys from argument 1), by how their grant shows in the reply.
ADMITTING = ("RL.TOKEN", "RL.LEAKY", "RL.WINDOW", "RL.SLIDINGLOG", "RL.SMOOTH", "RL.QUOTA", "RL.ACQUIRE")
NEVER_GRANTING = ("RL.RELEASE", "RL.RESET", "RL.BLOCK", "RL.UNBLOCK")
WRITING = frozenset(ADMITTING + NEVER_GRANTING + ("RL.ALL", "RL.CHECK", "CL.THROTTLE", "RL.RENEW"))


class NotReplicated(Exception):
    """A grant that fewer replicas than asked acknowledged within the timeout: a failover now could lose
    it. `reply` is the command's raw reply (the grant, as the server answered it), `acked` the replicas
    that WAIT counted, `replicas` the number asked for."""

    def __init__(self, command: str, reply: Any, acked: int, replicas: int, timeout_ms: int) -> None:
        super().__init__(f"{command}: the grant reached {acked} of {replicas} replica(s) within {timeout_ms} ms")
        self.reply, self.acked, self.replicas = reply, acked, replicas


def check_count(name: str, value: Any, least: int) -> int:
    """An int argument of with_replicas (a bool is not one), at least `least`; else an error naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name}: must be an integer >= {least}, not {value!r}")
    return value


def word(value: Any) -> str:
    return (value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)).upper()


def options_of(name: str, args: Tuple[Any, ...]) -> List[str]:
    """A command's option words, past its keys (a key or a policy may be spelled DRYRUN): RL.ALL's up to
    its first LIMIT clause (DRYRUN comes before them), and without the lease id that follows ID."""
    if name == "RL.ALL":
        words = [word(a) for a in args[2 + int(args[1]):]]
        return words[:words.index("LIMIT")] if "LIMIT" in words else words
    words = [word(a) for a in args[3 if name == "RL.CHECK" else 2:]]
    return [w for i, w in enumerate(words) if i == 0 or words[i - 1] != "ID"]


def writes(args: Tuple[Any, ...]) -> bool:
    """Whether a call may write, and is therefore sent with a WAIT."""
    name = word(args[0])
    return name in WRITING and "DRYRUN" not in options_of(name, args)


def routing_key(args: Tuple[Any, ...]) -> Any:
    """The key that places a writing call on a cluster (RL.ALL's keys share its slot)."""
    return args[2] if word(args[0]) in ("RL.ALL", "RL.CHECK") else args[1]


def field(reply: Any, name: str, position: int) -> int:
    """One integer of a reply: a RESP2 array's `position`, or a RESP3 map's `name` (bytes or str keys)."""
    if isinstance(reply, dict):
        for key, value in reply.items():
            if word(key) == name.upper():
                return int(value)
        raise ValueError(f"no {name!r} in the reply {reply!r}")
    return int(reply[position])


def granted(args: Tuple[Any, ...], reply: Any) -> bool:
    """Whether a writing call's reply is a grant: something a lost write would give away again."""
    name = word(args[0])
    if name in NEVER_GRANTING:
        return False
    if name == "CL.THROTTLE":
        return int(reply[0]) == 0  # its first field is "limited"
    if name == "RL.RENEW":
        return int(reply) == 1
    return field(reply, "allowed", 0) == 1


class _Replicas:
    """What both wrappers hold: the client, the replicas each grant must reach, WAIT's timeout."""

    def __init__(self, client: Any, replicas: int = 1, timeout_ms: int = 100) -> None:
        self.client = client
        self.replicas = check_count("replicas", replicas, 1)
        self.timeout_ms = check_count("timeout_ms", timeout_ms, 0)

    def wait_args(self) -> Tuple[Any, ...]:
        return ("WAIT", self.replicas, self.timeout_ms)

    def checked(self, args: Tuple[Any, ...], reply: Any, acked: Any) -> Any:
        """The reply, or NotReplicated for a grant that too few replicas acknowledged."""
        if int(acked) < self.replicas and granted(args, reply):
            raise NotReplicated(word(args[0]), reply, int(acked), self.replicas, self.timeout_ms)
        return reply


def slot_moved(error: Exception) -> bool:
    """A failure after which the cluster client's slot map may be stale: the node is gone, or it answers
    that another node owns the slot now."""
    return isinstance(error, ConnectionError) or (isinstance(error, ResponseError) and
                                                  str(error).startswith(("MOVED", "ASK")))


class ReplicaClient(_Replicas):
    """A redis.Redis or redis.RedisCluster (or anything with execute_command and pipeline) whose writing
    module calls are each followed by a WAIT in the same round trip. Other commands pass through."""

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if not writes(args):
            return self.client.execute_command(*args, **options)
        target = self.client
        if isinstance(self.client, RedisCluster):
            target = self.client.get_redis_connection(self.client.get_node_from_key(routing_key(args)))
        try:
            reply, acked = self.pair(target, args, options)
        except (ConnectionError, ResponseError) as error:
            if target is not self.client and slot_moved(error):
                self.client.nodes_manager.initialize()
            raise
        return self.checked(args, reply, acked)

    def pair(self, target: Any, args: Tuple[Any, ...], options: Dict[str, Any]) -> List[Any]:
        """The command and the WAIT in one pipeline (no MULTI: one connection, one round trip)."""
        pipe = target.pipeline(transaction=False)
        try:
            pipe.execute_command(*args, **options)
            pipe.execute_command(*self.wait_args())
            return list(pipe.execute(raise_on_error=True))
        finally:
            pipe.reset()


class AsyncReplicaClient(_Replicas):
    """ReplicaClient for redis.asyncio.Redis and redis.asyncio.RedisCluster: the same pair, awaited. The
    pair is written and read on one connection of the pool, which is dropped, never handed back, when an
    error or a cancellation leaves a reply unread. On a cluster each node gets a redis.asyncio.Redis of its
    own, made with the node's connection settings: close() closes them (the application's client is left
    as it is)."""

    def __init__(self, client: Any, replicas: int = 1, timeout_ms: int = 100) -> None:
        super().__init__(client, replicas, timeout_ms)
        self.nodes: Dict[str, Any] = {}

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        if not writes(args):
            return await self.client.execute_command(*args, **options)
        target = await self.node_client(args) if isinstance(self.client, AsyncRedisCluster) else self.client
        try:
            reply, acked = await self.pair(target, args)
        except (ConnectionError, ResponseError) as error:
            if target is not self.client and slot_moved(error):
                await self.client.nodes_manager.initialize()
            raise
        return self.checked(args, reply, acked)

    async def node_client(self, args: Tuple[Any, ...]) -> Any:
        """The redis.asyncio.Redis of the node that owns the call's key (made once per node)."""
        await self.client.initialize()  # loads the slot map the first time only
        node = self.client.get_node_from_key(routing_key(args))
        if node.name not in self.nodes:
            pool = redis.asyncio.ConnectionPool(connection_class=node.connection_class, **node.connection_kwargs)
            self.nodes[node.name] = redis.asyncio.Redis(connection_pool=pool)
        return self.nodes[node.name]

    async def pair(self, target: Any, args: Tuple[Any, ...]) -> Tuple[Any, Any]:
        """Both commands written at once, both replies read (the command's error after WAIT's reply, so
        that the connection stays clean)."""
        pool = target.connection_pool
        conn = await pool.get_connection(word(args[0]))
        try:
            await conn.send_packed_command(conn.pack_commands([args, self.wait_args()]))
            failure: Optional[ResponseError] = None
            reply: Any = None
            try:
                reply = await target.parse_response(conn, word(args[0]))
            except ResponseError as error:
                failure = error
            acked = await target.parse_response(conn, "WAIT")
        except BaseException:
            await asyncio.shield(conn.disconnect())
            raise
        finally:
            await pool.release(conn)
        if failure is not None:
            raise failure
        return reply, acked

    async def close(self) -> None:
        """Close the per-node clients (a cluster's); the application's client is left as it is."""
        nodes, self.nodes = list(self.nodes.values()), {}
        for node in nodes:
            await node.connection_pool.disconnect()


def with_replicas(client: Any, replicas: int = 1, timeout_ms: int = 100) -> ReplicaClient:
    """`client` for the package's calls, each grant acknowledged by at least `replicas` replicas (Redis's
    WAIT, up to timeout_ms; 0 waits without a limit, as WAIT does) before it is returned; NotReplicated
    otherwise."""
    return ReplicaClient(client, replicas, timeout_ms)


def inner_client(client: Any) -> Tuple[Any, Optional[_Replicas]]:
    """A client without its replicas wrapper, and the wrapper (None when there is none): the limiters
    build their private timeout pool from the wrapped client and wrap the pool's client again."""
    if isinstance(client, _Replicas):
        return client.client, client
    return client, None
