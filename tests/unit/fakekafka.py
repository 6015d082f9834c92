"""In-memory Kafka for driving :class:`GuardService` deterministically (no broker, no sleeps).

:class:`FakeCluster` holds the request partitions, the group's committed offsets and what
``read_committed`` readers of the output topics would see. :class:`FakeConsumer` and
:class:`FakeProducer` implement the runtime's ports (:mod:`consumers.runtime.kafka`) with
aiokafka's semantics where the service depends on them:

* ``pause``/``seek``/``commit`` of a partition not assigned raise ``IllegalStateError``;
* records of a paused partition are not returned and its position does not move;
* a rebalance is eager, as aiokafka's: ``on_revoked`` with the whole old assignment, then the
  new assignment is in force (fetching may run) while ``on_assigned`` awaits;
* a send's acknowledgement is a future; records sent in a transaction become visible, and its
  offsets committed, only when it commits.

Gates (``asyncio.Event``) hold an operation until the test opens them, so a race window is
entered on purpose, not by chance.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiokafka.errors import (
    IllegalOperation,
    IllegalStateError,
    KafkaError,
    UnknownTopicOrPartitionError,
)
from aiokafka.structs import ConsumerRecord, TopicPartition

from consumers.runtime.kafka import Rebalance, Records


@dataclass(frozen=True)
class Output:
    topic: str
    key: bytes | None
    value: bytes

    @property
    def json(self) -> Any:
        return orjson.loads(self.value)


@dataclass
class FakeCluster:
    topic: str = "requests"
    partitions: int = 3  # of the input topic, as the cluster's metadata says
    logs: dict[TopicPartition, list[ConsumerRecord[bytes, bytes]]] = field(default_factory=dict)
    committed: dict[TopicPartition, tuple[int, str]] = field(default_factory=dict)
    outputs: list[Output] = field(default_factory=list)  # what read_committed readers see
    transactions: list[dict[TopicPartition, int]] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def produce(
        self,
        partition: int,
        value: bytes,
        key: bytes | None = None,
        headers: list[tuple[str, bytes]] | None = None,
    ) -> int:
        tp = TopicPartition(self.topic, partition)
        log = self.logs.setdefault(tp, [])
        offset = len(log)
        log.append(
            ConsumerRecord(
                self.topic,
                partition,
                offset,
                0,
                0,
                key,
                value,
                None,
                len(key or b""),
                len(value),
                headers or [],
            )
        )
        self.notify()
        return offset

    def notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed(self, timeout_s: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout_s)

    def verdict_ids(self, topic: str = "verdicts") -> list[str]:
        """The request ids of the verdicts published (one per verdict, sorted)."""
        return sorted(out.json["request_id"] for out in self.outputs if out.topic == topic)

    def committed_offset(self, partition: int) -> int | None:
        found = self.committed.get(TopicPartition(self.topic, partition))
        return None if found is None else found[0]


class FakeConsumer:
    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.assigned: set[TopicPartition] = set()
        self.positions: dict[TopicPartition, int] = {}
        self.paused: set[TopicPartition] = set()
        self.listener: Rebalance | None = None
        self.started = False
        self.getmany_calls = 0
        self.timeouts: list[int] = []  # the timeout_ms of each getmany
        self.seeks: list[tuple[TopicPartition, int]] = []
        self.lookup_gate: asyncio.Event | None = None  # holds committed_with_metadata
        self.commit_gate: asyncio.Event | None = None  # holds commit
        self.committing = False
        self.looking_up = False
        self.member = True  # False: the group dropped this member (in_group says so)

    def subscribe(self, topics: list[str], rebalance: Rebalance) -> None:
        assert topics == [self.cluster.topic]
        self.listener = rebalance

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.started = False

    async def getmany(self, timeout_ms: int) -> Records:
        self.getmany_calls += 1
        self.timeouts.append(timeout_ms)
        await asyncio.sleep(0)  # a fetch always yields to the event loop, as aiokafka's does
        batch: Records = {}
        for tp in sorted(self.assigned - self.paused):
            records = self.cluster.logs.get(tp, [])[self.positions[tp] :]
            if records:
                batch[tp] = list(records)
                self.positions[tp] = records[-1].offset + 1
        if not batch:
            await self.cluster.changed(timeout_ms / 1000)
        return batch

    def _check(self, tps: tuple[TopicPartition, ...] | list[TopicPartition]) -> None:
        for tp in tps:
            if tp not in self.assigned:
                raise IllegalStateError(f"Partition {tp} is not assigned")

    def pause(self, *tps: TopicPartition) -> None:
        self._check(tps)
        self.paused.update(tps)

    def resume(self, *tps: TopicPartition) -> None:
        self._check(tps)
        self.paused.difference_update(tps)
        self.cluster.notify()

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self._check([tp])
        self.seeks.append((tp, offset))
        self.positions[tp] = offset
        self.cluster.notify()

    def assignment(self) -> set[TopicPartition]:
        return set(self.assigned)

    def highwater(self, tp: TopicPartition) -> int | None:
        return len(self.cluster.logs.get(tp, []))

    def partition_count(self, topic: str) -> int | None:
        return self.cluster.partitions if topic == self.cluster.topic else None

    async def commit(self, offsets: dict[TopicPartition, tuple[int, str]]) -> None:
        self._check(list(offsets))
        if self.commit_gate is not None:
            self.committing = True
            await self.commit_gate.wait()
            self.committing = False
        self.cluster.committed.update(offsets)

    async def committed_with_metadata(
        self, tps: list[TopicPartition]
    ) -> dict[TopicPartition, tuple[int, str]]:
        if self.lookup_gate is not None:
            self.looking_up = True
            await self.lookup_gate.wait()
            self.looking_up = False
        return {tp: self.cluster.committed[tp] for tp in tps if tp in self.cluster.committed}

    async def in_group(self) -> bool:
        return self.member

    async def rebalance(self, partitions: list[int]) -> None:
        """An eager rebalance to ``partitions``, as aiokafka runs it."""
        assert self.listener is not None
        await self.listener.on_revoked(sorted(self.assigned))
        new = [TopicPartition(self.cluster.topic, p) for p in partitions]
        self.assigned = set(new)
        self.paused &= self.assigned
        self.positions = {tp: self.cluster.committed.get(tp, (0, ""))[0] for tp in new}
        self.cluster.notify()
        await self.listener.on_assigned(new)


class FakeProducer:
    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.hold = False  # withhold acknowledgements until release()
        self.held: list[tuple[asyncio.Future[Any], Output]] = []
        self.refuse: Callable[[Output], Exception | None] = lambda _: None
        self.fail_next_transaction: KafkaError | None = None
        self.transaction_gate: asyncio.Event | None = None  # holds the end of a transaction
        self.ending_transaction = False
        self._open: tuple[list[Output], dict[TopicPartition, int]] | None = None
        self.closed = False
        self.missing_topics: set[str] = set()  # partitions_for raises for these
        self.forgotten: list[str] = []  # topics forget() was called for
        self.partitions: dict[str, set[int]] = {}  # a topic's partitions, when not {0}
        self.fresh_requests: list[str] = []  # topics fresh_partitions() asked for

    async def start(self) -> None:
        return None

    async def partitions_for(self, topic: str) -> set[int]:
        if topic in self.missing_topics:
            raise UnknownTopicOrPartitionError(topic)
        return set(self.partitions.get(topic, {0}))

    async def fresh_partitions(self, topic: str) -> set[int]:
        self.fresh_requests.append(topic)
        return set() if topic in self.missing_topics else set(self.partitions.get(topic, {0}))

    async def existing(self, topics: set[str]) -> set[str]:
        return topics - self.missing_topics

    def forget(self, topic: str) -> None:
        self.forgotten.append(topic)

    async def send(
        self,
        topic: str,
        value: bytes,
        *,
        key: bytes | None,
        headers: list[tuple[str, bytes]],
        partition: int | None = None,
    ) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        out = Output(topic, key, value)
        error = self.refuse(out)
        if isinstance(error, IllegalOperation):  # as aiokafka, e.g. in a transaction gone wrong
            raise error
        if error is not None:
            future.set_exception(error)
        elif self._open is not None:
            self._open[0].append(out)
            future.set_result(None)
        elif self.hold:
            self.held.append((future, out))
        else:
            self.cluster.outputs.append(out)
            future.set_result(None)
        return future

    async def flush(self) -> None:
        """Sends are acknowledged (or held) at once: nothing is left to flush."""

    def release(self) -> None:
        self.hold = False
        for future, out in self.held:
            self.cluster.outputs.append(out)
            future.set_result(None)
        self.held.clear()

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[None]:
        self._open = ([], {})
        try:
            yield
            if self.transaction_gate is not None:
                self.ending_transaction = True
                await self.transaction_gate.wait()
                self.ending_transaction = False
            error, self.fail_next_transaction = self.fail_next_transaction, None
            if error is not None:
                raise error  # aborted: nothing becomes visible
            records, offsets = self._open
            self.cluster.outputs.extend(records)
            self.cluster.committed.update({tp: (o, "") for tp, o in offsets.items()})
            self.cluster.transactions.append(offsets)
        finally:
            self._open = None

    def transaction(self) -> contextlib.AbstractAsyncContextManager[Any]:
        return self._transaction()

    async def send_offsets_to_transaction(
        self, offsets: dict[TopicPartition, int | tuple[int, str]], group_id: str
    ) -> None:
        assert self._open is not None
        self._open[1].update(offsets)

    async def close(self, timeout_s: float) -> None:
        self.closed = True


class FakeBroker:
    """The :class:`consumers.runtime.kafka.Broker` port over a :class:`FakeCluster`; the last
    consumer and producer built are kept for the test to drive."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.consumers: list[FakeConsumer] = []
        self.producers: list[FakeProducer] = []

    async def create_topics(self) -> None:
        return None

    async def topics_exist(
        self, *, deadline: float, stop: asyncio.Event, on_missing: Callable[[str | None], None]
    ) -> bool:
        on_missing(None)
        return True

    async def output_limits(self) -> dict[str, int]:
        return {}

    def consumer(self) -> FakeConsumer:
        self.consumers.append(FakeConsumer(self.cluster))
        return self.consumers[-1]

    def producer(self, *, max_batch_size: int, linger_ms: int | None = None) -> FakeProducer:
        self.producers.append(FakeProducer(self.cluster))
        return self.producers[-1]


class Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def until(
    condition: Callable[[], bool], what: str = "condition", timeout_s: float = 10.0
) -> None:
    """Wait until ``condition()`` holds (checked at each turn of the event loop, briefly
    yielding), failing the test after ``timeout_s``: a bound, not a synchronisation."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.001)
