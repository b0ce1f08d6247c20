"""The package on a real Redis Cluster (check-cluster.sh starts it: RL_CLUSTER_PORT is its first node),
sync through redis.RedisCluster and asyncio through redis.asyncio.RedisCluster: limits on keys that land
on every shard, RL.ALL on keys of one hash tag (and the client's refusal of keys of several slots), leases
taken, listed and released, RL.RESET, and policies: policy_set reaches every primary (each asked directly),
check() answers on keys of every shard, policy_get/policy_list agree, primaries that disagree are an
error, policy_del and policy_flush reach them all. Closes with "python-cluster: N passed, N failed"."""

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
