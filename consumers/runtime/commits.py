"""When a message counts as delivered, and how progress is committed: two policies, one picked
at start (:func:`policy_for`), so no other module asks which guarantee is in force.

* :class:`OffsetCommits` (**at-least-once**, default): a message's outputs are published at once
  and it is finished when the broker acknowledged every one of them (``acks=all``, idempotent
  producer). Records the broker refuses as too large with their batch are sent again each in a
  batch of its own (other sends wait meanwhile), then replaced by the message's dead letter.
  The committed offset of a partition is its lowest unfinished offset
  (:class:`consumers.runtime.offsets.OffsetTracker`); messages finished behind an unfinished one
  are listed in the commit's metadata (:func:`consumers.runtime.offsets.encode_finished`), so the
  next owner skips them.
* :class:`TransactionCommits` (**exactly-once**): a message's outputs are staged; each commit
  publishes the staged outputs below each partition's frontier and the offsets past them in one
  transaction (transactional id ``<prefix>-<instance_id>``, stable per replica, so a restarted
  replica fences its zombie). An aborted transaction leaves its outputs staged and is retried;
  records the broker refuses as too large (a topic's ``max.message.bytes`` lowered while
  running) are sent alone, then replaced by the message's dead letter, as at-least-once does.
  aiokafka has no KIP-447 group-metadata fencing, so before it commits, a transaction asks the
  group whether this member still belongs to it (:meth:`Consumer.in_group`): a member the group
  dropped (frozen past its session timeout, say) aborts instead of publishing verdicts that the
  partitions' new owner publishes too. Limits: a member frozen between that answer and the
  commit is not fenced; a judge call may still repeat after a crash (and cost money twice).

A reply (request-reply, :mod:`consumers.runtime.replies`) is delivered like the other outputs
in both policies, but it never stops the service: at-least-once, a reply not acknowledged within
``reply.timeout_s`` is dropped (counted) and the message finishes; exactly-once, a transaction
in which only replies were refused, or replies were refused for good (not authorized, say:
aiokafka then fails the rest of the transaction), is aborted, those replies are dropped and it
is tried again at once without them; replies to a topic deleted since they were staged are
dropped before the transaction (aiokafka retries adding a missing topic to a transaction without
end).

Streamed answers (``topics.deltas``, :mod:`consumers.runtime.streams`): release events are
delivered with :meth:`CommitPolicy.note`, bound to no offset (at-least-once at once,
exactly-once in the next transaction, which then runs even when no frontier moved). A deltas
partition's transaction also commits, in the offsets' metadata, the offsets finished beyond its
frontier, and publishes the outputs staged at those offsets with them
(:func:`_streamed_commit`): an answer's verdict is committed with its deltas.

:class:`Commits` serialises commits (one lock) and, except for the revoke flush, commits only the
partitions still owned once the lock is taken: a revoke may have run while it waited.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

import structlog
from aiokafka.errors import (
    CommitFailedError,
    IllegalStateError,
    KafkaError,
    MessageSizeTooLargeError,
)
from aiokafka.structs import TopicPartition

from consumers.errors import PublishFailed
from consumers.runtime.envelope import OutRecord, outputs_bytes
from consumers.runtime.intake import Partition, Staged
from consumers.runtime.kafka import Consumer, Producer
from consumers.runtime.kinds import OutputKind
from consumers.runtime.offsets import decode_finished, encode_finished
from consumers.runtime.publisher import (
    Sent,
    acknowledged,
    append_all,
    publish,
    refused_in_batch,
    replace_refused,
    send_all,
    send_alone,
    transient,
)
from consumers.runtime.replies import Replies
from consumers.runtime.stats import ServiceStats
from consumers.settings import Guarantee, ServiceSettings

log = structlog.get_logger("consumers.service")
Refused = Callable[[str], OutRecord]
ABANDONED_GRACE_S = 1.0
REFUSAL_ROUNDS = 5  # batched -> alone -> dead letter -> bare dead letter, and one to spare


class Fenced(Exception):
    """This member is no longer in its group: its transaction must not commit."""


class _SendFailed(Exception):
    """Records of a transaction were not acknowledged: it must be aborted."""

    def __init__(self, failed: list[tuple[OutRecord, BaseException]]) -> None:
        super().__init__(repr(failed[0][1]))
        self.failed = failed


class Fatal:
    """The first error that must stop the service (it sets ``stop``)."""

    def __init__(self, stop: asyncio.Event) -> None:
        self.error: BaseException | None = None
        self._stop = stop

    def fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
            log.error("service.fatal", error=str(exc))
        self._stop.set()


class CommitPolicy(Protocol):
    interval_s: float  # how often the loop commits
    commit_after_fatal: bool  # whether the shutdown commits after a fatal error

    async def deliver(
        self,
        part: Partition,
        offset: int,
        outputs: list[OutRecord],
        refused: Refused,
        input_bytes: int = 0,
    ) -> list[OutRecord]:
        """Publish (or stage) one message's ``outputs``; the records delivered. Raises
        :class:`PublishFailed` (after recording it as fatal) when they cannot be.
        ``input_bytes``: the message's input, kept alive by ``refused`` while staged."""
        ...

    async def note(self, part: Partition, outputs: list[OutRecord], refused: Refused) -> None:
        """Deliver progress records bound to no offset (a streamed answer's release events):
        at-least-once published at once, exactly-once in the next transaction."""
        ...

    async def commit(self, parts: list[Partition], timeout_s: float, *, draining: bool) -> None: ...

    async def close(self) -> None: ...


