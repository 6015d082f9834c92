"""The learning cascade shared by every replica: counts on a compacted topic, labels on a topic.

Each replica publishes its own counts (:class:`~guard.learning.ledger.Ledger` ``own``) to
``topics.calibration`` every ``learning_flush_s`` and at stop, keyed by replica, tier, basis and
direction (:func:`guard.learning.state.record_key`), so compaction keeps each writer's latest
value. Every replica reads the whole topic before it judges (a restart keeps what it learned;
bounded by ``startup_timeout_s``) and then follows it: a peer's counts count here within about
a flush interval. Reviewers' labels (``topics.labels``, :class:`guard.models.ReviewLabel`) are
read by every replica from the end at its start; the replica that judged the labelled message
applies it (:meth:`~guard.learning.learner.Learner.relabel`), the others count it as unknown
(``groundguard_labels_total{outcome="unknown"}``); a malformed label is counted and logged,
never an error that stops anything.

Its own plain producer (the counts are not part of any exactly-once transaction) and one
group-less consumer assigned every partition of both topics.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter

import orjson
import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError
from aiokafka.structs import TopicPartition
from pydantic import ValidationError

from consumers.settings import ServiceSettings
from guard.learning import state
from guard.learning.learner import Learner
from guard.learning.ledger import Ledger
from guard.models import ReviewLabel

log = structlog.get_logger("consumers.learning")
COMPACTED = {"cleanup.policy": "compact"}
POLL_MS = 500
CLOSE_FLUSH_S = 10.0  # the most the last flush may take at stop


class KafkaLearning:
    """Shares ``learner``'s counts between replicas and feeds it reviewers' labels."""

    def __init__(self, settings: ServiceSettings, learner: Learner) -> None:
        self.settings = settings
        self.learner = learner
        self.labels: Counter[str] = Counter()  # applied, unknown, malformed
        self.records_read = 0
        self._producer: AIOKafkaProducer | None = None
        self._reader: AIOKafkaConsumer | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Create the topics when missing, read the counts to their end, then follow both
        topics and flush this replica's counts in the background."""
        s = self.settings
        counts_of = await self._ensure_topics()
        self._producer = AIOKafkaProducer(
            bootstrap_servers=s.bootstrap_servers,
            client_id=f"{s.client_id}-learning",
            acks="all",
            enable_idempotence=True,
            request_timeout_ms=s.kafka.request_timeout_ms,
            **s.security.client_kwargs(),
        )
        await self._producer.start()
        self._reader = AIOKafkaConsumer(
            bootstrap_servers=s.bootstrap_servers,
            client_id=f"{s.client_id}-learning-{s.instance_id}",
            group_id=None,
            enable_auto_commit=False,
            request_timeout_ms=s.kafka.request_timeout_ms,
            **s.security.client_kwargs(),
        )
        await self._reader.start()
        counts = _partitions(s.topics.calibration, counts_of)
        labels = _partitions(s.topics.labels, counts_of)
        self._reader.assign(counts + labels)
        await self._reader.seek_to_beginning(*counts)
        await self._reader.seek_to_end(*labels)
        await self._catch_up(counts)
        log.info(
            "learning.started",
            records=self.records_read,
            bases=sum(1 for _ in self.learner.ledger.all_keys()),
        )
        self._tasks = [
            asyncio.create_task(self._follow(), name="learning-follow"),
            asyncio.create_task(self._flush_every(), name="learning-flush"),
        ]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, KafkaError):
                await task
        try:  # bounded: a broker that is gone must not hold the stop
            async with asyncio.timeout(CLOSE_FLUSH_S):
                await self.flush()
        except (KafkaError, TimeoutError) as exc:
            log.warning("learning.flush_failed", error=repr(exc))
        for client in (self._reader, self._producer):
            if client is not None:
                with contextlib.suppress(KafkaError):
                    await client.stop()

    async def flush(self) -> int:
        """Publish this replica's changed counts; how many."""
        if self._producer is None:
            return 0
        origin = self.learner.ledger.origin
        dirty = self.learner.ledger.take_dirty()
        sent = [
            await self._producer.send(
                self.settings.topics.calibration,
                key=state.record_key(origin, key).encode(),
                value=orjson.dumps(state.to_record(origin, key, count)),
            )
            for key, count in dirty
        ]
        await asyncio.gather(*sent)
        return len(dirty)

    async def _flush_every(self) -> None:
        while True:
            await asyncio.sleep(self.settings.learning_flush_s)
            try:
                await self.flush()
            except KafkaError as exc:
                log.warning("learning.flush_failed", error=str(exc))

    async def _follow(self) -> None:
        """Apply peers' counts and labels as they arrive; a broker error is logged and the
        reading goes on (what this replica judges never waits for it)."""
        assert self._reader is not None
        while True:
            try:
                batches = await self._reader.getmany(timeout_ms=POLL_MS)
            except KafkaError as exc:
                log.warning("learning.read_failed", error=repr(exc))
                await asyncio.sleep(1.0)
                continue
            for tp, records in batches.items():
                for record in records:
                    self._apply(tp.topic, record.value)

    async def _catch_up(self, partitions: list[TopicPartition]) -> None:
        assert self._reader is not None
        if not partitions:
            return
        end = await self._reader.end_offsets(partitions)
        async with asyncio.timeout(self.settings.startup_timeout_s):
            while await self._behind(end):
                batches = await self._reader.getmany(*partitions, timeout_ms=POLL_MS)
                for tp, records in batches.items():
                    for record in records:
                        self._apply(tp.topic, record.value)

    async def _behind(self, end: dict[TopicPartition, int]) -> bool:
        assert self._reader is not None
        for tp, offset in end.items():
            if await self._reader.position(tp) < offset:
                return True
        return False

    def _apply(self, topic: str, value: bytes | None) -> None:
        if value is None:
            return  # a tombstone: nothing to count
        if topic == self.settings.topics.calibration:
            try:
                origin, key, count = state.from_record(orjson.loads(value))
            except (ValueError, orjson.JSONDecodeError) as exc:
                log.warning("learning.bad_record", topic=topic, error=str(exc))
                return
            self.learner.ledger.put(origin, key, count)
            self.records_read += 1
            return
        try:
            label = ReviewLabel.model_validate_json(value)
        except ValidationError as exc:
            self.labels["malformed"] += 1
            log.warning("labels.malformed", error=str(exc.errors()[:1]))
            return
        applied = self.learner.relabel(label.request_id, label.label)
        self.labels["applied" if applied else "unknown"] += 1
        if applied:
            log.info("labels.applied", request_id=label.request_id, label=label.label)

    async def _ensure_topics(self) -> dict[str, int]:
        """Create the topics when missing; their partition counts (a topic just created is
        waited for, within ``startup_timeout_s``)."""
        s = self.settings
        admin = AIOKafkaAdminClient(
            bootstrap_servers=s.bootstrap_servers,
            client_id=f"{s.client_id}-admin",
            request_timeout_ms=s.kafka.request_timeout_ms,
            **s.security.client_kwargs(),
        )
        names = [s.topics.calibration, s.topics.labels]
        try:
            await admin.start()
            have = set(await admin.list_topics())
            wanted = [
                NewTopic(s.topics.calibration, 1, s.topic_replication, topic_configs=COMPACTED),
                NewTopic(s.topics.labels, 1, s.topic_replication),
            ]
            missing = [t for t in wanted if t.name not in have]
            if missing:
                with contextlib.suppress(TopicAlreadyExistsError):
                    await admin.create_topics(missing)
                log.info("topics.created", topics=[t.name for t in missing])
            async with asyncio.timeout(s.startup_timeout_s):
                while True:
                    described = await admin.describe_topics(names)
                    counts = {d["topic"]: len(d["partitions"]) for d in described}
                    if all(counts.get(name) for name in names):
                        return counts
                    await asyncio.sleep(0.1)
        finally:
            await admin.close()


