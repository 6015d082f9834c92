"""The runtime's view of Kafka, and the one place that builds aiokafka clients.

The service talks to Kafka only through the three ports below (:class:`Broker`,
:class:`Consumer`, :class:`Producer`), so its ordering, backpressure, commit and rebalance logic
can be driven by in-memory fakes (``tests/unit/fakekafka.py``). :class:`KafkaBroker` implements
them with aiokafka; every reach into aiokafka's private parts is here:

* the commit metadata of the group's offsets (``_coordinator``; public ``committed()`` drops it);
* whether this member is still in its group before an exactly-once transaction commits (a
  heartbeat through ``_coordinator``: aiokafka has no KIP-447 group-metadata fencing);
* closing a producer whose flush hangs (``_sender``, ``_message_accumulator``);
* whether reply topics still exist just before a transaction (the producer's ``client``
  metadata, refreshed);
* finishing a consumer's close that a fetch task's cancellation interrupted (``_fetcher``,
  ``_client``);
* committing without retrying a commit whose topic is unknown (``_coordinator``,
  ``_subscription``): aiokafka's retry landed it on a topic created again under the name;
* whether the consumer's background fetch task is still running (``_fetcher``): when it dies
  (aiokafka logs "Unexpected error in fetcher routine" once), ``getmany`` returns nothing
  forever, so the service must stop rather than sit there healthy;
* fetched batches whose header names are not UTF-8 (:func:`consumers.runtime.batches.install`);
* the sequence numbers of a batch the broker refused as too large, given back so the partition
  takes later batches (:func:`consumers.runtime.sequences.install`).

Why one module of this length: it is the one place that touches aiokafka (the ports, their
aiokafka implementations and every private access), on purpose: an aiokafka upgrade is read
here and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka import errors as Errors
from aiokafka.errors import KafkaConnectionError, KafkaError, UnknownTopicOrPartitionError
from aiokafka.protocol.group import HeartbeatRequest
from aiokafka.structs import ConsumerRecord, TopicPartition
from aiokafka.util import commit_structure_validate

from consumers.errors import FetchStopped
from consumers.runtime import batches, sequences
from consumers.runtime.topics import ensure_topics, output_limits, wait_for_topics
from consumers.settings import ServiceSettings, rebalance_timeout_ms

log = structlog.get_logger("consumers.service")
MIN_REQUEST_BYTES = 1_048_576
FORGOTTEN_KEPT = 1024  # forgotten topics remembered (so a late send does not re-track them)
CLOSE_GRACE_S = 1.0  # after a producer's flush timed out, how long its abort may take
Records = dict[TopicPartition, list[ConsumerRecord[Any, Any]]]


class Rebalance(Protocol):
    """What the consumer calls when the group moves partitions."""

    async def on_revoked(self, revoked: list[TopicPartition]) -> None: ...

    async def on_assigned(self, assigned: list[TopicPartition]) -> None: ...


class Consumer(Protocol):
    """The consumer as the service uses it (aiokafka's semantics: ``pause`` and ``seek`` of a
    partition not assigned raise ``IllegalStateError``; records of a paused partition are
    discarded without moving its position)."""

    def subscribe(self, topics: list[str], rebalance: Rebalance) -> None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def getmany(self, timeout_ms: int) -> Records: ...

    def pause(self, *tps: TopicPartition) -> None: ...

    def resume(self, *tps: TopicPartition) -> None: ...

    def seek(self, tp: TopicPartition, offset: int) -> None: ...

    def assignment(self) -> set[TopicPartition]: ...

    def highwater(self, tp: TopicPartition) -> int | None: ...

    def partition_count(self, topic: str) -> int | None:
        """How many partitions ``topic`` has (cluster metadata); None when unknown."""
        ...

    async def commit(self, offsets: dict[TopicPartition, tuple[int, str]]) -> None: ...

    async def committed_with_metadata(
        self, tps: list[TopicPartition]
    ) -> dict[TopicPartition, tuple[int, str]]:
        """The group's committed offsets and their metadata; {} when unavailable."""
        ...

    async def in_group(self) -> bool:
        """Whether this member still belongs to its group at its generation (False once the
        group dropped it, e.g. after a pause longer than the session timeout); raises
        ``KafkaError`` when the group coordinator cannot be asked."""
        ...


