"""A replica's share of the fleet's limits over time: lowered at once, raised one window late.

A replica that gains partitions does not know what their previous owner spent in the current
window (a replica that left, or was SIGKILLed, took its count with it). So a gain is assumed
spent: the share that applies at any moment is the lowest share held during the last
``HANDOVER_S`` (the rate limits' sliding window), and for a tumbling cost window the lowest held
since that window began (within the same ``HANDOVER_S``). A loss applies at once. As long as the
shares the replicas hold at any one moment add up to at most 1 (each owns its partitions), the
fleet's calls in any 60 s and its spend in any minute window stay within the fleet's limits.

A replica's first assignment is a gain like any other, from nothing: unless it takes every
partition (the fleet restarted whole, so nobody else spent: the windows start afresh, as a
single process always did), it waits out ``HANDOVER_S`` before spending.
"""

from __future__ import annotations

from collections import deque

from guard.budgets.clock import Clock

HANDOVER_S = 60.0  # how long a previous owner's spend may count in a window: the rate window


class ShareHistory:
    """The shares this replica held over the last ``HANDOVER_S``, and the one that applies."""

    def __init__(self, clock: Clock, share: float = 1.0) -> None:
        self._clock = clock
        self._changes: deque[tuple[float, float]] = deque([(float("-inf"), share)])
        self._begun = False

    def set(self, share: float) -> None:
        """Hold ``share`` from now on (a first call, the first assignment, counts as a gain from
        nothing unless ``share`` is the whole)."""
        if not self._begun:
            self._begun = True
            self._changes = deque([(float("-inf"), 1.0 if share >= 1.0 else 0.0)])
        now = self._clock.now()
        self._changes.append((now, share))
        self._prune(now)

    @property
    def held(self) -> float:
        """The share assigned now (what :meth:`lowest` rises to after ``HANDOVER_S``)."""
        return self._changes[-1][1]

    def lowest(self, since: float = float("-inf")) -> float:
        """The share that applies now: the lowest held since ``since`` and within the last
        ``HANDOVER_S``."""
        now = self._clock.now()
        self._prune(now)
        start = max(since, now - HANDOVER_S)
        low = self._changes[0][1]
        for at, share in self._changes:  # the share in force at ``start``, and every later one
            low = share if at <= start else min(low, share)
        return low

    def rises_in(self) -> float | None:
        """Seconds until the share that applies may rise (None: it is the share held)."""
        now = self._clock.now()
        if self.lowest() >= self.held:
            return None
        later = [at for at, _ in self._changes if at > now - HANDOVER_S]
        return max(0.0, later[0] + HANDOVER_S - now) if later else None

    def _prune(self, now: float) -> None:
        """Forget the shares that stopped applying more than ``HANDOVER_S`` ago."""
        while len(self._changes) > 1 and self._changes[1][0] <= now - HANDOVER_S:
            self._changes.popleft()
