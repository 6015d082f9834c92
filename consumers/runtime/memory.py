"""What a message costs once parsed, and a gate that bounds it over the messages in work.

A record's bytes are not what it costs: parsing makes Python objects of it. 480 KB of 34,500 tiny
documents parse into ~18 MB of objects (about 520 bytes a JSON object, 60 a string), so 200 such
messages in flight under a slow judge took 1,443 MB while the byte budget counted 96 MB.
:func:`parsed_bytes` estimates the parsed cost from the raw bytes alone (a count of ``{`` and
``"``, memchr-fast), before anything is parsed; :class:`MemoryGate` lets a message parse only
when the estimates of the messages in work leave room for its own, in arrival order. A message
larger than the whole gate runs alone, so every message is judged.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

OBJECT_MEMORY = 520  # bytes of Python objects per JSON object once parsed into the models
STRING_MEMORY = 60  # per JSON string, besides its characters


def parsed_bytes(value: bytes | None) -> int:
    """The memory ``value`` takes once parsed and validated, estimated from its bytes."""
    if not value:
        return 0
    return len(value) + OBJECT_MEMORY * value.count(b"{") + STRING_MEMORY * (value.count(b'"') // 2)


class MemoryGate:
    """A FIFO weighted semaphore over ``capacity`` bytes; a request is capped at the capacity."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held = 0
        self.peak = 0
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    @contextlib.asynccontextmanager
    async def hold(self, size: int) -> AsyncIterator[None]:
        size = min(max(size, 0), self.capacity)
        await self._acquire(size)
        try:
            yield
        finally:
            self._release(size)

    async def _acquire(self, size: int) -> None:
        if not self._waiters and self.held + size <= self.capacity:
            self._take(size)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (size, future)
        self._waiters.append(entry)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self._release(size)  # granted as it was cancelled: give it back
            else:
                with contextlib.suppress(ValueError):  # already passed over by _wake
                    self._waiters.remove(entry)
                self._wake()
            raise

    def _take(self, size: int) -> None:
        self.held += size
        self.peak = max(self.peak, self.held)

    def _release(self, size: int) -> None:
        self.held -= size
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.held + self._waiters[0][0] <= self.capacity:
            size, future = self._waiters.popleft()
            if not future.done():
                self._take(size)
                future.set_result(None)
