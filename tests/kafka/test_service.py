"""The guard service against a real broker: routing, commits, concurrency, backpressure, EOS."""

from __future__ import annotations

import asyncio
import base64

import orjson
import pytest

from guard.budgets.judge import build_budgeted_judge
from guard.budgets.settings import BudgetSettings, SampleKey
from guard.case import PreparedCase
from guard.engine import Guard
from guard.providers.base import JudgeOutcome
from guard.settings import JudgeSettings, Provider
from guard.testing import FakeJudge
from tests.kafka.kafkautil import create_topics, produce, read_until
from tests.kafka.servicekit import (
    EVIDENCE,
    by_id,
    create_all,
    grounded,
    guard_with,
    make_settings,
    new_topics,
    partition_count,
    running,
    ungrounded,
    wait_committed,
)


class _LatencyByOrder(FakeJudge):
    """A fake judge whose later calls answer faster than earlier ones."""

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        delay = max(0.0, 0.08 - 0.004 * self.calls)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(delay)
        finally:
            self.in_flight -= 1
        return await super().assess(case)


MALFORMED = {
    "invalid_json": b'{"output": "half',
    "invalid_utf8": b'{"output": "\xff\xfe"}',
    "missing_output": b'{"context": "no output here"}',
    "wrong_types": b'{"output": 42, "context": ["a", 1]}',
    "not_an_object": b"[1, 2, 3]",
    "oversized": b'{"output": "' + b"x" * 5000 + b'", "context": "x"}',
}
EXPECTED_REASONS = {
    "invalid_json": "invalid_json",
    "invalid_utf8": "invalid_utf8",
    "missing_output": "invalid_request",
    "wrong_types": "invalid_request",
    "not_an_object": "not_an_object",
    "oversized": "oversized",
}


async def test_every_input_gets_one_verdict_and_is_routed(kafka_bootstrap: str) -> None:
    """N good and malformed messages over 3 partitions: one verdict per id, failing ones in
    quarantine with their payload, passing ones in approved, malformed ones dead-lettered with
    the reason, the consumer still running, and the committed offsets at the end offsets."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=3)
    good = [(f"k{i}".encode(), grounded(i), [("traceparent", b"00-abc-01")]) for i in range(30)]
    bad = [(f"k{i}".encode(), ungrounded(i), None) for i in range(20)]
    broken = [
        (name.encode(), value, [("x-request-id", name.encode())])
        for name, value in MALFORMED.items()
    ]
    settings = make_settings(
        kafka_bootstrap, topics, approved=True, concurrency=16, max_message_bytes=4096
    )
    judge = FakeJudge(latency_s=0.01)
    async with running(settings, guard_with(judge, settings)) as service:
        await produce(kafka_bootstrap, topics.requests, [*good, *bad, *broken])
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=50, settle_s=1.0)
        quarantine = await read_until(kafka_bootstrap, topics.quarantine, expected=20)
        approved = await read_until(kafka_bootstrap, topics.approved, expected=30)
        dlq = await read_until(kafka_bootstrap, topics.dlq, expected=len(MALFORMED))
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 3
        )
        # a poison message never stops the consumer: it still judges afterwards
        await produce(kafka_bootstrap, topics.requests, [(b"late", grounded(999), None)])
        late = await read_until(kafka_bootstrap, topics.verdicts, expected=51, settle_s=0.5)
        assert service.stats.consumed == 50 + len(MALFORMED) + 1

    assert by_id(verdicts) == {
        **{f"ok-{i}": 1 for i in range(30)},
        **{f"bad-{i}": 1 for i in range(20)},
    }
    labels = {orjson.loads(r.value)["request_id"]: orjson.loads(r.value)["label"] for r in verdicts}
    assert {k for k, v in labels.items() if v == "fail"} == {f"bad-{i}" for i in range(20)}
    assert sorted(by_id(quarantine)) == sorted(f"bad-{i}" for i in range(20))
    for record in quarantine:
        body = orjson.loads(record.value)
        assert body["payload"] == orjson.loads(ungrounded(int(body["request_id"][4:])))
        assert body["verdict"]["label"] == "fail"
    assert sorted(orjson.loads(r.value)["id"] for r in approved) == sorted(
        f"ok-{i}" for i in range(30)
    )
    letters = {r.key.decode(): orjson.loads(r.value) for r in dlq}
    assert {name: letter["reason"] for name, letter in letters.items()} == EXPECTED_REASONS
    assert letters["invalid_json"]["payload_text"] == MALFORMED["invalid_json"].decode()
    assert letters["invalid_utf8"]["payload_base64"] is not None
    assert letters["oversized"]["payload_truncated"] is True
    assert letters["missing_output"]["headers"] == {"x-request-id": "missing_output"}
    first = orjson.loads(verdicts[0].value)["input"]
    assert first["topic"] == topics.requests
    ok_record = next(r for r in verdicts if orjson.loads(r.value)["request_id"] == "ok-0")
    assert ok_record.key == b"k0"
    assert ("traceparent", b"00-abc-01") in list(ok_record.headers)
    assert committed == ends
    assert sum(ends.values()) == 50 + len(MALFORMED)
    assert by_id(late)["ok-999"] == 1


async def test_concurrency_limit_is_reached_within_one_partition_and_never_exceeded(
    kafka_bootstrap: str,
) -> None:
    """One partition, a slow judge: messages of the partition are judged concurrently up to the
    limit, and the judge never sees more calls at once than the limit."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = make_settings(kafka_bootstrap, topics, concurrency=8, partition_buffer=64)
    judge = FakeJudge(latency_s=0.05)
    async with running(settings, guard_with(judge, settings)):
        await produce(
            kafka_bootstrap, topics.requests, [(None, grounded(i), None) for i in range(120)]
        )
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=120)
    assert len(by_id(verdicts)) == 120
    assert judge.peak_in_flight == 8


