"""The delivery guarantees, proved deterministically: :class:`GuardService` driven by an
in-memory consumer and producer (``tests/unit/fakekafka.py``) whose gates hold each race window
open on purpose, and a virtual clock that decides when periodic commits run."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiokafka.errors import (
    KafkaConnectionError,
    MessageSizeTooLargeError,
    TopicAuthorizationFailedError,
)
from aiokafka.structs import TopicPartition
from structlog.testing import capture_logs

from consumers.errors import PublishFailed
from consumers.runtime import service as service_module
from consumers.runtime.batchstate import stream_of
from consumers.runtime.service import GuardService
from consumers.settings import ServiceSettings, TopicSettings
from guard.batch.items import ItemRef
from guard.batch.journal import JournalError
from guard.case import PreparedCase
from guard.decide.assessment import Assessment
from guard.engine import Guard
from guard.errors import JudgeError, QuotaExhausted
from guard.models import ScoringMode
from guard.settings import JudgeSettings, Provider
from guard.testing import FakeJudge
from guard.testing.fake_judge import grounded_if_in_evidence
from tests.unit.fakekafka import Clock, FakeBroker, FakeCluster, FakeConsumer, FakeProducer, until

pytestmark = pytest.mark.timeout(60)
EVIDENCE = "The Eiffel Tower is in Paris. It was completed in 1889."
INTERVAL_S = 1.0  # commit and transaction interval, on the virtual clock
A, B = 0, 1


def settings(**overrides: Any) -> ServiceSettings:
    values: dict[str, Any] = {
        "bootstrap_servers": "fake:9092",
        "group_id": "group",
        "instance_id": "test",
        "topics": TopicSettings(
            requests="requests", verdicts="verdicts", quarantine="quarantine", dlq="dlq"
        ),
        "commit_interval_s": INTERVAL_S,
        "transaction_interval_s": INTERVAL_S,
        "kafka": {"poll_timeout_ms": 20},
        "drain_timeout_s": 5.0,
        "judge": JudgeSettings(provider=Provider.FAKE, mode=ScoringMode.SCALE5),
    } | overrides
    return ServiceSettings.model_validate(values)


EXACTLY_ONCE = {"guarantee": "exactly_once", "transactional_id_prefix": "gg"}


def request(i: int) -> bytes:
    return orjson.dumps(
        {"id": f"ok-{i}", "output": "The Eiffel Tower is in Paris", "context": EVIDENCE}
    )


def ids(*numbers: int) -> list[str]:
    return sorted(f"ok-{i}" for i in numbers)


class Harness:
    """One service over ``cluster``, its clients, and its clock."""

    def __init__(
        self,
        cluster: FakeCluster,
        service_settings: ServiceSettings,
        judge: FakeJudge | None = None,
    ) -> None:
        self.cluster = cluster
        self.broker = FakeBroker(cluster)
        self.clock = Clock()
        self.stop = asyncio.Event()
        self.judge = judge or FakeJudge()
        self.service = GuardService(
            service_settings,
            Guard(self.judge, service_settings.judge),
            stop=self.stop,
            broker=self.broker,
            clock=self.clock,
        )
        self.task: asyncio.Task[None] | None = None

    @property
    def consumer(self) -> FakeConsumer:
        return self.broker.consumers[-1]

    @property
    def producer(self) -> FakeProducer:
        return self.broker.producers[-1]

    async def start(self, partitions: list[int]) -> None:
        self.task = asyncio.create_task(self.service.run())
        await until(lambda: bool(self.broker.consumers) and self.consumer.started, "start")
        await self.consumer.rebalance(partitions)

    async def loop_turns(self, turns: int = 2) -> None:
        """Wait until the loop fetched ``turns`` more times: it went once around at least."""
        target = self.consumer.getmany_calls + turns
        await until(lambda: self.consumer.getmany_calls >= target, "loop turns")

    async def commit_now(self) -> None:
        """Let a periodic commit run: advance the clock past the interval, wait a loop turn."""
        self.clock.advance(INTERVAL_S)
        await self.loop_turns()

    async def committed(self, partition: int, offset: int, *, rounds: int = 100) -> None:
        """Run periodic commits until ``partition`` is committed at ``offset`` (bounded)."""
        for _ in range(rounds):
            if self.cluster.committed_offset(partition) == offset:
                return
            await self.commit_now()
        raise AssertionError(
            f"partition {partition} committed at "
            f"{self.cluster.committed_offset(partition)}, not {offset}"
        )

    def judged(self) -> int:
        return sum(self.service.stats.verdicts.values())


@contextlib.asynccontextmanager
async def running(
    cluster: FakeCluster, partitions: list[int], *, judge: FakeJudge | None = None, **overrides: Any
) -> AsyncIterator[Harness]:
    harness = Harness(cluster, settings(**overrides), judge)
    await harness.start(partitions)
    try:
        yield harness
    finally:
        harness.stop.set()
        assert harness.task is not None
        with contextlib.suppress(PublishFailed):
            await harness.task


async def test_each_message_reaches_the_judge_with_its_stream_position() -> None:
    """The runtime hands every message's topic-partition and offset to the core as an explicit
    argument, and the judge sees it on the case (a batch item's ``custom_id`` is made of it)."""
    seen: list[ItemRef | None] = []

    def script(case: PreparedCase) -> Assessment:
        seen.append(case.item)
        return grounded_if_in_evidence(case)

    cluster = FakeCluster()
    async with running(cluster, [A, B], judge=FakeJudge(script)) as h:
        for partition, i in ((A, 0), (B, 1), (A, 2)):
            cluster.produce(partition, request(i))
        await until(lambda: h.judged() == 3, "three verdicts")
    a, b = stream_of(cluster.topic, A), stream_of(cluster.topic, B)
    assert sorted(r for r in seen if r is not None) == sorted(
        [ItemRef(a, 0), ItemRef(b, 0), ItemRef(a, 1)]
    )
    assert None not in seen


async def test_records_fetched_while_on_assigned_awaits_are_never_skipped() -> None:
    """aiokafka fetches a new partition before ``on_assigned`` returns. The service pauses it
    first, so nothing is fetched for it until it is tracked (no seek back needed), and every
    record, old and new, gets its verdict once."""
    cluster = FakeCluster()
    for i in range(5):
        cluster.produce(A, request(i))
    async with running(cluster, []) as h:
        h.consumer.lookup_gate = asyncio.Event()  # on_assigned awaits the committed offsets
        assigning = asyncio.create_task(h.consumer.rebalance([A]))
        await until(lambda: h.consumer.looking_up, "on_assigned awaiting")
        await h.loop_turns(3)  # the loop fetched while on_assigned awaited
        h.consumer.lookup_gate.set()
        await assigning
        for i in range(5, 10):
            cluster.produce(A, request(i))
        await h.committed(A, 10)
        assert cluster.verdict_ids() == ids(*range(10))
        assert h.consumer.seeks == []  # paused while untracked: nothing fetched, nothing undone
    assert cluster.verdict_ids() == ids(*range(10))


class UnreadableJournal:
    """A batch journal whose topic cannot be read (the broker times out)."""

    async def load(self, committed: dict[TopicPartition, int]) -> int:
        raise JournalError("cannot read guard.batches: timed out")

    def forget(self, partitions: list[TopicPartition]) -> None:
        return None

    def settle(self, committed: dict[TopicPartition, int | None]) -> None:
        return None

    async def close(self) -> None:
        return None


async def test_a_batch_journal_that_cannot_be_read_at_assignment_stops_the_service() -> None:
    """aiokafka logs and ignores an error of ``on_assigned``: the partitions would be fetched
    but never tracked, so never judged, until the next rebalance. The service stops instead
    (a restart reads the journal again) and commits nothing past the unjudged messages."""
    cluster = FakeCluster()
    cluster.produce(A, request(0))
    harness = Harness(cluster, settings())
    harness.task = asyncio.create_task(harness.service.run())
    await until(lambda: bool(harness.broker.consumers) and harness.consumer.started, "start")
    harness.service._journal = UnreadableJournal()  # type: ignore[assignment]
    with contextlib.suppress(JournalError):  # aiokafka would log it and go on
        await harness.consumer.rebalance([A])
    with pytest.raises(JournalError):
        await asyncio.wait_for(harness.task, 10)
    assert cluster.verdict_ids() == []
    assert cluster.committed_offset(A) in (None, 0)


async def test_a_commit_waiting_while_a_revoke_runs_never_commits_the_revoked_partition() -> None:
    """Exactly-once: the revoke's flush transaction is held open while a periodic commit
    (holding a list with the partition) waits for the lock; the flush then aborts. The waiting
    commit must leave the revoked partition alone: its staged verdicts and offsets are the next
    owner's, or they would be published twice."""
    cluster = FakeCluster()
    async with running(cluster, [A, B], **EXACTLY_ONCE) as h:
        for i in range(3):
            cluster.produce(A, request(i))
        await until(lambda: h.judged() == 3, "3 staged")
        await h.committed(A, 3)
        for i in range(3, 5):
            cluster.produce(A, request(i))
        await until(lambda: h.judged() == 5, "2 more staged")

        h.producer.transaction_gate = asyncio.Event()
        h.producer.fail_next_transaction = KafkaConnectionError("coordinator moved")
        rebalancing = asyncio.create_task(h.consumer.rebalance([B]))
        await until(lambda: h.producer.ending_transaction, "the revoke's flush in progress")
        h.clock.advance(INTERVAL_S)  # a periodic commit is due; it waits for the lock
        assert h.service.commits is not None
        commits = h.service.commits
        await until(lambda: commits.waiting == 1, "periodic commit waiting on the lock")
        h.producer.transaction_gate.set()  # the flush aborts; the revoke ends
        h.producer.transaction_gate = None
        await rebalancing
        await h.loop_turns()  # the waiting commit ran
        await h.commit_now()
        assert cluster.committed_offset(A) == 3
        assert cluster.verdict_ids() == ids(0, 1, 2)
        assert all(TopicPartition("requests", A) not in t for t in cluster.transactions[1:])


async def test_withheld_acknowledgements_keep_the_commit_where_it_is() -> None:
    """A message is finished only when the broker acknowledged its outputs: however many
    periodic commits run meanwhile, the committed offset stays before it."""
    cluster = FakeCluster()
    async with running(cluster, [A]) as h:
        h.producer.hold = True
        for i in range(3):
            cluster.produce(A, request(i))
        await until(lambda: len(h.producer.held) == 3, "3 sends awaiting acknowledgement")
        for _ in range(3):
            await h.commit_now()
        assert cluster.committed_offset(A) == 0  # the start, never past an unacknowledged one
        assert h.judged() == 0
        h.producer.release()
        await until(lambda: h.judged() == 3, "3 acknowledged")
        await h.committed(A, 3)
    assert cluster.verdict_ids() == ids(0, 1, 2)


async def test_a_publish_failing_for_good_stops_before_it_and_restart_republishes() -> None:
    """The verdict of message 1 is refused for good (no authorisation): the service stops with
    PublishFailed, the commit stays at 1 (message 2, finished, listed in its metadata); a
    restart judges message 1 again and publishes it, and no verdict is published twice."""
    cluster = FakeCluster()

    def refuse_1(out: Any) -> TopicAuthorizationFailedError | None:
        return TopicAuthorizationFailedError() if b'"ok-1"' in out.value else None

    h = Harness(cluster, settings())
    h.task = asyncio.create_task(h.service.run())
    await until(lambda: bool(h.broker.producers), "producer built")
    h.producer.refuse = refuse_1
    for i in range(3):
        cluster.produce(A, request(i))
    await until(lambda: bool(h.broker.consumers) and h.consumer.started, "start")
    await h.consumer.rebalance([A])
    with pytest.raises(PublishFailed, match="not acknowledged"):
        await h.task
    assert cluster.committed_offset(A) == 1
    assert "ok-1" not in cluster.verdict_ids()

    async with running(cluster, [A]) as again:
        await until(lambda: "ok-1" in cluster.verdict_ids(), "ok-1 republished")
        await again.committed(A, 3)
    assert cluster.verdict_ids() == ids(0, 1, 2)


async def test_a_dead_letter_refused_even_bare_stops_before_its_message() -> None:
    """Issue 29: the dead-letter topic refuses every dead letter as too large, even without
    payload or headers. The message is not lost: the service stops with PublishFailed naming
    max.message.bytes, and the commit stays before the poison message (offset 1)."""
    cluster = FakeCluster()

    def refuse_dead_letters(out: Any) -> MessageSizeTooLargeError | None:
        return MessageSizeTooLargeError() if out.topic == "dlq" else None

    h = Harness(cluster, settings())
    h.task = asyncio.create_task(h.service.run())
    await until(lambda: bool(h.broker.producers), "producer built")
    h.producer.refuse = refuse_dead_letters
    for value in (request(0), b"{not json", request(2)):
        cluster.produce(A, value)
    await until(lambda: bool(h.broker.consumers) and h.consumer.started, "start")
    await h.consumer.rebalance([A])
    with pytest.raises(PublishFailed, match=r"max\.message\.bytes"):
        await h.task
    assert cluster.committed_offset(A) == 1
    assert not [out for out in cluster.outputs if out.topic == "dlq"]


async def test_a_message_crashing_outside_the_pipeline_ends_as_its_dead_letter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29: a step outside the pipeline's own guard raises for message 1 (here binding its
    log context). The service's last resort publishes its dead letter (``internal_error``, the
    input's coordinates) and finishes it: the commit passes it, the messages around it get their
    verdicts, and the service keeps running."""
    real = service_module.mark_record

    def crash_on_1(**context: Any) -> None:
        if context["offset"] == 1:
            raise RuntimeError("a bug outside the pipeline")
        real(**context)

    monkeypatch.setattr(service_module, "mark_record", crash_on_1)
    cluster = FakeCluster()
    for i in range(3):
        cluster.produce(A, request(i))
    async with running(cluster, [A]) as h:
        await h.committed(A, 3)
        assert h.task is not None
        assert not h.task.done()
    letters = [out.json for out in cluster.outputs if out.topic == "dlq"]
    assert [(d["reason"], d["input"]["offset"]) for d in letters] == [("internal_error", 1)]
    assert "a bug outside the pipeline" in letters[0]["detail"]
    assert cluster.verdict_ids() == ids(0, 2)


async def test_an_aborted_transaction_is_retried_without_duplicates() -> None:
    """Exactly-once: the first transaction aborts (a retriable error); nothing is visible and
    nothing committed; the next one publishes every verdict once and commits past them."""
    cluster = FakeCluster()
    async with running(cluster, [A], **EXACTLY_ONCE) as h:
        for i in range(3):
            cluster.produce(A, request(i))
        await until(lambda: h.judged() == 3, "3 staged")
        h.producer.fail_next_transaction = KafkaConnectionError("broker restarting")
        await h.commit_now()
        await until(lambda: h.service.stats.publish_retries == 1, "transaction aborted")
        assert cluster.outputs == []
        assert cluster.committed_offset(A) is None
        await h.committed(A, 3)
    assert cluster.verdict_ids() == ids(0, 1, 2)
    assert h.service.stats.transactions >= 1


async def test_a_member_the_group_dropped_publishes_nothing() -> None:
    """Exactly-once: a member the group dropped (frozen past its session timeout) aborts its
    transactions, periodic ones and the revoke flush alike, so its staged verdicts are never
    visible: the partitions' new owner publishes them."""
    cluster = FakeCluster()
    async with running(cluster, [A], **EXACTLY_ONCE) as h:
        for i in range(3):
            cluster.produce(A, request(i))
        await until(lambda: h.judged() == 3, "3 staged")
        h.consumer.member = False
        for _ in range(3):
            await h.commit_now()
        await h.consumer.rebalance([])  # it learns it was dropped: the revoke flush
        assert cluster.outputs == []
        assert cluster.transactions == []
        assert cluster.committed_offset(A) is None


