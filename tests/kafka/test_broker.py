"""The test broker answers: topics can be created, written and read back."""

from __future__ import annotations

from tests.kafka.kafkautil import create_topics, produce, read_until, unique


async def test_broker_round_trips_records(kafka_bootstrap: str) -> None:
    topic = unique("smoke")
    await create_topics(kafka_bootstrap, {topic: 2})
    sent = await produce(kafka_bootstrap, topic, [(b"k%d" % i, b"v%d" % i, None) for i in range(5)])
    records = await read_until(kafka_bootstrap, topic, expected=5, timeout_s=30)
    assert sent == 5
    assert sorted(r.value for r in records) == [b"v%d" % i for i in range(5)]
