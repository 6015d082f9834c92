"""Producers may compress their batches: the service reads every codec Kafka offers."""

from __future__ import annotations

import pytest
from aiokafka import AIOKafkaProducer

from guard.testing import FakeJudge
from tests.kafka.kafkautil import read_until
from tests.kafka.servicekit import (
    by_id,
    create_all,
    grounded,
    guard_with,
    make_settings,
    new_topics,
    running,
)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
async def test_compressed_batches_are_judged(kafka_bootstrap: str, codec: str) -> None:
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    settings = make_settings(kafka_bootstrap, topics)
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka_bootstrap, compression_type=codec, linger_ms=20
    )
    await producer.start()
    try:
        sent = [await producer.send(topics.requests, grounded(i)) for i in range(20)]
        for future in sent:
            await future
    finally:
        await producer.stop()
    async with running(settings, guard_with(FakeJudge(), settings)):
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=20)
    assert by_id(verdicts) == {f"ok-{i}": 1 for i in range(20)}
