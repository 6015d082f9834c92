"""Closing a producer whose flush hangs: after the timeout its sender is stopped and what it
held is failed; the close itself never raises (seen flaky in the exactly-once outage test)."""

from __future__ import annotations

import asyncio
from typing import Any

from consumers.runtime.kafka import KafkaProducer


class _Sender:
    def __init__(self) -> None:
        self.sender_task = asyncio.create_task(asyncio.Event().wait())  # a broker gone for good


class _Accumulator:
    def __init__(self) -> None:
        self.failed: list[BaseException] = []

    def fail_all(self, exc: BaseException) -> None:
        self.failed.append(exc)


class _HangingProducer:
    """What ``AIOKafkaProducer.stop`` does when no broker answers: wait for its sender."""

    def __init__(self) -> None:
        self._sender = _Sender()
        self._message_accumulator = _Accumulator()

    async def stop(self) -> None:
        await self._sender.sender_task


async def test_a_close_whose_flush_hangs_stops_the_sender_and_returns() -> None:
    hanging = _HangingProducer()
    producer = KafkaProducer(hanging)  # type: ignore[arg-type]
    await asyncio.wait_for(producer.close(0.05), timeout=5)
    assert hanging._sender.sender_task.cancelled()
    failed: Any = hanging._message_accumulator.failed
    assert len(failed) == 1
