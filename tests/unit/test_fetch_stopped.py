"""Health means progress (issue 29): aiokafka's fetcher runs one background task; when it dies
(an error it did not expect, e.g. a fetch size beyond Kafka's 32-bit field) ``getmany`` returns
nothing forever. The consumer port raises :class:`FetchStopped`, the health endpoints turn 503
and the service stops with the error (the ``run`` command exits 1)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka.errors import KafkaError

from consumers.errors import FetchStopped
from consumers.health import liveness, readiness
from consumers.runtime.kafka import KafkaConsumer
from consumers.runtime.stats import ServiceStats


class _AioConsumer:
    """The parts of an ``AIOKafkaConsumer`` the port reads: ``getmany`` and the fetch task."""

    def __init__(self, routine: Any) -> None:
        self._fetcher = SimpleNamespace(error_future=asyncio.ensure_future(routine))

    async def getmany(self, timeout_ms: int) -> dict[Any, Any]:
        await asyncio.sleep(0)
        return {}


async def _dies() -> None:
    try:
        raise ValueError("'i' format requires -2147483648 <= number <= 2147483647")
    except ValueError as exc:  # as aiokafka's routine wraps it
        raise KafkaError("Unexpected error during data retrieval") from exc


async def _runs() -> None:
    await asyncio.Event().wait()


async def test_a_dead_fetch_task_makes_getmany_raise_naming_the_cause() -> None:
    consumer = KafkaConsumer(_AioConsumer(_dies()))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    with pytest.raises(FetchStopped, match=r"fetch task ended.*2147483647") as raised:
        await consumer.getmany(10)
    assert isinstance(raised.value.__cause__, KafkaError)


async def test_a_running_fetch_task_lets_getmany_return_nothing() -> None:
    aio = _AioConsumer(_runs())
    consumer = KafkaConsumer(aio)  # type: ignore[arg-type]
    assert await consumer.getmany(10) == {}
    aio._fetcher.error_future.cancel()
    with pytest.raises(FetchStopped):  # cancelled (not by a close): no record would come
        await consumer.getmany(10)


def test_health_is_bad_once_the_service_fails_on_its_own() -> None:
    stats = ServiceStats(started=True, ready=True)
    stats.failed = "fetching ended"
    for check in (readiness, liveness):
        health = check(stats, stall_after_s=30, now=stats.last_progress + 1)
        assert not health.ok
        assert "fetching ended" in health.reason