async def test_a_full_partition_buffer_pauses_the_partition_until_half_of_it_is_finished() -> None:
    """Backpressure: with ``partition_buffer`` messages outstanding (acknowledgements withheld)
    the partition is paused and nothing more is taken; once they finish it resumes, and every
    message gets its verdict once."""
    cluster = FakeCluster()
    tp = TopicPartition("requests", A)
    async with running(cluster, [A], partition_buffer=4) as h:
        h.producer.hold = True
        for i in range(4):
            cluster.produce(A, request(i))
        await until(lambda: len(h.producer.held) == 4, "4 outstanding")
        assert tp in h.consumer.paused
        for i in range(4, 10):
            cluster.produce(A, request(i))
        await h.loop_turns(3)
        assert h.service.stats.consumed == 4  # paused: nothing more taken
        h.producer.release()
        await until(lambda: tp not in h.consumer.paused, "resumed")
        await h.committed(A, 10)
        assert h.service.stats.pauses >= 1
    assert cluster.verdict_ids() == ids(*range(10))


def _out_of_quota(case: PreparedCase) -> JudgeError:
    return QuotaExhausted("insufficient_quota", status=429)


async def test_an_intake_stop_pauses_rewinds_and_publishes_nothing_for_the_messages_left() -> None:
    """The judge account is out of quota: every partition is paused, the messages left get no
    verdict (not even an error one), and once committed the partition seeks back to its first
    unfinished offset, so a restart or a resume judges them all."""
    cluster = FakeCluster()
    tp = TopicPartition("requests", A)
    for i in range(5):
        cluster.produce(A, request(i))
    judge = FakeJudge(script=_out_of_quota)
    async with running(cluster, [A], judge=judge, concurrency=2) as h:
        await until(lambda: h.service.stats.intake_stopped == "quota_exhausted", "stopped")
        await until(lambda: h.service.stats.in_flight == 0, "in flight ended")
        await h.committed(A, 0)
        await until(lambda: (tp, 0) in h.consumer.seeks, "rewound to offset 0")
        assert tp in h.consumer.paused
        assert h.service.stats.ready is False
        assert 1 <= judge.calls <= 2  # the concurrency slots: nothing else was judged
    assert cluster.outputs == []


