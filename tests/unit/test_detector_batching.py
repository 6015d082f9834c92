"""The detector's micro-batcher: concurrent callers share bounded backend calls."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from guard.detect.batching import MicroBatcher
from guard.errors import JudgeUnavailable, MalformedJudgeOutput


class Backend:
    """Doubles its inputs, recording every call's batch; can be told to fail or to block."""

    def __init__(self, *, fail_on: int | None = None) -> None:
        self.batches: list[list[int]] = []
        self.fail_on = fail_on
        self.gate: asyncio.Event | None = None
        self.started = asyncio.Event()

    async def run(self, items: Sequence[int]) -> list[int]:
        self.batches.append(list(items))
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_on is not None and self.fail_on in items:
            raise JudgeUnavailable(f"item {self.fail_on} broke the batch")
        return [2 * i for i in items]


def batcher(backend: Backend, *, max_batch: int = 16, wait_s: float = 0.005) -> MicroBatcher:
    return MicroBatcher[int, int](backend.run, max_batch=max_batch, max_wait_s=wait_s)


async def test_concurrent_messages_share_one_backend_call() -> None:
    backend = Backend()
    shared = batcher(backend, wait_s=0.05)
    results = await asyncio.gather(*(shared.submit([i, i + 100]) for i in range(8)))
    assert results == [[2 * i, 2 * (i + 100)] for i in range(8)]
    assert len(backend.batches) == 1
    assert sorted(backend.batches[0]) == sorted(i + d for i in range(8) for d in (0, 100))
    await shared.aclose()


async def test_no_batch_is_larger_than_max_batch() -> None:
    backend = Backend()
    shared = batcher(backend, max_batch=4)
    results = await asyncio.gather(*(shared.submit(list(range(i, i + 3))) for i in range(10)))
    assert results == [[2 * j for j in range(i, i + 3)] for i in range(10)]
    assert all(len(b) <= 4 for b in backend.batches)
    assert sum(len(b) for b in backend.batches) == 30
    await shared.aclose()


async def test_one_message_bigger_than_a_batch_is_split_and_kept_in_order() -> None:
    backend = Backend()
    shared = batcher(backend, max_batch=3)
    assert await shared.submit(list(range(10))) == [2 * i for i in range(10)]
    assert [len(b) for b in backend.batches] == [3, 3, 3, 1]
    await shared.aclose()


async def test_a_lone_item_waits_at_most_the_batch_wait() -> None:
    backend = Backend()
    shared = batcher(backend, wait_s=0.02)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await shared.submit([1]) == [2]
    assert loop.time() - started < 0.5  # the wait (20 ms) and scheduling, never an idle hang
    await shared.aclose()


async def test_a_full_batch_does_not_wait() -> None:
    backend = Backend()
    shared = batcher(backend, max_batch=2, wait_s=30.0)
    assert await asyncio.wait_for(shared.submit([1, 2]), timeout=5) == [2, 4]
    await shared.aclose()


async def test_an_error_goes_to_every_waiter_of_that_batch_and_only_to_them() -> None:
    backend = Backend(fail_on=3)
    shared = batcher(backend, max_batch=4, wait_s=0.05)
    outcomes = await asyncio.gather(
        shared.submit([1, 2]), shared.submit([3, 4]), shared.submit([5, 6]), return_exceptions=True
    )
    assert isinstance(outcomes[0], JudgeUnavailable)  # shared the batch with item 3
    assert isinstance(outcomes[1], JudgeUnavailable)
    assert outcomes[2] == [10, 12]  # the next batch
    await shared.aclose()


async def test_a_waiter_split_over_two_batches_fails_when_either_does() -> None:
    backend = Backend(fail_on=4)
    shared = batcher(backend, max_batch=3)
    with pytest.raises(JudgeUnavailable):
        await shared.submit([1, 2, 3, 4, 5])
    assert [len(b) for b in backend.batches] == [3, 2]
    await shared.aclose()


async def test_a_backend_that_answers_too_few_results_is_malformed() -> None:
    async def short(items: Sequence[int]) -> list[int]:
        return list(items)[:-1]

    shared = MicroBatcher[int, int](short, max_batch=4, max_wait_s=0)
    with pytest.raises(MalformedJudgeOutput):
        await shared.submit([1, 2])
    await shared.aclose()


async def test_a_cancelled_waiter_is_dropped_before_its_batch_runs() -> None:
    backend = Backend()
    shared = batcher(backend, wait_s=0.1)
    doomed = asyncio.create_task(shared.submit([7, 8]))
    await asyncio.sleep(0)
    doomed.cancel()
    assert await shared.submit([1]) == [2]
    assert backend.batches == [[1]]
    await shared.aclose()


async def test_cancelling_one_waiter_of_a_running_batch_does_not_cancel_the_others() -> None:
    backend = Backend()
    backend.gate = asyncio.Event()
    shared = batcher(backend, wait_s=0.01)
    first = asyncio.create_task(shared.submit([1]))
    second = asyncio.create_task(shared.submit([2]))
    await backend.started.wait()
    first.cancel()
    backend.gate.set()
    assert await second == [4]
    with pytest.raises(asyncio.CancelledError):
        await first
    await shared.aclose()


async def test_batches_run_one_at_a_time_and_items_gather_meanwhile() -> None:
    backend = Backend()
    backend.gate = asyncio.Event()
    shared = batcher(backend, wait_s=0)
    first = asyncio.create_task(shared.submit([1]))
    await backend.started.wait()
    later = [asyncio.create_task(shared.submit([i])) for i in range(2, 6)]
    await asyncio.sleep(0.02)
    assert len(backend.batches) == 1  # the first batch still runs: the others wait for it
    backend.gate.set()
    assert await first == [2]
    assert [await t for t in later] == [[4], [6], [8], [10]]
    assert backend.batches[1] == [2, 3, 4, 5]  # gathered while the first ran
    await shared.aclose()


async def test_closing_fails_what_is_queued_and_refuses_new_items() -> None:
    backend = Backend()
    shared = batcher(backend, wait_s=10.0)
    queued = asyncio.create_task(shared.submit([1]))
    await asyncio.sleep(0.01)
    await shared.aclose()
    with pytest.raises(JudgeUnavailable):
        await queued
    with pytest.raises(JudgeUnavailable):
        await shared.submit([2])
    assert backend.batches == []


async def test_an_empty_submit_makes_no_call() -> None:
    backend = Backend()
    shared = batcher(backend)
    assert await shared.submit([]) == []
    assert backend.batches == []
    await shared.aclose()


async def test_items_that_waited_for_a_running_batch_do_not_wait_again() -> None:
    backend = Backend()
    backend.gate = asyncio.Event()
    shared = batcher(backend, wait_s=0.3)
    first = asyncio.create_task(shared.submit([1]))
    await backend.started.wait()  # the first batch runs (and blocks)
    second = asyncio.create_task(shared.submit([2]))
    await asyncio.sleep(0.4)  # the second item has waited longer than the batch wait
    loop = asyncio.get_running_loop()
    released = loop.time()
    backend.gate.set()
    assert await second == [4]
    assert loop.time() - released < 0.2  # it ran at once, not after another 0.3 s
    assert await first == [2]
    await shared.aclose()
