"""The Lua mode: the limiters without the module on the server (managed Redis and Valkey services, where
MODULE LOAD is not allowed). `with_mode(client, "auto" | "module" | "lua")` wraps a redis.Redis; every
call of the package takes the wrapper in place of the client (`limit(with_mode(r), key, Token(...))`);
redis_ratelimit.asyncio.with_mode does the same for a redis.asyncio.Redis (AsyncModeClient).

The idea: the module's commands and the script take the same arguments after their keys and answer the
same replies, so the wrapper only rewrites the words of a call: `RL.TOKEN key args` becomes `EVALSHA sha 1
key RL.TOKEN "" args`, `RL.ALL numkeys keys args` becomes `EVALSHA sha numkeys keys RL.ALL "" args`, and the
package's parsers read the reply as the module's. The script (ratelimit.lua, a copy of the project's one
script) runs RL.TOKEN, RL.LEAKY, RL.WINDOW (FIXED, SLIDING), RL.SLIDINGLOG and RL.ALL over them, with COST
and DRYRUN; anything else is refused by name. "auto" asks the server once per wrapper whether it has the
module (`COMMAND INFO rl.token` is empty without it). The script is sent by its SHA1 and loaded (SCRIPT LOAD)
only when the server answers NOSCRIPT: once, and again after a restart or SCRIPT FLUSH."""

import hashlib
import os
from typing import Any, List, Optional, Tuple

from redis.exceptions import NoScriptError, ResponseError

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ratelimit.lua"), "rb") as _source:
    SCRIPT = _source.read()
SHA = hashlib.sha1(SCRIPT).hexdigest()

MODES = ("auto", "module", "lua")
SINGLE = ("RL.TOKEN", "RL.LEAKY", "RL.WINDOW", "RL.SLIDINGLOG")

# COMMAND INFO rl.token, asked from a script: redis-py's parser of COMMAND replies fails on the empty
# answer a server without the module gives ([nil]), so the script hands back 1 (the module) or 0.
DETECT = ("EVAL", "return redis.call('COMMAND', 'INFO', 'rl.token')[1] and 1 or 0", 0)


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode: must be 'auto', 'module' or 'lua', not {mode!r}")
    return mode


def script_args(args: Tuple[Any, ...], now_ms: Optional[int]) -> List[Any]:
    """A module command's words as EVALSHA's (EVALSHA_RO for a _RO form). now_ms is for tests only: the
    time the script decides at (the module's test clock), instead of the server's TIME."""
    name = str(args[0]).upper()
    base = name[:-3] if name.endswith("_RO") else name
    if base == "RL.ALL":
        numkeys = int(args[1])
        keys, rest = list(args[2:2 + numkeys]), list(args[2 + numkeys:])
    elif base in SINGLE:
        numkeys, keys, rest = 1, [args[1]], list(args[2:])
    else:
        raise ValueError(f"{args[0]}: the Lua mode runs RL.TOKEN, RL.LEAKY, RL.WINDOW, RL.SLIDINGLOG and RL.ALL "
                         "(and their _RO forms); load the module for the others")
    evalsha = "EVALSHA_RO" if name.endswith("_RO") else "EVALSHA"
    return [evalsha, SHA, numkeys, *keys, name, "" if now_ms is None else now_ms, *rest]


def is_noscript(error: ResponseError) -> bool:
    """The server does not hold the script (redis-py raises NoScriptError for NOSCRIPT)."""
    return isinstance(error, NoScriptError) or str(error).startswith("NOSCRIPT")


class _Mode:
    """What both wrappers hold: the client, the mode, whether the script runs (None: not asked yet)."""

    def __init__(self, client: Any, mode: str = "auto") -> None:
        self.client = client
        self.mode = check_mode(mode)
        self._lua: Optional[bool] = None if mode == "auto" else mode == "lua"
        self.test_now_ms: Optional[int] = None


class ModeClient(_Mode):
    """A redis.Redis (or anything with execute_command) whose limiter calls go to the module or to the
    script, by mode. Other commands pass through. `test_now_ms`, None in use, is the time a test makes
    the script decide at (its equality tests follow the module's frozen clock with it)."""

    def uses_lua(self) -> bool:
        """Whether calls run as the script: asked of the server once, in auto mode."""
        if self._lua is None:
            self._lua = int(self.client.execute_command(*DETECT)) == 0
        return self._lua

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if not self.uses_lua():
            return self.client.execute_command(*args, **options)
        words = script_args(args, self.test_now_ms)
        try:
            return self.client.execute_command(*words)
        except ResponseError as error:
            if not is_noscript(error):
                raise
            self.client.execute_command("SCRIPT", "LOAD", SCRIPT)
            return self.client.execute_command(*words)


class AsyncModeClient(_Mode):
    """ModeClient for redis.asyncio.Redis: the same words, awaited."""

    async def uses_lua(self) -> bool:
        if self._lua is None:
            self._lua = int(await self.client.execute_command(*DETECT)) == 0
        return self._lua

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        if not await self.uses_lua():
            return await self.client.execute_command(*args, **options)
        words = script_args(args, self.test_now_ms)
        try:
            return await self.client.execute_command(*words)
        except ResponseError as error:
            if not is_noscript(error):
                raise
            await self.client.execute_command("SCRIPT", "LOAD", SCRIPT)
            return await self.client.execute_command(*words)


def with_mode(client: Any, mode: str = "auto") -> ModeClient:
    """`client` for the package's calls in a mode: "module" (the RL.* commands), "lua" (the script, on a
    server without the module) or "auto" (the module when the server has it, else the script)."""
    return ModeClient(client, mode)