async def test_exactly_once_staged_outputs_count_in_the_buffered_bytes() -> None:
    """Exactly-once: a finished message's outputs wait for the next transaction; they count in
    ``max_buffered_bytes`` until it publishes them, so memory is bounded by bytes in both
    modes: the partition pauses while they are staged, and resumes once they are published.
    The input they may still need (for a dead letter) counts with them."""
    cluster = FakeCluster()
    tp = TopicPartition("requests", A)
    big = {"metadata": {"blob": "m" * 200_000}}  # copied into each verdict
    async with running(cluster, [A], max_buffered_bytes=1_048_576, **EXACTLY_ONCE) as h:
        for i in range(6):  # 1.2 MB, held as staged outputs once judged
            cluster.produce(A, orjson.dumps(orjson.loads(request(i)) | big))
        await until(lambda: h.judged() == 6, "6 staged")
        await h.loop_turns(3)
        assert tp in h.consumer.paused
        assert h.service.stats.buffered_bytes >= 6 * 2 * 200_000  # outputs, and inputs kept
        for i in range(6, 12):
            cluster.produce(A, orjson.dumps(orjson.loads(request(i)) | big))
        await h.loop_turns(3)
        assert h.judged() == 6  # nothing more taken while the staged outputs are held
        await h.committed(A, 12)
        assert h.service.stats.buffered_bytes == 0
    assert cluster.verdict_ids() == ids(*range(12))


