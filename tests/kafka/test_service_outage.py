"""A broker outage must not make the service hang: commits and exactly-once transactions are
bounded by ``commit_timeout_s`` (aiokafka itself waits for the broker without end)."""

from __future__ import annotations

import asyncio

import pytest

from consumers.errors import PublishFailed
from consumers.runtime.service import GuardService
from guard.testing import FakeJudge
from tests.kafka.broker import ScriptBroker
from tests.kafka.kafkautil import produce
from tests.kafka.servicekit import create_all, grounded, guard_with, make_settings, new_topics

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
async def test_a_broker_outage_cannot_make_the_service_hang(
    own_broker: ScriptBroker, guarantee: str
) -> None:
    """The broker stops while messages are being judged. At-least-once: a stop request during
    the outage ends the service (its final commit times out instead of retrying forever).
    Exactly-once: the transaction of the messages finished during the outage cannot end; after
    commit_timeout_s the service stops with PublishFailed (a restart fences and aborts it)."""
    bootstrap = own_broker.bootstrap
    topics = new_topics()
    await create_all(bootstrap, topics, partitions=1)
    settings = make_settings(
        bootstrap,
        topics,
        guarantee=guarantee,
        concurrency=2,
        transactional_id_prefix=topics.requests,
        commit_timeout_s=3.0,
        drain_timeout_s=2.0,
    )
    judge = FakeJudge(latency_s=0.5)
    stop = asyncio.Event()
    service = GuardService(settings, guard_with(judge, settings), stop=stop)
    task = asyncio.create_task(service.run())
    try:
        await produce(bootstrap, topics.requests, [(b"k", grounded(i), None) for i in range(40)])
        for _ in range(600):  # bounded: until something was committed
            if service.stats.commits >= 1 or task.done():
                break
            await asyncio.sleep(0.1)
        assert service.stats.commits >= 1
        assert not task.done()
        await asyncio.to_thread(own_broker.stop)
        if guarantee == "at_least_once":
            await asyncio.sleep(2.0)  # judged during the outage: their commit cannot succeed
            stop.set()
            await asyncio.wait_for(task, timeout=150)
        else:
            with pytest.raises(PublishFailed, match="commit_timeout_s"):
                await asyncio.wait_for(task, timeout=150)
    finally:
        stop.set()
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=30)
