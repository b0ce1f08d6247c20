"""The package on a real Redis Cluster (check-cluster.sh starts it: RL_CLUSTER_PORT is its first node),
sync through redis.RedisCluster and asyncio through redis.asyncio.RedisCluster: limits on keys that land
on every shard, RL.ALL on keys of one hash tag (and the client's refusal of keys of several slots), leases
taken, listed and released, RL.RESET, and policies: policy_set reaches every primary (each asked directly),
check() answers on keys of every shard, policy_get/policy_list agree, primaries that disagree are an
error, policy_del and policy_flush reach them all; with_replicas on keys of every shard (the WAIT on the
key's own primary, the grant on its replica). Closes with "python-cluster: N passed, N failed"."""

import asyncio
import os
import sys
import unittest
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import redis  # noqa: E402
import redis.asyncio  # noqa: E402
from redis.cluster import RedisCluster  # noqa: E402
from redis.exceptions import RedisClusterException  # noqa: E402

import redis_ratelimit as rl  # noqa: E402
import redis_ratelimit.asyncio as aio  # noqa: E402
from redis_ratelimit import Concurrency, StoredPolicy, Token, Window  # noqa: E402
from run import report  # noqa: E402

PORT = int(os.environ.get("RL_CLUSTER_PORT", "0"))
POLICY = [("burst", Token(10, 10, 1000)), ("hour", Window(100, 3_600_000))]


def keys_on_every_shard(cluster: RedisCluster, prefix: str) -> List[str]:
    """One key per primary: keys tried in turn until each primary holds one."""
    found: Dict[str, str] = {}
    n = 0
    while len(found) < len(cluster.get_primaries()):
        key = f"{prefix}{n}"
        found.setdefault(cluster.get_node_from_key(key).name, key)
        n += 1
    return sorted(found.values())


def waits(node: Any) -> int:
    """WAIT commands a node has run (INFO commandstats: cmdstat_wait)."""
    r = redis.Redis(host=node.host, port=node.port)
    try:
        return int(r.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))
    finally:
        r.close()


def on_replica(cluster: RedisCluster, key: str) -> List[Any]:
    """The key's DUMP on its primary and on that primary's replica (as the primary's INFO replication
    names it: the client's slot map may predate the replicas). READONLY first, on the pipeline's one
    connection: a cluster's replica redirects reads of its slots otherwise."""
    owner = cluster.get_node_from_key(key)
    primary = redis.Redis(host=owner.host, port=owner.port)
    link = primary.info("replication")["slave0"]
    dumps = []
    for r in (primary, redis.Redis(host="127.0.0.1", port=int(link["port"]))):
        pipe = r.pipeline(transaction=False)
        pipe.execute_command("READONLY")
        pipe.dump(key)
        dumps.append(pipe.execute()[1])
        r.close()
    return dumps


def primaries(cluster: RedisCluster) -> List[redis.Redis]:
    return [redis.Redis(host=node.host, port=node.port) for node in cluster.get_primaries()]


