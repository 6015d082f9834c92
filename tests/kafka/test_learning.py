"""The learning cascade's shared state on a real broker: two replicas share what they learned,
a restart keeps it, and a reviewer's label (groundguard label) withdraws the basis it disproves."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable

import pytest

from consumers.runtime.learning import KafkaLearning, read_counts
from consumers.settings import ServiceSettings
from guard.learning.learner import Learner
from guard.learning.ledger import Count, Key, Ledger
from guard.learning.settings import CascadeSettings
from guard.models import ReviewLabel
from tests.kafka.kafkautil import unique

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(90)]

KEY = Key("offline", "fail:name_absent", "fail")
CASCADE = CascadeSettings(learn=True, min_count=30, seed="empty")


def service_settings(
    bootstrap: str, instance: str, calibration: str, labels: str
) -> ServiceSettings:
    return ServiceSettings.model_validate(
        {
            "bootstrap_servers": bootstrap,
            "instance_id": instance,
            "learning_flush_s": 0.2,
            "topics": {"calibration": calibration, "labels": labels},
        }
    )


@contextlib.asynccontextmanager
async def replica(
    bootstrap: str, instance: str, calibration: str, labels: str
) -> AsyncIterator[KafkaLearning]:
    learner = Learner(CASCADE, Ledger(instance))
    sharing = KafkaLearning(service_settings(bootstrap, instance, calibration, labels), learner)
    await sharing.start()
    try:
        yield sharing
    finally:
        await sharing.close()


async def eventually(check: Callable[[], bool], timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def teach(learner: Learner, n: int, prefix: str) -> None:
    for i in range(n):
        learner.observe(f"{prefix}-{i}", [KEY], "fail")


async def test_two_replicas_share_counts_and_a_restart_keeps_them(kafka_bootstrap: str) -> None:
    calibration, labels = unique("calibration"), unique("labels")
    async with (
        replica(kafka_bootstrap, "a", calibration, labels) as a,
        replica(kafka_bootstrap, "b", calibration, labels) as b,
    ):
        teach(a.learner, 40, "a")
        teach(b.learner, 30, "b")
        assert not a.learner.trusted(KEY)  # 40 alone: a bound of 0.937
        await eventually(lambda: a.learner.ledger.count(KEY) == Count(70, 70))
        await eventually(lambda: b.learner.ledger.count(KEY) == Count(70, 70))
        assert a.learner.trusted(KEY)
        assert b.learner.trusted(KEY)
    async with replica(kafka_bootstrap, "a", calibration, labels) as again:  # a restart
        assert again.learner.ledger.own[KEY] == Count(40, 40)  # read before it judges
        assert again.learner.ledger.count(KEY) == Count(70, 70)
    cli = Ledger("cli")
    settings = service_settings(kafka_bootstrap, "cli", calibration, labels)
    assert await read_counts(settings, cli) >= 2
    assert cli.count(KEY) == Count(70, 70)


async def test_a_reviewers_label_from_the_cli_withdraws_the_basis_it_disproves(
    kafka_bootstrap: str,
) -> None:
    calibration, labels = unique("calibration"), unique("labels")
    async with (
        replica(kafka_bootstrap, "a", calibration, labels) as a,
        replica(kafka_bootstrap, "b", calibration, labels) as b,
    ):
        teach(a.learner, 80, "a")
        await eventually(lambda: b.learner.trusted(KEY))
        env = {
            "GROUNDGUARD_BOOTSTRAP_SERVERS": kafka_bootstrap,
            "GROUNDGUARD_TOPICS__LABELS": labels,
            "GROUNDGUARD_TOPICS__CALIBRATION": calibration,
            "PATH": "/usr/bin:/bin",
        }
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "consumers", "label", "a-7", "pass", "--reviewer", "ana"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "labelled a-7 pass" in done.stdout
        await eventually(lambda: a.learner.labels == 1)
        assert a.learner.ledger.count(KEY) == Count(79, 89)  # the LLM's fail replaced
        assert not a.learner.trusted(KEY)
        await eventually(lambda: not b.learner.trusted(KEY))  # the peer sees it too
        await eventually(lambda: b.learner.unmatched_labels == 1)  # b never judged a-7


async def test_a_malformed_label_is_counted_and_stops_nothing(kafka_bootstrap: str) -> None:
    calibration, labels = unique("calibration"), unique("labels")
    async with replica(kafka_bootstrap, "a", calibration, labels) as a:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
        await producer.start()
        try:
            await producer.send_and_wait(labels, b"not json")
            good = ReviewLabel(request_id="gone", label="fail").model_dump_json().encode()
            await producer.send_and_wait(labels, good)
        finally:
            await producer.stop()
        await eventually(lambda: a.labels["malformed"] == 1 and a.labels["unknown"] == 1)


async def test_the_service_learns_from_its_last_tier_and_publishes_the_counts(
    kafka_bootstrap: str,
) -> None:
    """groundguard run's path: run_service builds the learner under the replica's
    instance_id, every verdict of the last tier labels the offline readings, and the counts
    reach topics.calibration (flushed at stop at the latest)."""
    from consumers.runtime.run import run_service
    from guard.models import Verdict
    from tests.kafka.kafkautil import create_topics, produce
    from tests.kafka.servicekit import grounded, make_settings, new_topics, ungrounded

    topics = new_topics()
    await create_topics(kafka_bootstrap, {topics.requests: 2})
    calibration, labels = unique("calibration"), unique("labels")
    settings = make_settings(
        kafka_bootstrap,
        topics,
        create_topics=True,
        instance_id="replica-7",
        learning_flush_s=0.2,
        judge={
            "tiers": [{"kind": "offline"}, {"kind": "fake"}],
            "cascade": {"learn": True, "seed": "empty"},
            "budget": {"cache_size": 0},  # identical messages would be served from the cache
        },
    )
    settings = settings.model_copy(
        update={
            "topics": settings.topics.model_copy(
                update={"calibration": calibration, "labels": labels}
            )
        }
    )
    seen: list[Verdict] = []
    stop = asyncio.Event()
    task = asyncio.create_task(run_service(settings, stop=stop, on_verdict=seen.append))
    await produce(kafka_bootstrap, topics.requests, [(None, grounded(i), None) for i in range(5)])
    await produce(kafka_bootstrap, topics.requests, [(None, ungrounded(i), None) for i in range(5)])
    await eventually(lambda: len(seen) >= 10, timeout_s=60)
    stop.set()
    await asyncio.wait_for(task, timeout=60)
    assert {v.judge.tier_name for v in seen} == {"fake"}  # nothing is trusted from empty
    assert all(v.judge.tiers[0].basis for v in seen)
    ledger = Ledger("reader")
    assert await read_counts(service_settings(kafka_bootstrap, "x", calibration, labels), ledger)
    assert set(ledger.peers) == {"replica-7"}
    assert sum(c.total for c in ledger.peers["replica-7"].values()) == 10
