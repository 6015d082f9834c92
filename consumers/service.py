"""The guard service: consume requests, judge them in parallel, publish verdicts, commit safely.

How it works
------------
* One ``getmany`` loop fetches records; each record becomes a task. Decoding happens at once
  (poison messages go straight to the dead-letter topic); judging waits for one of
  ``concurrency`` slots shared by all assigned partitions, so messages of one partition are
  judged concurrently. The loop keeps calling ``getmany`` while judges work, so a slow judge
  never makes the consumer leave its group.
* A partition is paused when ``partition_buffer`` of its messages are outstanding and resumed
  when half of them are done: memory stays bounded under any backlog.
* **At-least-once** (default): a message is finished when the broker acknowledged every output
  record (``acks=all``, idempotent producer); the committed offset of a partition is its lowest
  unfinished offset (:class:`consumers.offsets.OffsetTracker`), committed every
  ``commit_interval_s``, on revoke and at shutdown. Messages finished behind an unfinished one
  are listed in the commit's metadata (:func:`consumers.offsets.encode_finished`), so the next
  owner of the partition skips them. After a crash, only what was in flight or finished since
  the last commit is judged again.
* **Exactly-once**: outputs of the finished messages below each partition's frontier and the
  offsets past them are published in one transaction (transactional id
  ``<prefix>-<instance_id>``, stable per replica, so a restarted replica fences its zombie).
  ``read_committed`` readers then see each verdict once. Limits: a judge call may still repeat
  after a crash (and cost money twice); fencing across replicas after a rebalance relies on the
  revoke flush, as aiokafka does not support KIP-447 group-metadata fencing.
* Rebalances: revoked partitions stop taking work, waiting messages are dropped, in-flight ones
  get ``revoke_timeout_s`` to finish, what finished is committed, the rest is redelivered.
* Stop (SIGTERM/SIGINT or the ``stop`` event): pause everything, let in-flight judgements finish
  within ``drain_timeout_s``, commit, close the producer and consumer.
* When the judge core reports that intake must stop (quota exhausted, authentication), every
  partition is paused, waiting messages are dropped and rewound, and the service stays up but
  unready, with one clear log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka.errors import (
    CommitFailedError,
    CorruptRecordException,
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    UnsupportedCodecError,
)
from aiokafka.structs import ConsumerRecord, TopicPartition

from consumers import codec, routing
from consumers.errors import BrokerUnavailable, PublishFailed
from consumers.logging import bind_record
from consumers.offsets import OffsetTracker, decode_finished, encode_finished
from consumers.publisher import make_producer, publish, send_all, transient
from consumers.records import DeadLetter
from consumers.routing import OutRecord
from consumers.settings import Guarantee, Ordering, ServiceSettings
from consumers.stats import PartitionStats, ServiceStats
from consumers.topics import ensure_topics, wait_for_topics
from guard.assembly import build_guard
from guard.boundary import GuardCore
from guard.models import Label, Verdict

log = structlog.get_logger("consumers.service")
# Batches that cannot be decoded: retried after a delay that doubles per error, up to the max,
# and starts over after FETCH_ERROR_RESET_S without one.
UNDECODABLE_FETCH = (CorruptRecordException, UnsupportedCodecError)
FETCH_ERROR_BACKOFF_S = 0.5
FETCH_ERROR_BACKOFF_MAX_S = 10.0
FETCH_ERROR_RESET_S = 60.0
_T = TypeVar("_T")
SHUTDOWN_COMMIT_MIN_S = 1.0  # the final commit gets this long even when draining used it all
@dataclass(eq=False)
class _Partition:
    tp: TopicPartition
    tracker: OffsetTracker = field(default_factory=OffsetTracker)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    waiting: set[asyncio.Task[None]] = field(default_factory=set)  # not yet judging
    ready: dict[int, list[OutRecord]] = field(default_factory=dict)  # exactly-once: unpublished
    key_tails: dict[bytes, asyncio.Task[None]] = field(default_factory=dict)
    skip: set[int] = field(default_factory=set)  # finished before a restart (commit metadata)
    metadata: str = ""  # the metadata of the last commit
    revoked: bool = False
    paused: bool = False
    rewind: bool = False

    @property
    def name(self) -> str:
        return f"{self.tp.topic}-{self.tp.partition}"

    @property
    def buffered(self) -> int:
        return self.tracker.outstanding + len(self.ready)


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, service: GuardService) -> None:
        self._service = service

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        await self._service.on_revoked(revoked)

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        await self._service.on_assigned(assigned)


class GuardService:
    """Runs the consume-judge-publish loop for one replica. See the module docstring."""

    def __init__(self, settings: ServiceSettings, guard: GuardCore, *,
                 stop: asyncio.Event | None = None,
                 on_verdict: Callable[[Verdict], None] | None = None,
                 stats: ServiceStats | None = None) -> None:
        self.settings = settings
        self.guard = guard
        self.on_verdict = on_verdict
        self.stats = stats if stats is not None else ServiceStats()
        self._stop = stop or asyncio.Event()
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._partitions: dict[TopicPartition, _Partition] = {}
        self._commit_lock = asyncio.Lock()
        self._abandoned: set[asyncio.Task[None]] = set()  # transactions that timed out
        self._fatal: BaseException | None = None
        self._draining = False
        self._exactly_once = settings.guarantee is Guarantee.EXACTLY_ONCE
        self._consumer: AIOKafkaConsumer | None = None
        self._producer: AIOKafkaProducer | None = None
        self._last_commit = time.monotonic()
        self._fetch_errors = 0  # consecutive undecodable fetches
        self._fetch_error_at = 0.0
        self._failing_since: float | None = None
        self._commit_every_s = (settings.transaction_interval_s if self._exactly_once
                                else settings.commit_interval_s)

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Run until stopped; raises :class:`PublishFailed` if an output could not be delivered."""
        try:
            if await self._start():
                await self._loop()
        finally:
            await self._shutdown()
        if self._fatal is not None:
            raise self._fatal

    def stop(self) -> None:
        self._stop.set()

    async def _start(self) -> bool:
        """Start the clients once every topic exists; False when stopped while waiting."""
        s = self.settings
        deadline = time.monotonic() + s.startup_timeout_s
        if s.create_topics:
            await self._with_startup_deadline(lambda: ensure_topics(s), "create topics")
        if not await self._with_startup_deadline(lambda: self._topics_exist(deadline),
                                                 "look up topics"):
            return False
        self._producer = make_producer(s)
        await self._with_startup_deadline(self._producer.start, "start the producer")
        self._consumer = self._make_consumer()
        self._consumer.subscribe([s.topics.requests], listener=_Listener(self))
        await self._with_startup_deadline(self._consumer.start, "start the consumer")
        self.stats.started = True
        log.info("service.started", bootstrap=s.bootstrap_servers, topic=s.topics.requests,
                 group_id=s.group_id, guarantee=s.guarantee.value, concurrency=s.concurrency,
                 transactional_id=s.transactional_id)
        return True

    async def _topics_exist(self, deadline: float) -> bool:
        def waiting(reason: str | None) -> None:
            self.stats.waiting_for = reason

        return await wait_for_topics(self.settings, deadline=deadline, stop=self._stop,
                                     on_missing=waiting)

    async def _with_startup_deadline(self, start: Callable[[], Awaitable[_T]], what: str) -> _T:
        deadline = time.monotonic() + self.settings.startup_timeout_s
        while True:
            try:
                return await start()
            except KafkaConnectionError as exc:
                if time.monotonic() >= deadline:
                    raise BrokerUnavailable(
                        f"could not {what}: {self.settings.bootstrap_servers} did not answer "
                        f"within {self.settings.startup_timeout_s:.0f}s ({exc})") from exc
                log.warning("broker.unreachable", action=what, error=str(exc))
                await asyncio.sleep(1.0)

    def _make_consumer(self) -> AIOKafkaConsumer:
        s, k = self.settings, self.settings.kafka
        return AIOKafkaConsumer(
            bootstrap_servers=s.bootstrap_servers, group_id=s.group_id,
            client_id=f"{s.client_id}-{s.instance_id}", enable_auto_commit=False,
            isolation_level="read_committed", auto_offset_reset=k.auto_offset_reset,
            max_poll_records=k.max_poll_records, max_poll_interval_ms=k.max_poll_interval_ms,
            session_timeout_ms=k.session_timeout_ms, heartbeat_interval_ms=k.heartbeat_interval_ms,
            request_timeout_ms=k.request_timeout_ms,
            fetch_max_bytes=max(52_428_800, 2 * s.max_message_bytes),
            max_partition_fetch_bytes=max(1_048_576, 2 * s.max_message_bytes),
            **s.security.client_kwargs())

    # ------------------------------------------------------------------ the loop

    async def _loop(self) -> None:
        assert self._consumer is not None
        poll_ms = self.settings.kafka.poll_timeout_ms
        while not self._stop.is_set():
            self._check_intake()
            batch = await self._fetch(poll_ms)
            for tp, records in batch.items():
                self._take(tp, records)
            self._relieve_backpressure()
            if time.monotonic() - self._last_commit >= self._commit_every_s:
                await self._commit(list(self._partitions.values()))
                self._refresh_partition_stats()
                self._last_commit = time.monotonic()

    async def _fetch(self, poll_ms: int) -> dict[TopicPartition, list[ConsumerRecord[Any, Any]]]:
        assert self._consumer is not None
        try:
            batch: dict[TopicPartition, list[ConsumerRecord[Any, Any]]] = (
                await self._consumer.getmany(timeout_ms=poll_ms))
        except UNDECODABLE_FETCH as exc:
            await self._undecodable_fetch(exc)
            return {}
        except KafkaError as exc:
            if not exc.retriable:
                raise
            log.warning("fetch.retry", error=repr(exc))
            await asyncio.sleep(poll_ms / 1000)
            return {}
        return batch

    async def _undecodable_fetch(self, exc: KafkaError) -> None:
        """A fetched batch could not be decoded (corrupt, or compressed with a codec that is not
        installed). aiokafka fetches it again from the same position, so the partition holds at
        that offset (its lag grows) while the others are served; wait a growing, bounded delay
        so a batch that always fails does not spin. Stopping would only crash-loop."""
        now = time.monotonic()
        if now - self._fetch_error_at > FETCH_ERROR_RESET_S:
            self._fetch_errors = 0
        self._fetch_error_at = now
        delay = min(FETCH_ERROR_BACKOFF_MAX_S, FETCH_ERROR_BACKOFF_S * 2 ** self._fetch_errors)
        self._fetch_errors += 1
        log.error("fetch.undecodable", error=type(exc).__name__, detail=str(exc),
                  consecutive=self._fetch_errors, retry_in_s=delay,
                  action="the partition holds at this offset; install the codec or check the "
                         "broker's log segment")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), delay)

    def _take(self, tp: TopicPartition, records: list[ConsumerRecord[Any, Any]]) -> None:
        part = self._partitions.get(tp)
        if part is None:
            self._unknown_partition(tp, records)
            return
        if part.revoked or part.rewind:
            return  # fetched before a revoke or a rewind: it will be fetched again
        for record in records:
            expected = part.tracker.next_offset
            if expected is not None and record.offset < expected:
                continue  # fetched again after a fetch-position reset: already taken
            part.tracker.start(record.offset)
            if record.offset in part.skip:  # finished before a restart: outputs were published
                part.skip.discard(record.offset)
                part.tracker.finish(record.offset)
                self.stats.skipped_finished += 1
                continue
            self.stats.consumed += 1
            previous = self._previous_for_key(part, record)
            task = asyncio.create_task(self._process(part, record, previous))
            part.tasks.add(task)
            part.waiting.add(task)
            task.add_done_callback(part.tasks.discard)
            task.add_done_callback(part.waiting.discard)
            if self.settings.ordering is Ordering.KEY:
                self._chain(part, record, task)
        self.stats.peak_partition_buffered = max(self.stats.peak_partition_buffered,
                                                 part.buffered)
        if part.buffered >= self.settings.partition_buffer and not part.paused:
            self._pause(part, "buffer_full")

    def _unknown_partition(self, tp: TopicPartition,
                           records: list[ConsumerRecord[Any, Any]]) -> None:
        """Records of a partition the service does not track (yet): the consumer's position
        moved past them, so when the partition is still assigned, seek back to the first one;
        they are fetched again once it is tracked. Never drop them silently."""
        assert self._consumer is not None
        if not records or tp not in self._consumer.assignment():
            return  # no longer ours: the next owner starts from the committed offset
        first = min(record.offset for record in records)
        self._consumer.seek(tp, first)
        log.warning("fetch.untracked_partition", topic=tp.topic, partition=tp.partition,
                    offset=first, records=len(records), action="seek back")

    def _previous_for_key(self, part: _Partition,
                          record: ConsumerRecord[Any, Any]) -> asyncio.Task[None] | None:
        if self.settings.ordering is not Ordering.KEY or record.key is None:
            return None
        return part.key_tails.get(record.key)

    @staticmethod
    def _chain(part: _Partition, record: ConsumerRecord[Any, Any],
               task: asyncio.Task[None]) -> None:
        if record.key is None:
            return
        key: bytes = record.key
        part.key_tails[key] = task

        def _forget(done: asyncio.Task[None]) -> None:
            if part.key_tails.get(key) is done:
                del part.key_tails[key]

        task.add_done_callback(_forget)

    # ------------------------------------------------------------------ one message

    async def _process(self, part: _Partition, record: ConsumerRecord[Any, Any],
                       previous: asyncio.Task[None] | None) -> None:
        try:
            if previous is not None:
                await asyncio.wait({previous})
            decoded = codec.decode(record, parse=self.guard.parse,
                                   max_bytes=self.settings.max_message_bytes)
            request_id = None if isinstance(decoded, DeadLetter) else decoded.request.id
            with bind_record(topic=record.topic, partition=record.partition,
                             offset=record.offset, request_id=request_id, headers=record.headers):
                await self._handle(part, record, decoded)
        except Exception as exc:  # a bug here must stop the service, not stall a partition
            if self._fatal is None:  # the first failure gets a traceback, later ones a line
                log.exception("message.crashed", topic=record.topic,
                              partition=record.partition, offset=record.offset)
            else:
                log.debug("message.abandoned", topic=record.topic, partition=record.partition,
                          offset=record.offset, error=type(exc).__name__)
            self._fail(exc)

    async def _handle(self, part: _Partition, record: ConsumerRecord[Any, Any],
                      decoded: codec.Decoded | DeadLetter) -> None:
        if isinstance(decoded, DeadLetter):
            part.waiting.discard(asyncio.current_task())
            await self._deliver(part, record.offset, [self._dead_letter(decoded, record)])
            return
        judged = await self._judge(part, record, decoded)
        if judged is None:
            return
        outputs, verdict = judged
        await self._deliver(part, record.offset, self._fit(outputs, record))
        if verdict is not None:
            self._published(verdict, outputs)

    def _fit(self, outputs: list[OutRecord], record: ConsumerRecord[Any, Any]) -> list[OutRecord]:
        """Replace outputs the broker would refuse as too large by one dead letter, so a huge
        message can never stop the service (the verdict stays when it fits)."""
        limit = self.settings.max_output_bytes
        too_big = [out for out in outputs if len(out.value) > limit]
        if not too_big:
            return outputs
        detail = ", ".join(f"the {out.kind} record is {len(out.value)} bytes" for out in too_big)
        letter = codec.dead_letter(record, "oversized", f"{detail}; max_output_bytes is {limit}")
        kept = [out for out in outputs if len(out.value) <= limit]
        return [*kept, self._dead_letter(letter, record)]

    def _published(self, verdict: Verdict, outputs: list[OutRecord]) -> None:
        held = any(out.kind == "quarantine" for out in outputs)
        if held:
            log.info("message.quarantined", label=verdict.label.value, reason=verdict.reason)
        else:
            log.debug("verdict.published", label=verdict.label.value, score=verdict.score)
        if self.on_verdict is not None:
            self.on_verdict(verdict)

    async def _judge(self, part: _Partition, record: ConsumerRecord[Any, Any],
                     decoded: codec.Decoded) -> tuple[list[OutRecord], Verdict | None] | None:
        self.stats.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.stats.waiting -= 1
        try:
            part.waiting.discard(asyncio.current_task())
            if self._draining or part.revoked or part.rewind or self._intake_stopped():
                return None  # left unfinished: fetched again after the rewind or rebalance
            self.stats.in_flight += 1
            try:
                verdict = await self.guard.judge(decoded.request, message_key=decoded.source.key)
            finally:
                self.stats.in_flight -= 1
            if self._stopped_intake(verdict):
                return None  # left unfinished like the waiting ones: judged again on resume
        except Exception as exc:  # a bug in the judge core must not stop the consumer
            log.exception("judge.crashed", request_id=decoded.request.id, topic=record.topic,
                          partition=record.partition, offset=record.offset)
            letter = codec.dead_letter(record, "internal_error",
                                       f"the judge raised {type(exc).__name__}: {exc}")
            return [self._dead_letter(letter, record)], None
        finally:
            self._slots.release()
        outputs = routing.route_verdict(decoded, verdict, topics=self.settings.topics,
                                        policy=self.settings.failure_policy, key=record.key)
        return outputs, verdict

    def _dead_letter(self, letter: DeadLetter, record: ConsumerRecord[Any, Any]) -> OutRecord:
        """The dead-letter record, shrunk to ``max_output_bytes`` (see
        :func:`codec.fit_dead_letter`): a dead letter never fails for its size."""
        letter = codec.fit_dead_letter(letter, record.value or b"", self.settings.max_output_bytes)
        log.info("message.dead_lettered", reason=letter.reason, topic=record.topic,
                 partition=record.partition, offset=record.offset, detail=letter.detail[:300])
        return routing.route_dead_letter(letter, headers=codec.headers_of(record),
                                         topics=self.settings.topics, key=record.key)

    async def _deliver(self, part: _Partition, offset: int, outputs: list[OutRecord]) -> None:
        if self._exactly_once:
            part.ready[offset] = outputs  # published with its offset in the next transaction
        else:
            await self._publish(outputs)
        part.tracker.finish(offset)
        self._count(outputs)
        self.stats.progressed()

    def _count(self, outputs: list[OutRecord]) -> None:
        for out in outputs:
            if out.kind == "verdict":
                self.stats.verdicts[out.tag] += 1
            elif out.kind == "quarantine":
                self.stats.quarantined += 1
            elif out.kind == "approved":
                self.stats.approved += 1
            else:
                self.stats.dead_lettered[out.tag] += 1

    async def _publish(self, outputs: list[OutRecord]) -> None:
        assert self._producer is not None
        try:
            await publish(self._producer, outputs, timeout_s=self.settings.publish_timeout_s,
                          on_retry=self._count_retry)
        except PublishFailed as exc:
            self._fail(exc)
            raise
        self.stats.published += len(outputs)

    def _count_retry(self) -> None:
        self.stats.publish_retries += 1

    def _fail(self, exc: BaseException) -> None:
        if self._fatal is None:
            self._fatal = exc
            log.error("service.fatal", error=str(exc))
        self._stop.set()

    # ------------------------------------------------------------------ commits

    async def _commit(self, parts: list[_Partition], *, revoking: bool = False,
                      timeout_s: float | None = None) -> None:
        """Commit ``parts`` (a transaction in exactly-once mode), within ``timeout_s`` (default
        ``commit_timeout_s``). Except for the revoke flush, only partitions still owned when the
        lock is taken: a revoke may have run meanwhile."""
        if not self.stats.started or not parts:
            return
        timeout = self.settings.commit_timeout_s if timeout_s is None else timeout_s
        async with self._commit_lock:
            if not revoking:
                parts = [p for p in parts if self._partitions.get(p.tp) is p]
                if not parts:
                    return
            if self._exactly_once:
                await self._commit_transaction(parts, timeout)
            else:
                await self._commit_offsets(parts, timeout)

    async def _commit_offsets(self, parts: list[_Partition], timeout_s: float) -> None:
        assert self._consumer is not None
        offsets: dict[TopicPartition, tuple[int, str]] = {}
        for part in parts:
            offset = part.tracker.committable
            if offset is None:
                offset = part.tracker.committed
            if offset is None:
                continue
            metadata = encode_finished(offset, part.tracker.finished_beyond())
            if part.tracker.committable is not None or metadata != part.metadata:
                offsets[part.tp] = (offset, metadata)
        if not offsets:
            return
        try:  # aiokafka retries retriable errors without end: bound it
            await asyncio.wait_for(self._consumer.commit(offsets), timeout_s)
        except TimeoutError:
            log.warning("commit.timed_out", timeout_s=timeout_s, action="retry at next interval")
            return
        except (CommitFailedError, IllegalStateError) as exc:
            log.warning("commit.failed", reason="rebalance", error=str(exc))
            return
        except KafkaError as exc:
            if not exc.retriable:
                raise
            log.warning("commit.retry_later", error=str(exc))
            return
        for part in parts:
            if part.tp in offsets:
                part.metadata = offsets[part.tp][1]
        self._committed(parts, {tp: offset for tp, (offset, _) in offsets.items()})

    def _committed(self, parts: list[_Partition], offsets: dict[TopicPartition, int]) -> None:
        for part in parts:
            if part.tp in offsets:
                part.tracker.mark_committed(offsets[part.tp])
        self.stats.commits += 1
        log.debug("offsets.committed", offsets={f"{tp.topic}-{tp.partition}": o
                                               for tp, o in offsets.items()})

    async def _commit_transaction(self, parts: list[_Partition], timeout_s: float) -> None:
        """Publish the finished outputs below each frontier and commit the frontiers, atomically.
        A transient failure aborts, puts the outputs back and retries at the next interval, for
        at most ``publish_timeout_s``; then the service stops (a restart fences and aborts).
        A transaction that does not end within ``timeout_s`` has an unknown outcome (aiokafka
        waits for the broker without end): the service stops, a restart fences and aborts it."""
        assert self._producer is not None
        offsets: dict[TopicPartition, int] = {}
        taken: list[tuple[_Partition, int, list[OutRecord]]] = []
        for part in parts:
            frontier = part.tracker.committable
            if frontier is None:
                continue
            for offset in sorted(o for o in part.ready if o < frontier):
                taken.append((part, offset, part.ready.pop(offset)))
            offsets[part.tp] = frontier
        if not offsets:
            return
        records = [out for _, _, outs in taken for out in outs]
        task = asyncio.create_task(self._transact(records, offsets))
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        if not done:  # not awaited after the cancel: aiokafka's abort may wait without end too
            task.cancel()
            self._abandoned.add(task)
            task.add_done_callback(self._abandoned.discard)
            message = (f"the transaction did not end within {timeout_s:.0f}s (commit_timeout_s); "
                       "its outcome is unknown, a restart fences and aborts it")
            if self._draining:
                log.error("transaction.timed_out", error=message)
                return
            self._fail(PublishFailed(message))
            raise self._fatal  # type: ignore[misc]
        try:
            task.result()
        except KafkaError as exc:
            for part, offset, outs in taken:
                part.ready[offset] = outs
            self._transaction_failed(exc)
            return
        self._failing_since = None
        self.stats.transactions += 1
        self.stats.published += len(records)
        self._committed(parts, offsets)

    async def _transact(self, records: list[OutRecord],
                        offsets: dict[TopicPartition, int]) -> None:
        assert self._producer is not None
        async with self._producer.transaction():
            failed = await send_all(self._producer, records)
            if failed:
                raise failed[0][1]
            await self._producer.send_offsets_to_transaction(offsets, self.settings.group_id)

    def _transaction_failed(self, exc: KafkaError) -> None:
        now = time.monotonic()
        self._failing_since = self._failing_since or now
        if not transient(exc) or now - self._failing_since >= self.settings.publish_timeout_s:
            self._fail(PublishFailed(f"transaction failed: {exc!r}"))
            raise self._fatal from exc  # type: ignore[misc]
        self.stats.publish_retries += 1
        log.warning("transaction.retry", error=repr(exc),
                    failing_for_s=round(now - self._failing_since, 1))

    def _refresh_partition_stats(self) -> None:
        assert self._consumer is not None
        stats: dict[str, PartitionStats] = {}
        for part in self._partitions.values():
            stats[part.name] = PartitionStats(
                committed=part.tracker.committed, highwater=self._consumer.highwater(part.tp),
                outstanding=part.buffered, paused=part.paused)
        self.stats.partitions = stats
        self.stats.ready = (self.stats.started and not self._draining
                            and self.stats.intake_stopped is None)

    # ------------------------------------------------------------------ backpressure

    def _pause(self, part: _Partition, why: str) -> None:
        assert self._consumer is not None
        self._consumer.pause(part.tp)
        part.paused = True
        self.stats.pauses += 1
        log.info("partition.paused", topic=part.tp.topic, partition=part.tp.partition,
                 reason=why, buffered=part.buffered)

    def _resume(self, part: _Partition) -> None:
        assert self._consumer is not None
        self._consumer.resume(part.tp)
        part.paused = False
        log.info("partition.resumed", topic=part.tp.topic, partition=part.tp.partition,
                 buffered=part.buffered)

    def _relieve_backpressure(self) -> None:
        if self._intake_stopped():
            return
        low = max(1, self.settings.partition_buffer // 2)
        for part in self._partitions.values():
            if part.paused and not part.rewind and part.buffered < low:
                self._resume(part)

    # ------------------------------------------------------------------ intake stop

    def _intake_stopped(self) -> bool:
        return self.guard.intake_stop_reason is not None

    def _stopped_intake(self, verdict: Verdict) -> bool:
        """Whether ``verdict`` is the judge's error that stopped intake (quota, auth): it says
        nothing about the message, so it must not be published, quarantined or approved."""
        reason, error = self.guard.intake_stop_reason, verdict.error
        return (reason is not None and verdict.label is Label.ERROR and error is not None
                and error.kind == reason)

    def _check_intake(self) -> None:
        reason = self.guard.intake_stop_reason
        if reason is not None and self.stats.intake_stopped is None:
            self.stats.intake_stopped = reason
            self.stats.ready = False
            log.error("intake.stopped", reason=reason,
                      action="all partitions paused; fix the judge account, then restart")
            for part in self._partitions.values():
                part.rewind = True
                for task in list(part.waiting):
                    task.cancel()
        if reason is None and self.stats.intake_stopped is not None:
            log.info("intake.resumed", previous_reason=self.stats.intake_stopped)
            self.stats.intake_stopped = None
        for part in self._partitions.values():
            self._maybe_rewind(part, stopped=reason is not None)

    def _maybe_rewind(self, part: _Partition, *, stopped: bool) -> None:
        """After an intake stop, once a partition is quiet and committed, seek back to its first
        unfinished offset, so the dropped messages are fetched again when intake resumes."""
        if stopped and not part.paused:
            self._pause(part, "intake_stopped")
        if stopped and part.tracker.unfinished:
            part.rewind = True  # e.g. records taken after a rebalance, left unjudged
        if not part.rewind or part.tasks:
            return
        frontier = part.tracker.frontier
        if frontier is not None and any(offset < frontier for offset in part.ready):
            return  # exactly-once: the next transaction publishes them first
        if frontier is not None and part.tracker.committed != frontier:
            return  # the next commit moves the committed offset to the frontier first
        if not self._exactly_once:  # their outputs are acknowledged: do not judge them again
            part.skip.update(part.tracker.finished_beyond())
        part.ready.clear()  # exactly-once: unpublished, judged again after the seek
        assert self._consumer is not None
        if frontier is not None:
            self._consumer.seek(part.tp, frontier)
        part.tracker = OffsetTracker(committed=frontier)
        part.key_tails.clear()
        part.rewind = False
        if not stopped:
            self._resume(part)

    # ------------------------------------------------------------------ rebalances

    async def on_assigned(self, assigned: list[TopicPartition]) -> None:
        # aiokafka fetches the new partitions before this callback returns; records returned
        # before they are tracked would move the position past never-judged messages. Records of
        # a paused partition are discarded without moving it, so pause first, before any await.
        self._pause_quietly(assigned)
        try:
            committed = await self._committed_with_metadata(assigned)
        except BaseException:
            self._resume_quietly(assigned)
            raise
        for tp in assigned:
            if tp in self._partitions:
                continue
            part = _Partition(tp)
            if tp in committed:
                offset, metadata = committed[tp]
                part.tracker = OffsetTracker(committed=offset)
                part.skip = decode_finished(offset, metadata)
                part.metadata = metadata
            self._partitions[tp] = part
        if self._draining or self._intake_stopped():
            for tp in assigned:  # stay paused; the loop resumes them when intake does
                self._partitions[tp].paused = True
        else:
            self._resume_quietly([tp for tp in assigned if not self._partitions[tp].paused])
        self.stats.rebalances += 1
        self._refresh_partition_stats()
        log.info("partitions.assigned",
                 partitions=sorted(f"{tp.topic}-{tp.partition}" for tp in assigned),
                 finished_before_restart=sum(len(p.skip) for p in self._partitions.values()))

    def _pause_quietly(self, tps: list[TopicPartition]) -> None:
        if self._consumer is None or not tps:
            return
        for tp in tps:
            with contextlib.suppress(IllegalStateError):  # no longer assigned
                self._consumer.pause(tp)

    def _resume_quietly(self, tps: list[TopicPartition]) -> None:
        if self._consumer is None or not tps:
            return
        for tp in tps:
            with contextlib.suppress(IllegalStateError):
                self._consumer.resume(tp)

    async def _committed_with_metadata(self, tps: list[TopicPartition]
                                       ) -> dict[TopicPartition, tuple[int, str]]:
        """The group's committed offsets and their metadata. aiokafka's public ``committed()``
        drops the metadata, so this asks its coordinator, as ``committed()`` itself does; on any
        failure nothing is skipped (messages are then only judged again)."""
        coordinator = getattr(self._consumer, "_coordinator", None)
        if not tps or coordinator is None:
            return {}
        try:
            found = await coordinator.fetch_committed_offsets(tps)
        except KafkaError as exc:
            log.warning("offsets.metadata_unavailable", error=str(exc))
            return {}
        return {tp: (meta.offset, meta.metadata or "") for tp, meta in found.items()
                if meta is not None and meta.offset >= 0}

    async def on_revoked(self, revoked: list[TopicPartition]) -> None:
        parts = [self._partitions[tp] for tp in revoked if tp in self._partitions]
        for part in parts:
            part.revoked = True
        finished = await self._settle(parts, self.settings.revoke_timeout_s)
        try:
            await self._commit(parts, revoking=True)
        finally:
            for part in parts:
                self._partitions.pop(part.tp, None)
            self._refresh_partition_stats()
        if parts:
            log.info("partitions.revoked", partitions=sorted(p.name for p in parts),
                     finished_in_time=finished)

    async def _settle(self, parts: list[_Partition], timeout_s: float) -> bool:
        """Drop waiting messages; give in-flight ones ``timeout_s``; cancel the rest."""
        for part in parts:
            for task in list(part.waiting):
                task.cancel()
        tasks = {task for part in parts for task in part.tasks}
        if not tasks:
            return True
        _, pending = await asyncio.wait(tasks, timeout=timeout_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        return not pending

    # ------------------------------------------------------------------ shutdown

    async def _shutdown(self) -> None:
        self._draining = True
        self.stats.stopping = True
        self.stats.ready = False
        parts = list(self._partitions.values())
        if self._consumer is not None and parts:
            self._consumer.pause(*(p.tp for p in parts))
        log.info("service.draining", in_flight=self.stats.in_flight,
                 deadline_s=self.settings.drain_timeout_s)
        deadline = time.monotonic() + self.settings.drain_timeout_s
        finished = await self._settle(parts, self.settings.drain_timeout_s)
        try:
            if self._fatal is None or not self._exactly_once:  # bounded by the drain deadline
                left = max(SHUTDOWN_COMMIT_MIN_S, deadline - time.monotonic())
                await self._commit(parts, timeout_s=min(left, self.settings.commit_timeout_s))
        except KafkaError as exc:
            log.error("commit.final_failed", error=str(exc))
        finally:
            left = max(SHUTDOWN_COMMIT_MIN_S, deadline - time.monotonic())
            await self._close_clients(min(left, self.settings.commit_timeout_s))
        log.info("service.stopped", drained=finished, consumed=self.stats.consumed,
                 commits=self.stats.commits)

    async def _close_clients(self, timeout_s: float) -> None:
        if self._consumer is not None:
            with contextlib.suppress(KafkaError):
                await self._consumer.stop()
        if self._producer is not None:
            await self._stop_producer(self._producer, timeout_s)
        for task in list(self._abandoned):
            task.cancel()
        if self._abandoned:
            await asyncio.wait(self._abandoned, timeout=SHUTDOWN_COMMIT_MIN_S)


    @staticmethod
    async def _stop_producer(producer: AIOKafkaProducer, timeout_s: float) -> None:
        """Stop the producer; its flush waits for the broker without end, so after ``timeout_s``
        the records still unsent are failed. They belong to unfinished messages only (a message
        is finished once its records are acknowledged), which are delivered again."""
        stopping = asyncio.ensure_future(producer.stop())
        done, _ = await asyncio.wait({stopping}, timeout=timeout_s)
        if not done:
            log.error("producer.close_timed_out", timeout_s=round(timeout_s, 1),
                      action="unsent records dropped; their messages are not committed")
            # aiokafka has no public abort: stop its sender, then fail what it still held
            sender = getattr(getattr(producer, "_sender", None), "sender_task", None)
            if sender is not None and not sender.done():
                sender.cancel()
                await asyncio.wait({sender}, timeout=SHUTDOWN_COMMIT_MIN_S)
            accumulator = getattr(producer, "_message_accumulator", None)
            if accumulator is not None and (sender is None or sender.done()):
                accumulator.fail_all(KafkaConnectionError("the producer was closed"))
            done, _ = await asyncio.wait({stopping}, timeout=SHUTDOWN_COMMIT_MIN_S)
        if not done:
            stopping.cancel()
            return
        with contextlib.suppress(KafkaError):
            stopping.result()


async def run_service(settings: ServiceSettings, guard: GuardCore | None = None, *,
                      stop: asyncio.Event | None = None,
                      environ: Mapping[str, str] | None = None,
                      on_start: Callable[[GuardService], None] | None = None,
                      on_verdict: Callable[[Verdict], None] | None = None,
                      stats: ServiceStats | None = None) -> None:
    """Run the service until ``stop`` is set (or SIGTERM/SIGINT when no event is given).

    Without ``guard``, one is built from ``settings.judge`` (API keys from ``environ``, default
    ``os.environ``) and closed at the end. ``on_start(service)`` is called before it starts;
    ``on_verdict(verdict)`` after each verdict is delivered; ``stats`` is the
    :class:`ServiceStats` to keep (for metrics and health endpoints).
    """
    own_guard = guard is None
    if guard is None:
        guard = build_guard(settings.judge, environ if environ is not None else os.environ)
    event = stop or asyncio.Event()
    service = GuardService(settings, guard, stop=event, on_verdict=on_verdict, stats=stats)
    remove_handlers = _install_signal_handlers(event) if stop is None else (lambda: None)
    try:
        if on_start is not None:
            on_start(service)
        await service.run()
    finally:
        remove_handlers()
        if own_guard:
            await guard.aclose()


def _install_signal_handlers(event: asyncio.Event) -> Any:
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, _on_signal, event, sig)
            installed.append(sig)

    def remove() -> None:
        for sig in installed:
            loop.remove_signal_handler(sig)

    return remove


def _on_signal(event: asyncio.Event, sig: signal.Signals) -> None:
    log.info("service.signal", signal=sig.name)
    event.set()
