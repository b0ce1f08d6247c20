"""Runs every test_*.py of a folder with unittest and closes with the project's line, "NAME: N passed,
N failed" (a skipped test counts as failed: the tests need their Redis). By default the folder is this
one (clients/python/tests) and the name "python"; run-resilience-tests.sh gives clients/python/resilience
and "python-resilience", and tests/cluster.py reports its own suite through report()."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def report(suite: unittest.TestSuite, name: str) -> int:
    """Runs `suite`, prints a FAIL line per failed, erroring or skipped test and the closing line."""
    result = unittest.TextTestRunner(verbosity=1, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.skipped)
    for test, _ in result.failures + result.errors + result.skipped:
        print(f"FAIL {name}: {test.id()}")
    print(f"{name}: {result.testsRun - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(folder: str = HERE, name: str = "python") -> int:
    folder = os.path.abspath(folder)
    sys.path.insert(0, folder)
    suite = unittest.defaultTestLoader.discover(folder, pattern="test_*.py", top_level_dir=folder)
    return report(suite, name)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
