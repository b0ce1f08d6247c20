"""clients/python/README.md and the Python section of clients/README.md stay true: each ```python block runs, as written, against the real
server (a fresh database, the clock frozen at T0 + 15 s before each block), `redis.Redis()` and
`redis.asyncio.Redis()` meaning that server; the blocks' asserts are the checks. (The "```python
cluster" block is run on a real cluster by tests/cluster.py.)"""

import os

import redis
import redis.asyncio
from readme_blocks import blocks, run_block
from support import PORT, RedisCase

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
CLIENTS_README = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                              "README.md")
SYNC, ASYNC = redis.Redis, redis.asyncio.Redis


class Readme(RedisCase):
    def test_every_block_runs(self) -> None:
        code = [(README, block) for block in blocks(README, "python")]
        code += [(CLIENTS_README, block) for block in blocks(CLIENTS_README, "python")]
        self.assertGreaterEqual(len(code), 4)
        for number, (page, block) in enumerate(code, 1):
            with self.subTest(page=page, block=number):
                self.r.flushall()
                self.set_clock(1_700_000_000_000 + 15_000)
                run_block(block, {"redis.Redis": lambda *a, **k: SYNC(host="127.0.0.1", port=PORT),
                                  "redis.asyncio.Redis": lambda *a, **k: ASYNC(host="127.0.0.1", port=PORT)})

    def test_a_wrong_assert_fails(self) -> None:
        """The blocks can fail: the first one with a remaining count changed does."""
        block = blocks(README, "python")[0].replace("remaining=9", "remaining=8", 1)
        with self.assertRaises(AssertionError):
            run_block(block, {"redis.Redis": lambda *a, **k: SYNC(host="127.0.0.1", port=PORT)})
