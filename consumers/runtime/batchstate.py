"""The durable journal of submitted batches (``judge.delivery: batch``): a compacted topic.

Every batch the :class:`~guard.batch.judge.BatchingJudge` submits is written here, one record
per input partition it covers (to the same partition number of ``topics.batch_state``, keyed
by the batch's own key: the batch, and each of its items' ``custom_id`` with the offset it
judges), twice: as an intent before it is submitted, then with the provider's batch id (the
same key: compaction keeps the second). Each is acknowledged by every in-sync replica *before*
any of its verdicts can be published, so before the input offsets can be committed past its
messages. When a partition is assigned, its records are read back before the partition is
fetched: a message whose item an earlier owner (or this replica, before a crash) submitted is
then awaited by polling its batch (an intent's batch is first looked for at the provider),
never submitted again. Records whose offsets are all committed are deleted (a tombstone) when
read back, so the topic holds only batches that may still be needed.

The journal topic needs a partition for every input partition: a start with fewer, or an
assignment of an input partition the journal lacks (input partitions added later), is a
:class:`JournalError` naming the fix, and reading a partition's records back is bounded by
``startup_timeout_s``: it is part of starting work on the partition.

The one module besides :mod:`consumers.runtime.kafka` that builds aiokafka clients: its own
producer (plain: the journal must be written outside any exactly-once transaction) and a
short-lived group-less consumer that reads a partition's records to their end.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable

import orjson
import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError
from aiokafka.structs import TopicPartition

from consumers.settings import ServiceSettings
from guard.batch.items import ItemRef
from guard.batch.journal import JournalError, MemoryJournal, SubmittedBatch

log = structlog.get_logger("consumers.batches")
COMPACTED = {"cleanup.policy": "compact"}


def stream_of(topic: str, partition: int) -> str:
    """The :class:`~guard.batch.items.ItemRef` stream name of an input partition."""
    return f"{topic}-{partition}"


def partition_of(ref: ItemRef) -> int:
    return int(ref.stream.rsplit("-", 1)[1])


def batch_journal(settings: ServiceSettings) -> KafkaBatchJournal | None:
    """The durable journal ``judge.delivery: batch`` needs (None for other deliveries): the
    edge gives the same one to :func:`guard.assembly.build_guard` and to the service, which
    starts and closes it."""
    return KafkaBatchJournal(settings) if settings.judge.delivery == "batch" else None


class KafkaBatchJournal:
    """A :class:`~guard.batch.journal.BatchJournal` in ``topics.batch_state`` (module doc)."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self.topic = settings.topics.batch_state
        self._memory = MemoryJournal()
        self._producer: AIOKafkaProducer | None = None

    async def start(self) -> None:
        """Create the topic when missing (compacted, partitioned like the input); start the
        producer."""
        await self._ensure_topic()
        s = self.settings
        self._producer = AIOKafkaProducer(
            bootstrap_servers=s.bootstrap_servers,
            client_id=f"{s.client_id}-batches",
            acks="all",
            enable_idempotence=True,
            request_timeout_ms=s.kafka.request_timeout_ms,
            **s.security.client_kwargs(),
        )
        await self._producer.start()
        try:  # the topic's leaders known now, so the first record after a submission is quick
            await self._producer.partitions_for(self.topic)
        except KafkaError as exc:
            raise JournalError(f"cannot reach {self.topic}: {exc}") from exc

    async def close(self) -> None:
        if self._producer is not None:
            await self._producer.stop()

    # ------------------------------------------------------------------ the journal port

    def find(self, custom_id: str) -> SubmittedBatch | None:
        return self._memory.find(custom_id)

    async def record(self, batch: SubmittedBatch) -> None:
        """One record per input partition the batch covers, sent at once, each acknowledged."""
        assert self._producer is not None
        self._memory.remember(batch)
        key = batch.ident.encode()
        try:
            acks = [
                await self._producer.send(
                    self.topic, orjson.dumps(part.to_json()), key=key, partition=partition
                )
                for partition, part in _by_partition(batch).items()
            ]
            await asyncio.gather(*acks)
        except KafkaError as exc:
            raise JournalError(f"cannot store batch {batch.ident}: {exc}") from exc

    # ------------------------------------------------------------------ rebalances

    async def load(self, committed: dict[TopicPartition, int]) -> int:
        """Read the batches of the assigned input partitions (``committed``: their committed
        offsets); delete those whose offsets are all committed. Returns the batches kept."""
        wanted = [TopicPartition(self.topic, tp.partition) for tp in committed]
        floor = {tp.partition: offset for tp, offset in committed.items()}
        await self._check_partitions({tp.partition for tp in wanted})
        latest = await self._read(wanted)
        kept, done = 0, []
        for (partition, ident), batch in latest.items():
            if all(ref is None or ref.position < floor[partition] for _, ref in batch.items):
                done.append((partition, ident))
            else:
                self._memory.remember(batch)
                kept += 1
        await self._tombstone(done)
        log.info("batches.read", batches=len(latest), kept=kept, done=len(done), floors=floor)
        return kept

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Drop the batches of revoked partitions from memory (the topic keeps them)."""
        gone = {stream_of(tp.topic, tp.partition) for tp in partitions}
        for batch in list(self._memory.batches()):
            if all(ref is None or ref.stream in gone for _, ref in batch.items):
                self._memory.forget(batch.ident)

    def settle(self, committed: dict[TopicPartition, int | None]) -> None:
        """Drop from memory the batches whose items are all below the committed offsets of
        the partitions owned (``committed``; None: nothing committed yet), so memory holds only
        batches a message may still need (the topic's records go when next read back)."""
        floors = {
            stream_of(tp.topic, tp.partition): -1 if offset is None else offset
            for tp, offset in committed.items()
        }
        forgotten = self._memory.settle(floors)
        if forgotten:
            log.debug("batches.settled", batches=forgotten)

    async def _check_partitions(self, needed: set[int]) -> None:
        """:class:`JournalError` unless the journal topic has each partition of ``needed``."""
        assert self._producer is not None
        try:
            have = await self._producer.partitions_for(self.topic)
        except KafkaError as exc:
            raise JournalError(f"cannot reach {self.topic}: {exc}") from exc
        missing = sorted(needed - set(have))
        if missing:
            raise JournalError(
                _too_few(self.topic, self.settings.topics.requests, len(have), missing)
            )

    async def _read(self, wanted: list[TopicPartition]) -> dict[tuple[int, str], SubmittedBatch]:
        """Every partition of ``wanted`` read to its end, within ``startup_timeout_s`` once the
        reader is connected (connecting is bounded by ``request_timeout_ms``; cancelling it
        midway would leave aiokafka's bootstrap connection open)."""
        timeout_s = self.settings.startup_timeout_s
        consumer = self._reader()
        try:
            await consumer.start()
            async with asyncio.timeout(timeout_s):
                return await _read_all(consumer, wanted)
        except TimeoutError as exc:
            parts = sorted(tp.partition for tp in wanted)
            raise JournalError(
                f"cannot read partitions {parts} of {self.topic} to their end within "
                f"startup_timeout_s ({timeout_s:g} s): is the broker reachable and the topic "
                "healthy? The partitions are not judged until it is read"
            ) from exc
        except KafkaError as exc:
            raise JournalError(f"cannot read {self.topic}: {exc}") from exc
        finally:
            await consumer.stop()

    def _reader(self) -> AIOKafkaConsumer:
        s = self.settings
        return AIOKafkaConsumer(
            bootstrap_servers=s.bootstrap_servers,
            client_id=f"{s.client_id}-batches-reader",
            enable_auto_commit=False,
            # the reader's own offset reset must go to the start too: with aiokafka's default
            # (latest) a reset racing the seek below left it at the end, reading nothing
            auto_offset_reset="earliest",
            request_timeout_ms=s.kafka.request_timeout_ms,
            **s.security.client_kwargs(),
        )

    async def _tombstone(self, done: list[tuple[int, str]]) -> None:
        assert self._producer is not None
        try:
            for partition, ident in done:
                await self._producer.send_and_wait(
                    self.topic, None, key=ident.encode(), partition=partition
                )
        except KafkaError as exc:  # only housekeeping: compaction keeps the stale record
            log.warning("batches.tombstone_failed", error=str(exc))

    async def _ensure_topic(self) -> None:
        s = self.settings
        admin = AIOKafkaAdminClient(
            bootstrap_servers=s.bootstrap_servers,
            client_id=f"{s.client_id}-admin",
            request_timeout_ms=s.kafka.request_timeout_ms,
            **s.security.client_kwargs(),
        )
        try:
            await admin.start()
            described = await admin.describe_topics([s.topics.requests])
            partitions = len(described[0]["partitions"]) or s.topic_partitions
            if self.topic in set(await admin.list_topics()):
                (journal,) = await admin.describe_topics([self.topic])
                have = len(journal["partitions"])
                if have < partitions:
                    missing = list(range(have, partitions))
                    raise JournalError(_too_few(self.topic, s.topics.requests, have, missing))
                return
            topic = NewTopic(self.topic, partitions, s.topic_replication, topic_configs=COMPACTED)
            await admin.create_topics([topic])
            log.info("topics.created", topics=[self.topic], partitions=partitions, compacted=True)
        except TopicAlreadyExistsError:
            pass  # another replica created it first
        except KafkaError as exc:
            raise JournalError(
                f"cannot create the batch journal topic {self.topic}: {exc} (create it "
                "compacted, with the input topic's partition count)"
            ) from exc
        finally:
            await admin.close()


def _too_few(topic: str, requests: str, have: int, missing: list[int]) -> str:
    return (
        f"the batch journal topic {topic} has {have} partitions, but input partitions "
        f"{missing} of {requests} need one each: add partitions to {topic} to match {requests} "
        f"(kafka-topics --alter --topic {topic} --partitions {max(missing) + 1})"
    )


async def _read_all(
    consumer: AIOKafkaConsumer, wanted: list[TopicPartition]
) -> dict[tuple[int, str], SubmittedBatch]:
    """The latest journal record of each batch in ``wanted``, read by the started ``consumer``
    from the beginning to the end offsets found first."""
    latest: dict[tuple[int, str], SubmittedBatch] = {}
    consumer.assign(wanted)
    end = await consumer.end_offsets(wanted)
    await consumer.seek_to_beginning(*wanted)
    while await _behind(consumer, end):
        fetched = await consumer.getmany(timeout_ms=500)
        for tp, records in fetched.items():
            for record in records:
                _apply(latest, tp.partition, record.key, record.value)
    return latest


async def _behind(consumer: AIOKafkaConsumer, end: dict[TopicPartition, int]) -> bool:
    """Whether the reader has not reached ``end`` in some partition."""
    for tp, offset in end.items():
        if await consumer.position(tp) < offset:
            return True
    return False


def _by_partition(batch: SubmittedBatch) -> dict[int, SubmittedBatch]:
    """``batch`` split by input partition (items from no stream are not stored)."""
    parts: dict[int, list[tuple[str, ItemRef | None]]] = {}
    for cid, ref in batch.items:
        if ref is not None:
            parts.setdefault(partition_of(ref), []).append((cid, ref))
    return {p: dataclasses.replace(batch, items=tuple(items)) for p, items in parts.items()}


def _apply(
    latest: dict[tuple[int, str], SubmittedBatch],
    partition: int,
    key: bytes | None,
    value: bytes | None,
) -> None:
    """One journal record: a batch, or a tombstone (a record that is neither is skipped)."""
    if key is None:
        return
    ident = key.decode("utf-8", "replace")
    if value is None:
        latest.pop((partition, ident), None)
        return
    try:
        latest[(partition, ident)] = SubmittedBatch.from_json(orjson.loads(value))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, IndexError):
        log.warning("batches.bad_record", partition=partition, key=ident)