class Producer(Protocol):
    """The producer as the service uses it: ``send`` returns the acknowledgement's future."""

    async def start(self) -> None: ...

    async def send(
        self,
        topic: str,
        value: bytes,
        *,
        key: bytes | None,
        headers: list[tuple[str, bytes]],
        partition: int | None = None,
    ) -> asyncio.Future[Any]:
        """Hand a record to the producer (``partition`` None: by the key); raises
        ``KafkaError`` when ``partition`` is not one of the topic's."""
        ...

    async def flush(self) -> None:
        """Wait until every record sent so far is acknowledged or failed."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Any]: ...

    async def partitions_for(self, topic: str) -> set[int]:
        """The topic's partitions; waits for its metadata (raises ``KafkaError`` when the
        topic does not exist)."""
        ...

    async def existing(self, topics: set[str]) -> set[str]:
        """Those of ``topics`` that exist now, after a fresh metadata request."""
        ...

    async def fresh_partitions(self, topic: str) -> set[int]:
        """The topic's partitions after a fresh metadata request (partitions added since the
        cached metadata included); empty when it does not exist."""
        ...

    def forget(self, topic: str) -> None:
        """Stop asking for ``topic``'s metadata (once its records in flight are acknowledged or
        failed); a later send to it asks again."""
        ...

    async def send_offsets_to_transaction(
        self, offsets: dict[TopicPartition, int | tuple[int, str]], group_id: str
    ) -> None: ...

    async def close(self, timeout_s: float) -> None:
        """Stop; records not acknowledged within ``timeout_s`` are failed."""
        ...


class Broker(Protocol):
    """Where the service's clients and topics come from."""

    async def create_topics(self) -> None: ...

    async def topics_exist(
        self, *, deadline: float, stop: asyncio.Event, on_missing: Callable[[str | None], None]
    ) -> bool: ...

    async def output_limits(self) -> dict[str, int]: ...

    def consumer(self) -> Consumer: ...

    def producer(self, *, max_batch_size: int, linger_ms: int | None = None) -> Producer:
        """A producer; ``linger_ms`` overrides ``kafka.linger_ms`` (the reply producer's 0)."""
        ...


