"""A storage of the python `limits` library (2.8, Debian's python3-limits) backed by the redis-ratelimit
module, registered under the URI schemes redis+ratelimit:// and rediss+ratelimit:// (TLS). Importing this
module registers it; then Flask-Limiter (and SlowAPI, and limits' own storage_from_string) take the URI:

    import redis_ratelimit.adapters.limits_storage  # registers the schemes
    limiter = Limiter(get_remote_address, app=app, storage_uri="redis+ratelimit://127.0.0.1:6379")

What runs where (docs/migrating.md has every difference, with numbers):
- the moving window (limits' MovingWindowRateLimiter): each `acquire_entry` is one RL.ALL call over one
  RL.SLIDINGLOG clause. RL.ALL denies all or nothing, so a refused entry is not logged, as in limits (a bare
  RL.SLIDINGLOG logs refused attempts too); the server's clock decides, not each web worker's.
  `get_moving_window` reads the same log with RL.SLIDINGLOG_RO (COST 0) and the log's newest entry, in
  one MULTI, so the count and the time it reports belong to one state.
- the fixed window (FixedWindowRateLimiter and its elastic-expiry variant): limits hands `incr` only the
  key, the window and the cost, never the limit, so the module has nothing to decide with: the counter
  is a plain Redis string, INCRBY and EXPIRE (NX unless the expiry is elastic) in one MULTI, the same
  data limits' own redis:// storage writes.

The idea: limits' strategies ask a storage small questions (add to a counter, take an entry from a log)
and compare the answers with the limit themselves; where the question carries the limit, the module can
answer it whole and atomically, and then the storage asks the module."""

import time
from typing import Any, Callable, List, Optional, Tuple, TypeVar, Union
from urllib.parse import urlsplit, urlunsplit

import redis
from limits.errors import ConfigurationError
from limits.storage import MovingWindowSupport, Storage

from ..limits import SlidingLog, command_args, limit_all, parse_result

T = TypeVar("T")

# Our scheme -> the redis-py scheme it stands for.
SCHEMES = {"redis+ratelimit": "redis", "rediss+ratelimit": "rediss"}
# RL.SLIDINGLOG's largest limit and cost (the log keeps at most limit + 1 units: docs/commands.md).
LOG_MAX = 100_000
# The keys limits writes: every RateLimitItem's namespace is "LIMITER" (limits.limits.RateLimitItem).
LIMITS_KEYS = "LIMITER*"
# How many keys one reset() SCAN step and one UNLINK take.
RESET_BATCH = 1000


def redis_url(uri: str) -> str:
    """The redis-py URL a redis+ratelimit:// URI stands for (host, port, db, password and query kept)."""
    parts = urlsplit(uri)
    if parts.scheme not in SCHEMES:
        raise ConfigurationError(f"uri: {uri!r} is not a {' or '.join(s + '://' for s in SCHEMES)} URI")
    return urlunsplit((SCHEMES[parts.scheme],) + tuple(parts[1:]))


def log_spec(limit: int, expiry: int) -> SlidingLog:
    """RL.SLIDINGLOG's parameters for limits' `limit` entries per `expiry` seconds. Its range is checked
    here, naming the limit, since a 200000/day limit would otherwise surface as the module's error about
    a LIMIT clause the application never wrote."""
    if not 1 <= limit <= LOG_MAX:
        raise ValueError(f"limit: the moving window takes 1 to {LOG_MAX} entries per window "
                         f"(RL.SLIDINGLOG's log), not {limit}")
    if expiry < 1:
        raise ValueError(f"expiry: the moving window needs at least 1 second, not {expiry}")
    return SlidingLog(limit, expiry * 1000)


