"""The Python blocks of a page, to run them as the page shows them: `blocks(path, "python")` gives the
code of each ```python fence (exactly that info string: "```python cluster" is another kind), and
`run_block(code, **clients)` runs one in a fresh namespace with the named client classes (redis.Redis,
redis.asyncio.Redis, redis.cluster.RedisCluster) replaced by ones that connect to the test's server, so
that `redis.Redis()` on the page means the server under test."""

import re
from typing import Any, Callable, Dict, List
from unittest import mock


def blocks(path: str, info: str) -> List[str]:
    with open(path) as page:
        text = page.read()
    return re.findall(r"^```" + re.escape(info) + r"\n(.*?)^```$", text, flags=re.S | re.M)


def run_block(code: str, classes: Dict[str, Callable[..., Any]]) -> None:
    """Exec `code` with each "module.Class" of `classes` replaced by the given factory."""
    patches = []
    for dotted, factory in classes.items():
        module, name = dotted.rsplit(".", 1)
        patches.append(mock.patch(f"{module}.{name}", factory))
    for patch in patches:
        patch.start()
    try:
        exec(compile(code, "<README block>", "exec"), {"__name__": "readme_block"})
    finally:
        for patch in reversed(patches):
            patch.stop()
