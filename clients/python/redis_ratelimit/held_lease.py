"""A concurrency lease held for the length of a block: `with lease(r, "jobs", 5, 30_000) as held:` takes a
lease (RL.ACQUIRE), renews it (RL.RENEW) from a daemon thread while the block runs, and gives it back
(RL.RELEASE) when the block ends, also when it raises. A denial raises LeaseDenied, carrying the
AcquireResult, and the block does not run. redis_ratelimit.asyncio.lease is the same for `async with`,
renewing from an asyncio task.

The idea: a lease must outlive slow work (so it is renewed well before it expires: every lease_ms / 3
by default) and must not outlive a crashed worker (so it still expires: a process that dies stops
renewing). A lease can still be lost while the block runs (the server was unreachable for longer than
lease_ms, or someone released it by hand): the renewer sees RL.RENEW answer 0, marks the HeldLease
`lost` and stops; the block can look at `held.lost` before a step that needs the slot."""

import threading
from dataclasses import dataclass
from types import TracebackType
from typing import Optional, Type

from ._call import SyncClient
from .limits import AcquireResult, LeaseId, acquire, release, renew


class LeaseDenied(Exception):
    """The lease was not granted: `result` is RL.ACQUIRE's answer (its retry_after_ms says when a unit
    frees up, -1 if the cost can never fit)."""

    def __init__(self, key: str, result: AcquireResult) -> None:
        super().__init__(f"lease on {key!r} denied (limit {result.limit}, remaining {result.remaining}, "
                         f"retry after {result.retry_after_ms} ms)")
        self.key = key
        self.result = result


@dataclass
class HeldLease:
    """A lease held by a `with lease(...)` block: its key and id, the acquire's answer, and what the
    renewer saw: how many renewals succeeded, whether the lease was lost (RL.RENEW said it is no longer
    held; renewing stopped), the last error a renewal met (it is tried again at the next turn), and,
    after the block, whether RL.RELEASE found it still held."""
    key: str
    lease_id: str
    lease_ms: int
    result: AcquireResult
    renewals: int = 0
    lost: bool = False
    renew_error: Optional[BaseException] = None
    released: Optional[bool] = None


def renew_every_s(lease_ms: int, renew_every_ms: Optional[int]) -> float:
    """Seconds between renewals: renew_every_ms if given, else a third of the lease, so that two
    renewals can fail before it expires."""
    every_ms = renew_every_ms if renew_every_ms is not None else max(1, lease_ms // 3)
    if every_ms <= 0:
        raise ValueError(f"renew_every_ms: must be positive, not {every_ms}")
    return every_ms / 1000


def held_or_denied(key: str, lease_ms: int, result: AcquireResult) -> HeldLease:
    """The HeldLease of a granted acquire, or LeaseDenied."""
    if not result.allowed or result.lease is None:
        raise LeaseDenied(key, result)
    return HeldLease(key, result.lease, lease_ms, result)


def renewed(held: HeldLease, still_held: bool) -> bool:
    """Record one renewal's answer; False when the lease is lost and renewing must stop."""
    if still_held:
        held.renewals += 1
        return True
    held.lost = True
    return False


class LeaseScope:
    """The context manager lease() returns (sync: `with`)."""

    def __init__(self, client: SyncClient, key: str, limit: int, lease_ms: int, cost: int,
                 lease_id: Optional[LeaseId], wait_ms: Optional[int], renew_every_ms: Optional[int]) -> None:
        self.client, self.key, self.limit, self.lease_ms = client, key, limit, lease_ms
        self.cost, self.lease_id, self.wait_ms = cost, lease_id, wait_ms
        self.every_s = renew_every_s(lease_ms, renew_every_ms)
        self.stop = threading.Event()
        self.held: Optional[HeldLease] = None
        self.renewer: Optional[threading.Thread] = None

    def __enter__(self) -> HeldLease:
        result = acquire(self.client, self.key, self.limit, self.lease_ms, self.cost, self.lease_id, self.wait_ms)
        self.held = held_or_denied(self.key, self.lease_ms, result)
        self.renewer = threading.Thread(target=self.renew_until_stopped, args=(self.held,),
                                        name=f"lease-renewer {self.key}", daemon=True)
        self.renewer.start()
        return self.held

    def renew_until_stopped(self, held: HeldLease) -> None:
        while not self.stop.wait(self.every_s):
            try:
                if not renewed(held, renew(self.client, self.key, held.lease_id, self.lease_ms)):
                    return
            except Exception as err:  # the server unreachable for a moment: try again next turn
                held.renew_error = err

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException],
                 trace: Optional[TracebackType]) -> None:
        self.stop.set()
        if self.renewer is not None:
            self.renewer.join()
        if self.held is not None:
            self.held.released = release(self.client, self.key, self.held.lease_id)


def lease(client: SyncClient, key: str, limit: int, lease_ms: int, *, cost: int = 1,
          lease_id: Optional[LeaseId] = None, wait_ms: Optional[int] = None,
          renew_every_ms: Optional[int] = None) -> LeaseScope:
    """A lease of `cost` units on `key` (at most `limit` held at once) for a `with` block: acquired on
    entry (wait_ms waits server-side for room; lease_id names it), renewed to `lease_ms` every
    renew_every_ms (default lease_ms / 3) by a daemon thread while the block runs, released on exit.
    `with lease(...) as held:` gives a HeldLease; a denial raises LeaseDenied before the block."""
    return LeaseScope(client, key, limit, lease_ms, cost, lease_id, wait_ms, renew_every_ms)