class KafkaBroker:
    """The ports, with aiokafka and the cluster of ``settings``."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings

    async def create_topics(self) -> None:
        await ensure_topics(self.settings)

    async def topics_exist(
        self, *, deadline: float, stop: asyncio.Event, on_missing: Callable[[str | None], None]
    ) -> bool:
        return await wait_for_topics(
            self.settings, deadline=deadline, stop=stop, on_missing=on_missing
        )

    async def output_limits(self) -> dict[str, int]:
        return await output_limits(self.settings)

    def consumer(self) -> Consumer:
        s, k = self.settings, self.settings.kafka
        batches.install()  # a header name that is not UTF-8 must not break the fetch
        return KafkaConsumer(
            AIOKafkaConsumer(
                bootstrap_servers=s.bootstrap_servers,
                group_id=s.group_id,
                group_instance_id=s.instance_id if k.static_membership else None,
                client_id=f"{s.client_id}-{s.instance_id}",
                enable_auto_commit=False,
                isolation_level="read_committed",
                auto_offset_reset=k.auto_offset_reset,
                max_poll_records=k.max_poll_records,
                max_poll_interval_ms=k.max_poll_interval_ms,
                session_timeout_ms=k.session_timeout_ms,
                rebalance_timeout_ms=int(rebalance_timeout_ms(s)),
                heartbeat_interval_ms=k.heartbeat_interval_ms,
                request_timeout_ms=k.request_timeout_ms,
                metadata_max_age_ms=k.metadata_max_age_ms,
                fetch_max_bytes=max(52_428_800, 2 * s.max_message_bytes),
                max_partition_fetch_bytes=max(1_048_576, 2 * s.max_message_bytes),
                **s.security.client_kwargs(),
            )
        )

    def producer(self, *, max_batch_size: int, linger_ms: int | None = None) -> Producer:
        sequences.install()  # a batch refused as too large must not block its partition
        return KafkaProducer(
            make_producer(self.settings, max_batch_size=max_batch_size, linger_ms=linger_ms)
        )


def make_producer(
    settings: ServiceSettings, *, max_batch_size: int | None = None, linger_ms: int | None = None
) -> AIOKafkaProducer:
    """The service's producer: ``acks=all``, idempotent, transactional in exactly-once mode.

    aiokafka's default ``max_batch_size`` (16 KiB) holds about ten verdicts per partition and
    request, which capped the service at ~200 verdicts/s; the setting raises it. The service
    lowers it (``max_batch_size``) below the output topics' ``max.message.bytes``: a batch the
    broker refuses fails every record in it."""
    s, k = settings, settings.kafka
    return AIOKafkaProducer(
        bootstrap_servers=s.bootstrap_servers,
        client_id=f"{s.client_id}-producer",
        acks="all",
        enable_idempotence=True,
        linger_ms=k.linger_ms if linger_ms is None else linger_ms,
        max_batch_size=max_batch_size or k.max_batch_size,
        request_timeout_ms=k.request_timeout_ms,
        metadata_max_age_ms=k.metadata_max_age_ms,
        max_request_size=max(MIN_REQUEST_BYTES, s.max_output_bytes + 65_536),
        transactional_id=s.transactional_id,
        transaction_timeout_ms=k.transaction_timeout_ms,
        **s.security.client_kwargs(),
    )


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, rebalance: Rebalance) -> None:
        self._rebalance = rebalance

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        await self._rebalance.on_revoked(list(revoked))

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        await self._rebalance.on_assigned(list(assigned))


class KafkaConsumer:
    """:class:`Consumer` over an ``AIOKafkaConsumer``."""

    def __init__(self, consumer: AIOKafkaConsumer) -> None:
        self._c = consumer

    def subscribe(self, topics: list[str], rebalance: Rebalance) -> None:
        self._c.subscribe(topics, listener=_Listener(rebalance))

    async def start(self) -> None:
        await self._c.start()

    async def stop(self) -> None:
        """Leave the group and close. aiokafka's fetcher cancels its fetch tasks on close and
        awaits them; one caught in its retry backoff during a broker outage lets its
        CancelledError out, and a fetch task that had died lets its error out; either would end
        the stop half way (connections left open) and replace the service's real error. Unless
        this task itself is being cancelled, the close is finished here."""
        try:
            await self._c.stop()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            log.warning(
                "consumer.close_interrupted",
                detail="a fetch task's cancellation escaped aiokafka's close; finishing it",
            )
            await _finish_close(self._c)
        except KafkaError:  # the fetch task had died (FetchStopped): close awaits its error
            await _finish_close(self._c)

    async def getmany(self, timeout_ms: int) -> Records:
        """The records fetched; :class:`FetchStopped` once aiokafka's fetch task has ended."""
        self._check_fetcher()
        batch: Records = await self._c.getmany(timeout_ms=timeout_ms)
        if not batch:
            self._check_fetcher()
        return batch

    def _check_fetcher(self) -> None:
        """aiokafka's fetcher runs one background task for the consumer's life; it only ends on
        close. If it ended otherwise (an error it did not expect, e.g. a fetch size beyond
        Kafka's 32-bit field), no record would be fetched again while everything looked up."""
        task = getattr(getattr(self._c, "_fetcher", None), "error_future", None)
        if not isinstance(task, asyncio.Future) or not task.done():
            return
        error = None if task.cancelled() else task.exception()
        cause = error.__cause__ if error is not None and error.__cause__ else error
        raise FetchStopped(
            "the consumer's fetch task ended"
            + (f" ({type(cause).__name__}: {cause})" if cause is not None else "")
            + ": no record would be fetched again; restarting the service starts a new one"
        ) from error

    def pause(self, *tps: TopicPartition) -> None:
        self._c.pause(*tps)

    def resume(self, *tps: TopicPartition) -> None:
        self._c.resume(*tps)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self._c.seek(tp, offset)

    def assignment(self) -> set[TopicPartition]:
        return set(self._c.assignment())

    def highwater(self, tp: TopicPartition) -> int | None:
        found: int | None = self._c.highwater(tp)
        return found

    def partition_count(self, topic: str) -> int | None:
        found = self._c.partitions_for_topic(topic)
        return len(found) if found else None

    async def commit(self, offsets: dict[TopicPartition, tuple[int, str]]) -> None:
        """aiokafka's ``commit``, except that a commit refused because its topic is unknown is
        not retried: aiokafka retries every retriable error until the commit succeeds, so an
        offset refused while a requests topic was deleted landed on the topic created again
        under its name, and the new topic's first records were skipped. The error is raised
        instead; the service commits again at its next interval what it then owns."""
        if not offsets:
            return
        coordinator: Any = getattr(self._c, "_coordinator", None)
        subscription = getattr(getattr(self._c, "_subscription", None), "subscription", None)
        assignment = getattr(subscription, "assignment", None)
        commit_once = getattr(coordinator, "_do_commit_offsets", None)
        if coordinator is None or commit_once is None or assignment is None:  # another aiokafka
            await self._c.commit(offsets)
            return
        validated = commit_structure_validate(offsets)
        for tp in validated:
            if tp not in assignment.tps:
                raise Errors.IllegalStateError(f"Partition {tp} is not assigned")
        while True:  # bounded by the caller's timeout, as aiokafka's own loop is
            await coordinator.ensure_coordinator_known()
            try:
                async with coordinator._commit_lock:
                    await asyncio.shield(commit_once(assignment, validated))
            except (
                Errors.UnknownMemberIdError,
                Errors.IllegalGenerationError,
                Errors.RebalanceInProgressError,
            ) as exc:
                raise Errors.CommitFailedError("the group rebalanced during the commit") from exc
            except UnknownTopicOrPartitionError:
                raise
            except KafkaError as exc:
                if not exc.retriable:
                    raise
                await asyncio.sleep(coordinator._retry_backoff_ms / 1000)
            else:
                return

    async def committed_with_metadata(
        self, tps: list[TopicPartition]
    ) -> dict[TopicPartition, tuple[int, str]]:
        """aiokafka's public ``committed()`` drops the metadata, so this asks its coordinator,
        as ``committed()`` itself does; on any failure nothing is skipped (messages are then
        only judged again)."""
        coordinator = getattr(self._c, "_coordinator", None)
        if not tps or coordinator is None:
            return {}
        try:
            found = await coordinator.fetch_committed_offsets(tps)
        except KafkaError as exc:
            log.warning("offsets.metadata_unavailable", error=str(exc))
            return {}
        return {
            tp: (meta.offset, meta.metadata or "")
            for tp, meta in found.items()
            if meta is not None and meta.offset >= 0
        }

    async def in_group(self) -> bool:
        """A heartbeat with this member's generation, as aiokafka's own heartbeat sends it.
        During a rebalance the member still owns its partitions until it rejoins (the revoke
        flush commits then); a member the group dropped, or a stale generation, does not."""
        coordinator = getattr(self._c, "_coordinator", None)
        if coordinator is None:
            return True
        request = HeartbeatRequest(
            coordinator.group_id, coordinator.generation, coordinator.member_id
        )
        response = await coordinator._send_req(request)
        error = Errors.for_code(response.error_code)
        if error in (Errors.NoError, Errors.RebalanceInProgressError):
            return True
        if error in (Errors.IllegalGenerationError, Errors.UnknownMemberIdError):
            return False
        raise error()


