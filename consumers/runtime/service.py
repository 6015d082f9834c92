"""The guard service: the loop and the lifecycle of one replica.

How it works (the path of one message: ``docs/architecture.md``)
-----------------------------------------------------------------
* Start: topics created or waited for, the output limits read (:mod:`.topics`), the clients
  built (:mod:`.kafka`), the commit policy picked (:mod:`.commits`: at-least-once offsets or
  exactly-once transactions).
* One ``getmany`` loop fetches records; :class:`.intake.Intake` turns each into a task and
  applies backpressure and intake stops. A task runs the per-message pipeline
  (:meth:`.message.Pipeline.process`: decode, judge, route, fit; any exception dead-letters the
  message), then delivers its outputs through the commit policy; only then is it finished and
  may its offset be committed. Judging waits for one of ``concurrency`` slots shared by all
  assigned partitions. The loop keeps calling ``getmany`` while judges work, so a slow judge
  never makes the consumer leave its group; it commits every ``commit_interval_s``
  (``transaction_interval_s`` exactly-once), in a task beside the loop (one at a time), so
  records arriving during a commit are not held back.
* Rebalances: revoked partitions stop taking work, waiting messages are dropped, in-flight ones
  get ``revoke_timeout_s`` to finish, what finished is committed, the rest is redelivered.
  Newly assigned partitions stay paused until they are tracked.
* Stop (the ``stop`` event; SIGTERM/SIGINT via :func:`consumers.runtime.run.run_service`):
  pause everything, let in-flight judgements finish within ``drain_timeout_s``, commit, close
  the producer and consumer. A publish that fails for good stops the service with the commit
  still before that message (:class:`PublishFailed`).

Why one module of this length: the loop, the rebalance callbacks and the shutdown sequence of
one replica work on the same state under one lock; the steps they call live in ``intake``,
``commits``, ``fetch`` and ``message``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import structlog
from aiokafka.errors import KafkaError
from aiokafka.structs import TopicPartition

from consumers import telemetry
from consumers.errors import FetchStopped, PublishFailed
from consumers.logging import mark_record
from consumers.records import SourceCoordinates
from consumers.runtime import deadletters, startup
from consumers.runtime.batchstate import KafkaBatchJournal, stream_of
from consumers.runtime.codec import Decoded
from consumers.runtime.commits import Commits, Fatal, policy_for
from consumers.runtime.envelope import Origin, OutRecord
from consumers.runtime.fetch import Fetcher
from consumers.runtime.intake import Intake, Partition, Record
from consumers.runtime.kafka import Broker, Consumer, KafkaBroker, Producer
from consumers.runtime.kinds import OutputKind
from consumers.runtime.learning import KafkaLearning
from consumers.runtime.memory import MemoryGate, parsed_bytes
from consumers.runtime.message import Finished, Pipeline, Unfinished
from consumers.runtime.replies import Replies
from consumers.runtime.stats import ServiceStats
from consumers.runtime.streams import Streams
from consumers.settings import Guarantee, ServiceSettings
from consumers.telemetry import RuntimeTracing, Span
from guard.batch.items import ItemRef
from guard.boundary import GuardCore
from guard.models import Verdict
from guard.prepare import wordsearch

log_name = "consumers.service"
log = structlog.get_logger(log_name)
REPLY_LINGER_MS = 0  # a requester waits for each reply: no linger (batches form in flight)
SHUTDOWN_COMMIT_MIN_S = 1.0  # the final commit gets this long even when draining used it all
COMMIT_WATCH_MS = 10  # while a periodic commit runs, the loop looks this often whether it ended


def outcome_attributes(outcome: Finished | Unfinished) -> dict[str, str]:
    """A message span's outcome: the verdict's label, ``dead_letter`` (with its reason), or
    ``unfinished`` (with why)."""
    if isinstance(outcome, Unfinished):
        return {"groundguard.outcome": "unfinished", "groundguard.unfinished.why": outcome.why}
    if outcome.verdict is not None:
        return {"groundguard.outcome": outcome.verdict.label.value}
    reasons = [out.tag for out in outcome.outputs if out.kind is OutputKind.DEAD_LETTER]
    return {
        "groundguard.outcome": "dead_letter",
        "groundguard.dead_letter.reason": ",".join(reasons),
    }


def _input_bytes(origin: Origin | SourceCoordinates) -> int:
    """The bytes of a message's input its dead-letter builder keeps alive (exactly-once: staged
    with its outputs until the transaction)."""
    if not isinstance(origin, Origin):
        return 0
    return len(origin.value or b"") + len(origin.key or b"")


class GuardService:
    """Runs the consume-judge-publish loop for one replica. See the module docstring.

    ``broker`` gives the Kafka clients (default :class:`KafkaBroker`; tests pass in-memory
    fakes); ``clock`` is the monotonic clock that times periodic commits. ``journal`` is the
    durable batch journal of ``judge.delivery: batch``
    (:func:`~consumers.runtime.batchstate.batch_journal`), the one the guard's batcher was built
    with: the service starts it, reads it at assignment and closes it; a batcher holding another
    journal is a :class:`ValueError` (its batches would not survive a handover)."""

    def __init__(
        self,
        settings: ServiceSettings,
        guard: GuardCore,
        *,
        stop: asyncio.Event | None = None,
        on_verdict: Callable[[Verdict], None] | None = None,
        stats: ServiceStats | None = None,
        broker: Broker | None = None,
        clock: Callable[[], float] = time.monotonic,
        journal: KafkaBatchJournal | None = None,
        learning: KafkaLearning | None = None,
        tracing: RuntimeTracing | None = None,
    ) -> None:
        if guard.batcher is not None and guard.batcher.journal is not journal:
            raise ValueError("the guard's batcher must be built with the service's journal")
        self.settings = settings
        self.guard = guard
        self.on_verdict = on_verdict
        self.stats = stats if stats is not None else ServiceStats()
        self._stop = stop or asyncio.Event()
        self._fatal = Fatal(self._stop)
        self._broker = broker if broker is not None else KafkaBroker(settings)
        self._clock = clock
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._memory = MemoryGate(settings.max_buffered_bytes)  # parsed messages in work
        self.replies = Replies(settings, self.stats, guard.judge_info)
        self._pipeline = Pipeline(settings, guard.parse, replies=self.replies)
        self._batch_bytes = settings.kafka.max_batch_size
        self.intake = Intake(settings, self.stats, guard)
        self.streams = Streams(settings, guard, self.stats, self._slots, clock=clock)
        self.intake.on_rewind = self.streams.rewound
        self.commits: Commits | None = None  # once started
        self._draining = False
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._reply_producer: Producer | None = None  # at-least-once with replies on
        self._last_commit = clock()
        self._periodic: asyncio.Task[None] | None = None  # the periodic commit running
        self._debug = False  # whether debug lines are logged, read at start
        self._journal = journal  # judge.delivery: batch
        self.learning = learning  # judge.cascade.learn: counts shared between replicas
        self._tracing = tracing if tracing is not None else telemetry.current()
        # from a revoke to the end of the assignment after it: the partitions are partly
        # known (the revoked forgotten, the assigned not yet tracked)
        self._rebalancing = False
        self._batch_seen: float | None = None  # the batcher's last poll, seen as progress

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Run until stopped; raises :class:`PublishFailed` if an output could not be delivered."""
        try:
            if await self._start():
                await self._loop()
        finally:
            await self._shutdown()
        if self._fatal.error is not None:
            raise self._fatal.error

    def stop(self) -> None:
        self._stop.set()

    async def _start(self) -> bool:
        """Start the clients once every topic exists; False when stopped while waiting."""
        s, broker = self.settings, self._broker
        fitted = await startup.prepare(s, broker, self.stats, self._stop)
        if fitted is None:
            return False
        limits, self._batch_bytes = fitted
        self._pipeline = Pipeline(s, self.guard.parse, output_limits=limits, replies=self.replies)
        if s.reply.enabled and s.guarantee is Guarantee.AT_LEAST_ONCE:
            self._reply_producer = broker.producer(
                max_batch_size=self._batch_bytes, linger_ms=REPLY_LINGER_MS
            )
            await startup.with_deadline(s, self._reply_producer.start, "start the reply producer")
        self._producer = broker.producer(max_batch_size=self._batch_bytes)
        await startup.with_deadline(s, self._producer.start, "start the producer")
        if self._journal is not None:  # before the consumer: assignment reads it
            await startup.with_deadline(s, self._journal.start, "start the batch journal")
        if self.learning is not None:  # what every replica learned, before the first message
            await startup.with_deadline(s, self.learning.start, "read the calibration topic")
        self._consumer = self.intake.consumer = broker.consumer()
        self._consumer.subscribe(s.topics.inputs(), self)
        policy = policy_for(
            s,
            self._consumer,
            self._producer,
            self.stats,
            self._fatal,
            batch_bytes=self._batch_bytes,
            replies=self.replies,
            reply_producer=self._replies_producer,
        )
        self.commits = Commits(policy, self.intake.owns)
        self.streams.started(self._pipeline, policy)
        await startup.with_deadline(s, self._consumer.start, "start the consumer")
        self.stats.started = True
        self._debug = logging.getLogger(log_name).isEnabledFor(logging.DEBUG)
        log.info(
            "service.started",
            bootstrap=s.bootstrap_servers,
            topic=s.topics.requests,
            deltas=s.topics.deltas,
            group_id=s.group_id,
            guarantee=s.guarantee.value,
            concurrency=s.concurrency,
            transactional_id=s.transactional_id,
            word_search=wordsearch.ENGINE,
            tiers=[tier.tier_name for tier in s.judge.tier_list()],
        )
        for note in s.judge.deprecations():
            log.warning("settings.deprecated", note=note)
        return True

    @property
    def _replies_producer(self) -> Producer:
        """Replies travel on a producer of their own at-least-once: aiokafka sends one
        request per broker at a time, so a reply sharing the verdicts' producer waits for their
        batches (and the broker's append of each of their partitions). Exactly-once they must
        be in the transaction: the one producer."""
        producer = self._reply_producer or self._producer
        assert producer is not None
        return producer

    # ------------------------------------------------------------------ the loop

    async def _loop(self) -> None:
        assert self.commits is not None
        assert self._consumer is not None
        fetcher = Fetcher(self._consumer, self._stop, self.settings.kafka.poll_timeout_ms)
        while not self._stop.is_set():
            self.intake.check()
            try:
                batch = await fetcher.fetch(self._until_commit_ms())
            except FetchStopped as exc:  # health means progress: stop, a restart fetches again
                self.stats.ready, self.stats.failed = False, "fetching ended"
                log.error("fetch.stopped", error=str(exc), action="the service stops")
                self._fatal.fail(exc)
                break
            for tp, records in batch.items():
                self.intake.take(tp, records, self._spawn)
            self.intake.relieve()
            if self.settings.topics.deltas is not None:
                self.streams.sweep()
            due = self._clock() - self._last_commit >= self.commits.policy.interval_s
            if due and (self._periodic is None or self._periodic.done()):
                self._last_commit = self._clock()  # every interval, however long commits take
                self._periodic = asyncio.create_task(self._periodic_commit())
                self._periodic.add_done_callback(self._commit_ended)

    def _until_commit_ms(self) -> int:
        """How long a fetch may wait for records: until the next periodic commit is due (or,
        while one runs, ``COMMIT_WATCH_MS``), at most ``poll_timeout_ms``. A commit due while the
        loop waited went out when the fetch timed out: exactly-once, every reply waited too."""
        assert self.commits is not None
        poll_ms = self.settings.kafka.poll_timeout_ms
        if self._periodic is not None and not self._periodic.done():
            return min(poll_ms, COMMIT_WATCH_MS)
        due_s = self._last_commit + self.commits.policy.interval_s - self._clock()
        return max(1, min(poll_ms, int(due_s * 1000)))

    async def _periodic_commit(self) -> None:
        """A periodic commit, beside the loop: the loop keeps fetching while the broker answers
        (a commit in the loop delayed every message arriving meanwhile). One at a time."""
        await self._commit(list(self.intake.partitions.values()))
        self.intake.refresh_stats(draining=self._draining)
        self._refresh_batch_stats()
        # batches of committed messages are no longer needed; not during a rebalance, when
        # the partitions are partly known: a batch read back for a partition not yet tracked
        # would be taken for another replica's and forgotten, and its items submitted again
        if self._journal is not None and not self._rebalancing:
            self._journal.settle(
                {tp: part.tracker.committed for tp, part in self.intake.partitions.items()}
            )

    def _commit_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._fatal.fail(task.exception())  # type: ignore[arg-type]

    def _refresh_batch_stats(self) -> None:
        """The batcher's gauges into the stats; a successful poll of a batch counts as
        progress (waiting for a batch is deliberate, not a stall)."""
        batcher = self.guard.batcher
        if batcher is None:
            return
        self.stats.batch = snapshot = batcher.stats()
        polled = snapshot.last_poll is not None and snapshot.last_poll != self._batch_seen
        if polled or snapshot.open_items > 0:  # gathering ends by itself at max_wait_s
            self._batch_seen = snapshot.last_poll
            self.stats.progressed()

    async def _commit(
        self, parts: list[Partition], *, revoking: bool = False, timeout_s: float | None = None
    ) -> None:
        """Commit ``parts`` within ``timeout_s`` (default ``commit_timeout_s``)."""
        if not self.stats.started or self.commits is None:
            return
        timeout = self.settings.commit_timeout_s if timeout_s is None else timeout_s
        await self.commits.commit(parts, timeout, revoking=revoking, draining=self._draining)

    # ------------------------------------------------------------------ one message

    def _spawn(
        self, part: Partition, record: Record, previous: asyncio.Task[None] | None
    ) -> asyncio.Task[None]:
        if self.streams.streamed(record):
            return asyncio.create_task(self._delta(part, record, previous))
        return asyncio.create_task(self._message(part, record, previous))

    async def _delta(
        self, part: Partition, record: Record, previous: asyncio.Task[None] | None
    ) -> None:
        """One delta of a streamed answer (:mod:`consumers.runtime.streams`): its offset is
        finished when its answer is closed, not when this task ends."""
        try:
            if previous is not None:
                await asyncio.wait({previous})
            part.waiting.discard(asyncio.current_task())
            if part.revoked or self._draining:
                return  # read again by the partition's next owner, or after the restart
            await self.streams.take(part, record)
        except PublishFailed as exc:
            self._abandon(record, exc)
        except Exception as exc:  # a bug, not the delta's answer: dead-letter the record
            await self._last_resort(part, record, exc)

    async def _message(
        self, part: Partition, record: Record, previous: asyncio.Task[None] | None
    ) -> None:
        """One message: after the previous one of its key, through the pipeline, delivered
        (:mod:`consumers.runtime.commits`), then finished: its offset may be committed."""
        assert self.commits is not None
        try:
            if previous is not None:
                await asyncio.wait({previous})
            mark_record(
                topic=record.topic,
                partition=record.partition,
                offset=record.offset,
                headers=record.headers,
            )  # this task's log lines, read when logged
            with self._tracing.message(record) as span:
                await self._traced_message(part, record, span)
        except PublishFailed as exc:  # the broker, not the message: stop, offsets uncommitted
            self._abandon(record, exc)
        except Exception as exc:  # anything else is this message's: dead-letter it
            await self._last_resort(part, record, exc)

    async def _traced_message(self, part: Partition, record: Record, span: Span) -> None:
        """The message inside its span (:mod:`consumers.telemetry`; a no-op when off)."""
        try:
            task = asyncio.current_task()
            async with self._memory.hold(parsed_bytes(record.value)):  # parsed within the budget
                outcome = await self._pipeline.process(
                    record, lambda decoded: self._judge(part, decoded, task)
                )
            part.waiting.discard(task)
            span.set_attributes(outcome_attributes(outcome))
            if isinstance(outcome, Unfinished):
                return  # fetched again after the rewind or rebalance
            outputs = await self._deliver(part, record.offset, outcome)
            if outcome.verdict is not None and any(o.kind is OutputKind.VERDICT for o in outputs):
                self._published(outcome.verdict, outputs)
        except PublishFailed:
            raise
        except Exception as exc:  # anything else is this message's: dead-letter it
            span.set_attributes({"groundguard.outcome": "dead_letter"})
            await self._last_resort(part, record, exc)  # within the span: the letter carries it

    async def _judge(
        self, part: Partition, decoded: Decoded, task: asyncio.Task[None] | None
    ) -> Verdict | Unfinished:
        """The verdict, once one of ``concurrency`` slots is free; :class:`Unfinished` when the
        message must be left (rebalance, rewind, stop, or the verdict that stopped intake)."""
        self.stats.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.stats.waiting -= 1
        try:
            part.waiting.discard(task)
            for why, now in (
                ("draining", self._draining),
                ("revoked", part.revoked),
                ("rewind", part.rewind),
                ("intake_stopped", self.intake.stopped),
            ):
                if now:
                    return Unfinished(why)
            self.stats.in_flight += 1
            src = decoded.source
            item = ItemRef(stream_of(src.topic, src.partition), src.offset)
            try:
                verdict = await self.guard.judge(decoded.request, message_key=src.key, item=item)
            finally:
                self.stats.in_flight -= 1
            if self.intake.stopped_by(verdict):
                return Unfinished("intake_stopped")  # judged again when intake resumes
            return verdict
        finally:
            self._slots.release()

    async def _deliver(self, part: Partition, offset: int, finished: Finished) -> list[OutRecord]:
        """Deliver (publish, or stage for the transaction) and finish the message."""
        assert self.commits is not None
        origin = finished.origin
        with self._tracing.publish(finished.outputs):
            outputs = self._tracing.stamp(finished.outputs)  # a subscriber continues the trace
            outputs = await self.replies.deliverable(self._replies_producer, outputs)
            outputs = await self.commits.policy.deliver(
                part,
                offset,
                outputs,
                self._pipeline.refused(origin),
                input_bytes=_input_bytes(origin),
            )
        part.tracker.finish(offset)
        self.stats.delivered([(out.kind, out.tag) for out in outputs])
        return outputs

    def _published(self, verdict: Verdict, outputs: list[OutRecord]) -> None:
        # debug only: a quarantine is published and counted (groundguard_quarantined_total);
        # an info line per quarantined message was ~5 % of the service's CPU (docs/performance)
        if self._debug:  # a filtered debug call still builds a logger and an event
            if any(out.kind is OutputKind.QUARANTINE for out in outputs):
                log.debug("message.quarantined", label=verdict.label.value, reason=verdict.reason)
            else:
                log.debug("verdict.published", label=verdict.label.value, score=verdict.score)
        if self.on_verdict is not None:
            self.on_verdict(verdict)

    async def _last_resort(self, part: Partition, record: Record, exc: Exception) -> None:
        """A step outside the pipeline's own guard raised: publish the message's dead letter;
        only a failure to publish that stops the service."""
        log.exception(
            "message.crashed", topic=record.topic, partition=record.partition, offset=record.offset
        )
        if record.offset in part.ready or part.tracker.is_finished(record.offset):
            return  # its outputs are out (or staged): a step after delivery raised, e.g. on_verdict
        origin = deadletters.salvage(record)
        try:
            letter = self._pipeline.failed(origin, "handling the message", exc)
            await self._deliver(
                part, record.offset, self._pipeline.answered(Finished([letter], origin))
            )
        except Exception as again:
            self._abandon(record, again)

    def _abandon(self, record: Record, exc: BaseException) -> None:
        if self._fatal.error is None:
            log.error(
                "message.abandoned",
                topic=record.topic,
                partition=record.partition,
                offset=record.offset,
                error=repr(exc),
            )
        self._fatal.fail(exc)

    # ------------------------------------------------------------------ rebalances

    async def on_assigned(self, assigned: list[TopicPartition]) -> None:
        # aiokafka fetches the new partitions before this callback returns; records returned
        # before they are tracked would move the position past never-judged messages. Records of
        # a paused partition are discarded without moving it, so pause first, before any await.
        self.intake.pause_quietly(assigned)
        self._rebalancing = True
        try:
            assert self._consumer is not None
            committed = await self._consumer.committed_with_metadata(assigned)
            if self._journal is not None:  # before any of them is fetched
                floors = {tp: committed.get(tp, (0, ""))[0] for tp in assigned}
                kept = await self._journal.load(floors)
                log.info("batches.resumed", batches=kept)
        except BaseException as exc:
            self.intake.resume_quietly(assigned)
            self._rebalancing = False
            if isinstance(exc, Exception):  # aiokafka logs and ignores it: the partitions
                self._fatal.fail(exc)  # would stay untracked, never judged; a restart retries
            raise
        self.intake.assign(assigned, committed, draining=self._draining)
        self._rebalancing = False
        self._take_fleet_share()
        self.stats.rebalances += 1
        self.intake.refresh_stats(draining=self._draining)
        log.info(
            "partitions.assigned",
            partitions=sorted(f"{tp.topic}-{tp.partition}" for tp in assigned),
            finished_before_restart=sum(len(p.skip) for p in self.intake.partitions.values()),
        )

    def _take_fleet_share(self) -> None:
        """Give the judge this replica's share of the fleet's budgets: the input partitions it
        owns over all of the input topics' partitions (cluster metadata; the deltas topic is an
        input too). Kept as it was when a partition count is unknown."""
        assert self._consumer is not None
        inputs = self.settings.topics.inputs()  # the requests, and the deltas when set
        counts = [self._consumer.partition_count(topic) for topic in inputs]
        if not all(counts):
            log.warning("budget.share_unknown", topic=",".join(inputs))
            return
        total = sum(count or 0 for count in counts)
        owned = sum(1 for tp in self.intake.partitions if tp.topic in inputs)
        share = min(1.0, owned / total)
        self.guard.rescale_budgets(share)
        log.info("budget.rescaled", share=round(share, 4), partitions=owned, of=total)

    async def on_revoked(self, revoked: list[TopicPartition]) -> None:
        """Revoked partitions stop taking work, waiting messages are dropped, in-flight ones get
        ``revoke_timeout_s`` to finish, what finished is committed, the rest is redelivered."""
        self._rebalancing = True  # until the assignment that follows is tracked
        parts = self.intake.revoking(revoked)
        deadline = time.monotonic() + self.settings.revoke_timeout_s  # one timeout for both
        finished = await self.intake.settle(parts, self.settings.revoke_timeout_s)
        await self.streams.settle(parts, max(0.0, deadline - time.monotonic()))
        await self._settle_batches(revoked, max(0.0, deadline - time.monotonic()))
        try:
            await self._commit(parts, revoking=True)
        finally:
            self.intake.forget(parts)
            self.intake.refresh_stats(draining=self._draining)
        if parts:
            log.info(
                "partitions.revoked",
                partitions=sorted(p.name for p in parts),
                finished_in_time=finished,
            )

    # ------------------------------------------------------------------ shutdown

    async def _shutdown(self) -> None:
        self._draining = True
        self.stats.stopping = True
        self.stats.ready = False
        parts = list(self.intake.partitions.values())
        if self._consumer is not None and parts:
            self._consumer.pause(*(p.tp for p in parts))
        log.info(
            "service.draining",
            in_flight=self.stats.in_flight,
            deadline_s=self.settings.drain_timeout_s,
        )
        deadline = time.monotonic() + self.settings.drain_timeout_s
        finished = await self.intake.settle(parts, self.settings.drain_timeout_s)
        await self.streams.settle(parts, max(0.0, deadline - time.monotonic()))
        left = max(0.0, deadline - time.monotonic())
        await self._settle_batches([p.tp for p in parts], min(left, self.settings.revoke_timeout_s))
        if self._periodic is not None:  # bounded by commit_timeout_s; its error is recorded
            await asyncio.wait({self._periodic})
        try:
            if self._fatal.error is None or (
                self.commits is not None and self.commits.policy.commit_after_fatal
            ):
                left = max(SHUTDOWN_COMMIT_MIN_S, deadline - time.monotonic())
                await self._commit(parts, timeout_s=min(left, self.settings.commit_timeout_s))
        except KafkaError as exc:
            log.error("commit.final_failed", error=str(exc))
        finally:
            left = max(SHUTDOWN_COMMIT_MIN_S, deadline - time.monotonic())
            await self._close_clients(min(left, self.settings.commit_timeout_s))
        log.info(
            "service.stopped",
            drained=finished,
            consumed=self.stats.consumed,
            commits=self.stats.commits,
        )

    async def _settle_batches(self, handed_over: list[TopicPartition], timeout_s: float) -> None:
        """Before partitions are handed over: batches being submitted are recorded in the
        journal (within ``timeout_s``), so the next owner polls them rather than submitting
        them again; this process stops waiting for (and polling) their items."""
        if self.guard.batcher is not None:
            await self.guard.batcher.settle(timeout_s)
            self.guard.batcher.release({stream_of(tp.topic, tp.partition) for tp in handed_over})
        if self._journal is not None:
            self._journal.forget(handed_over)

    async def _close_clients(self, timeout_s: float) -> None:
        if self._consumer is not None:
            with contextlib.suppress(KafkaError):
                await self._consumer.stop()
        if self._producer is not None:
            await self._producer.close(timeout_s)
        if self._reply_producer is not None:
            await self._reply_producer.close(min(timeout_s, self.settings.reply.timeout_s))
        if self.commits is not None:
            await self.commits.policy.close()
        await self.replies.close()
        if self.learning is not None:
            await self.learning.close()
        if self._journal is not None:
            with contextlib.suppress(KafkaError):
                await self._journal.close()
