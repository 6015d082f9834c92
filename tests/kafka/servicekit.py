"""Helpers to run the guard service against the test broker: settings, requests, offsets."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import ConsumerRecord

from consumers.runtime.service import GuardService
from consumers.settings import ServiceSettings, TopicSettings
from guard.engine import Guard
from guard.models import ScoringMode
from guard.settings import JudgeSettings, Provider
from tests.kafka.kafkautil import create_topics, unique

REPO = Path(__file__).resolve().parents[2]
EVIDENCE = "The Eiffel Tower is in Paris. It was completed in 1889."


@dataclass
class Topics:
    requests: str
    verdicts: str
    quarantine: str
    dlq: str
    approved: str


def new_topics() -> Topics:
    return Topics(unique("req"), unique("ver"), unique("qua"), unique("dlq"), unique("app"))


async def create_all(bootstrap: str, topics: Topics, partitions: int) -> None:
    await create_topics(
        bootstrap,
        {
            topics.requests: partitions,
            topics.verdicts: 3,
            topics.quarantine: 3,
            topics.dlq: 3,
            topics.approved: 3,
        },
    )


def make_settings(
    bootstrap: str, topics: Topics, *, approved: bool = False, **overrides: Any
) -> ServiceSettings:
    values: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "group_id": unique("group"),
        "instance_id": "test",
        "topics": TopicSettings(
            requests=topics.requests,
            verdicts=topics.verdicts,
            quarantine=topics.quarantine,
            dlq=topics.dlq,
            approved=topics.approved if approved else None,
        ),
        "commit_interval_s": 0.2,
        "judge": JudgeSettings(provider=Provider.FAKE, mode=ScoringMode.SCALE5),
    } | overrides
    return ServiceSettings.model_validate(values)


def grounded(i: int) -> bytes:
    return orjson.dumps(
        {"id": f"ok-{i}", "output": "The Eiffel Tower is in Paris", "context": EVIDENCE}
    )


def ungrounded(i: int) -> bytes:
    return orjson.dumps(
        {"id": f"bad-{i}", "output": "The Eiffel Tower is in Rome", "context": EVIDENCE}
    )


def guard_with(judge: Any, settings: ServiceSettings) -> Guard:
    return Guard(judge, settings.judge)


@contextlib.asynccontextmanager
async def running(settings: ServiceSettings, guard: Guard) -> AsyncIterator[GuardService]:
    """The service running in a task; stopped (and checked for errors) on exit."""
    stop = asyncio.Event()
    service = GuardService(settings, guard, stop=stop)
    task = asyncio.create_task(service.run())
    try:
        yield service
        assert not task.done(), "the service stopped on its own"
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=60)


async def committed_offsets(bootstrap: str, group_id: str) -> dict[TopicPartition, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group_id)
    finally:
        await admin.close()
    return {tp: meta.offset for tp, meta in offsets.items() if meta.offset >= 0}


async def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[TopicPartition, int]:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends: dict[TopicPartition, int] = await consumer.end_offsets(tps)
    finally:
        await consumer.stop()
    return {tp: end for tp, end in ends.items() if end > 0}


async def wait_committed(
    bootstrap: str, group_id: str, topic: str, partitions: int, timeout_s: float = 60.0
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
    """Poll (bounded) until the group's committed offsets reach the topic's end offsets;
    return both."""
    ends = await end_offsets(bootstrap, topic, partitions)
    committed: dict[TopicPartition, int] = {}
    for _ in range(int(timeout_s / 0.25)):
        committed = await committed_offsets(bootstrap, group_id)
        if committed == ends:
            break
        await asyncio.sleep(0.25)
    return committed, ends


def by_id(records: list[ConsumerRecord[Any, Any]], field: str = "request_id") -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        key = orjson.loads(record.value)[field]
        counts[key] = counts.get(key, 0) + 1
    return counts


async def partition_count(bootstrap: str, topic: str) -> int:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics([topic])
    finally:
        await admin.close()
    return len(described[0]["partitions"])


def service_env(**settings: str) -> dict[str, str]:
    """This process's environment without GROUNDGUARD_ variables, plus ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
    return env | settings


@contextlib.asynccontextmanager
async def command(
    *args: str, env: dict[str, str], log_path: Path
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``python -m consumers ARGS`` writing to ``log_path``; SIGTERM (unless it stopped by
    itself) and a wait of up to 60 s when the block ends (killed if it does not stop)."""
    with log_path.open("wb") as log_file:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "consumers",
            *args,
            cwd=REPO,
            env=env,
            stdout=log_file,
            stderr=log_file,
        )
        try:
            yield proc
            if proc.returncode is None:  # it may have stopped by itself
                proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), timeout=60)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
