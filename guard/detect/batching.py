"""A micro-batcher: the pairs (or span inputs) of concurrent messages, in shared backend calls.

Each :meth:`MicroBatcher.submit` queues its items and waits for their results. One dispatcher
task takes up to ``max_batch`` queued items at a time, waiting at most ``max_wait_s`` after the
oldest arrived for others to join (not at all once a batch is full), and runs them in one call
of ``run``. A model on a CPU or a GPU does far more work per second in batches, and one message
often brings fewer pairs than a batch holds.

* **Errors** go to every waiter of the failed batch (and only to them): a waiter whose items
  were split over two batches fails when either does.
* **Cancellation**: a cancelled waiter's queued items are dropped before they run; a batch
  already running completes for the others (it runs in the dispatcher, not in any waiter).
* **Bounds**: a batch holds at most ``max_batch`` items; at most ``max_in_flight`` batches run
  at once; queued items are bounded by the callers (one message's pairs each).
* :meth:`aclose` fails every queued item with ``JudgeUnavailable`` and waits for running
  batches.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

from guard.errors import JudgeUnavailable, MalformedJudgeOutput

In = TypeVar("In")
Out = TypeVar("Out")


@dataclass
class _Entry(Generic[In, Out]):
    item: In
    future: asyncio.Future[Out] = field(repr=False)
    arrived: float = 0.0  # the loop's clock when it was queued


class MicroBatcher(Generic[In, Out]):
    """Gathers items from concurrent callers into calls of ``run`` (see the module docstring).

    ``run`` gets at most ``max_batch`` items and returns one result per item, in order."""

    def __init__(
        self,
        run: Callable[[Sequence[In]], Awaitable[Sequence[Out]]],
        *,
        max_batch: int,
        max_wait_s: float,
        max_in_flight: int = 1,
        name: str = "detector",
    ) -> None:
        if max_batch < 1 or max_wait_s < 0 or max_in_flight < 1:
            raise ValueError("max_batch and max_in_flight must be >= 1, max_wait_s >= 0")
        self._run = run
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.name = name
        self._queue: deque[_Entry[In, Out]] = deque()
        self._arrived = asyncio.Event()
        self._slots = asyncio.Semaphore(max_in_flight)
        self._running: set[asyncio.Task[None]] = set()
        self._dispatcher: asyncio.Task[None] | None = None
        self._closed = False
        self.calls = 0  # backend calls made (for tests and metrics)

    async def submit(self, items: Sequence[In]) -> list[Out]:
        """The results of ``items``, in order, once the batches holding them have run."""
        if self._closed:
            raise JudgeUnavailable(f"{self.name}: the batcher is closed")
        if not items:
            return []
        loop = asyncio.get_running_loop()
        now = loop.time()
        entries = [_Entry[In, Out](item, loop.create_future(), now) for item in items]
        self._queue.extend(entries)
        self._arrived.set()
        self._ensure_dispatcher()
        futures = [e.future for e in entries]
        try:
            outcomes = await asyncio.gather(*futures, return_exceptions=True)
        except asyncio.CancelledError:
            for f in futures:
                f.cancel()  # queued ones are skipped; running ones finish for the others
            raise
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return cast(list[Out], outcomes)  # no exception among them: all are results

    def _ensure_dispatcher(self) -> None:
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.create_task(self._dispatch(), name=f"{self.name}-batcher")

    async def _dispatch(self) -> None:
        while not self._closed:
            self._drop_cancelled()
            if not self._queue:
                self._arrived.clear()
                await self._arrived.wait()
                continue
            await self._gather_wait()
            await self._slots.acquire()
            batch = self._take()
            if not batch:
                self._slots.release()
                continue
            task = asyncio.create_task(self._run_batch(batch))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _gather_wait(self) -> None:
        """Until the queue holds a full batch, or its oldest item has waited ``max_wait_s``."""
        while self._queue and len(self._queue) < self.max_batch:
            deadline = self._queue[0].arrived + self.max_wait_s
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)
            self._drop_cancelled()

    def _drop_cancelled(self) -> None:
        live = [e for e in self._queue if not e.future.done()]
        if len(live) != len(self._queue):
            self._queue = deque(live)

    def _take(self) -> list[_Entry[In, Out]]:
        batch: list[_Entry[In, Out]] = []
        while self._queue and len(batch) < self.max_batch:
            entry = self._queue.popleft()
            if not entry.future.done():
                batch.append(entry)
        return batch

    async def _run_batch(self, batch: list[_Entry[In, Out]]) -> None:
        try:
            self.calls += 1
            results = await self._run([e.item for e in batch])
            if len(results) != len(batch):
                raise MalformedJudgeOutput(
                    f"{self.name}: the backend answered {len(results)} of {len(batch)} items"
                )
        except BaseException as exc:  # every waiter of this batch gets it, cancellation too
            _fail(batch, exc)
            if not isinstance(exc, Exception):
                raise
        else:
            for entry, result in zip(batch, results, strict=True):
                if not entry.future.done():
                    entry.future.set_result(result)
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        """Fail what is queued, stop the dispatcher, and wait for the batches running."""
        self._closed = True
        _fail(list(self._queue), JudgeUnavailable(f"{self.name}: the batcher is closed"))
        self._queue.clear()
        if self._dispatcher is not None:
            self._dispatcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._dispatcher
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)


def _fail(entries: Sequence[_Entry[In, Out]], exc: BaseException) -> None:
    for entry in entries:
        if not entry.future.done():
            if isinstance(exc, asyncio.CancelledError):
                entry.future.cancel()
            else:
                entry.future.set_exception(exc)