def policy_for(
    settings: ServiceSettings,
    consumer: Consumer,
    producer: Producer,
    stats: ServiceStats,
    fatal: Fatal,
    *,
    batch_bytes: int,
    replies: Replies,
    reply_producer: Producer | None = None,
) -> CommitPolicy:
    """The policy of ``settings.guarantee``; at-least-once, replies go out on
    ``reply_producer`` (default ``producer``)."""
    if settings.guarantee is Guarantee.EXACTLY_ONCE:
        return TransactionCommits(
            settings, consumer, producer, stats, fatal, batch_bytes=batch_bytes, replies=replies
        )
    return OffsetCommits(
        settings,
        consumer,
        producer,
        stats,
        fatal,
        batch_bytes=batch_bytes,
        replies=replies,
        reply_producer=reply_producer,
    )


def _committed(
    stats: ServiceStats, parts: list[Partition], offsets: dict[TopicPartition, int]
) -> None:
    for part in parts:
        if part.tp in offsets:
            part.tracker.mark_committed(offsets[part.tp])
    stats.commits += 1
    log.debug(
        "offsets.committed", offsets={f"{tp.topic}-{tp.partition}": o for tp, o in offsets.items()}
    )


class Commits:
    """One commit at a time, over the partitions still owned (see the module docstring)."""

    def __init__(self, policy: CommitPolicy, owns: Callable[[Partition], bool]) -> None:
        self.policy = policy
        self._owns = owns
        self._lock = asyncio.Lock()
        self.waiting = 0  # commits waiting for the one in progress

    async def commit(
        self,
        parts: list[Partition],
        timeout_s: float,
        *,
        revoking: bool = False,
        draining: bool = False,
    ) -> None:
        if not parts:
            return
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        try:
            if not revoking:
                parts = [p for p in parts if self._owns(p)]
                if not parts:
                    return
            await self.policy.commit(parts, timeout_s, draining=draining)
        finally:
            self._lock.release()