async def test_a_full_partition_buffer_pauses_the_partition_and_resumes_it(
    kafka_bootstrap: str,
) -> None:
    """With a buffer of 4 messages per partition, the partition is paused whenever 4 are held,
    resumed as they finish, every message still gets its verdict, and the number held never
    exceeds the buffer plus one fetch."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = make_settings(
        kafka_bootstrap, topics, concurrency=2, partition_buffer=4, kafka={"max_poll_records": 2}
    )
    judge = FakeJudge(latency_s=0.01)
    async with running(settings, guard_with(judge, settings)) as service:
        await produce(
            kafka_bootstrap, topics.requests, [(None, grounded(i), None) for i in range(40)]
        )
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=40)
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
    assert len(by_id(verdicts)) == 40
    assert service.stats.pauses >= 5
    assert service.stats.peak_partition_buffered <= 4 + 2 - 1
    assert committed == ends


async def test_exactly_once_publishes_each_verdict_once_for_read_committed_readers(
    kafka_bootstrap: str,
) -> None:
    """In exactly-once mode the outputs and the offsets go in transactions: a read_committed
    reader sees one verdict per input, quarantine and dead letters included, and the group's
    committed offsets reach the end offsets."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=3)
    settings = make_settings(
        kafka_bootstrap,
        topics,
        guarantee="exactly_once",
        transactional_id_prefix=f"gg-{topics.requests}",
        concurrency=16,
    )
    judge = FakeJudge(latency_s=0.01)
    async with running(settings, guard_with(judge, settings)) as service:
        await produce(
            kafka_bootstrap,
            topics.requests,
            [(f"k{i}".encode(), grounded(i) if i % 3 else ungrounded(i), None) for i in range(60)]
            + [(b"broken", b"{not json", None)],
        )
        verdicts = await read_until(
            kafka_bootstrap,
            topics.verdicts,
            expected=60,
            isolation_level="read_committed",
            settle_s=1.0,
        )
        quarantine = await read_until(
            kafka_bootstrap,
            topics.quarantine,
            expected=20,
            isolation_level="read_committed",
            settle_s=0.5,
        )
        dlq = await read_until(
            kafka_bootstrap, topics.dlq, expected=1, isolation_level="read_committed"
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 3
        )
        assert service.stats.transactions >= 1
    ids = {f"ok-{i}" if i % 3 else f"bad-{i}": 1 for i in range(60)}
    assert by_id(verdicts) == ids
    assert by_id(quarantine) == {f"bad-{i}": 1 for i in range(0, 60, 3)}
    assert [orjson.loads(r.value)["reason"] for r in dlq] == ["invalid_json"]
    assert committed == ends


