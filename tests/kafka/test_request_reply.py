"""Request-reply against a real broker: ``run`` sends the verdict to the request's reply topic
with its correlation id (only under an allowed prefix), never stops for a reply topic that is
missing or refuses, and :class:`ScreeningClient` fails closed on timeout."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import orjson
import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic

from consumers.errors import ClientClosed
from consumers.reply import CORRELATION_ID_HEADER, REPLY_TOPIC_HEADER, ScreeningClient
from consumers.reply.headers import request_headers
from consumers.runtime import replies as replies_module
from consumers.settings import ReplySettings
from guard.assembly import build_guard
from guard.models import Label
from guard.settings import JudgeSettings, Provider
from guard.testing import FakeJudge
from tests.kafka.kafkautil import create_topics, produce, read_until, unique
from tests.kafka.servicekit import (
    EVIDENCE,
    REPO,
    Topics,
    create_all,
    grounded,
    guard_with,
    make_settings,
    new_topics,
    running,
    ungrounded,
    wait_committed,
)

PREFIX = "rr-test."
GOOD = {"output": "The Eiffel Tower is in Paris", "context": EVIDENCE}
BAD = {"output": "The Eiffel Tower is in Rome", "context": EVIDENCE}


async def setup(bootstrap: str, **overrides: Any) -> tuple[Topics, Any]:
    topics = new_topics()
    await create_all(bootstrap, topics, partitions=1)
    reply = ReplySettings(allowed_prefixes=(PREFIX,), timeout_s=2.0)
    settings = make_settings(bootstrap, topics, reply=reply, **overrides)
    return topics, settings


def headers_of(record: Any) -> dict[str, bytes]:
    return dict(record.headers)


async def shrink_topic(bootstrap: str, topic: str, max_bytes: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(topic, 1, 1, topic_configs={"max.message.bytes": str(max_bytes)})]
        )
    finally:
        await admin.close()


async def test_reply_carries_the_verdict_key_and_correlation_id(kafka_bootstrap: str) -> None:
    """A request with both headers gets its verdict record on the reply topic, keyed like the
    input, with the correlation id; a header whose value is a credential stays behind."""
    topics, settings = await setup(kafka_bootstrap)
    reply_topic = unique(PREFIX + "r")
    await create_topics(kafka_bootstrap, {reply_topic: 1})
    request = [
        (REPLY_TOPIC_HEADER, reply_topic.encode()),
        (CORRELATION_ID_HEADER, b"\x00\xffcorr-1"),
        ("x-request-id", b"Bearer s3cret-token"),
        ("traceparent", b"00-abc-01"),
    ]
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        await produce(kafka_bootstrap, topics.requests, [(b"k1", grounded(1), request)])
        replies = await read_until(kafka_bootstrap, reply_topic, expected=1, timeout_s=30)
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=1, timeout_s=30)
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
    assert len(replies) == 1
    reply, verdict = replies[0], verdicts[0]
    assert reply.key == b"k1" == verdict.key
    assert reply.value == verdict.value  # the same verdict record
    assert orjson.loads(reply.value)["request_id"] == "ok-1"
    headers = headers_of(reply)
    assert headers[CORRELATION_ID_HEADER] == b"\x00\xffcorr-1"
    assert headers["traceparent"] == b"00-abc-01"
    assert "x-request-id" not in headers  # a credential by its value
    assert "x-request-id" not in headers_of(verdict)  # nor on the verdict (issue 29)
    assert service.stats.replies == 1
    assert committed == ends


async def test_disallowed_and_missing_reply_topics_never_stop_the_service(
    kafka_bootstrap: str,
) -> None:
    """A reply topic outside the allowed prefixes is ignored (nothing written to it) and counted;
    one under the prefix that does not exist, or that refuses the record as too large, is
    dropped and counted; every message still gets its verdict and its offset committed."""
    topics, settings = await setup(kafka_bootstrap)
    outside = unique("rr-outside")
    await create_topics(kafka_bootstrap, {outside: 1})
    missing = unique(PREFIX + "missing")
    small = unique(PREFIX + "small")
    await shrink_topic(kafka_bootstrap, small, 200)

    def asks(topic: str, n: int) -> list[tuple[str, bytes]]:
        return [(REPLY_TOPIC_HEADER, topic.encode()), (CORRELATION_ID_HEADER, b"c%d" % n)]

    records = [(b"a%d" % i, grounded(i), asks(outside, i)) for i in range(3)]
    records += [(b"b%d" % i, ungrounded(i), asks(missing, i)) for i in range(3)]
    records += [(b"c", grounded(9), [(REPLY_TOPIC_HEADER, topics.verdicts.encode())])]
    records += [(b"d%d" % i, grounded(10 + i), asks(small, i)) for i in range(2)]
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        await produce(kafka_bootstrap, topics.requests, records)
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=9, timeout_s=30)
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
        stats = service.stats
    assert len(verdicts) == 9
    assert committed == ends
    assert stats.replies_ignored == {"not_allowed": 3, "reserved_topic": 1}
    assert stats.replies_dropped == {"unknown_topic": 3, "refused": 2}
    assert stats.replies == 0
    assert await read_until(kafka_bootstrap, outside, expected=1, timeout_s=1) == []


async def test_a_reply_topic_that_refuses_is_dropped_in_exactly_once_mode(
    kafka_bootstrap: str,
) -> None:
    """Exactly-once: a reply the broker refuses (its topic's max.message.bytes is too small)
    aborts that transaction only; the reply is dropped and counted, the verdicts are published
    in a transaction without them and the offsets committed."""
    topics, settings = await setup(
        kafka_bootstrap, guarantee="exactly_once", transactional_id_prefix=unique("tx")
    )
    small = unique(PREFIX + "small")
    await shrink_topic(kafka_bootstrap, small, 200)
    ask = [(REPLY_TOPIC_HEADER, small.encode()), (CORRELATION_ID_HEADER, b"c")]
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        await produce(
            kafka_bootstrap, topics.requests, [(b"k", grounded(i), ask) for i in range(2)]
        )
        verdicts = await read_until(
            kafka_bootstrap,
            topics.verdicts,
            expected=2,
            timeout_s=30,
            isolation_level="read_committed",
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
        dropped = dict(service.stats.replies_dropped)
    assert sorted(orjson.loads(v.value)["request_id"] for v in verdicts) == ["ok-0", "ok-1"]
    assert committed == ends
    assert dropped == {"refused": 2}


async def test_client_gets_verdicts_in_exactly_once_mode(kafka_bootstrap: str) -> None:
    """The client screens through a service in exactly-once mode: pass and fail verdicts come
    back (committed replies only), and its reply topic is deleted at close."""
    topics, settings = await setup(
        kafka_bootstrap, guarantee="exactly_once", transactional_id_prefix=unique("tx")
    )
    async with (
        running(settings, guard_with(FakeJudge(), settings)),
        ScreeningClient(
            kafka_bootstrap, request_topic=topics.requests, reply_topic_prefix=PREFIX
        ) as client,
    ):
        good, bad = await asyncio.gather(
            client.screen(GOOD | {"id": "g"}, timeout=30),
            client.screen(BAD | {"id": "b"}, key="k", timeout=30),
        )
        reply_topic = client.reply_topic
    assert (good.request_id, good.label) == ("g", Label.PASS)
    assert (bad.request_id, bad.label) == ("b", Label.FAIL)
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        assert reply_topic not in await admin.list_topics()
    finally:
        await admin.close()


async def test_client_timeout_fails_closed(kafka_bootstrap: str) -> None:
    """With no service answering, screen returns an error verdict saying reply_timeout after
    the timeout, and close leaves no task behind."""
    topics = new_topics()
    await create_topics(kafka_bootstrap, {topics.requests: 1})
    before = set(asyncio.all_tasks())
    async with ScreeningClient(
        kafka_bootstrap, request_topic=topics.requests, reply_topic_prefix=PREFIX
    ) as client:
        started = time.monotonic()
        verdict = await client.screen({"id": "t1", "output": "x", "context": "y"}, timeout=0.5)
        waited = time.monotonic() - started
    assert verdict.label is Label.ERROR
    assert verdict.error is not None
    assert verdict.error.kind == "reply_timeout"
    assert verdict.reason == "reply_timeout"
    assert verdict.request_id == "t1"
    assert verdict.judge.tier == "none"
    assert 0.5 <= waited < 5
    assert set(asyncio.all_tasks()) == before


async def test_the_request_reply_example_runs(kafka_bootstrap: str) -> None:
    """docs/examples/request_reply.py screens a grounded and an ungrounded answer through a
    running service and prints what it would do with each."""
    topics, settings = await setup(kafka_bootstrap, judge=JudgeSettings(provider=Provider.OFFLINE))
    guard = build_guard(settings.judge, {})
    async with running(settings, guard):
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(REPO / "docs/examples/request_reply.py"),
            "--bootstrap",
            kafka_bootstrap,
            "--requests",
            topics.requests,
            "--reply-prefix",
            PREFIX,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=REPO,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "pass  send" in text
    assert "fail  block" in text


async def test_closing_the_client_ends_waiting_screens_fail_closed(kafka_bootstrap: str) -> None:
    """A screen waiting when the client closes returns at once with a fail-closed verdict;
    a screen after close raises ClientClosed."""
    topics = new_topics()
    await create_topics(kafka_bootstrap, {topics.requests: 1})
    client = ScreeningClient(
        kafka_bootstrap, request_topic=topics.requests, reply_topic_prefix=PREFIX
    )
    await client.start()
    waiting = asyncio.create_task(client.screen({"output": "x", "context": "y"}, timeout=60))
    await asyncio.sleep(0.5)
    started = time.monotonic()
    await client.close()
    verdict = await asyncio.wait_for(waiting, timeout=10)
    assert time.monotonic() - started < 15
    assert verdict.label is Label.ERROR
    assert verdict.reason == "reply_timeout"
    with pytest.raises(ClientClosed):
        await client.screen({"output": "x"})


async def test_exactly_once_a_reply_topic_deleted_after_staging_never_stops_the_service(
    kafka_bootstrap: str,
) -> None:
    """Exactly-once: the client times out, closes and deletes its reply topic while its reply
    is staged for the next transaction. The reply is dropped (unknown_topic) before the
    transaction starts (aiokafka would retry adding the deleted topic to it without end, and
    the service stopped at commit_timeout_s); the verdict is committed and the service runs."""
    topics, settings = await setup(
        kafka_bootstrap,
        guarantee="exactly_once",
        transactional_id_prefix=unique("tx"),
        transaction_interval_s=10.0,  # the first transaction comes after the client closed
    )
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        async with ScreeningClient(
            kafka_bootstrap, request_topic=topics.requests, reply_topic_prefix=PREFIX
        ) as client:
            verdict = await client.screen(GOOD | {"id": "late"}, timeout=0.5)
        verdicts = await read_until(
            kafka_bootstrap,
            topics.verdicts,
            expected=1,
            timeout_s=30,
            isolation_level="read_committed",
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
        dropped = dict(service.stats.replies_dropped)
    assert verdict.reason == "reply_timeout"
    assert [orjson.loads(v.value)["request_id"] for v in verdicts] == ["late"]
    assert committed == ends
    assert dropped == {"unknown_topic": 1}


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
async def test_reply_topics_do_not_pile_up_in_the_producer_metadata(
    kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch, guarantee: str
) -> None:
    """A reply topic per requester, created, used and deleted at its close, one after another:
    the producer asks metadata for a bounded number of them (aiokafka kept every topic it
    sent to or looked up, deleted ones included, in each metadata request, for good)."""
    monkeypatch.setattr(replies_module, "TRACKED_TOPICS", 2)
    topics, settings = await setup(
        kafka_bootstrap, guarantee=guarantee, transactional_id_prefix=unique("tx")
    )
    used: list[str] = []
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        for n in range(6):
            async with ScreeningClient(
                kafka_bootstrap, request_topic=topics.requests, reply_topic_prefix=PREFIX
            ) as client:
                verdict = await client.screen(GOOD | {"id": f"r{n}"}, timeout=30)
                used.append(client.reply_topic)
            assert verdict.label == Label.PASS
        tracked = service._replies_producer.tracked()
    assert len(set(used)) == 6
    assert tracked & set(used) <= set(used[-2:])  # the most recent ones only


async def test_a_reply_goes_to_the_partition_the_request_names(kafka_bootstrap: str) -> None:
    """``kafka_replyPartition`` (Spring's 4-byte big-endian int) picks the reply topic's
    partition, whatever the key; a partition the topic lacks drops the reply (counted) and the
    verdict is still published and committed."""
    topics, settings = await setup(kafka_bootstrap)
    reply_topic = unique(PREFIX + "parts")
    await create_topics(kafka_bootstrap, {reply_topic: 3})
    records = [
        (b"same-key", grounded(i), request_headers(reply_topic, b"c%d" % i, partition))
        for i, partition in enumerate((2, 1, 2, 0, 9))
    ]
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        await produce(kafka_bootstrap, topics.requests, records)
        replies = await read_until(kafka_bootstrap, reply_topic, expected=4, timeout_s=30)
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
        stats = service.stats
    where = sorted((headers_of(r)[CORRELATION_ID_HEADER], r.partition) for r in replies)
    assert where == [(b"c0", 2), (b"c1", 1), (b"c2", 2), (b"c3", 0)]
    assert stats.replies_dropped == {"unknown_partition": 1}
    assert committed == ends


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
async def test_a_dead_lettered_request_gets_an_error_reply_at_once(
    kafka_bootstrap: str, guarantee: str
) -> None:
    """A request the service dead-letters (malformed JSON from a raw producer; one over
    max_message_bytes from the client) gets an ``error`` verdict naming the dead letter's
    reason on its reply topic, and the client returns it at once, not at its timeout."""
    topics, settings = await setup(
        kafka_bootstrap,
        guarantee=guarantee,
        transactional_id_prefix=unique("tx"),
        max_message_bytes=1000,
    )
    async with (
        running(settings, guard_with(FakeJudge(), settings)),
        ScreeningClient(
            kafka_bootstrap, request_topic=topics.requests, reply_topic_prefix=PREFIX
        ) as client,
    ):
        raw = (b"k", b'{"id": "m1", "output": ', request_headers(client.reply_topic, b"raw-1"))
        await produce(kafka_bootstrap, topics.requests, [raw])
        started = time.monotonic()
        big = await client.screen(GOOD | {"id": "big", "context": "x" * 2000}, timeout=60)
        waited = time.monotonic() - started
        replies = await read_until(
            kafka_bootstrap,
            client.reply_topic,
            expected=2,
            timeout_s=30,
            isolation_level="read_committed",
        )
        letters = await read_until(
            kafka_bootstrap, topics.dlq, expected=2, timeout_s=30, isolation_level="read_committed"
        )
    assert (big.label, big.reason, big.request_id) == (Label.ERROR, "oversized", "big")
    assert big.error is not None
    assert big.error.kind == "oversized"
    assert "max_message_bytes" in big.error.message
    assert waited < 30  # the reply, not the timeout
    malformed = next(r for r in replies if headers_of(r)[CORRELATION_ID_HEADER] == b"raw-1")
    body = orjson.loads(malformed.value)
    assert (body["label"], body["reason"], body["error"]["kind"]) == (
        "error",
        "invalid_json",
        "invalid_json",
    )
    assert sorted(orjson.loads(r.value)["reason"] for r in letters) == ["invalid_json", "oversized"]


async def test_exactly_once_a_reply_topic_forgotten_while_staged_stays_forgotten(
    kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exactly-once, replies to four topics staged in one transaction while only two are
    tracked: the two forgotten while their replies were staged are not asked for again once
    those replies are sent (the transaction's send tracked them again, for good)."""
    monkeypatch.setattr(replies_module, "TRACKED_TOPICS", 2)
    topics, settings = await setup(
        kafka_bootstrap,
        guarantee="exactly_once",
        transactional_id_prefix=unique("tx"),
        transaction_interval_s=2.0,  # the four replies are staged before the transaction
    )
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        clients = [
            ScreeningClient(
                kafka_bootstrap, request_topic=topics.requests, reply_topic_prefix=PREFIX
            )
            for _ in range(4)
        ]
        for client in clients:
            await client.start()
        try:
            verdicts = await asyncio.gather(
                *(c.screen(GOOD | {"id": f"s{n}"}, timeout=30) for n, c in enumerate(clients))
            )
        finally:
            for client in clients:
                await client.close()
        tracked = service._replies_producer.tracked()
        known = set(service.replies._known)
    used = {client.reply_topic for client in clients}
    assert [v.label for v in verdicts] == [Label.PASS] * 4
    assert len(known) == 2
    assert tracked & used <= known


async def test_a_reply_goes_to_a_partition_added_while_the_service_runs(
    kafka_bootstrap: str,
) -> None:
    """A reply topic grown while ``run`` knows it (its metadata cached): a request naming a new
    partition gets its reply there, the topic's metadata asked for afresh (it was dropped as
    ``unknown_partition`` until aiokafka's next periodic refresh, 5 minutes). A partition still
    missing after that is dropped and counted, with no second metadata request before
    ``reply.missing_topic_recheck_s``."""
    topics, settings = await setup(kafka_bootstrap)
    reply_topic = unique(PREFIX + "grown")
    await create_topics(kafka_bootstrap, {reply_topic: 1})

    def asking(i: int, partition: int) -> list[tuple[bytes | None, bytes, Any]]:
        return [(None, grounded(i), request_headers(reply_topic, b"c%d" % i, partition))]

    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        await produce(kafka_bootstrap, topics.requests, asking(0, 0))
        await read_until(kafka_bootstrap, reply_topic, expected=1, timeout_s=30)
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
        await admin.start()
        try:
            await admin.create_partitions({reply_topic: NewPartitions(total_count=3)})
        finally:
            await admin.close()
        await produce(kafka_bootstrap, topics.requests, asking(1, 2))
        replies = await read_until(kafka_bootstrap, reply_topic, expected=2, timeout_s=30)
        await produce(kafka_bootstrap, topics.requests, asking(2, 7))
        await wait_committed(kafka_bootstrap, settings.group_id, topics.requests, 1)
        stats = service.stats
    where = sorted((headers_of(r)[CORRELATION_ID_HEADER], r.partition) for r in replies)
    assert where == [(b"c0", 0), (b"c1", 2)]
    assert stats.replies_dropped == {"unknown_partition": 1}
