"""The service's life: draining on stop and resuming after restart, a second consumer joining
and leaving (exactly-once too), and intake stopping when the judge account is unusable, then a
restart."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from guard.case import PreparedCase
from guard.decide.assessment import Scale5Assessment
from guard.errors import JudgeError, QuotaExhausted
from guard.providers.base import JudgeOutcome
from guard.testing import FakeJudge
from tests.kafka.kafkautil import produce, read_until
from tests.kafka.servicekit import (
    by_id,
    create_all,
    grounded,
    guard_with,
    make_settings,
    new_topics,
    running,
    wait_committed,
)


def _inputs(records: list[Any]) -> dict[tuple[int, int], int]:
    """(partition, offset) of the input of each verdict -> how many verdicts it has."""
    counts: dict[tuple[int, int], int] = {}
    for record in records:
        source = orjson.loads(record.value)["input"]
        key = (source["partition"], source["offset"])
        counts[key] = counts.get(key, 0) + 1
    return counts


async def test_stop_drains_in_flight_work_and_a_restart_finishes_the_rest(
    kafka_bootstrap: str,
) -> None:
    """Stopped mid-run, the service finishes every judgement it started (each one published),
    commits only offsets whose messages have verdicts, and a restarted service judges the rest:
    every input ends with a verdict, with at most the in-flight count judged twice."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    settings = make_settings(
        kafka_bootstrap, topics, concurrency=4, partition_buffer=10, drain_timeout_s=60
    )
    await produce(
        kafka_bootstrap, topics.requests, [(f"k{i}".encode(), grounded(i), None) for i in range(40)]
    )
    first = FakeJudge(latency_s=0.2)
    async with running(settings, guard_with(first, settings)):
        await read_until(kafka_bootstrap, topics.verdicts, expected=6)
    after_stop = await read_until(kafka_bootstrap, topics.verdicts, expected=40, timeout_s=3)
    committed, _ = await wait_committed(
        kafka_bootstrap, settings.group_id, topics.requests, 2, timeout_s=1
    )
    judged = _inputs(after_stop)
    assert len(after_stop) == first.calls  # every started judgement was published
    assert len(after_stop) < 40
    for tp, offset in committed.items():
        assert all((tp.partition, o) in judged for o in range(offset))

    second = FakeJudge(latency_s=0.01)
    async with running(settings, guard_with(second, settings)):
        everything = await read_until(kafka_bootstrap, topics.verdicts, expected=40, settle_s=1.0)
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 2
        )
    assert set(by_id(everything)) == {f"ok-{i}" for i in range(40)}
    assert len(everything) - 40 <= settings.concurrency * 2  # re-judged: at most in flight
    assert committed == ends