class KafkaProducer:
    """:class:`Producer` over an ``AIOKafkaProducer``."""

    def __init__(self, producer: AIOKafkaProducer) -> None:
        self._p = producer
        self._in_flight: dict[str, int] = {}  # topic -> records sent, not yet acknowledged
        # topics forgotten (untracked whenever none of their records is in flight), until
        # looked up again (partitions_for); the most recent FORGOTTEN_KEPT
        self._forgotten: dict[str, None] = {}

    async def start(self) -> None:
        await self._p.start()

    async def send(
        self,
        topic: str,
        value: bytes,
        *,
        key: bytes | None,
        headers: list[tuple[str, bytes]],
        partition: int | None = None,
    ) -> asyncio.Future[Any]:
        if partition is not None and partition not in await self._p.partitions_for(topic):
            raise UnknownTopicOrPartitionError(f"{topic} has no partition {partition}")
        if topic not in self._in_flight:
            self._tracked().add(topic)  # its metadata may still be known: asked again
        self._in_flight[topic] = self._in_flight.get(topic, 0) + 1
        try:
            future: asyncio.Future[Any] = await self._p.send(
                topic, value, key=key, headers=headers, partition=partition
            )
        except BaseException:
            self._sent(topic)
            raise
        future.add_done_callback(lambda _: self._sent(topic))
        return future

    def forget(self, topic: str) -> None:
        """aiokafka adds every topic sent to, or looked up, to the topics of each metadata
        request, for good: with a reply topic per requester they would pile up (deleted ones
        included). Removed here once its records in flight are done (a refresh meanwhile would
        leave them without a leader), and again after any later send to it (exactly-once, a
        reply staged before its topic was forgotten is sent after), until it is looked up
        again (:meth:`partitions_for`)."""
        self._forgotten.pop(topic, None)
        self._forgotten[topic] = None
        while len(self._forgotten) > FORGOTTEN_KEPT:
            del self._forgotten[next(iter(self._forgotten))]
        if not self._in_flight.get(topic):
            self._tracked().discard(topic)

    def tracked(self) -> frozenset[str]:
        """The topics aiokafka asks metadata for."""
        return frozenset(self._tracked())

    def _tracked(self) -> set[str]:
        topics: set[str] = self._p.client._topics  # aiokafka has no public remove
        return topics

    def _sent(self, topic: str) -> None:
        left = self._in_flight.pop(topic, 1) - 1
        if left:
            self._in_flight[topic] = left
        elif topic in self._forgotten:
            self._tracked().discard(topic)

    async def flush(self) -> None:
        await self._p.flush()

    def transaction(self) -> AbstractAsyncContextManager[Any]:
        context: AbstractAsyncContextManager[Any] = self._p.transaction()
        return context

    async def partitions_for(self, topic: str) -> set[int]:
        self._forgotten.pop(topic, None)  # wanted again
        partitions: set[int] = await self._p.partitions_for(topic)
        return partitions

    async def existing(self, topics: set[str]) -> set[str]:
        client = self._p.client
        self._tracked().update(topics)  # forgotten ones too: asked afresh
        try:
            await client.force_metadata_update()
            return {topic for topic in topics if client.cluster.partitions_for_topic(topic)}
        finally:  # a forgotten one stays forgotten (its send, if any, asks again)
            for topic in topics:
                if topic in self._forgotten and not self._in_flight.get(topic):
                    self._tracked().discard(topic)

    async def fresh_partitions(self, topic: str) -> set[int]:
        self._forgotten.pop(topic, None)  # wanted again
        self._tracked().add(topic)
        client = self._p.client
        await client.force_metadata_update()
        return set(client.cluster.partitions_for_topic(topic) or ())

    async def send_offsets_to_transaction(
        self, offsets: dict[TopicPartition, int | tuple[int, str]], group_id: str
    ) -> None:
        await self._p.send_offsets_to_transaction(offsets, group_id)

    async def close(self, timeout_s: float) -> None:
        """Stop the producer; its flush waits for the broker without end, so after ``timeout_s``
        the records still unsent are failed. They belong to unfinished messages only (a message
        is finished once its records are acknowledged), which are delivered again."""
        stopping = asyncio.ensure_future(self._p.stop())
        done, _ = await asyncio.wait({stopping}, timeout=timeout_s)
        if not done:
            log.error(
                "producer.close_timed_out",
                timeout_s=round(timeout_s, 1),
                action="unsent records dropped; their messages are not committed",
            )
            await _abort(self._p)
            done, _ = await asyncio.wait({stopping}, timeout=CLOSE_GRACE_S)
        if not done:
            stopping.cancel()
            return
        if stopping.cancelled():
            return  # its sender was cancelled above: the stop ended with it
        with contextlib.suppress(KafkaError):
            stopping.result()


async def _finish_close(consumer: AIOKafkaConsumer) -> None:
    """What ``AIOKafkaConsumer.stop`` had left to do when a fetch task's cancellation escaped
    ``Fetcher.close``: end the other fetch tasks, then close the connections."""
    fetcher = getattr(consumer, "_fetcher", None)
    for task in list(getattr(fetcher, "_pending_tasks", ())):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, KafkaError):
            await task
    client = getattr(consumer, "_client", None)
    if client is not None:
        await client.close()


async def _abort(producer: AIOKafkaProducer) -> None:
    """aiokafka has no public abort: stop its sender, then fail what it still held."""
    sender = getattr(getattr(producer, "_sender", None), "sender_task", None)
    if sender is not None and not sender.done():
        sender.cancel()
        await asyncio.wait({sender}, timeout=CLOSE_GRACE_S)
    accumulator = getattr(producer, "_message_accumulator", None)
    if accumulator is not None and (sender is None or sender.done()):
        accumulator.fail_all(KafkaConnectionError("the producer was closed"))
