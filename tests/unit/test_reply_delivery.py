"""Replies never stop the service or hold a partition, proved with the in-memory Kafka of
``tests/unit/fakekafka.py``: a reply the broker keeps refusing is dropped after
``reply.timeout_s`` (at-least-once) or aborts one transaction only (exactly-once); a reply to a
missing topic is dropped at once; the verdicts and the commits go on either way."""

from __future__ import annotations

from typing import Any

import pytest
from aiokafka.errors import (
    IllegalOperation,
    KafkaError,
    NotLeaderForPartitionError,
    TopicAuthorizationFailedError,
)

from consumers.metrics import Metrics
from consumers.reply.headers import request_headers
from tests.unit.fakekafka import FakeCluster, until
from tests.unit.test_delivery import EXACTLY_ONCE, A, ids, request, running

pytestmark = pytest.mark.timeout(60)
REPLY = {"reply": {"allowed_prefixes": ["guard.reply."], "timeout_s": 0.3}}


def refuse_replies(out: Any) -> KafkaError | None:
    return NotLeaderForPartitionError() if out.topic.startswith("guard.reply.") else None


def produce_asking(cluster: FakeCluster, n: int, topic: str = "guard.reply.me") -> None:
    for i in range(n):
        cluster.produce(A, request(i), headers=request_headers(topic, b"c%d" % i))


async def test_a_reply_that_is_never_acknowledged_is_dropped_and_the_message_finishes() -> None:
    cluster = FakeCluster()
    async with running(cluster, [A], **REPLY) as h:
        assert len(h.broker.producers) == 2  # at-least-once, replies have a producer of their own
        h.broker.producers[0].refuse = refuse_replies  # retriable, for ever
        produce_asking(cluster, 2)
        await h.committed(A, 2)
        stats = h.service.stats
    assert cluster.verdict_ids() == ids(0, 1)
    assert stats.replies_dropped == {"refused": 2}
    assert stats.replies == 0


async def test_replies_are_published_beside_the_verdicts() -> None:
    cluster = FakeCluster()
    async with running(cluster, [A], **REPLY) as h:
        produce_asking(cluster, 2)
        await h.committed(A, 2)
        stats = h.service.stats
    assert sorted(o.json["request_id"] for o in cluster.outputs if o.topic == "guard.reply.me") == (
        ids(0, 1)
    )
    assert stats.replies == 2


async def test_a_reply_to_a_missing_topic_is_dropped_without_waiting() -> None:
    cluster = FakeCluster()
    async with running(cluster, [A], **REPLY) as h:
        h.broker.producers[0].missing_topics.add("guard.reply.gone")
        produce_asking(cluster, 3, topic="guard.reply.gone")
        await h.committed(A, 3)
        stats = h.service.stats
    assert cluster.verdict_ids() == ids(0, 1, 2)
    assert stats.replies_dropped == {"unknown_topic": 3}
    assert not any(o.topic == "guard.reply.gone" for o in cluster.outputs)
    exposed = Metrics(stats).render().decode()
    assert 'groundguard_replies_dropped_total{reason="unknown_topic"} 3.0' in exposed
    assert "groundguard_replies_published_total 0.0" in exposed


async def test_exactly_once_a_refused_reply_aborts_one_transaction_and_is_dropped() -> None:
    cluster = FakeCluster()
    async with running(cluster, [A], **REPLY, **EXACTLY_ONCE) as h:
        assert len(h.broker.producers) == 1  # replies must be in the transaction
        h.producer.refuse = refuse_replies
        produce_asking(cluster, 3)
        await until(lambda: h.judged() == 3, "3 staged")
        await h.committed(A, 3)
        stats = h.service.stats
    assert cluster.verdict_ids() == ids(0, 1, 2)  # each once, in a transaction without them
    assert stats.replies_dropped == {"refused": 3}
    assert stats.replies == 0
    assert stats.publish_retries == 0  # not a failure of the service


async def test_exactly_once_a_reply_refused_for_good_is_dropped_when_it_fails_the_others() -> None:
    """aiokafka: a reply topic refused when added to the transaction (TopicAuthorizationFailed)
    puts the transaction in an abortable error, and the records sent after it in the same
    transaction fail too (IllegalOperation, raised by send). The refused replies are dropped
    and the transaction tried again without them; one reply used to stop the service."""
    cluster = FakeCluster()
    async with running(cluster, [A], **REPLY, **EXACTLY_ONCE, publish_timeout_s=2.0) as h:
        producer = h.producer
        failing: list[object] = []  # the transaction a reply was refused in

        def refuse(out: Any) -> Exception | None:
            if out.topic.startswith("guard.reply."):
                failing[:] = [producer._open]
                return TopicAuthorizationFailedError(out.topic)
            if failing and failing[0] is producer._open:
                return IllegalOperation("Can't send messages while not in transaction")
            return None

        producer.refuse = refuse
        produce_asking(cluster, 3)
        await until(lambda: h.judged() == 3, "3 staged")
        await h.committed(A, 3)
        stats = h.service.stats
    assert cluster.verdict_ids() == ids(0, 1, 2)
    assert stats.replies_dropped == {"refused": 3}
    assert stats.replies == 0


async def test_a_reply_to_a_partition_the_topic_lacks_is_dropped() -> None:
    """``kafka_replyPartition`` names a partition the reply topic does not have (it has one):
    the reply is dropped and counted; the verdict is published and the offset committed."""
    cluster = FakeCluster()
    async with running(cluster, [A], **REPLY) as h:
        for i, partition in enumerate((0, 3)):
            headers = request_headers("guard.reply.me", b"c%d" % i, partition)
            cluster.produce(A, request(i), headers=headers)
        await h.committed(A, 2)
        stats = h.service.stats
    assert cluster.verdict_ids() == ids(0, 1)
    assert stats.replies == 1
    assert stats.replies_dropped == {"unknown_partition": 1}


async def test_a_partition_missing_from_the_known_metadata_is_asked_for_afresh_once() -> None:
    """A reply topic's partitions are learnt once; a request naming one they lack asks the
    metadata again (the topic may have grown): a new partition gets its reply, and a partition
    still missing is dropped with no second request before ``missing_topic_recheck_s``."""
    cluster = FakeCluster()
    async with running(cluster, [A], **REPLY) as h:
        replies = h.broker.producers[0]
        for i, partition in enumerate((0, 1, 5, 6)):
            if i == 1:  # the topic grows after its partitions were learnt
                await h.committed(A, 1)
                replies.partitions["guard.reply.me"] = {0, 1}
            headers = request_headers("guard.reply.me", b"c%d" % i, partition)
            cluster.produce(A, request(i), headers=headers)
        await h.committed(A, 4)
        stats = h.service.stats
    assert cluster.verdict_ids() == ids(0, 1, 2, 3)
    assert stats.replies == 2
    assert stats.replies_dropped == {"unknown_partition": 2}
    assert replies.fresh_requests == ["guard.reply.me"]