def _partitions(topic: str, counts: dict[str, int]) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in range(counts[topic])]


async def read_counts(settings: ServiceSettings, ledger: Ledger) -> int:
    """Read ``topics.calibration`` to its end into ``ledger`` (``groundguard calibration``);
    the records read. A missing topic reads nothing."""
    s = settings
    reader = AIOKafkaConsumer(
        bootstrap_servers=s.bootstrap_servers,
        client_id=f"{s.client_id}-calibration",
        group_id=None,
        enable_auto_commit=False,
        request_timeout_ms=s.kafka.request_timeout_ms,
        **s.security.client_kwargs(),
    )
    await reader.start()
    read = 0
    try:
        partitions = await _existing_partitions(settings, s.topics.calibration)
        if not partitions:
            return 0
        reader.assign(partitions)
        await reader.seek_to_beginning(*partitions)
        end = await reader.end_offsets(partitions)
        async with asyncio.timeout(s.startup_timeout_s):
            while any([await reader.position(tp) < end[tp] for tp in partitions]):
                batches = await reader.getmany(*partitions, timeout_ms=POLL_MS)
                for records in batches.values():
                    for record in records:
                        if record.value is None:
                            continue
                        try:
                            origin, key, count = state.from_record(orjson.loads(record.value))
                        except (ValueError, orjson.JSONDecodeError):
                            continue
                        ledger.put(origin, key, count)
                        read += 1
    finally:
        await reader.stop()
    return read


async def _existing_partitions(settings: ServiceSettings, topic: str) -> list[TopicPartition]:
    """The partitions of ``topic`` (none when it does not exist)."""
    s = settings
    admin = AIOKafkaAdminClient(
        bootstrap_servers=s.bootstrap_servers,
        client_id=f"{s.client_id}-admin",
        request_timeout_ms=s.kafka.request_timeout_ms,
        **s.security.client_kwargs(),
    )
    try:
        await admin.start()
        if topic not in set(await admin.list_topics()):
            return []
        (described,) = await admin.describe_topics([topic])
        return [TopicPartition(topic, p["partition"]) for p in described["partitions"]]
    finally:
        await admin.close()


async def publish_label(settings: ServiceSettings, label: ReviewLabel) -> None:
    """Send ``label`` to ``topics.labels``, acknowledged by every in-sync replica."""
    s = settings
    producer = AIOKafkaProducer(
        bootstrap_servers=s.bootstrap_servers,
        client_id=f"{s.client_id}-label",
        acks="all",
        request_timeout_ms=s.kafka.request_timeout_ms,
        **s.security.client_kwargs(),
    )
    await producer.start()
    try:
        await producer.send_and_wait(
            s.topics.labels,
            key=label.request_id.encode("utf-8", "surrogatepass"),
            value=label.model_dump_json().encode(),
        )
    finally:
        await producer.stop()
