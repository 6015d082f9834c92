"""Poison messages through the real broker: the service stays up, each poison message ends as a
verdict or a dead letter with its reason, and the good messages behind it on the same partition
get their verdicts (issue 9). One service run covers every case."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from guard.models import Verdict
from guard.testing import FakeJudge
from tests.kafka.kafkautil import produce, read_until
from tests.kafka.servicekit import (
    EVIDENCE,
    by_id,
    command,
    create_all,
    grounded,
    guard_with,
    make_settings,
    new_topics,
    running,
    service_env,
    wait_committed,
)
from tests.rawheaders import RawName, python_builder


def with_id(rid: str, **fields: Any) -> bytes:
    body = {"id": rid, "output": "The Eiffel Tower is in Paris", "context": EVIDENCE} | fields
    return json.dumps(body).encode()


async def limit_message_bytes(bootstrap: str, topic: str, limit: int) -> None:
    """Lower a topic's max.message.bytes below max_output_bytes (a misconfigured topic)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic, {"max.message.bytes": str(limit)})]
        )
    finally:
        await admin.close()


def explode_on(request_id: str) -> Callable[[Verdict], None]:
    def on_verdict(verdict: Verdict) -> None:
        if verdict.request_id == request_id:
            raise RuntimeError("a subscriber's callback failed")

    return on_verdict