async def test_the_loop_keeps_fetching_and_judging_while_a_commit_is_in_progress() -> None:
    """A periodic commit runs beside the loop, not in it: a commit the broker is slow to answer
    must not delay the messages that arrive meanwhile (issue 15: latency outside the judge)."""
    cluster = FakeCluster()
    async with running(cluster, [A]) as h:
        cluster.produce(A, request(0))
        await until(lambda: "ok-0" in cluster.verdict_ids(), "ok-0 published")
        h.consumer.commit_gate = asyncio.Event()
        h.clock.advance(INTERVAL_S)
        await until(lambda: h.consumer.committing, "a commit waits for the broker")
        cluster.produce(A, request(1))
        await until(lambda: "ok-1" in cluster.verdict_ids(), "ok-1 published during the commit")
        assert cluster.committed_offset(A) is None  # the commit is still held
        h.consumer.commit_gate.set()
        await h.committed(A, 2)
    assert cluster.verdict_ids() == ids(0, 1)


async def test_no_info_line_is_logged_per_message_quarantined_or_not() -> None:
    """Per-message lines are debug lines: a quarantine is a record on its topic and a counter,
    and an info line for each one cost a large share of the runtime's CPU under load."""
    cluster = FakeCluster()
    failing = {"id": "bad", "output": "The Eiffel Tower is in Rome", "context": EVIDENCE}
    with capture_logs() as logs:
        async with running(cluster, [A]) as h:
            cluster.produce(A, request(0))
            cluster.produce(A, orjson.dumps(failing))
            await h.committed(A, 2)
            assert h.service.stats.quarantined == 1
        assert cluster.verdict_ids("quarantine") == ["bad"]
    per_message = {"message.quarantined", "verdict.published"}
    assert [e for e in logs if e["event"] in per_message and e["log_level"] != "debug"] == []


