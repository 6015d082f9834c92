"""Time for the budget layers: a real clock, and a virtual one so tests roll windows without
sleeping."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """Seconds since the Unix epoch, and a way to wait."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """Wall-clock time (so day windows start at midnight UTC) and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class VirtualClock:
    """A clock that only moves when told to, or when someone sleeps on it.

    ``sleep(s)`` yields to the event loop once, then moves time forward to at least the
    sleeper's wake-up time, so a test can cross minute and day windows in milliseconds.
    Time never goes backwards; concurrent sleepers share the jump.
    """

    def __init__(self, start: float = 1_000_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += max(0.0, seconds)

    async def sleep(self, seconds: float) -> None:
        wake_at = self._now + max(0.0, seconds)
        await asyncio.sleep(0)
        self._now = max(self._now, wake_at)
