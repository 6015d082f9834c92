"""Records the broker refuses as too large, in both modes, through the real broker: the
output topic's ``max.message.bytes`` is lowered while the service runs, so the limits it read at
start no longer hold. The refused message ends as a dead letter with its reason, the messages
batched or staged with it get their verdicts, and the service stays up."""

from __future__ import annotations

import asyncio
import json

import orjson
import pytest

from guard.testing import FakeJudge
from tests.kafka.kafkautil import produce, read_until
from tests.kafka.servicekit import (
    EVIDENCE,
    by_id,
    create_all,
    grounded,
    guard_with,
    make_settings,
    new_topics,
    running,
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