class SubmittingForever:
    """The batcher's ``settle`` while a batch submission hangs: it records the time it is given
    (the real one waits on its submissions up to that long)."""

    def __init__(self) -> None:
        self.given: list[float] = []

    async def settle(self, timeout_s: float) -> None:
        self.given.append(timeout_s)

    def release(self, streams: set[str]) -> None:
        """Handed-over partitions' items are no longer waited for: nothing is, here."""


async def test_a_revoke_waits_one_revoke_timeout_in_all() -> None:
    """A message still judging and a batch submission that hangs: the revoke gives both one
    ``revoke_timeout_s`` together (it gave each a whole one, waiting twice as long): the
    message took the whole timeout, so the batches get only what was left of it."""
    cluster = FakeCluster()
    timeout_s = 1.0
    async with running(
        cluster, [A, B], judge=FakeJudge(latency_s=60), revoke_timeout_s=timeout_s
    ) as h:
        batcher = SubmittingForever()
        h.service.guard.batcher = batcher  # type: ignore[attr-defined]
        cluster.produce(A, request(0))
        await until(lambda: h.judge.in_flight == 1, "a message judging")
        await h.consumer.rebalance([B])
        h.service.guard.batcher = None  # type: ignore[attr-defined]
    assert len(batcher.given) == 1
    assert batcher.given[0] < timeout_s / 5  # what was left of the one timeout
    assert cluster.verdict_ids() == []  # the judging message was left for the next owner


