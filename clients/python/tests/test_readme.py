"""clients/python/README.md stays true: each of its ```python blocks runs, as written, against the real
server (a fresh database, the clock frozen at T0 + 15 s before each block), `redis.Redis()` and
`redis.asyncio.Redis()` meaning that server; the blocks' asserts are the checks. (The "```python
cluster" block is run on a real cluster by tests/cluster.py.)"""

import os

import redis
import redis.asyncio
from readme_blocks import blocks, run_block
from support import PORT, RedisCase

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
SYNC, ASYNC = redis.Redis, redis.asyncio.Redis


class Readme(RedisCase):
    def test_every_block_runs(self) -> None:
        code = blocks(README, "python")
        self.assertGreaterEqual(len(code), 3)
        for number, block in enumerate(code, 1):
            with self.subTest(block=number):
                self.r.flushall()
                self.set_clock(1_700_000_000_000 + 15_000)
                run_block(block, {"redis.Redis": lambda *a, **k: SYNC(host="127.0.0.1", port=PORT),
                                  "redis.asyncio.Redis": lambda *a, **k: ASYNC(host="127.0.0.1", port=PORT)})

    def test_a_wrong_assert_fails(self) -> None:
        """The blocks can fail: the first one with a remaining count changed does."""
        block = blocks(README, "python")[0].replace("remaining=9", "remaining=8", 1)
        with self.assertRaises(AssertionError):
            run_block(block, {"redis.Redis": lambda *a, **k: SYNC(host="127.0.0.1", port=PORT)})
