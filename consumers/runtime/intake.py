"""Partition state, intake and backpressure: which fetched records become work, and when a
partition is paused, resumed or rewound.

* :meth:`Intake.take` turns fetched records into message tasks (the service's ``spawn``), in
  offset order per partition; with ``ordering: key`` a message waits for the previous one of its
  key. Records of a partition not tracked yet (fetched while ``on_assigned`` awaits) make the
  consumer seek back to them: they are never skipped.
* A partition is paused when ``partition_buffer`` of its messages are outstanding, or when the
  bytes held over all partitions (input records until their message is finished, outputs until
  the broker acknowledged them: exactly-once, until their transaction commits) reach
  ``max_buffered_bytes``, and resumed when both are below half (:meth:`Intake.relieve`). A
  partition of streamed-answer deltas (``topics.deltas``) is not paused for
  ``partition_buffer``: its deltas stay unfinished until their answer closes, and open answers
  are bounded by ``stream.max_open`` and ``stream.max_open_bytes`` instead.
* When the judge core reports that intake must stop (quota exhausted, authentication), every
  partition is paused, waiting messages are dropped, and each partition, once quiet and
  committed, seeks back to its first unfinished offset (:meth:`Intake.check`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import structlog
from aiokafka.errors import IllegalStateError
from aiokafka.structs import ConsumerRecord, TopicPartition

from consumers.runtime.envelope import OutRecord, record_bytes
from consumers.runtime.kafka import Consumer
from consumers.runtime.offsets import OffsetTracker, decode_finished
from consumers.runtime.stats import PartitionStats, ServiceStats
from consumers.settings import Ordering, ServiceSettings
from guard.boundary import GuardCore
from guard.models import Label, Verdict

log = structlog.get_logger("consumers.service")
Record: TypeAlias = "ConsumerRecord[Any, Any]"
Spawn = Callable[["Partition", Record, "asyncio.Task[None] | None"], "asyncio.Task[None]"]


@dataclass
class Staged:
    """Exactly-once: a finished message's outputs, waiting for the transaction that publishes
    them with its offset; ``refused`` builds its dead letter should the broker refuse a record
    as too large; ``size``: their bytes, counted in ``max_buffered_bytes`` until published."""

    outputs: list[OutRecord]
    refused: Callable[[str], OutRecord]
    size: int


@dataclass(eq=False)
class Partition:
    tp: TopicPartition
    tracker: OffsetTracker = field(default_factory=OffsetTracker)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    waiting: set[asyncio.Task[None]] = field(default_factory=set)  # not yet judging
    ready: dict[int, Staged] = field(default_factory=dict)  # exactly-once: unpublished
    notes: list[Staged] = field(default_factory=list)  # exactly-once: progress, in no offset
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
        """Messages held: started and not passed by the frontier, plus those passed but still
        staged (exactly-once); one staged beyond the frontier is already counted."""
        frontier = self.tracker.frontier
        passed = sum(1 for offset in self.ready if frontier is None or offset < frontier)
        return self.tracker.outstanding + passed


class Intake:
    """The partitions this replica owns, and what it takes from them."""

    def __init__(self, settings: ServiceSettings, stats: ServiceStats, guard: GuardCore) -> None:
        self.settings = settings
        self.stats = stats
        self.guard = guard
        self.partitions: dict[TopicPartition, Partition] = {}
        self.consumer: Consumer | None = None
        # told of a partition about to be read again from its frontier (streamed answers
        # being assembled from it are dropped: assembled again after the seek)
        self.on_rewind: Callable[[Partition], None] | None = None

    def owns(self, part: Partition) -> bool:
        return self.partitions.get(part.tp) is part

    # ------------------------------------------------------------------ taking records

    def take(self, tp: TopicPartition, records: list[Record], spawn: Spawn) -> None:
        part = self.partitions.get(tp)
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
            task = spawn(part, record, self._previous_for_key(part, record))
            part.tasks.add(task)
            part.waiting.add(task)
            self._hold(part, task, record)
        self.stats.peak_partition_buffered = max(self.stats.peak_partition_buffered, part.buffered)
        streamed = tp.topic == self.settings.topics.deltas  # bounded by stream.max_open*
        if part.buffered >= self.settings.partition_buffer and not part.paused and not streamed:
            self.pause(part, "buffer_full")
        if self.stats.buffered_bytes >= self.settings.max_buffered_bytes and not part.paused:
            self.pause(part, "bytes_full")

    def _hold(self, part: Partition, task: asyncio.Task[None], record: Record) -> None:
        """Count the record's bytes as held, and (``ordering: key``) make it its key's tail,
        until its task ends, however it ends: one done callback per message."""
        size = record_bytes(record)
        stats = self.stats
        stats.hold(size)
        key = record.key if self.settings.ordering is Ordering.KEY else None
        if key is not None:
            part.key_tails[key] = task

        def done(finished: asyncio.Task[None]) -> None:
            stats.release(size)
            part.tasks.discard(finished)
            part.waiting.discard(finished)
            if key is not None and part.key_tails.get(key) is finished:
                del part.key_tails[key]

        task.add_done_callback(done)

    def _unknown_partition(self, tp: TopicPartition, records: list[Record]) -> None:
        """Records of a partition the service does not track (yet): the consumer's position
        moved past them, so when the partition is still assigned, seek back to the first one;
        they are fetched again once it is tracked. Never drop them silently."""
        assert self.consumer is not None
        if not records or tp not in self.consumer.assignment():
            return  # no longer ours: the next owner starts from the committed offset
        first = min(record.offset for record in records)
        self.consumer.seek(tp, first)
        log.warning(
            "fetch.untracked_partition",
            topic=tp.topic,
            partition=tp.partition,
            offset=first,
            records=len(records),
            action="seek back",
        )

    def _previous_for_key(self, part: Partition, record: Record) -> asyncio.Task[None] | None:
        if self.settings.ordering is not Ordering.KEY or record.key is None:
            return None
        return part.key_tails.get(record.key)

    # ------------------------------------------------------------------ backpressure

    def pause(self, part: Partition, why: str) -> None:
        assert self.consumer is not None
        self.consumer.pause(part.tp)
        part.paused = True
        self.stats.pauses += 1
        log.info(
            "partition.paused",
            topic=part.tp.topic,
            partition=part.tp.partition,
            reason=why,
            buffered=part.buffered,
        )

    def resume(self, part: Partition) -> None:
        assert self.consumer is not None
        self.consumer.resume(part.tp)
        part.paused = False
        log.info(
            "partition.resumed",
            topic=part.tp.topic,
            partition=part.tp.partition,
            buffered=part.buffered,
        )

    def relieve(self) -> None:
        """Resume the partitions paused for backpressure once below half of both limits."""
        if self.stopped:
            return
        low = max(1, self.settings.partition_buffer // 2)
        if self.stats.buffered_bytes >= self.settings.max_buffered_bytes // 2:
            return
        for part in self.partitions.values():
            streamed = part.tp.topic == self.settings.topics.deltas
            if part.paused and not part.rewind and (part.buffered < low or streamed):
                self.resume(part)

    # ------------------------------------------------------------------ intake stop

    @property
    def stopped(self) -> bool:
        return self.guard.intake_stop_reason is not None

    def stopped_by(self, verdict: Verdict) -> bool:
        """Whether ``verdict`` is the judge's error that stopped intake (quota, auth): it says
        nothing about the message, so it must not be published, quarantined or approved."""
        reason, error = self.guard.intake_stop_reason, verdict.error
        return (
            reason is not None
            and verdict.label is Label.ERROR
            and error is not None
            and error.kind == reason
        )

    def check(self) -> None:
        """Follow the core's intake stop: pause and rewind on a stop, resume after it."""
        reason = self.guard.intake_stop_reason
        if reason is not None and self.stats.intake_stopped is None:
            self.stats.intake_stopped = reason
            self.stats.ready = False
            log.error(
                "intake.stopped",
                reason=reason,
                action="all partitions paused; fix the judge account, then restart",
            )
            for part in self.partitions.values():
                part.rewind = True
                for task in list(part.waiting):
                    task.cancel()
        if reason is None and self.stats.intake_stopped is not None:
            log.info("intake.resumed", previous_reason=self.stats.intake_stopped)
            self.stats.intake_stopped = None
        for part in self.partitions.values():
            self._maybe_rewind(part, stopped=reason is not None)

    def _maybe_rewind(self, part: Partition, *, stopped: bool) -> None:
        """After an intake stop, once a partition is quiet and committed, seek back to its first
        unfinished offset, so the dropped messages are fetched again when intake resumes."""
        if stopped and not part.paused:
            self.pause(part, "intake_stopped")
        if stopped and part.tracker.unfinished:
            part.rewind = True  # e.g. records taken after a rebalance, left unjudged
        if not part.rewind or part.tasks:
            return
        frontier = part.tracker.frontier
        if frontier is not None and any(offset < frontier for offset in part.ready):
            return  # exactly-once: the next transaction publishes them first
        if frontier is not None and part.tracker.committed != frontier:
            return  # the next commit moves the committed offset to the frontier first
        # finished beyond the frontier and published (not staged): never judged again
        part.skip.update(o for o in part.tracker.finished_beyond() if o not in part.ready)
        self.unstage(part)  # exactly-once: unpublished, judged again after the seek
        if self.on_rewind is not None:
            self.on_rewind(part)
        assert self.consumer is not None
        if frontier is not None:
            self.consumer.seek(part.tp, frontier)
        part.tracker = OffsetTracker(committed=frontier)
        part.key_tails.clear()
        part.rewind = False
        if not stopped:
            self.resume(part)

    # ------------------------------------------------------------------ rebalances

    def pause_quietly(self, tps: list[TopicPartition]) -> None:
        if self.consumer is None or not tps:
            return
        for tp in tps:
            with contextlib.suppress(IllegalStateError):  # no longer assigned
                self.consumer.pause(tp)

    def resume_quietly(self, tps: list[TopicPartition]) -> None:
        if self.consumer is None or not tps:
            return
        for tp in tps:
            with contextlib.suppress(IllegalStateError):
                self.consumer.resume(tp)

    def assign(
        self,
        assigned: list[TopicPartition],
        committed: dict[TopicPartition, tuple[int, str]],
        *,
        draining: bool,
    ) -> None:
        """Track the ``assigned`` partitions (paused by the caller) from their committed offsets
        and the finished offsets in their metadata; resume them unless stopping."""
        for tp in assigned:
            if tp in self.partitions:
                continue
            part = Partition(tp)
            if tp in committed:
                offset, metadata = committed[tp]
                part.tracker = OffsetTracker(committed=offset)
                part.skip = decode_finished(offset, metadata)
                part.metadata = metadata
            self.partitions[tp] = part
        if draining or self.stopped:
            for tp in assigned:  # stay paused; the loop resumes them when intake does
                self.partitions[tp].paused = True
        else:
            self.resume_quietly([tp for tp in assigned if not self.partitions[tp].paused])

    def revoking(self, revoked: list[TopicPartition]) -> list[Partition]:
        parts = [self.partitions[tp] for tp in revoked if tp in self.partitions]
        for part in parts:
            part.revoked = True
        return parts

    def forget(self, parts: list[Partition]) -> None:
        for part in parts:
            self.unstage(part)  # exactly-once: published by the partition's next owner
            self.partitions.pop(part.tp, None)

    def unstage(self, part: Partition) -> None:
        """Drop the partition's staged outputs (exactly-once), and their bytes from the held."""
        staged = [*part.ready.values(), *part.notes]
        self.stats.release(sum(one.size for one in staged))
        part.ready.clear()
        part.notes.clear()

    @staticmethod
    async def settle(parts: list[Partition], timeout_s: float) -> bool:
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

    def refresh_stats(self, *, draining: bool) -> None:
        assert self.consumer is not None
        stats: dict[str, PartitionStats] = {}
        for part in self.partitions.values():
            stats[part.name] = PartitionStats(
                committed=part.tracker.committed,
                highwater=self.consumer.highwater(part.tp),
                outstanding=part.buffered,
                paused=part.paused,
            )
        self.stats.partitions = stats
        self.stats.ready = self.stats.started and not draining and self.stats.intake_stopped is None