async def test_exactly_once_a_transaction_due_while_the_loop_waits_goes_out_on_time() -> None:
    """Exactly-once on an idle partition: the transaction that publishes a staged verdict (and
    its reply) is due ``transaction_interval_s`` after the last one. The loop waiting for
    records held it until its fetch timed out (``poll_timeout_ms``): every reply waited. Now no
    fetch waits past the next transaction (virtual clock: none waits longer than the interval),
    and the transaction goes out once the interval has passed, with no record arriving."""
    cluster = FakeCluster()
    interval_ms = 200
    async with running(
        cluster,
        [A],
        **EXACTLY_ONCE,
        transaction_interval_s=interval_ms / 1000,
        kafka={"poll_timeout_ms": 5000},
    ) as h:
        await h.loop_turns()  # idle: the loop waits for records
        cluster.produce(A, request(0))
        await until(lambda: h.judged() == 1, "the verdict staged")
        h.clock.advance(interval_ms / 1000)
        await until(lambda: cluster.verdict_ids() == ids(0), "the verdict published")
        waits = list(h.consumer.timeouts)
    assert waits
    assert max(waits) <= interval_ms  # never the 5 s fetch


class GatedJournal:
    """A batch journal whose read at assignment waits for ``gate`` (the journal topic being read
    back), recording what each settle is given, and which settles came during a read."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.gate.set()
        self.loading = False
        self.settled: list[set[TopicPartition]] = []
        self.settled_while_loading: list[set[TopicPartition]] = []

    async def load(self, committed: dict[TopicPartition, int]) -> int:
        self.loading = True
        try:
            await self.gate.wait()
        finally:
            self.loading = False
        return 0

    def forget(self, partitions: list[TopicPartition]) -> None:
        return None

    def settle(self, committed: dict[TopicPartition, int | None]) -> None:
        self.settled.append(set(committed))
        if self.loading:
            self.settled_while_loading.append(set(committed))

    async def close(self) -> None:
        return None


async def test_no_batch_is_settled_while_a_rebalance_reads_the_journal_back() -> None:
    """A periodic commit that falls due while ``on_assigned`` reads the batch journal back sees
    none of the partitions (the revoked ones forgotten, the assigned ones not yet tracked).
    Settling the journal then forgot the batches just read, as if their items were another
    replica's, and their messages were submitted to the provider again (seen in the Kafka
    test of a replica leaving mid-batch). The journal is settled outside rebalances only."""
    cluster = FakeCluster()
    cluster.produce(A, request(0))
    async with running(cluster, [A, B]) as h:
        journal = GatedJournal()
        h.service._journal = journal  # type: ignore[assignment]
        await h.committed(A, 1)
        journal.gate.clear()
        rebalancing = asyncio.create_task(h.consumer.rebalance([A, B]))
        await until(lambda: journal.loading, "on_assigned reading the journal back")
        for _ in range(3):
            await h.commit_now()  # periodic commits fall due while the journal is read
        assert journal.settled_while_loading == []
        journal.gate.set()
        await rebalancing
        settles = len(journal.settled)
        await h.commit_now()
        assert len(journal.settled) > settles
        assert journal.settled[-1] == {TopicPartition("requests", A), TopicPartition("requests", B)}