async def test_a_consumer_joining_and_leaving_mid_run_loses_nothing(kafka_bootstrap: str) -> None:
    """A second replica joins the group mid-run and later leaves: partitions move twice, and
    every input still gets a verdict, with duplicates bounded by what was held in memory."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=4)
    settings = make_settings(
        kafka_bootstrap, topics, concurrency=8, partition_buffer=16, revoke_timeout_s=10
    )
    batches = [
        [(f"k{i}".encode(), grounded(i), None) for i in range(start, start + 150)]
        for start in (0, 150, 300)
    ]
    one, two = FakeJudge(latency_s=0.05), FakeJudge(latency_s=0.05)
    async with running(settings, guard_with(one, settings)) as first:
        await produce(kafka_bootstrap, topics.requests, batches[0])
        await read_until(kafka_bootstrap, topics.verdicts, expected=20)
        other = settings.model_copy(update={"instance_id": "second"})
        async with running(other, guard_with(two, other)) as second:
            await _until(lambda: bool(second.stats.partitions))
            await produce(kafka_bootstrap, topics.requests, batches[1])  # some land on its share
            await _until(lambda: second.stats.consumed >= 20)
        await produce(kafka_bootstrap, topics.requests, batches[2])  # the first takes all back
        verdicts = await read_until(
            kafka_bootstrap, topics.verdicts, expected=450, settle_s=1.0, timeout_s=120
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 4
        )
        assert first.stats.rebalances >= 3
    assert second.stats.consumed >= 20
    assert set(by_id(verdicts)) == {f"ok-{i}" for i in range(450)}
    assert len(verdicts) - 450 <= 2 * (settings.partition_buffer * 4)
    assert committed == ends


async def _until(condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    """Poll ``condition`` every 0.1 s; fail the test when it does not hold within
    ``timeout_s``."""
    for _ in range(int(timeout_s / 0.1)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"condition not met within {timeout_s}s")


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
async def test_quota_exhaustion_stops_intake_and_resuming_judges_the_rest(
    kafka_bootstrap: str, guarantee: str
) -> None:
    """When the judge reports an exhausted quota, the service pauses every partition instead of
    burning through the backlog, stays up but unready, and once intake may resume it judges
    every remaining message. Messages in flight when intake stopped (the one that triggered it
    included) get no `error` verdict: they are rewound and judged again like the others."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    settings = make_settings(
        kafka_bootstrap,
        topics,
        concurrency=4,
        partition_buffer=20,
        guarantee=guarantee,
        transactional_id_prefix=topics.requests,
    )
    quota_left = {"ok": False}

    def script(case: PreparedCase) -> Scale5Assessment | JudgeError:
        if not quota_left["ok"]:
            return QuotaExhausted("insufficient_quota", status=429)
        return Scale5Assessment(explanation="ok", claims=[], score=5)

    judge = FakeJudge(script=script, latency_s=0.02)
    guard = guard_with(judge, settings)
    async with running(settings, guard) as service:
        await produce(
            kafka_bootstrap,
            topics.requests,
            [(f"k{i}".encode(), grounded(i), None) for i in range(100)],
        )
        await _until(
            lambda: bool(service.stats.intake_stopped) and service.stats.in_flight == 0,
            timeout_s=10,
        )
        await asyncio.sleep(1.0)  # a window of polls in which nothing else may be judged
        calls_while_stopped = judge.calls
        assert service.stats.intake_stopped == "quota_exhausted"
        assert service.stats.ready is False
        assert calls_while_stopped <= 2 * settings.concurrency

        quota_left["ok"] = True
        guard.intake_stop_reason = None
        verdicts = await read_until(
            kafka_bootstrap,
            topics.verdicts,
            expected=100,
            settle_s=1.0,
            isolation_level="read_committed",
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 2
        )
    labels = [orjson.loads(r.value)["label"] for r in verdicts]
    assert calls_while_stopped >= 1
    assert labels.count("error") == 0
    assert set(labels) == {"pass"}
    assert set(by_id(verdicts)) == {f"ok-{i}" for i in range(100)}
    assert len(verdicts) == 100
    assert committed == ends


class _HangsOn(FakeJudge):
    """A fake judge that never answers for one request id."""

    def __init__(self, request_id: str) -> None:
        super().__init__()
        self.request_id = request_id

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        if case.request_id == self.request_id:
            await asyncio.Event().wait()  # until cancelled by the drain deadline
        return await super().assess(case)


