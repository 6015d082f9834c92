"""Records the broker refuses as too large, in both modes, through the real broker: the
output topic's ``max.message.bytes`` is lowered while the service runs, so the limits it read at
start no longer hold. The refused message ends as a dead letter with its reason, the messages
batched or staged with it get their verdicts, and the service stays up."""

from __future__ import annotations

import asyncio
import json

import orjson
import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from guard.testing import FakeJudge
from tests.kafka.kafkautil import produce, read_until
from tests.kafka.servicekit import (
    EVIDENCE,
    Topics,
    by_id,
    create_all,
    grounded,
    guard_with,
    make_settings,
    new_topics,
    running,
    ungrounded,
    wait_committed,
)
from tests.kafka.test_poison import limit_message_bytes

COMMITTED = "read_committed"


def blob(rid: str, size: int) -> bytes:
    body = {"id": rid, "output": "The Eiffel Tower is in Paris", "context": EVIDENCE}
    return orjson.dumps(body | {"metadata": {"blob": "m" * size}})


@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
async def test_a_record_refused_after_start_is_dead_lettered_not_fatal(
    kafka_bootstrap: str, guarantee: str
) -> None:
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = make_settings(
        kafka_bootstrap,
        topics,
        guarantee=guarantee,
        transactional_id_prefix=topics.requests,
        transaction_interval_s=0.5,  # the big record is staged with the good ones around it
    )
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        await produce(kafka_bootstrap, topics.requests, [(b"a", grounded(0), None)])
        await read_until(
            kafka_bootstrap, topics.verdicts, expected=1, isolation_level=COMMITTED
        )  # started, with the limits of the topics as they were
        await limit_message_bytes(kafka_bootstrap, topics.verdicts, 60_000)
        await asyncio.sleep(1.0)  # the broker applies the new limit
        await produce(
            kafka_bootstrap,
            topics.requests,
            [
                (b"a", grounded(1), None),
                (b"a", blob("refused", 100_000), None),
                (b"a", grounded(2), None),
            ],
        )
        verdicts = await read_until(
            kafka_bootstrap, topics.verdicts, expected=3, settle_s=0.5, isolation_level=COMMITTED
        )
        dlq = await read_until(
            kafka_bootstrap, topics.dlq, expected=1, settle_s=0.5, isolation_level=COMMITTED
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
        assert service.stats.buffered_bytes == 0
        assert service.stats.dead_lettered["oversized"] == 1
    assert committed == ends
    assert by_id(verdicts) == {"ok-0": 1, "ok-1": 1, "ok-2": 1}
    [letter] = [json.loads(r.value) for r in dlq]
    assert letter["reason"] == "oversized"
    assert letter["input"]["offset"] == 2
    assert "refused" in letter["detail"]


async def create_small(bootstrap: str, topics: Topics, **limits: int) -> None:
    """The topics, those named in ``limits`` with that ``max.message.bytes``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [
                NewTopic(
                    getattr(topics, name),
                    1,
                    1,
                    topic_configs={"max.message.bytes": str(limits[name])}
                    if name in limits
                    else {},
                )
                for name in ("requests", "verdicts", "quarantine", "dlq", "approved")
            ]
        )
    finally:
        await admin.close()


async def test_a_small_dead_letter_and_quarantine_topic_change_only_their_own_records(
    kafka_bootstrap: str,
) -> None:
    """Issue 29: the DLQ at 1,000 bytes and quarantine at 1,200 lowered the limit of every
    output, so good messages ended as ``oversized`` dead letters and failing ones reached
    neither verdicts nor quarantine. Each topic has its own limit: every message gets its
    verdict; a failing one's quarantine record, too large for 1,200 bytes even without its
    payload, becomes an ``oversized`` dead letter naming it (the message is held back, not
    lost); a poison message gets a dead letter fitted to 1,000 bytes, reason and coordinates
    kept."""
    topics = new_topics()
    await create_small(kafka_bootstrap, topics, dlq=1000, quarantine=1200)
    settings = make_settings(kafka_bootstrap, topics)
    async with running(settings, guard_with(FakeJudge(), settings)):
        await produce(
            kafka_bootstrap,
            topics.requests,
            [(b"a", grounded(i), None) for i in range(3)]
            + [(b"a", ungrounded(i), None) for i in range(3)]
            + [(b"a", b"{" + b"x" * 20_000, None)],
        )
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=6)
        dlq = await read_until(kafka_bootstrap, topics.dlq, expected=4, settle_s=0.5)
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
    assert by_id(verdicts) == {f"{kind}-{i}": 1 for kind in ("ok", "bad") for i in range(3)}
    letters = {json.loads(r.value)["input"]["offset"]: json.loads(r.value) for r in dlq}
    assert sorted(letters) == [3, 4, 5, 6]
    assert all(len(r.value) <= 1000 for r in dlq)
    assert letters[6]["reason"] == "invalid_json"
    for offset in (3, 4, 5):
        assert letters[offset]["reason"] == "oversized"
        assert "the quarantine record is" in letters[offset]["detail"]
    assert committed == ends