class SyncCluster(unittest.TestCase):
    def setUp(self) -> None:
        self.c = RedisCluster(host="127.0.0.1", port=PORT)
        self.c.flushall(target_nodes=RedisCluster.PRIMARIES)
        rl.policy_flush(self.c)

    def tearDown(self) -> None:
        self.c.close()

    def test_limit_on_every_shard(self) -> None:
        keys = keys_on_every_shard(self.c, "s:user")
        self.assertEqual(len(keys), 3)
        for key in keys:
            self.assertEqual([rl.limit(self.c, key, Token(2, 1, 60_000)).allowed for _ in range(3)],
                             [True, True, False])
        self.assertEqual(rl.reset(self.c, keys[0]), 1)
        self.assertTrue(rl.limit(self.c, keys[0], Token(2, 1, 60_000)).allowed)

    def test_limit_all_with_a_hash_tag(self) -> None:
        pair = [("{s:u42}:s", Token(2, 1, 60_000)), ("{s:u42}:h", Window(100, 3_600_000))]
        self.assertEqual([rl.limit_all(self.c, pair).allowed for _ in range(3)], [True, True, False])
        self.assertEqual(rl.limit_all(self.c, pair, readonly=True).limits[1].remaining, 98)
        with self.assertRaises(RedisClusterException):  # keys of several slots: the client refuses
            rl.limit_all(self.c, [("s:a", Token(2, 1, 1000)), ("s:b", Token(2, 1, 1000))])

    def test_leases(self) -> None:
        got = rl.acquire(self.c, "s:jobs", 1, 30_000)
        self.assertTrue(got.allowed)
        self.assertFalse(rl.acquire(self.c, "s:jobs", 1, 30_000).allowed)
        self.assertEqual([held.lease_id for held in rl.leases(self.c, "s:jobs")], [got.lease])
        self.assertTrue(rl.renew(self.c, "s:jobs", got.lease or "", 30_000))
        self.assertTrue(rl.release(self.c, "s:jobs", got.lease or ""))
        with rl.lease(self.c, "s:jobs", 1, 30_000) as held:
            self.assertEqual([h.lease_id for h in rl.leases(self.c, "s:jobs")], [held.lease_id])
        self.assertEqual(rl.leases(self.c, "s:jobs"), [])

    def test_policies_on_every_primary(self) -> None:
        rl.policy_set(self.c, "api", POLICY)
        for node in primaries(self.c):
            self.assertEqual(rl.policy_get(node, "api"), StoredPolicy("api", POLICY))
            node.close()
        self.assertEqual(rl.policy_get(self.c, "api"), StoredPolicy("api", POLICY))
        self.assertEqual(rl.policy_list(self.c), ["api"])
        for key in keys_on_every_shard(self.c, "s:client"):
            out = rl.check(self.c, "api", key, cost=4)
            self.assertEqual((out.allowed, [r.remaining for r in out.limits]), (True, [6, 96]))
        rl.policy_set(self.c, "jobs", [("jobs", Concurrency(1, 30_000))])
        lease = rl.check(self.c, "jobs", "s:worker").limits[0]
        self.assertIsInstance(lease, rl.AcquireResult)
        self.assertTrue(rl.release(self.c, "s:worker", getattr(lease, "lease")))
        self.assertTrue(rl.policy_del(self.c, "api"))
        self.assertFalse(rl.policy_del(self.c, "api"))
        self.assertIsNone(rl.policy_get(self.c, "api"))
        rl.policy_flush(self.c)
        self.assertEqual(rl.policy_list(self.c), [])

    def test_with_replicas_on_every_shard(self) -> None:
        """A grant through with_replicas on a key of each shard returns (its replica acknowledged it: no
        NotReplicated), the replica holds it, and the WAIT ran on the key's own primary, once."""
        w = rl.with_replicas(self.c, replicas=1, timeout_ms=10_000)
        for key in keys_on_every_shard(self.c, "s:acked"):
            before = {node.name: waits(node) for node in self.c.get_primaries()}
            self.assertTrue(rl.limit(w, key, Token(2, 1, 60_000)).allowed)
            after = {node.name: waits(node) for node in self.c.get_primaries()}
            owner = self.c.get_node_from_key(key).name
            self.assertEqual({name: after[name] - before[name] for name in after},
                             {name: int(name == owner) for name in after})
            primary, replica = on_replica(self.c, key)
            self.assertIsNotNone(primary)
            self.assertEqual(replica, primary)
        self.assertTrue(rl.limit_all(w, [("{s:acked}:a", Token(2, 1, 60_000))]).allowed)

    def test_primaries_that_disagree(self) -> None:
        one = primaries(self.c)[0]
        rl.policy_set(one, "api", POLICY)  # on one primary only
        with self.assertRaises(ValueError):
            rl.policy_get(self.c, "api")
        with self.assertRaises(ValueError):
            rl.policy_list(self.c)
        self.assertTrue(rl.policy_del(self.c, "api"))  # existed on one: deleted everywhere
        self.assertIsNone(rl.policy_get(one, "api"))
        one.close()


