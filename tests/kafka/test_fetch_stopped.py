"""Health means progress (issue 29), through the real broker: aiokafka's fetch task dies once
(here an injected failure where ``max_message_bytes`` of 2,000,000,000 overflowed the fetch
request's 32-bit field); the service turns unhealthy and stops with :class:`FetchStopped`
instead of staying up, 200 on /healthz, fetching nothing ever again."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiokafka.consumer.fetcher import Fetcher

from consumers.errors import FetchStopped
from consumers.health import liveness, readiness
from consumers.runtime.service import GuardService
from consumers.runtime.stats import ServiceStats
from guard.testing import FakeJudge
from tests.kafka.kafkautil import produce, read_until
from tests.kafka.servicekit import create_all, grounded, guard_with, make_settings, new_topics


async def test_a_fetch_task_that_dies_stops_the_service_and_health_says_so(
    kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = make_settings(kafka_bootstrap, topics)
    stats = ServiceStats()
    service = GuardService(settings, guard_with(FakeJudge(), settings), stats=stats)
    task = asyncio.create_task(service.run())
    await produce(kafka_bootstrap, topics.requests, [(b"a", grounded(0), None)])
    await read_until(kafka_bootstrap, topics.verdicts, expected=1)  # fetching, judging
    assert not task.done()
    health: list[bool] = []

    def overflow(self: Fetcher, *args: Any) -> Any:
        health.append(readiness(stats, stall_after_s=60, now=time.monotonic()).ok)
        raise ValueError("'i' format requires -2147483648 <= number <= 2147483647")

    monkeypatch.setattr(Fetcher, "_get_actions_per_node", overflow)
    with pytest.raises(FetchStopped, match="2147483647"):
        await asyncio.wait_for(task, timeout=30)
    assert health == [True]  # healthy until the fetch task died, once
    for check in (readiness, liveness):
        assert not check(stats, stall_after_s=60, now=time.monotonic()).ok
