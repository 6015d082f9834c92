"""What parsing makes of a message counts against ``max_buffered_bytes`` (issue 29: 200 messages
of 34,500 tiny documents took 1,443 MB while the byte budget counted their 96 MB)."""

from __future__ import annotations

import asyncio
import tracemalloc

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from consumers.runtime.memory import MemoryGate, parsed_bytes
from guard.engine import Guard
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from tests.unit.fakekafka import FakeCluster, until
from tests.unit.test_delivery import running

pytestmark = pytest.mark.timeout(60)


def tiny_documents(n: int, i: int = 0) -> bytes:
    return orjson.dumps(
        {
            "id": f"m-{i}",
            "output": "a0 is listed.",
            "context": [{"text": f"a{j}"} for j in range(n)],
        }
    )


@pytest.mark.parametrize(
    "value",
    [
        tiny_documents(20_000),
        orjson.dumps(
            {
                "output": "x",
                "messages": [{"role": "user", "content": f"hi {j}"} for j in range(8000)],
            }
        ),
        orjson.dumps({"output": "x", "context": [f"p{j}" for j in range(30_000)]}),
        orjson.dumps({"output": "x", "context": "word " * 100_000}),
    ],
)
def test_the_estimate_covers_what_parsing_takes(value: bytes) -> None:
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        request = guard.parse(orjson.loads(value))
        taken = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert request.output
    assert parsed_bytes(value) >= taken
    assert parsed_bytes(value) <= 3 * taken + len(value)  # and not wildly above it


def test_an_ordinary_request_costs_about_its_bytes() -> None:
    value = orjson.dumps({"output": "The tower is in Paris.", "context": "It is in Paris. " * 100})
    assert parsed_bytes(value) < len(value) + 1000


async def test_the_gate_admits_in_order_within_its_capacity() -> None:
    gate = MemoryGate(100)
    order: list[str] = []
    release = asyncio.Event()

    async def work(name: str, size: int) -> None:
        async with gate.hold(size):
            order.append(name)
            assert gate.held <= gate.capacity
            await release.wait()

    tasks = [
        asyncio.create_task(work(n, s)) for n, s in (("a", 60), ("b", 60), ("c", 10), ("huge", 500))
    ]
    await until(lambda: order == ["a"], "a admitted")
    await asyncio.sleep(0)
    assert order == ["a"]  # b waits, and c behind it (first come, first served)
    release.set()
    await asyncio.gather(*tasks)
    assert order == ["a", "b", "c", "huge"]  # one larger than the gate runs alone
    assert gate.held == 0
    assert gate.peak <= 100


async def test_a_cancelled_waiter_gives_its_place_back() -> None:
    gate = MemoryGate(100)
    async with gate.hold(100):
        waiter = asyncio.create_task(gate.hold(50).__aenter__())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
    async with gate.hold(100):
        assert gate.held == 100
    assert gate.held == 0


@given(st.lists(st.integers(min_value=0, max_value=300), max_size=30), st.integers(1, 200))
def test_the_gate_never_holds_more_than_its_capacity(sizes: list[int], capacity: int) -> None:
    async def run() -> int:
        gate = MemoryGate(capacity)

        async def work(size: int) -> None:
            async with gate.hold(size):
                assert gate.held <= capacity
                await asyncio.sleep(0)

        await asyncio.gather(*(work(s) for s in sizes))
        return gate.held

    assert asyncio.run(run()) == 0


async def test_big_parsed_messages_are_judged_a_few_at_a_time_and_all_judged() -> None:
    """Each message is 150 KB that parses into ~5 MB: with an 8 MiB budget and a slow judge,
    at most one is judged at a time (the raw bytes alone would have let 50 in), and all are."""
    cluster = FakeCluster(partitions=1)
    judge = FakeJudge(latency_s=0.05)
    for i in range(6):
        cluster.produce(0, tiny_documents(9000, i))
    async with running(
        cluster, [0], judge=judge, max_buffered_bytes=8 << 20, max_message_bytes=1 << 20
    ) as harness:
        await until(lambda: harness.judged() == 6, "all judged")
        assert judge.peak_in_flight == 1
        assert harness.service._memory.peak <= 8 << 20
