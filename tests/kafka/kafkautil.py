"""Small helpers for tests against a real broker: topics, producing, reading a topic to the end."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import ConsumerRecord


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def create_topics(bootstrap: str, topics: dict[str, int]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, n, 1) for name, n in topics.items()])
    finally:
        await admin.close()


async def produce(
    bootstrap: str,
    topic: str,
    records: Iterable[tuple[bytes | None, bytes, list[tuple[str, bytes]] | None]],
) -> int:
    """Send (key, value, headers) records and wait for every acknowledgement."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await producer.start()
    count = 0
    try:
        futures = [
            await producer.send(topic, value, key=key, headers=headers)
            for key, value, headers in records
        ]
        for future in futures:
            await future
            count += 1
    finally:
        await producer.stop()
    return count


async def read_until(
    bootstrap: str,
    topic: str,
    *,
    expected: int,
    timeout_s: float = 60.0,
    isolation_level: str = "read_uncommitted",
    settle_s: float = 0.0,
) -> list[ConsumerRecord[Any, Any]]:
    """Read a topic from the start until ``expected`` records arrived or the timeout passed.

    With ``settle_s`` it keeps reading that long after reaching ``expected``, to catch extras.
    """
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        group_id=None,
        isolation_level=isolation_level,
    )
    await consumer.start()
    out: list[ConsumerRecord[Any, Any]] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    settle_until: float | None = None
    try:
        while loop.time() < deadline:
            if len(out) >= expected and settle_until is None:
                settle_until = loop.time() + settle_s
            if settle_until is not None and loop.time() >= settle_until:
                break
            batch = await consumer.getmany(timeout_ms=200)
            for records in batch.values():
                out.extend(records)
    finally:
        await consumer.stop()
    return out
