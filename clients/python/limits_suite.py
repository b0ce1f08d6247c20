"""Runs python `limits`' own tests against redis+ratelimit://, by hand (run-limits-suite.sh starts the
server and finds limits' source). limits 2.8's tests are pytest tests parametrized over storage URIs
(redis://localhost:7379 among them) whose fixtures start servers in docker; this runs, without pytest,
every test of the listed modules that limits parametrizes with its plain redis:// storage, with our URI
in that place, and says which tests it did not run and why.

The idea: a tiny stand-in for the few pytest names the test modules use at import (mark.parametrize
records its cases, the rest do nothing), then each test method called with ("uri", "args", "fixture") as
limits would call it for redis://, the database flushed between tests. limits' code is read from its
source tree at run time and never copied here.

Usage: limits_suite.py LIMITS_SOURCE_DIR REDIS_PORT. Prints one line per test and
"limits-suite: N passed, N failed (N not run)"."""

import contextlib
import inspect
import sys
import traceback
import types
from typing import Any, Callable, Dict, Iterator, List, Tuple

import redis

import redis_ratelimit.adapters.limits_storage  # noqa: F401  registers redis+ratelimit://

# The test modules whose storage-parametrized tests are run; the URI they stand in for.
MODULES = ["tests.test_strategy", "tests.test_storage"]
REDIS_URI = "redis://localhost:7379"
PARAMS = ["uri", "args", "fixture"]


class Marks:
    """pytest.mark: parametrize records its cases on the function; any other mark leaves it as it is."""

    @staticmethod
    def parametrize(names: str, cases: List[Any]) -> Callable[[Any], Any]:
        def record(fn: Any) -> Any:
            fn.rl_cases = ([n.strip() for n in names.split(",")], cases)
            return fn
        return record

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: (a[0] if len(a) == 1 and callable(a[0]) and not k else (lambda fn: fn))


@contextlib.contextmanager
def raises(kind: type, match: Any = None) -> Iterator[None]:
    try:
        yield
    except kind:
        return
    raise AssertionError(f"did not raise {kind.__name__}")


def stand_in_pytest() -> types.ModuleType:
    pytest = types.ModuleType("pytest")
    pytest.mark = Marks()  # type: ignore[attr-defined]
    pytest.param = lambda *values, **_: values  # type: ignore[attr-defined]
    pytest.lazy_fixture = lambda name: None  # type: ignore[attr-defined]
    pytest.fixture = lambda *a, **k: (a[0] if a and callable(a[0]) else (lambda fn: fn))  # type: ignore[attr-defined]
    pytest.raises = raises  # type: ignore[attr-defined]
    return pytest


def tests_of(module: Any) -> Iterator[Tuple[str, Any, Any]]:
    """(name, class, method) of every test method of the module's Test* classes."""
    for cls_name, cls in inspect.getmembers(module, inspect.isclass):
        if cls_name.startswith("Test") and cls.__module__ == module.__name__:
            for name, fn in inspect.getmembers(cls, inspect.isfunction):
                if name.startswith("test"):
                    yield f"{module.__name__}::{cls_name}::{name}", cls, fn


def redis_case(fn: Any) -> Any:
    """The (uri, args, fixture) case limits runs for its redis:// storage, or None."""
    names, cases = getattr(inspect.unwrap(fn), "rl_cases", None) or getattr(fn, "rl_cases", ([], []))
    if names != PARAMS:
        return None
    return next((case for case in cases if case and case[0] == REDIS_URI), None)


def main(source: str, port: int) -> int:
    sys.modules["pytest"] = stand_in_pytest()
    sys.path.insert(0, source)
    uri = f"redis+ratelimit://127.0.0.1:{port}"
    server = redis.Redis(host="127.0.0.1", port=port)
    passed, failed, not_run = 0, 0, 0
    for module_name in MODULES:
        module = __import__(module_name, fromlist=["*"])
        for name, cls, fn in tests_of(module):
            case = redis_case(fn)
            if case is None:
                not_run += 1
                print(f"not run  {name}: not parametrized with limits' redis:// storage")
                continue
            server.flushall()
            try:
                fn(cls(), uri, dict(case[1]), None)
            except Exception:
                failed += 1
                print(f"FAIL     {name}\n{traceback.format_exc()}")
            else:
                passed += 1
                print(f"ok       {name}")
    print(f"limits-suite: {passed} passed, {failed} failed ({not_run} not run)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