class OffsetCommits:
    """At-least-once: publish at once, commit offsets (see the module docstring)."""

    commit_after_fatal = True

    def __init__(
        self,
        settings: ServiceSettings,
        consumer: Consumer,
        producer: Producer,
        stats: ServiceStats,
        fatal: Fatal,
        *,
        batch_bytes: int,
        replies: Replies,
        reply_producer: Producer | None = None,
    ) -> None:
        self.settings = settings
        self.interval_s = settings.commit_interval_s
        self._consumer = consumer
        self._producer = producer
        self._reply_producer = reply_producer or producer
        self._stats = stats
        self._fatal = fatal
        self._batch_bytes = batch_bytes
        self._replies = replies
        self._open = asyncio.Event()  # cleared while records are sent alone
        self._open.set()
        self._isolating = asyncio.Lock()

    async def deliver(
        self,
        part: Partition,
        offset: int,
        outputs: list[OutRecord],
        refused: Refused,
        input_bytes: int = 0,
    ) -> list[OutRecord]:
        replies = [out for out in outputs if out.kind is OutputKind.REPLY]
        if not replies:
            return await self._publish(outputs, refused)
        answering = asyncio.ensure_future(self._answer(await self._append(replies)))
        try:
            delivered = await self._publish(
                [o for o in outputs if o.kind is not OutputKind.REPLY], refused
            )
        except BaseException:
            answering.cancel()
            raise
        answered = await answering
        self._stats.published += len(answered)
        return delivered + answered

    async def note(self, part: Partition, outputs: list[OutRecord], refused: Refused) -> None:
        await self._publish(outputs, refused)

    async def _publish(self, outputs: list[OutRecord], refused: Refused) -> list[OutRecord]:
        size = outputs_bytes(outputs)  # held until acknowledged (the input is held till then)
        self._stats.hold(size)
        try:
            delivered = await publish(
                self._producer,
                outputs,
                timeout_s=self.settings.publish_timeout_s,
                on_retry=self._count_retry,
                refused=refused,
                batch_bytes=self._batch_bytes,
                isolate=self._isolate,
                gate=self._open.wait,
            )
        except PublishFailed as exc:
            self._fatal.fail(exc)
            raise
        finally:
            self._stats.release(size)
        self._stats.published += len(delivered)
        return delivered

    async def _append(self, replies: list[OutRecord]) -> Sent:
        """The replies handed to the producer; a send that waits for its topic's metadata
        longer than ``reply.timeout_s`` (the topic was deleted) counts as failed."""
        try:
            async with asyncio.timeout(self._replies.settings.timeout_s):
                return await append_all(self._reply_producer, replies)
        except TimeoutError as exc:
            return [(out, exc) for out in replies]

    async def _answer(self, sent: Sent) -> list[OutRecord]:
        """The replies acknowledged within ``reply.timeout_s`` (those failing on a transient
        error are sent again meanwhile); the others are dropped."""
        timeout_s = self._replies.settings.timeout_s
        delivered: list[OutRecord] = []
        error: BaseException | None = None
        try:
            async with asyncio.timeout(timeout_s):
                failed = await acknowledged(sent)
                delivered = [out for out, _ in sent if all(out is not f for f, _ in failed)]
                again = [out for out, exc in failed if transient(exc)]
                error = failed[0][1] if failed else None
                if again:
                    delivered += await publish(
                        self._reply_producer,
                        again,
                        timeout_s=timeout_s,
                        batch_bytes=self._batch_bytes,
                    )
        except (PublishFailed, TimeoutError) as exc:
            error = exc
        for out, _ in sent:
            if all(out is not d for d in delivered):
                self._replies.dropped(out, "refused", error)
        return delivered

    async def _isolate(self, outputs: list[OutRecord]) -> list[tuple[OutRecord, BaseException]]:
        """Send ``outputs`` each in a batch of its own: other messages' sends wait (``gate``)
        and what they sent already is flushed first, so a refusal names the one record."""
        async with self._isolating:
            self._open.clear()
            try:
                await self._producer.flush()
                return await send_alone(self._producer, outputs)
            finally:
                self._open.set()

    def _count_retry(self) -> None:
        self._stats.publish_retries += 1

    async def commit(self, parts: list[Partition], timeout_s: float, *, draining: bool) -> None:
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
        _committed(self._stats, parts, {tp: offset for tp, (offset, _) in offsets.items()})

    async def close(self) -> None:
        return None


