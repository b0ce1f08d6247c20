"""Runs clients/python/resilience/test_*.py (each test starts and stops its own redis-server) and closes
with the project's line, "python-resilience: N passed, N failed" (a skipped test counts as failed)."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main() -> int:
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=1, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.skipped)
    for test, _ in result.failures + result.errors + result.skipped:
        print(f"FAIL python-resilience: {test.id()}")
    print(f"python-resilience: {result.testsRun - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
