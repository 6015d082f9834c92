"""Publishing output records: a message counts as done only when the broker acknowledged every
one of its records (``acks=all``, idempotent producer)."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any

import structlog
from aiokafka.errors import (
    IllegalOperation,
    KafkaError,
    KafkaTimeoutError,
    MessageSizeTooLargeError,
)

from consumers.errors import PublishFailed
from consumers.runtime import deadletters
from consumers.runtime.envelope import OutRecord
from consumers.runtime.fitting import record_size
from consumers.runtime.kafka import Producer
from consumers.runtime.kinds import OutputKind

log = structlog.get_logger("consumers.publisher")
PUBLISH_BACKOFF_S = (0.1, 0.25, 0.5, 1.0, 2.0)


def transient(exc: BaseException) -> bool:
    """Worth retrying: the client says so, or a send timed out (e.g. during a broker restart)."""
    return bool(getattr(exc, "retriable", False)) or isinstance(exc, KafkaTimeoutError)


Sent = list[tuple[OutRecord, "asyncio.Future[Any] | BaseException"]]


async def send_all(
    producer: Producer, outputs: list[OutRecord]
) -> list[tuple[OutRecord, BaseException]]:
    """Send every record, then wait for each acknowledgement; the records that failed."""
    return await acknowledged(await append_all(producer, outputs))


async def append_all(producer: Producer, outputs: list[OutRecord]) -> Sent:
    """Hand every record to the producer (its batches; no wait for the broker when the topic's
    metadata is known): records appended together travel in the same produce request."""
    futures: Sent = []
    for out in outputs:
        try:
            futures.append(
                (
                    out,
                    await producer.send(
                        out.topic,
                        out.value,
                        key=out.key,
                        headers=out.headers,
                        partition=out.partition,
                    ),
                )
            )
        except (KafkaError, IllegalOperation) as exc:  # the latter: a transaction gone wrong
            futures.append((out, exc))
    return futures


async def acknowledged(futures: Sent) -> list[tuple[OutRecord, BaseException]]:
    """Wait for the acknowledgement of each appended record; the records that failed."""
    failed: list[tuple[OutRecord, BaseException]] = []
    for out, future in futures:
        if isinstance(future, BaseException):
            failed.append((out, future))
            continue
        try:
            await future
        except KafkaError as exc:
            failed.append((out, exc))
    return failed


def replace_refused(
    outputs: list[OutRecord],
    failed: list[tuple[OutRecord, BaseException]],
    refused: Callable[[str], OutRecord] | None,
    batch_bytes: int,
    alone: Collection[int] = (),
) -> bool:
    """Replace (in place) the records of ``outputs`` the broker refused as too large: a dead
    letter by its bare version (:func:`consumers.runtime.deadletters.bare`), any other record by
    one dead letter ``refused(detail)`` for the message. Whether anything changed: one message's
    size must never stop the service.

    Only a record larger than ``batch_bytes`` (the producer's ``max_batch_size``), or one sent
    alone (its ``id`` in ``alone``: :func:`send_alone`), travels alone in its batch; a smaller
    one was refused with the records it was batched with, so the topic's ``max.message.bytes``
    is below the batch size: a setting to fix, not a message to dead-letter (nothing changes,
    and the caller stops, or sends it alone to learn which record is too large)."""
    too_large = [out for out, error in failed if isinstance(error, MessageSizeTooLargeError)]
    refused_ids = {id(out) for out in too_large}
    changed = False
    for i, out in enumerate(outputs):
        if id(out) in refused_ids and out.kind is OutputKind.DEAD_LETTER:
            bare = deadletters.bare(out.value)
            if bare != out.value:
                outputs[i] = dataclasses.replace(out, value=bare)
                changed = True
    others = [out for out in too_large if out.kind is not OutputKind.DEAD_LETTER]
    if others and refused is not None and all(_alone(out, batch_bytes, alone) for out in others):
        detail = ", ".join(
            f"the broker refused the {out.kind} record ({len(out.value)} bytes) as too large"
            for out in others
        )
        gone = {id(out) for out in others}
        outputs[:] = [out for out in outputs if id(out) not in gone] + [refused(detail)]
        changed = True
    return changed


def _alone(out: OutRecord, batch_bytes: int, alone: Collection[int]) -> bool:
    return id(out) in alone or record_size(out) > batch_bytes


def refused_in_batch(
    failed: list[tuple[OutRecord, BaseException]], batch_bytes: int, alone: Collection[int]
) -> list[OutRecord]:
    """The records refused as too large that were batched with others (not sent alone): which
    of them is too large is learnt by sending each alone."""
    return [
        out
        for out, error in failed
        if isinstance(error, MessageSizeTooLargeError) and not _alone(out, batch_bytes, alone)
    ]


async def send_alone(
    producer: Producer, outputs: list[OutRecord]
) -> list[tuple[OutRecord, BaseException]]:
    """:func:`send_all`, one record at a time (each acknowledged before the next is sent): each
    travels in a batch of its own when nothing else is being sent (within a transaction)."""
    failed: list[tuple[OutRecord, BaseException]] = []
    for out in outputs:
        failed += await send_all(producer, [out])
    return failed


def _ids(outputs: list[OutRecord]) -> set[int]:
    return {id(out) for out in outputs}


def _failure(out: OutRecord, error: BaseException, batch_bytes: int) -> PublishFailed:
    message = f"{out.kind} record to {out.topic} was not acknowledged: {error!r}"
    if isinstance(error, MessageSizeTooLargeError):
        message += (
            f"; the topic's max.message.bytes is below kafka.max_batch_size "
            f"({batch_bytes}) or max_output_bytes: raise it, or lower those settings"
        )
    return PublishFailed(message)


Isolate = Callable[[list[OutRecord]], Awaitable[list[tuple[OutRecord, BaseException]]]]


async def publish(
    producer: Producer,
    outputs: list[OutRecord],
    *,
    timeout_s: float,
    on_retry: Callable[[], None] | None = None,
    refused: Callable[[str], OutRecord] | None = None,
    batch_bytes: int = 16_384,
    isolate: Isolate | None = None,
    gate: Callable[[], Awaitable[object]] | None = None,
) -> list[OutRecord]:
    """Publish ``outputs``, retrying the failed ones on transient errors for ``timeout_s``;
    :class:`PublishFailed` when they cannot be delivered. Records refused as too large are
    replaced (:func:`replace_refused`, ``refused`` builds the message's dead letter); those
    refused with their batch are first sent again through ``isolate`` (each in a batch of its
    own), to learn which one is too large; ``gate`` is awaited before each send (it holds sends
    while another message isolates its records). Returns the records delivered."""
    deadline = time.monotonic() + timeout_s
    pending = list(outputs)
    delivered: list[OutRecord] = []
    alone: set[int] = set()  # ids of the records isolate() sends
    for attempt in itertools.count():  # bounded by the deadline
        if gate is not None:
            await gate()
        failed = await send_all(producer, [out for out in pending if id(out) not in alone])
        if isolate is not None and alone:
            failed += await isolate([out for out in pending if id(out) in alone])
        delivered += [out for out in pending if all(out is not f for f, _ in failed)]
        if not failed:
            return delivered
        pending = [out for out, _ in failed]
        error = failed[0][1]
        batched = _ids(refused_in_batch(failed, batch_bytes, alone)) if isolate else set()
        definite = [(out, exc) for out, exc in failed if id(out) not in batched]
        if replace_refused(pending, definite, refused, batch_bytes, alone) or batched:
            alone.update(batched)
            log.warning(
                "publish.refused_as_too_large",
                error=repr(error),
                action="sent again alone, or as a smaller dead letter",
            )
            continue
        if not transient(error) or time.monotonic() >= deadline:
            raise _failure(pending[0], error, batch_bytes) from error
        if on_retry is not None:
            on_retry()
        log.warning("publish.retry", topic=pending[0].topic, attempt=attempt + 1, error=repr(error))
        await asyncio.sleep(PUBLISH_BACKOFF_S[min(attempt, len(PUBLISH_BACKOFF_S) - 1)])
    raise AssertionError("unreachable")  # pragma: no cover