class RateLimitStorage(Storage, MovingWindowSupport):
    """limits' Storage and MovingWindowSupport over the redis-ratelimit module (see the module's
    docstring). `uri`: redis+ratelimit://[:password@]host:port[/db] or rediss+ratelimit://...; the
    other keywords go to redis.Redis, as with limits' own redis:// storage."""

    STORAGE_SCHEME = list(SCHEMES)

    def __init__(self, uri: str, connection_pool: Optional[redis.ConnectionPool] = None,
                 **options: Union[float, str, bool]) -> None:
        super().__init__(uri, **options)
        if connection_pool is not None:
            redis_url(uri)  # still refuse a URI of another scheme
            self.storage = redis.Redis(connection_pool=connection_pool, **options)
        else:
            self.storage = redis.from_url(redis_url(uri), **options)
        self.uri = uri

    # The fixed window: plain counters (limits never hands incr the limit).

    def incr(self, key: str, expiry: int, elastic_expiry: bool = False, amount: int = 1) -> int:
        """Adds `amount` to the window's counter and returns the new count. The window starts with the
        first hit (EXPIRE NX: only a counter without a TTL gets one) or, elastic, restarts with every hit;
        INCRBY and EXPIRE run in one MULTI, so no counter is left without its expiry."""
        with self.storage.pipeline(transaction=True) as pipe:
            pipe.incrby(key, amount)
            pipe.expire(key, expiry, nx=not elastic_expiry)
            count, _ = pipe.execute()
        return int(count)

    def get(self, key: str) -> int:
        return int(self.storage.get(key) or 0)

    def get_expiry(self, key: str) -> int:
        """When the window's counter expires, in Unix seconds (PEXPIRETIME: the server's own instant);
        now when there is no window."""
        expires_ms = int(self.storage.execute_command("PEXPIRETIME", key))
        return expires_ms // 1000 if expires_ms >= 0 else int(time.time())

    # The moving window: the module's sliding log.

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        """One RL.ALL call over RL.SLIDINGLOG: `amount` entries are logged at the server's now if the
        log's last `expiry` seconds hold at most `limit - amount`, else nothing is logged."""
        spec = log_spec(limit, expiry)
        if amount > limit:
            # Never admitted, and the module logs nothing for it either; asked anyway it would refuse a
            # cost above its range (100000) as an argument error instead of answering no.
            return False
        return self._module(lambda: limit_all(self.storage, [(key, spec)], cost=amount).allowed)

    def get_moving_window(self, key: str, limit: int, expiry: int) -> Tuple[int, int]:
        """(the Unix second of the newest entry in the window, the entries in the window), or (now, 0)
        when the window is empty: limits' MovingWindowRateLimiter then reports `reset` as that second
        plus the window, when the window is empty again. Read-only: RL.SLIDINGLOG_RO COST 0 (what is
        left) and the newest member's score (its time in microseconds), in one MULTI."""
        spec = log_spec(limit, expiry)

        def read() -> Tuple[int, int]:
            with self.storage.pipeline(transaction=True) as pipe:
                pipe.execute_command(*command_args(key, spec, cost=0, readonly=True))
                pipe.zrange(key, -1, -1, withscores=True)
                reply, newest = pipe.execute()
            count = limit - parse_result(reply).remaining
            if count <= 0 or not newest:
                return int(time.time()), 0
            return int(newest[0][1]) // 1_000_000, count

        return self._module(read)

    # Housekeeping.

    def clear(self, key: str) -> None:
        """Forgets one limit's state (a counter or a log: both are one key)."""
        self.storage.delete(key)

    def reset(self) -> Optional[int]:
        """Deletes every key limits wrote (LIMITER*), by SCAN and UNLINK in batches, so a large database
        is never blocked by one call (limits' redis:// storage runs KEYS in a script); the number deleted.
        Keys written while it runs may survive it."""
        deleted = 0
        batch: List[Any] = []
        for key in self.storage.scan_iter(match=LIMITS_KEYS, count=RESET_BATCH):
            batch.append(key)
            if len(batch) == RESET_BATCH:
                deleted += int(self.storage.unlink(*batch))
                batch = []
        if batch:
            deleted += int(self.storage.unlink(*batch))
        return deleted

    def check(self) -> bool:
        """Healthy: the server answers and has the module (Flask-Limiter asks this before it leaves its
        in-memory fallback)."""
        try:
            # "COMMAND INFO" as one word: redis-py then hands back the raw reply ([None] for a command
            # the server lacks), where its parser for COMMAND would fail on the None.
            return bool(self.storage.ping()) and self.storage.execute_command("COMMAND INFO", "RL.ALL")[0] is not None
        except redis.RedisError:
            return False

    def _module(self, decide: Callable[[], T]) -> T:
        """Runs a module call; a server without the module is a configuration error saying so, not an
        'unknown command' from deep inside a request."""
        try:
            return decide()
        except redis.ResponseError as err:
            if str(err).lower().startswith("unknown command"):
                raise ConfigurationError(f"{self.uri}: the server has no redis-ratelimit module "
                                         f"(load it with --loadmodule ratelimit.so): {err}") from err
            raise
