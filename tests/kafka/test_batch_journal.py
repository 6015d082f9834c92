"""The batch journal topic against the shared broker: partition counts checked, reads bounded.

The journal needs a partition for every input partition; a journal topic with fewer (input
partitions added after it was created) must stop the service with the fix named, never hang it
on a read of a partition that does not exist.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import NamedTuple

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from aiokafka.structs import TopicPartition

from consumers.runtime.batchstate import KafkaBatchJournal
from consumers.settings import ServiceSettings
from guard.batch.journal import JournalError
from tests.kafka.kafkautil import create_topics, unique

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(60)]


class Started(NamedTuple):
    store: KafkaBatchJournal
    requests: str
    journal: str


def journal_settings(
    bootstrap: str, requests: str, journal: str, **extra: object
) -> ServiceSettings:
    return ServiceSettings.model_validate(
        {
            "bootstrap_servers": bootstrap,
            "topics": {"requests": requests, "batch_state": journal},
            **extra,
        }
    )


async def add_partitions(bootstrap: str, topic: str, total: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_partitions({topic: NewPartitions(total_count=total)})
    finally:
        await admin.close()


@contextlib.asynccontextmanager
async def started(bootstrap: str, partitions: int, **extra: object) -> AsyncIterator[Started]:
    """A started journal over a new input topic of ``partitions`` (the journal topic created by
    the journal itself, partitioned alike)."""
    requests, journal = unique("req"), unique("batches")
    await create_topics(bootstrap, {requests: partitions})
    store = KafkaBatchJournal(journal_settings(bootstrap, requests, journal, **extra))
    await store.start()
    try:
        yield Started(store, requests, journal)
    finally:
        await store.close()


async def test_a_journal_topic_with_fewer_partitions_than_the_input_is_refused_at_start(
    kafka_bootstrap: str,
) -> None:
    requests, journal = unique("req"), unique("batches")
    await create_topics(kafka_bootstrap, {requests: 3, journal: 1})
    store = KafkaBatchJournal(journal_settings(kafka_bootstrap, requests, journal))
    with pytest.raises(JournalError, match=r"has 1 partitions, but input partitions \[1, 2\]"):
        await store.start()
    await store.close()


async def test_an_input_partition_added_later_is_refused_when_assigned_not_read_forever(
    kafka_bootstrap: str,
) -> None:
    """Input partitions added after the journal topic was created: the new partition's journal
    read used to wait forever for a partition that does not exist."""
    async with started(kafka_bootstrap, 2) as it:
        assert await it.store.load({TopicPartition(it.requests, 1): 0}) == 0
        await add_partitions(kafka_bootstrap, it.requests, 3)
        with pytest.raises(JournalError, match=rf"--alter --topic {it.journal} --partitions 3"):
            await it.store.load({TopicPartition(it.requests, 2): 0})


async def test_a_journal_read_that_cannot_finish_in_time_is_an_error_naming_the_bound(
    kafka_bootstrap: str,
) -> None:
    async with started(kafka_bootstrap, 1, startup_timeout_s=0.001) as it:
        with pytest.raises(JournalError, match=r"within startup_timeout_s \(0.001 s\)"):
            await it.store.load({TopicPartition(it.requests, 0): 0})