async def test_ordering_by_key_publishes_verdicts_of_one_key_in_input_order(
    kafka_bootstrap: str,
) -> None:
    """With ordering=key, a key's messages are judged one after another (in offset order) even
    though the judge answers later messages faster; different keys still run concurrently."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = make_settings(kafka_bootstrap, topics, ordering="key", concurrency=16)

    judge = _LatencyByOrder()
    records = [(f"user-{i % 4}".encode(), grounded(i), None) for i in range(40)]
    async with running(settings, guard_with(judge, settings)):
        await produce(kafka_bootstrap, topics.requests, records)
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=40)
    per_key: dict[bytes, list[int]] = {}
    for record in verdicts:
        per_key.setdefault(record.key, []).append(orjson.loads(record.value)["input"]["offset"])
    assert len(per_key) == 4
    for offsets in per_key.values():
        assert offsets == sorted(offsets)
    assert judge.peak_in_flight > 1


async def test_topics_are_created_at_start_when_allowed(kafka_bootstrap: str) -> None:
    """With create_topics, missing topics are created with the configured partitions, and the
    service works on them straight away."""
    topics = new_topics()
    settings = make_settings(kafka_bootstrap, topics, create_topics=True, topic_partitions=2)
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        for _ in range(300):  # produce only once the service made its topics (a broker that
            if service.stats.started:  # auto-creates topics would make a 1-partition one)
                break
            await asyncio.sleep(0.1)
        await produce(kafka_bootstrap, topics.requests, [(None, grounded(1), None)])
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=1)
    assert by_id(verdicts) == {"ok-1": 1}
    assert await partition_count(kafka_bootstrap, topics.requests) == 2
    assert await partition_count(kafka_bootstrap, topics.dlq) == 2


async def test_sampling_by_key_uses_the_kafka_message_key(kafka_bootstrap: str) -> None:
    """With the budget's sampling keyed on the message key, the service hands the Kafka key to
    the judge core: every message of one key is either judged or skipped as `not_sampled`, and
    the unsampled ones are not quarantined."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    budget = BudgetSettings(sample_rate=0.5, sample_key=SampleKey.KEY)
    settings = make_settings(
        kafka_bootstrap, topics, judge=JudgeSettings(provider=Provider.FAKE, budget=budget)
    )
    judge = build_budgeted_judge(FakeJudge(), budget, price=lambda model, usage: 0.0)
    keys = [f"user-{k}".encode() for k in range(12)]
    async with running(settings, Guard(judge, settings.judge)):
        await produce(
            kafka_bootstrap, topics.requests, [(keys[i % 12], grounded(i), None) for i in range(60)]
        )
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=60)
        quarantine = await read_until(kafka_bootstrap, topics.quarantine, expected=0, settle_s=0.5)
    labels_by_key: dict[bytes, set[str]] = {}
    for record in verdicts:
        body = orjson.loads(record.value)
        labels_by_key.setdefault(record.key, set()).add(f"{body['label']}:{body['reason']}")
    assert all(len(labels) == 1 for labels in labels_by_key.values())
    outcomes = {next(iter(labels)) for labels in labels_by_key.values()}
    assert outcomes == {"pass:None", "skipped:not_sampled"}
    assert quarantine == []