DEEP = (
    b'{"id":"deep","output":"The Eiffel Tower is in Paris","context":"x","metadata":{"a":'
    + b"[" * 256
    + b"]" * 256
    + b"}}"
)
BIG = 123456789012345678901234567890
ROME = "The Eiffel Tower is in Rome"


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
async def test_poison_messages_never_stop_the_service_nor_the_partition(
    kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch, guarantee: str
) -> None:
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    # each output has its own limit (issue 29): verdicts and quarantine take 60,000 bytes
    await limit_message_bytes(kafka_bootstrap, topics.verdicts, 60_000)
    await limit_message_bytes(kafka_bootstrap, topics.quarantine, 60_000)
    settings = make_settings(
        kafka_bootstrap, topics, guarantee=guarantee, transactional_id_prefix=topics.requests
    )
    bad_json_headers = [("authorization", b"Bearer sk-live-123"), ("traceparent", b"00-aa-bb-01")]
    # produced before the service starts: the builder patch must not reach its producer
    await produce(
        kafka_bootstrap,
        topics.requests,
        [
            (b"a", grounded(0), None),
            (b"a", DEEP, None),
            (b"k" * 600_000, with_id("long-key"), None),
            (b"a", grounded(1), [("x-request-id", b"r" * 400_000)]),
        ],
    )
    with python_builder(monkeypatch):
        await produce(
            kafka_bootstrap,
            topics.requests,
            [(b"a", with_id("bad-header-name"), [(RawName(b"n\xff\xfe"), b"v")])],
        )
    await produce(
        kafka_bootstrap,
        topics.requests,
        [
            (b"a", b"{not json", bad_json_headers),
            (
                b"a",
                with_id(str(BIG), metadata={"n": BIG}).replace(
                    f'"{BIG}"'.encode(), str(BIG).encode(), 1
                ),
                None,
            ),
            (b"a", with_id("verdict-refused", metadata={"blob": "m" * 100_000}), None),
            (b"a", with_id("held", output=ROME, metadata={"blob": "q" * 35_000}), None),
            (b"a", grounded(2), None),
        ],
    )
    async with running(settings, guard_with(FakeJudge(), settings)) as service:
        service.on_verdict = explode_on("ok-1")  # a step after delivery raising: no dead letter
        verdicts = await read_until(
            kafka_bootstrap,
            topics.verdicts,
            expected=7,
            settle_s=0.5,
            isolation_level="read_committed",
        )
        held = await read_until(
            kafka_bootstrap, topics.quarantine, expected=1, isolation_level="read_committed"
        )
        dlq = await read_until(
            kafka_bootstrap, topics.dlq, expected=3, settle_s=0.5, isolation_level="read_committed"
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
    assert committed == ends
    assert len(dlq) == 3
    assert by_id(verdicts) == {
        "ok-0": 1,
        "long-key": 1,
        "ok-1": 1,
        "bad-header-name": 1,
        str(BIG): 1,
        "held": 1,
        "ok-2": 1,
    }
    by_request = {json.loads(r.value)["request_id"]: r for r in verdicts}
    assert by_request["long-key"].key.startswith(b"sha256:")
    assert json.loads(by_request[str(BIG)].value)["metadata"] == {"n": BIG}
    letters = {orjson.loads(r.value)["input"]["offset"]: orjson.loads(r.value) for r in dlq}
    assert letters[1]["reason"] == "internal_error"
    assert "building the verdict records" in letters[1]["detail"]
    assert letters[5]["reason"] == "invalid_json"
    assert letters[5]["headers"] == {"traceparent": "00-aa-bb-01"}
    assert letters[5]["headers_withheld"] == ["authorization"]
    assert b"sk-live" not in b"".join(r.value for r in dlq)
    assert letters[7]["reason"] == "oversized"  # the verdicts topic takes 60,000 bytes at most
    assert "the verdict record is" in letters[7]["detail"]  # fitted before the broker saw it
    # a failing answer whose quarantine record (payload + verdict) is over the limit keeps its
    # route, without its payload
    (quarantined,) = [orjson.loads(r.value) for r in held]
    assert quarantined["verdict"]["request_id"] == "held"
    assert (quarantined["payload"], quarantined["payload_omitted"]) == (None, True)


async def test_big_messages_are_bounded_by_buffered_bytes_not_only_by_count(
    kafka_bootstrap: str,
) -> None:
    """partition_buffer x big messages reached 428 MB RSS: with max_buffered_bytes the service
    pauses the partition once that many input bytes are held (plus at most one fetch), and
    still judges every message."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    limit = 1_048_576
    settings = make_settings(
        kafka_bootstrap, topics, concurrency=2, partition_buffer=512, max_buffered_bytes=limit
    )
    padding = "p" * 100_000
    await produce(
        kafka_bootstrap,
        topics.requests,
        [(b"a", with_id(f"big-{i}", padding=padding), None) for i in range(40)],
    )
    guard = guard_with(FakeJudge(latency_s=0.05), settings)
    async with running(settings, guard) as service:
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=40)
    assert len(by_id(verdicts)) == 40
    assert service.stats.peak_partition_buffered <= 22  # 40 without the bound
    one_fetch = max(1_048_576, 2 * settings.max_message_bytes)  # max_partition_fetch_bytes
    assert service.stats.peak_buffered_bytes <= limit + one_fetch
    assert service.stats.pauses >= 1
    assert service.stats.buffered_bytes == 0


async def test_a_bad_header_name_is_read_by_aiokafkas_pure_python_reader_too(
    kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 29: ``run`` with AIOKAFKA_NO_EXTENSIONS=1 (aiokafka's pure-Python record reader, as
    on a platform without its C extension): a header name that is not UTF-8 used to hold its
    partition at that offset forever (``fetch.undecodable``). It is read leniently, as with the
    C reader: the message and the ones behind it get their verdicts."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    await produce(kafka_bootstrap, topics.requests, [(b"a", grounded(0), None)])
    with python_builder(monkeypatch):
        await produce(
            kafka_bootstrap,
            topics.requests,
            [(b"a", with_id("bad-header-name"), [(RawName(b"n\xff\xfe"), b"v")])],
        )
    await produce(kafka_bootstrap, topics.requests, [(b"a", grounded(2), None)])
    env = service_env(
        AIOKAFKA_NO_EXTENSIONS="1",
        GROUNDGUARD_BOOTSTRAP_SERVERS=kafka_bootstrap,
        GROUNDGUARD_GROUP_ID=topics.requests,
        GROUNDGUARD_TOPICS__REQUESTS=topics.requests,
        GROUNDGUARD_TOPICS__VERDICTS=topics.verdicts,
        GROUNDGUARD_TOPICS__QUARANTINE=topics.quarantine,
        GROUNDGUARD_TOPICS__DLQ=topics.dlq,
        GROUNDGUARD_METRICS__ENABLED="false",
        GROUNDGUARD_JUDGE__PROVIDER="offline",
    )
    log_path = tmp_path / "run.log"
    async with command("run", env=env, log_path=log_path):
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=3, timeout_s=30)
    assert by_id(verdicts) == {"ok-0": 1, "bad-header-name": 1, "ok-2": 1}
    assert "fetch.undecodable" not in log_path.read_text()