def _streamed_commit(part: Partition) -> tuple[int, str, list[int]] | None:
    """Exactly-once, a partition of streamed-answer deltas: the offset to commit (its
    frontier), the metadata listing the offsets finished beyond it, and the staged offsets to
    publish with them: those below the frontier and those listed. An answer's records are all
    finished at once, after its verdict was staged at its last one, so the transaction that
    publishes a verdict also marks every delta of its answer finished: a restart neither
    reads them again nor loses the verdict (deltas of open answers between them hold the
    frontier back). None when there is nothing new to commit."""
    frontier = part.tracker.frontier
    if frontier is None:
        return None
    metadata = encode_finished(frontier, part.tracker.finished_beyond())
    listed = decode_finished(frontier, metadata)
    ready = sorted(o for o in part.ready if o < frontier or o in listed)
    if not ready and part.tracker.committable is None and metadata == part.metadata:
        return None
    return frontier, metadata, ready


class TransactionCommits:
    """Exactly-once: stage outputs, publish them with the offsets in one transaction."""

    commit_after_fatal = False  # a restart fences the producer and aborts what is open

    def __init__(
        self,
        settings: ServiceSettings,
        consumer: Consumer,
        producer: Producer,
        stats: ServiceStats,
        fatal: Fatal,
        *,
        batch_bytes: int,
        replies: Replies,
    ) -> None:
        self.settings = settings
        self.interval_s = settings.transaction_interval_s
        self._batch_bytes = batch_bytes
        self._consumer = consumer
        self._producer = producer
        self._stats = stats
        self._fatal = fatal
        self._replies = replies
        self._failing_since: float | None = None
        self._abandoned: set[asyncio.Task[None]] = set()  # transactions that timed out

    async def deliver(
        self,
        part: Partition,
        offset: int,
        outputs: list[OutRecord],
        refused: Refused,
        input_bytes: int = 0,
    ) -> list[OutRecord]:
        # held until the transaction publishes them, with the input ``refused`` keeps alive
        size = outputs_bytes(outputs) + input_bytes
        self._stats.hold(size)
        part.ready[offset] = Staged(outputs, refused, size)  # published in the next transaction
        return outputs

    async def note(self, part: Partition, outputs: list[OutRecord], refused: Refused) -> None:
        size = outputs_bytes(outputs)
        self._stats.hold(size)
        part.notes.append(Staged(outputs, refused, size))  # in the next transaction

    async def commit(self, parts: list[Partition], timeout_s: float, *, draining: bool) -> None:
        """Publish the finished outputs below each frontier and commit the frontiers, atomically.
        A transient failure aborts and retries at the next interval, for at most
        ``publish_timeout_s``; then the service stops (a restart fences and aborts). The staged
        outputs stay staged (and counted in ``max_buffered_bytes``) until a transaction commits.
        A transaction that does not end within ``timeout_s`` has an unknown outcome (aiokafka
        waits for the broker without end): the service stops, a restart fences and aborts it."""
        offsets: dict[TopicPartition, int | tuple[int, str]] = {}
        taken: list[tuple[Partition, int]] = []
        notes = [(part, list(part.notes)) for part in parts if part.notes]  # progress records
        for part in parts:
            if part.tp.topic == self.settings.topics.deltas:
                entry = _streamed_commit(part)
                if entry is not None:
                    offsets[part.tp] = entry[0], entry[1]
                    taken += [(part, offset) for offset in entry[2]]
                continue
            frontier = part.tracker.committable
            if frontier is None:
                continue
            taken += [(part, offset) for offset in sorted(o for o in part.ready if o < frontier)]
            offsets[part.tp] = frontier
        if not offsets and not notes:
            return
        staged = [note for _, some in notes for note in some]
        staged += [part.ready[offset] for part, offset in taken]
        task = asyncio.create_task(self._transact(staged, offsets))
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        if not done:  # not awaited after the cancel: aiokafka's abort may wait without end too
            task.cancel()
            self._abandoned.add(task)
            task.add_done_callback(self._abandoned.discard)
            message = (
                f"the transaction did not end within {timeout_s:.0f}s (commit_timeout_s); "
                "its outcome is unknown, a restart fences and aborts it"
            )
            if draining:
                log.error("transaction.timed_out", error=message)
                return
            self._fatal.fail(PublishFailed(message))
            raise self._fatal.error  # type: ignore[misc]
        try:
            task.result()
        except (KafkaError, Fenced) as exc:  # kept staged until revoked, or retried
            if isinstance(exc, Fenced):
                log.warning(
                    "transaction.fenced",
                    error=str(exc),
                    action="aborted; the partitions' new owner publishes them",
                )
                return
            self._failed(exc)
            return
        for part, offset in taken:
            self._stats.release(part.ready.pop(offset).size)
        for part in parts:
            sent = offsets.get(part.tp)
            if isinstance(sent, tuple):
                part.metadata = sent[1]
        for part, some in notes:
            part.notes[:] = [note for note in part.notes if all(note is not n for n in some)]
            self._stats.release(sum(note.size for note in some))
        self._failing_since = None
        self._stats.transactions += 1
        self._stats.published += sum(len(message.outputs) for message in staged)
        committed = {tp: e[0] if isinstance(e, tuple) else e for tp, e in offsets.items()}
        _committed(self._stats, parts, committed)

    async def _transact(
        self, staged: list[Staged], offsets: dict[TopicPartition, int | tuple[int, str]]
    ) -> None:
        """One transaction; when the broker refuses records as too large, it is aborted and
        tried again (at most ``REFUSAL_ROUNDS`` times) with those records sent alone, then
        replaced (:meth:`_refit`): one message's size must never stop the service. When only
        replies failed, whatever the error, they are dropped and it is tried again at once; so
        are replies refused for good (not authorized, say) beside other records: aiokafka fails
        the rest of a transaction once one of its topics is refused."""
        await self._drop_gone_replies(staged)
        alone: set[int] = set()  # ids of the records to send one at a time
        for _ in range(REFUSAL_ROUNDS + 1):  # one more: the round that drops refused replies
            try:
                async with self._producer.transaction():
                    await self._send(staged, alone)
                    if offsets:  # none when only progress records go out
                        await self._producer.send_offsets_to_transaction(
                            offsets, self.settings.group_id
                        )
                    if not await self._consumer.in_group():  # last, just before the commit
                        raise Fenced("this member is no longer in its group")
                return
            except _SendFailed as exc:
                others = [
                    (out, error) for out, error in exc.failed if out.kind is not OutputKind.REPLY
                ]
                if not others:  # only replies: dropped, the rest goes in the next round
                    self._drop_replies(staged, exc.failed)
                    continue
                refused = [
                    (out, error)
                    for out, error in exc.failed
                    if out.kind is OutputKind.REPLY
                    and not transient(error)
                    and not isinstance(error, MessageSizeTooLargeError)
                ]
                if refused:  # e.g. not authorized: it fails the transaction, the others with it
                    self._drop_replies(staged, refused)
                    continue
                if not self._refit(staged, others, alone):
                    raise others[0][1] from None
        raise PublishFailed(f"the broker still refused records after {REFUSAL_ROUNDS} rounds")

    async def _send(self, staged: list[Staged], alone: set[int]) -> None:
        records = [out for message in staged for out in message.outputs]
        failed = await send_all(self._producer, [out for out in records if id(out) not in alone])
        failed += await send_alone(self._producer, [out for out in records if id(out) in alone])
        if failed:
            raise _SendFailed(failed)

    def _refit(
        self, staged: list[Staged], failed: list[tuple[OutRecord, BaseException]], alone: set[int]
    ) -> bool:
        """After a refusal as too large: records refused with their batch are sent alone next
        time; records refused alone are replaced (:func:`publisher.replace_refused`), their
        replacements sent alone. Whether the transaction is worth trying again now."""
        if not all(isinstance(error, MessageSizeTooLargeError) for _, error in failed):
            return False  # a failure of the broker, not of a record: retried at the next interval
        batched = {id(out) for out in refused_in_batch(failed, self._batch_bytes, alone)}
        sent_alone = set(alone)
        alone.update(batched)
        changed = bool(batched)
        for message in staged:
            before = {id(out) for out in message.outputs}
            had_letter = any(out.kind is OutputKind.DEAD_LETTER for out in message.outputs)
            mine = [(o, e) for o, e in failed if id(o) in before and id(o) not in batched]
            if mine and replace_refused(
                message.outputs, mine, message.refused, self._batch_bytes, sent_alone
            ):
                new = [out for out in message.outputs if id(out) not in before]
                alone.update(id(out) for out in new)
                self._count_letter(new, had_letter)
                changed = True
        log.warning(
            "transaction.refused_as_too_large",
            records=len(failed),
            action="aborted; sent again alone, or as a smaller dead letter"
            if changed
            else "aborted; nothing left to shrink",
        )
        return changed

    async def _drop_gone_replies(self, staged: list[Staged]) -> None:
        """Drop the replies whose topic no longer exists (asked afresh: a requester may have
        deleted its reply topic since the reply was staged). aiokafka would retry adding such a
        topic to the transaction without end, and the transaction would never end."""
        topics = {
            out.topic
            for message in staged
            for out in message.outputs
            if out.kind is OutputKind.REPLY
        }
        if not topics:
            return
        try:
            async with asyncio.timeout(self._replies.settings.timeout_s):
                gone = topics - await self._producer.existing(topics)
        except (TimeoutError, KafkaError):
            return  # the cluster cannot say: the transaction finds out
        for message in staged:
            for out in message.outputs:
                if out.kind is OutputKind.REPLY and out.topic in gone:
                    self._stats.replies -= 1  # counted when staged (as verdicts are)
                    self._replies.dropped(out, "unknown_topic")
            message.outputs[:] = [
                out
                for out in message.outputs
                if out.kind is not OutputKind.REPLY or out.topic not in gone
            ]

    def _drop_replies(
        self, staged: list[Staged], failed: list[tuple[OutRecord, BaseException]]
    ) -> None:
        """The transaction aborted for its replies alone: drop (count, log) them from the
        staged outputs; the rest is sent again."""
        refused = {id(out): error for out, error in failed}
        for message in staged:
            for out in message.outputs:
                if id(out) in refused:
                    self._stats.replies -= 1  # counted when staged (as verdicts are)
                    self._replies.dropped(out, "refused", refused[id(out)])
            message.outputs[:] = [out for out in message.outputs if id(out) not in refused]

    def _count_letter(self, new: list[OutRecord], had_letter: bool) -> None:
        """Count a message's new dead letter (its outputs were counted when staged); a dead
        letter made smaller was counted already."""
        if not had_letter:
            self._stats.delivered(
                (out.kind, out.tag) for out in new if out.kind is OutputKind.DEAD_LETTER
            )

    def _failed(self, exc: KafkaError) -> None:
        now = time.monotonic()
        self._failing_since = self._failing_since or now
        if not transient(exc) or now - self._failing_since >= self.settings.publish_timeout_s:
            self._fatal.fail(PublishFailed(f"transaction failed: {exc!r}"))
            raise self._fatal.error from exc  # type: ignore[misc]
        self._stats.publish_retries += 1
        log.warning(
            "transaction.retry", error=repr(exc), failing_for_s=round(now - self._failing_since, 1)
        )

    async def close(self) -> None:
        for task in list(self._abandoned):
            task.cancel()
        if self._abandoned:
            await asyncio.wait(self._abandoned, timeout=ABANDONED_GRACE_S)
