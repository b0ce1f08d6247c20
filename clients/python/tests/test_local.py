"""The in-process limiters (local.py) against the module: the same random traces of calls (keys, costs,
FORCE, clock steps forward and now and then back) go through LocalLimiter and through RL.TOKEN, RL.WINDOW
FIXED and RL.ALL on the real server, its clock frozen and moved by RL.CLOCK, and every field of every
result must be equal. Then the local limiter's own contract: the LRU bound, dryrun, the specs it refuses."""

import random
import unittest

from support import T0, RedisCase

from redis_ratelimit.limits import Result, Token, Window, Leaky, Lockout, limit, limit_all
from redis_ratelimit.local import LocalLimiter, local_form_error


def random_spec(rng: random.Random, force_ok: bool = True):
    force = force_ok and rng.random() < 0.1
    if rng.random() < 0.6:
        cap = rng.choice([1, 2, 3, 5, 10, 50])
        return Token(cap, rng.choice([1, 2, 3, 7]), rng.choice([1, 10, 250, 1000, 3000]),
                     interval=rng.random() < 0.4, force=force)
    return Window(rng.choice([1, 2, 5, 10]), rng.choice([1, 7, 100, 1000, 60_000]), fixed=True, force=force)


def random_step(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.3:
        return 0
    if roll < 0.9:
        return rng.randint(1, 400)
    if roll < 0.97:
        return rng.randint(400, 20_000)
    return -rng.randint(1, 2_000)  # a clock that runs back


class SameAsModule(RedisCase):
    def replay(self, seed: int, calls: int) -> int:
        rng = random.Random(seed)
        local = LocalLimiter()
        now = T0 + rng.randint(0, 100_000)
        self.set_clock(now)
        keys = [f"k{seed}:{i}" for i in range(3)]
        specs = {key: random_spec(rng) for key in keys}
        compared = 0
        for step in range(calls):
            now = max(now + random_step(rng), 0)
            self.set_clock(now)
            if rng.random() < 0.05:  # the same key read with other parameters of the same kind
                key = rng.choice(keys)
                old = specs[key]
                new = random_spec(rng)
                if isinstance(new, type(old)):
                    specs[key] = new
            cost = rng.choice([0, 1, 1, 1, 2, 3, 11])
            where = f"seed {seed} call {step} at {now}"
            if rng.random() < 0.25:
                pair = [(f"{{g{seed}}}:a", Token(5, 1, 200, force=rng.random() < 0.1)),
                        (f"{{g{seed}}}:b", Window(3, 1000, fixed=True))]
                expected = limit_all(self.r, pair, cost=cost)
                self.assertEqual(local.limit_all(pair, cost=cost, now_ms=now), expected, where)
            else:
                key = rng.choice(keys)
                spec = specs[key]
                # In limit() a spec's own FORCE goes with the call's cost (a spec's cost would add to it).
                expected = limit(self.r, key, spec, cost=cost)
                self.assertEqual(local.limit(key, spec, cost=cost, now_ms=now), expected, where)
            compared += 1
        return compared

    def test_random_traces_equal_field_for_field(self):
        total = sum(self.replay(seed, 300) for seed in range(12))
        self.assertEqual(total, 12 * 300)

    def test_exact_values_of_a_bucket(self):
        local = LocalLimiter()
        spec = Token(10, 5, 1000)
        got = [local.limit("b", spec, cost=4, now_ms=T0) for _ in range(3)]
        self.assertEqual(got[0], Result(True, 10, 6, -1, 800, 0))
        self.assertEqual(got[2], Result(False, 10, 2, 400, 1600, 0))


class LocalContract(unittest.TestCase):
    def test_lru_bound(self):
        local = LocalLimiter(max_keys=3)
        for i in range(10):
            local.limit(f"k{i}", Window(1, 60_000, fixed=True), now_ms=1_000)
        self.assertEqual(len(local), 3)
        # The oldest were forgotten: k0 starts full again, k9 is still counted.
        self.assertTrue(local.limit("k0", Window(1, 60_000, fixed=True), now_ms=1_000).allowed)
        self.assertFalse(local.limit("k9", Window(1, 60_000, fixed=True), now_ms=1_000).allowed)

    def test_dryrun_and_idle_keys_keep_nothing(self):
        local = LocalLimiter(clock=lambda: 5_000)
        local.limit("d", Token(2, 1, 1000), dryrun=True)
        self.assertEqual(len(local), 0)
        self.assertEqual(local.limit("d", Token(2, 1, 1000), cost=0).remaining, 2)
        self.assertEqual(len(local), 0)  # a full bucket is idle: nothing kept, as the module deletes it

    def test_specs_without_a_local_form(self):
        self.assertIsNone(local_form_error(Token(1, 1, 1)))
        self.assertIsNone(local_form_error(Window(1, 1, fixed=True)))
        for spec, word in ((Window(1, 1), "fixed Window"), (Leaky(1, 1, 1), "Leaky"),
                           (Token(1, 1, 1, lockout=Lockout(10)), "lockout")):
            self.assertIn(word, local_form_error(spec))
            with self.assertRaises(ValueError):
                LocalLimiter().limit("x", spec)  # type: ignore[arg-type]

    def test_rate_out_of_range_is_named(self):
        with self.assertRaisesRegex(ValueError, "capacity"):
            LocalLimiter().limit("x", Token(10**12, 1, 10**6))


if __name__ == "__main__":
    unittest.main()
