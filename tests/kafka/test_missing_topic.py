"""A missing topic at start: one clear line naming it and how to create it, /readyz saying why,
and a clean failure at ``startup_timeout_s`` (not an error flood)."""

from __future__ import annotations

import asyncio
import io
import sys
import time

import orjson
import pytest

from consumers.errors import TopicsMissing
from consumers.health import readiness
from consumers.logging import configure_logging, reset_logging
from consumers.runtime.service import GuardService
from consumers.runtime.stats import ServiceStats
from guard.engine import Guard
from guard.testing import FakeJudge
from tests.kafka.kafkautil import create_topics, produce, read_until
from tests.kafka.servicekit import (
    REPO,
    create_all,
    grounded,
    make_settings,
    new_topics,
    service_env,
)


async def test_a_missing_input_topic_is_named_once_and_start_fails_at_the_deadline(
    kafka_bootstrap: str,
) -> None:
    topics = new_topics()
    await create_topics(kafka_bootstrap, {topics.verdicts: 1, topics.quarantine: 1, topics.dlq: 1})
    settings = make_settings(kafka_bootstrap, topics, startup_timeout_s=3.0)
    stream = io.StringIO()
    configure_logging(log_format="json", level="info", stream=stream)
    stats = ServiceStats()
    service = GuardService(settings, Guard(FakeJudge(), settings.judge), stats=stats)
    task = asyncio.create_task(service.run())
    try:
        await asyncio.sleep(1.5)
        health = readiness(stats, stall_after_s=60, now=time.monotonic())
        started = time.monotonic()
        with pytest.raises(TopicsMissing) as raised:
            await asyncio.wait_for(task, timeout=30)
        waited = time.monotonic() - started
    finally:
        reset_logging()
    lines = [orjson.loads(line) for line in stream.getvalue().splitlines()]
    assert not health.ok
    assert topics.requests in health.reason
    assert waited < 5  # it stops at the deadline, not after aiokafka's 40 s metadata timeout
    message = str(raised.value)
    assert topics.requests in message
    assert topics.verdicts not in message  # only the missing one is named
    assert f"--create --topic {topics.requests}" in message
    assert "create_topics" in message
    missing = [line for line in lines if line["event"] == "topics.missing"]
    assert len(missing) == 1
    assert missing[0]["topics"] == [topics.requests]
    assert "kafka-topics" in str(missing[0]["fix"])
    errors = [line for line in lines if line["level"] == "error" and line is not missing[0]]
    assert errors == []
    assert stats.started is False


async def test_the_service_starts_once_the_missing_topic_is_created(kafka_bootstrap: str) -> None:
    topics = new_topics()
    await create_topics(
        kafka_bootstrap,
        {topics.verdicts: 1, topics.quarantine: 1, topics.dlq: 1, topics.approved: 1},
    )
    settings = make_settings(kafka_bootstrap, topics, startup_timeout_s=30.0)
    stop = asyncio.Event()
    service = GuardService(settings, Guard(FakeJudge(), settings.judge), stop=stop)
    task = asyncio.create_task(service.run())
    try:
        await asyncio.sleep(1.0)
        assert not service.stats.started
        await create_topics(kafka_bootstrap, {topics.requests: 1})
        await produce(kafka_bootstrap, topics.requests, [(b"k", grounded(1), None)])
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=1)
        assert len(verdicts) == 1
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=60)


async def test_a_stop_while_waiting_for_topics_ends_cleanly(kafka_bootstrap: str) -> None:
    topics = new_topics()
    settings = make_settings(kafka_bootstrap, topics, startup_timeout_s=60.0)
    stop = asyncio.Event()
    service = GuardService(settings, Guard(FakeJudge(), settings.judge), stop=stop)
    task = asyncio.create_task(service.run())
    await asyncio.sleep(1.0)
    stop.set()
    await asyncio.wait_for(task, timeout=10)
    assert service.stats.started is False


async def test_run_exits_1_at_the_deadline_naming_the_topic_and_the_fix(
    kafka_bootstrap: str,
) -> None:
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    env = service_env(
        GROUNDGUARD_BOOTSTRAP_SERVERS=kafka_bootstrap,
        GROUNDGUARD_TOPICS__REQUESTS="gg-never-created-topic",
        GROUNDGUARD_TOPICS__VERDICTS=topics.verdicts,
        GROUNDGUARD_TOPICS__QUARANTINE=topics.quarantine,
        GROUNDGUARD_TOPICS__DLQ=topics.dlq,
        GROUNDGUARD_STARTUP_TIMEOUT_S="2",
        GROUNDGUARD_METRICS__ENABLED="false",
        GROUNDGUARD_JUDGE__PROVIDER="offline",
        GROUNDGUARD_LOG__FORMAT="json",
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "consumers",
        "run",
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), timeout=60)
    text = stderr.decode()
    assert proc.returncode == 1, text[-2000:]
    assert text.count("topics.missing") == 1
    assert "not found in cluster metadata" not in text
    assert text.strip().splitlines()[-1].startswith("groundguard run: topic gg-never-created-topic")