async def test_messages_finished_behind_a_stuck_one_are_not_judged_again_after_restart(
    kafka_bootstrap: str,
) -> None:
    """One message hangs while the 29 after it finish: the commit stays at the stuck message, but
    its metadata records the finished ones, so a restarted service judges only the stuck one."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = make_settings(kafka_bootstrap, topics, concurrency=8, drain_timeout_s=0.5)
    await produce(kafka_bootstrap, topics.requests, [(None, grounded(i), None) for i in range(30)])
    async with running(settings, guard_with(_HangsOn("ok-0"), settings)):
        await read_until(kafka_bootstrap, topics.verdicts, expected=29)
    # stopped: the stuck judgement was cancelled at the drain deadline, the rest committed
    committed, _ = await wait_committed(
        kafka_bootstrap, settings.group_id, topics.requests, 1, timeout_s=0.5
    )
    assert list(committed.values()) == [0]  # the stuck message holds the commit

    second_judge = FakeJudge()
    async with running(settings, guard_with(second_judge, settings)) as second:
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=30, settle_s=1.0)
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 1
        )
    assert by_id(verdicts) == {f"ok-{i}": 1 for i in range(30)}
    assert second_judge.calls == 1
    assert second.stats.skipped_finished == 29
    assert committed == ends


async def test_exactly_once_a_replica_joining_and_leaving_leaves_each_verdict_once(
    kafka_bootstrap: str,
) -> None:
    """Exactly-once across two rebalances: a second replica (its own transactional id) joins
    mid-run and leaves; a read_committed reader sees every verdict exactly once, no loss and no
    duplicate, and the group's offsets reach the end."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=4)
    settings = make_settings(
        kafka_bootstrap,
        topics,
        concurrency=8,
        partition_buffer=16,
        guarantee="exactly_once",
        transactional_id_prefix=topics.requests,
        revoke_timeout_s=10,
    )
    batches = [
        [(f"k{i}".encode(), grounded(i), None) for i in range(start, start + 60)]
        for start in (0, 60, 120)
    ]
    async with running(settings, guard_with(FakeJudge(latency_s=0.02), settings)) as first:
        await produce(kafka_bootstrap, topics.requests, batches[0])
        await read_until(
            kafka_bootstrap, topics.verdicts, expected=10, isolation_level="read_committed"
        )
        other = settings.model_copy(update={"instance_id": "second"})
        async with running(other, guard_with(FakeJudge(latency_s=0.02), other)) as second:
            await _until(lambda: bool(second.stats.partitions))
            await produce(kafka_bootstrap, topics.requests, batches[1])
            await _until(lambda: second.stats.transactions >= 1)
        await produce(kafka_bootstrap, topics.requests, batches[2])  # the first takes all back
        verdicts = await read_until(
            kafka_bootstrap,
            topics.verdicts,
            expected=180,
            settle_s=2.0,
            isolation_level="read_committed",
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 4
        )
        assert first.stats.rebalances >= 3
    assert second.stats.transactions >= 1
    counts = by_id(verdicts)
    assert set(counts) == {f"ok-{i}" for i in range(180)}
    assert [i for i, n in counts.items() if n > 1] == []
    assert committed == ends


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
async def test_a_restart_after_an_intake_stop_judges_everything_left(
    kafka_bootstrap: str, guarantee: str
) -> None:
    """The judge account runs out of quota: intake stops (nothing published for the messages it
    left). The operator fixes the account and restarts the service: the new one judges every
    message left, none gets an error verdict, and (exactly-once) none is published twice."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    settings = make_settings(
        kafka_bootstrap,
        topics,
        concurrency=4,
        partition_buffer=20,
        guarantee=guarantee,
        transactional_id_prefix=topics.requests,
    )

    def out_of_quota(case: PreparedCase) -> Scale5Assessment | JudgeError:
        return QuotaExhausted("insufficient_quota", status=429)

    exhausted = FakeJudge(script=out_of_quota, latency_s=0.02)
    async with running(settings, guard_with(exhausted, settings)) as service:
        await produce(
            kafka_bootstrap,
            topics.requests,
            [(f"k{i}".encode(), grounded(i), None) for i in range(60)],
        )
        await _until(
            lambda: service.stats.intake_stopped is not None and service.stats.in_flight == 0
        )
        assert service.stats.intake_stopped == "quota_exhausted"
    assert exhausted.calls >= 1
    async with running(settings, guard_with(FakeJudge(latency_s=0.01), settings)):
        verdicts = await read_until(
            kafka_bootstrap,
            topics.verdicts,
            expected=60,
            settle_s=1.0,
            isolation_level="read_committed",
        )
        committed, ends = await wait_committed(
            kafka_bootstrap, settings.group_id, topics.requests, 2
        )
    labels = [orjson.loads(r.value)["label"] for r in verdicts]
    assert set(labels) == {"pass"}
    assert set(by_id(verdicts)) == {f"ok-{i}" for i in range(60)}
    if guarantee == "exactly_once":
        assert len(verdicts) == 60
    assert committed == ends