async def test_a_quarantine_record_too_large_is_quarantined_without_its_payload(
    kafka_bootstrap: str,
) -> None:
    """A failing answer whose quarantine record (original payload + verdict) would exceed
    max_output_bytes: its verdict is published and it is still quarantined (it used to go to
    the dead-letter topic), the copied payload left out and said so; the service carries on."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = make_settings(kafka_bootstrap, topics, max_output_bytes=6000)
    big = orjson.dumps(
        {
            "id": "big",
            "output": "The Eiffel Tower is in Rome",
            "context": EVIDENCE + " filler" * 800,
        }
    )
    async with running(settings, guard_with(FakeJudge(), settings)):
        await produce(
            kafka_bootstrap, topics.requests, [(b"a", big, None), (b"b", ungrounded(1), None)]
        )
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=2)
        quarantine = await read_until(kafka_bootstrap, topics.quarantine, expected=2, settle_s=0.5)
        dlq = await read_until(kafka_bootstrap, topics.dlq, expected=0, timeout_s=1)
    assert by_id(verdicts) == {"big": 1, "bad-1": 1}
    assert by_id(quarantine) == {"big": 1, "bad-1": 1}
    held = {orjson.loads(r.value)["request_id"]: orjson.loads(r.value) for r in quarantine}
    assert held["big"]["payload"] is None
    assert held["big"]["payload_omitted"] is True
    assert held["big"]["payload_bytes"] == len(big)
    assert held["bad-1"]["payload_omitted"] is False
    assert dlq == []


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
async def test_a_dead_letter_that_json_escaping_makes_too_large_still_reaches_the_dlq(
    kafka_bootstrap: str, guarantee: str
) -> None:
    """200 KB of \\x01 bytes (valid UTF-8, invalid JSON) would be a ~1.2 MB dead letter once
    JSON-escaped; it is published shrunk (payload as base64) and the service keeps running,
    judging the next message and committing past both."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = make_settings(
        kafka_bootstrap, topics, guarantee=guarantee, transactional_id_prefix=topics.requests
    )
    poison = b"\x01" * 200_000
    async with running(settings, guard_with(FakeJudge(), settings)):
        await produce(
            kafka_bootstrap, topics.requests, [(b"a", poison, None), (b"b", grounded(1), None)]
        )
        dlq = await read_until(
            kafka_bootstrap, topics.dlq, expected=1, isolation_level="read_committed"
        )
        verdicts = await read_until(
            kafka_bootstrap, topics.verdicts, expected=1, isolation_level="read_committed"
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
    assert len(dlq) == 1
    letter = orjson.loads(dlq[0].value)
    assert letter["reason"] == "invalid_json"
    assert len(dlq[0].value) <= settings.max_output_bytes
    assert letter["payload_bytes"] == len(poison)
    assert poison.startswith(base64.b64decode(letter["payload_base64"]))
    assert by_id(verdicts) == {"ok-1": 1}
    assert committed == ends


async def test_a_dead_letter_the_broker_refuses_as_too_large_is_sent_without_payload(
    kafka_bootstrap: str,
) -> None:
    """At-least-once: the DLQ topic's max.message.bytes (8 KB) is below max_output_bytes, so the
    broker refuses the 20 KB invalid_json dead letter; it is sent again without payload, and the
    service goes on. (Exactly-once cannot do this: after the refusal aiokafka's transactional
    producer fails with OutOfOrderSequenceNumber, so there max_output_bytes must fit the DLQ.)"""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    topics = new_topics()
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(topics.dlq, 1, 1, topic_configs={"max.message.bytes": "8192"})]
        )
    finally:
        await admin.close()
    await create_topics(
        kafka_bootstrap,
        {topics.requests: 1, topics.verdicts: 1, topics.quarantine: 1, topics.approved: 1},
    )
    settings = make_settings(kafka_bootstrap, topics)
    poison = b"{" + b"x" * 20_000
    async with running(settings, guard_with(FakeJudge(), settings)):
        await produce(
            kafka_bootstrap, topics.requests, [(b"a", poison, None), (b"b", grounded(1), None)]
        )
        dlq = await read_until(
            kafka_bootstrap, topics.dlq, expected=1, isolation_level="read_committed"
        )
        verdicts = await read_until(
            kafka_bootstrap, topics.verdicts, expected=1, isolation_level="read_committed"
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
    assert len(dlq) == 1
    letter = orjson.loads(dlq[0].value)
    assert letter["reason"] == "invalid_json"
    assert letter["payload_text"] is None
    assert letter["payload_truncated"] is True
    assert letter["payload_bytes"] == len(poison)
    assert by_id(verdicts) == {"ok-1": 1}
    assert committed == ends