class AsyncCluster(unittest.TestCase):
    def run_async(self, body: Any) -> None:
        async def main() -> None:
            c = redis.asyncio.RedisCluster(host="127.0.0.1", port=PORT)
            try:
                await aio.policy_flush(c)
                await body(c)
            finally:
                await c.close()
        asyncio.run(main())

    def test_limit_limit_all_leases(self) -> None:
        sync = RedisCluster(host="127.0.0.1", port=PORT)
        keys = keys_on_every_shard(sync, "a:user")
        sync.close()

        async def body(c: Any) -> None:
            for key in keys:
                self.assertEqual([(await aio.limit(c, key, Token(2, 1, 60_000))).allowed for _ in range(3)],
                                 [True, True, False])
            pair = [("{a:u42}:s", Token(2, 1, 60_000)), ("{a:u42}:j", Concurrency(5, 30_000))]
            out = await aio.limit_all(c, pair)
            self.assertTrue(out.allowed)
            lease = getattr(out.limits[1], "lease")
            self.assertEqual([h.lease_id for h in await aio.leases(c, "{a:u42}:j")], [lease])
            self.assertTrue(await aio.release(c, "{a:u42}:j", lease))
            async with aio.lease(c, "a:jobs", 1, 30_000) as held:
                self.assertEqual([h.lease_id for h in await aio.leases(c, "a:jobs")], [held.lease_id])
            self.assertEqual(await aio.leases(c, "a:jobs"), [])
        self.run_async(body)

    def test_with_replicas_on_every_shard(self) -> None:
        sync = RedisCluster(host="127.0.0.1", port=PORT)
        keys = keys_on_every_shard(sync, "a:acked")

        async def body(c: Any) -> None:
            w = aio.with_replicas(c, replicas=1, timeout_ms=10_000)
            try:
                for key in keys:
                    owner = sync.get_node_from_key(key)
                    before = waits(owner)
                    self.assertTrue((await aio.limit(w, key, Token(2, 1, 60_000))).allowed)
                    self.assertEqual(waits(owner), before + 1)
                    primary, replica = on_replica(sync, key)
                    self.assertIsNotNone(primary)
                    self.assertEqual(replica, primary)
            finally:
                await w.close()
        try:
            self.run_async(body)
        finally:
            sync.close()

    def test_policies_on_every_primary(self) -> None:
        sync = RedisCluster(host="127.0.0.1", port=PORT)
        keys = keys_on_every_shard(sync, "a:client")

        async def body(c: Any) -> None:
            await aio.policy_set(c, "api", POLICY)
            for node in primaries(sync):
                self.assertEqual(rl.policy_get(node, "api"), StoredPolicy("api", POLICY))
                node.close()
            self.assertEqual(await aio.policy_get(c, "api"), StoredPolicy("api", POLICY))
            self.assertEqual(await aio.policy_list(c), ["api"])
            for key in keys:
                out = await aio.check(c, "api", key, cost=4)
                self.assertEqual([r.remaining for r in out.limits], [6, 96])
            self.assertTrue(await aio.policy_del(c, "api"))
            self.assertEqual(await aio.policy_list(c), [])
        try:
            self.run_async(body)
        finally:
            sync.close()


class ReadmeBlock(unittest.TestCase):
    """README.md's "```python cluster" block, as written, with RedisCluster(...) meaning this cluster."""

    def test_the_cluster_block_runs(self) -> None:
        from readme_blocks import blocks, run_block
        code = blocks(os.path.join(os.path.dirname(HERE), "README.md"), "python cluster")
        self.assertEqual(len(code), 1)
        c = RedisCluster(host="127.0.0.1", port=PORT)
        c.flushall(target_nodes=RedisCluster.PRIMARIES)
        rl.policy_flush(c)
        c.close()
        run_block(code[0], {"redis.cluster.RedisCluster": lambda *a, **k: RedisCluster(host="127.0.0.1", port=PORT)})


def main() -> int:
    if not PORT:
        print("FAIL python-cluster: RL_CLUSTER_PORT is not set (run clients/python/check-cluster.sh)")
        print("python-cluster: 0 passed, 1 failed")
        return 1
    return report(unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__]), "python-cluster")


if __name__ == "__main__":
    sys.exit(main())
