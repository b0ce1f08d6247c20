"""The package's type hints hold: `mypy --strict -p redis_ratelimit`, run in clients/python so that its
pyproject.toml's [tool.mypy] applies, finds nothing; and the hints are not vacuous: a small program
that passes a str where a spec goes, and reads a field a result lacks, gets exactly those errors."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MISUSE = '''
import redis
from redis_ratelimit import Token, limit
from redis_ratelimit.asyncio import limit as alimit

r = redis.Redis()
res = limit(r, "k", "10 per second")
res.granted
async def main() -> None:
    out: int = await alimit(r, "k", Token(10, 1, 1000))
'''


class Typing(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.cache = tempfile.mkdtemp(prefix="rl-mypy-")

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.cache, ignore_errors=True)

    def mypy(self, *args: str) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
        return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", self.cache, *args],
                              cwd=PROJECT, capture_output=True, text=True, timeout=600)

    def test_the_package_is_strictly_typed(self) -> None:
        out = self.mypy("-p", "redis_ratelimit")
        self.assertEqual((out.returncode, out.stdout.splitlines()[-1:]), (0, ["Success: no issues found in "
                         f"{sum(f.endswith('.py') for _, _, files in os.walk(os.path.join(PROJECT, 'redis_ratelimit')) for f in files)}"
                         " source files"]), out.stdout + out.stderr)

    def test_misuse_is_caught(self) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            program = os.path.join(scratch, "misuse.py")
            with open(program, "w") as f:
                f.write(MISUSE)
            out = self.mypy(program)
        errors = [line.split(": error: ")[1] for line in out.stdout.splitlines() if ": error: " in line]
        self.assertEqual(len(errors), 3, out.stdout)
        self.assertIn('Argument 3 to "limit" has incompatible type "str"', errors[0])
        self.assertIn('"Result" has no attribute "granted"', errors[1])
        self.assertIn('Incompatible types in assignment (expression has type "Result", variable has type "int")',
                      errors[2])
