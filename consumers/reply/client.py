"""``ScreeningClient``: ask ``groundguard run`` over Kafka whether an answer may be sent.

::

    async with ScreeningClient(
        "kafka:9092", request_topic="rag.responses", reply_topic_prefix="guard.reply."
    ) as client:
        verdict = await client.screen({"output": answer, "context": docs}, timeout=2.0)
        if verdict.label is Label.PASS:
            send(answer)

Each client owns one reply topic (``<reply_topic_prefix><random>``, one partition, created at
start and deleted at close unless ``reply_topic`` names an existing one). :meth:`screen`
produces the request with the ``kafka_replyTopic`` and ``kafka_correlationId`` headers
(:mod:`consumers.reply.headers`) and waits for the reply with that correlation id.

**Fail-closed**: :meth:`screen` always returns a :class:`guard.models.Verdict`. When no verdict
arrives within the timeout, or the request cannot be produced, it is an ``error`` verdict
(``reason`` and ``error.kind`` ``reply_timeout`` or ``request_not_sent``, ``judge.tier``
``none``), so code that sends only on ``label == "pass"`` blocks the answer. A request the
service dead-letters (invalid, too large) is answered at once with an ``error`` verdict whose
``reason`` is the dead letter's (``invalid_request``, ``oversized``...). A reply that arrives
after its timeout is discarded. Verdicts that do arrive are
:class:`consumers.records.VerdictRecord` s (with the input's coordinates).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError
from aiokafka.structs import ConsumerRecord, TopicPartition
from pydantic import ValidationError

from consumers.errors import ClientClosed
from consumers.records import VerdictRecord
from consumers.reply.failclosed import error_verdict
from consumers.reply.headers import correlation_of, request_headers, valid_topic
from consumers.settings import SecuritySettings
from guard import defaults
from guard.models import ContextField, JudgeRequest, Verdict
from guard.verdicts import no_judge

log = structlog.get_logger("consumers.client")
DEFAULT_REPLY_TOPIC_PREFIX = "guard.reply."
REPLY_RETENTION_MS = 3_600_000  # replies are read at once; an hour covers a slow reader
FETCH_MAX_WAIT_MS = 100  # the broker answers a fetch as soon as a reply arrives; this bounds idle
CLOSE_TIMEOUT_S = 10.0
READ_RETRY_S = 1.0


def unanswered(request: JudgeRequest, request_id: str, kind: str, message: str) -> Verdict:
    """The fail-closed ``error`` verdict for a request that got no verdict."""
    return error_verdict(
        request_id,
        kind,
        message,
        judge=no_judge("groundguard-client"),
        retriable=True,
        output_chars=len(request.output),
        source=request.context_field or ContextField.CONTEXT,
    )


class ScreeningClient:
    """Screens requests through ``groundguard run`` over Kafka (see the module docstring).

    ``reply_topic_prefix`` must be one of the service's ``reply.allowed_prefixes``; or give
    ``reply_topic`` (an existing topic under such a prefix, not created or deleted here).
    ``timeout_s`` is :meth:`screen`'s default timeout. Producer and consumer are tuned for
    latency: ``linger_ms=0``, and fetches answered as soon as a reply arrives. Against an
    exactly-once service a reply becomes readable only when its transaction's marker is
    written, which an open fetch may not see until ``fetch_max_wait_ms`` passes: lower it
    (e.g. 10) to cut that wait, at the cost of that many fetches a second while idle."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        request_topic: str,
        reply_topic_prefix: str = DEFAULT_REPLY_TOPIC_PREFIX,
        reply_topic: str | None = None,
        timeout_s: float = defaults.DEFAULT_CLIENT_TIMEOUT_S,
        security: SecuritySettings | None = None,
        client_id: str = "groundguard-client",
        fetch_max_wait_ms: int = FETCH_MAX_WAIT_MS,
    ) -> None:
        self.request_topic = request_topic
        self.reply_topic = reply_topic or f"{reply_topic_prefix}{uuid.uuid4().hex[:16]}"
        if not valid_topic(self.reply_topic):
            raise ValueError(f"invalid reply topic name {self.reply_topic!r}")
        self.timeout_s = timeout_s
        self._fetch_max_wait_ms = fetch_max_wait_ms
        self._owns_topic = reply_topic is None
        self._kafka: dict[str, Any] = {
            "bootstrap_servers": bootstrap_servers,
            "client_id": client_id,
            **(security or SecuritySettings()).client_kwargs(),
        }
        self._pending: dict[bytes, asyncio.Future[Verdict]] = {}
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._reader: asyncio.Task[None] | None = None
        self.late_replies = 0  # replies that came after their timeout, or were not ours

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Create the reply topic (if this client owns it), start the producer, and position
        the reply reader at the topic's end; replies to requests screened after this are seen."""
        try:
            if self._owns_topic:
                await self._admin(self._create_topic)
            self._producer = AIOKafkaProducer(
                acks="all", enable_idempotence=True, linger_ms=0, **self._kafka
            )
            await self._producer.start()
            partitions = await self._producer.partitions_for(self.reply_topic)
            self._consumer = AIOKafkaConsumer(
                group_id=None,
                enable_auto_commit=False,
                isolation_level="read_committed",  # exactly-once replies: committed ones only
                fetch_max_wait_ms=self._fetch_max_wait_ms,
                **self._kafka,
            )
            await self._consumer.start()
            tps = [TopicPartition(self.reply_topic, p) for p in sorted(partitions)]
            self._consumer.assign(tps)
            await self._consumer.seek_to_end(*tps)
            for tp in tps:  # resolve the positions now, before any request is sent
                await self._consumer.position(tp)
        except BaseException:
            await self.close()
            raise
        self._reader = asyncio.create_task(self._read(), name=f"replies:{self.reply_topic}")
        log.info("client.started", reply_topic=self.reply_topic, request_topic=self.request_topic)

    async def close(self) -> None:
        """Stop reading (pending screens return fail-closed verdicts), close the clients and
        delete the reply topic this client created. Safe to call twice."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.wait({reader})
        for future in self._pending.values():
            future.cancel()
        consumer, self._consumer = self._consumer, None
        producer, self._producer = self._producer, None
        with contextlib.suppress(KafkaError):
            if consumer is not None:
                await consumer.stop()
            if producer is not None:
                await asyncio.wait_for(producer.stop(), CLOSE_TIMEOUT_S)
        if self._owns_topic and (consumer is not None or producer is not None):
            with contextlib.suppress(KafkaError, TimeoutError):
                await asyncio.wait_for(self._admin(self._delete_topic), CLOSE_TIMEOUT_S)

    async def _admin(self, action: Any) -> None:
        admin = AIOKafkaAdminClient(**self._kafka)
        await admin.start()
        try:
            await action(admin)
        finally:
            await admin.close()

    async def _create_topic(self, admin: AIOKafkaAdminClient) -> None:
        topic = NewTopic(
            self.reply_topic, 1, 1, topic_configs={"retention.ms": str(REPLY_RETENTION_MS)}
        )
        with contextlib.suppress(TopicAlreadyExistsError):
            await admin.create_topics([topic])

    async def _delete_topic(self, admin: AIOKafkaAdminClient) -> None:
        await admin.delete_topics([self.reply_topic])

    # ------------------------------------------------------------------ screening

    async def screen(
        self,
        request: JudgeRequest | Mapping[str, Any],
        *,
        key: bytes | str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (the documented API: a per-call wait)
    ) -> Verdict:
        """The verdict on ``request`` (a request object or its JSON fields), or a fail-closed
        ``error`` verdict after ``timeout`` seconds (default ``timeout_s``). ``key`` keys the
        request record (and the verdict). Raises :class:`ClientClosed` outside ``start`` /
        ``close`` and pydantic's ``ValidationError`` for an invalid request."""
        producer = self._producer
        if producer is None or self._reader is None:
            raise ClientClosed("ScreeningClient is not started (use `async with`)")
        req = request if isinstance(request, JudgeRequest) else JudgeRequest.model_validate(request)
        request_id = req.id or uuid.uuid4().hex
        req = req.model_copy(update={"id": request_id})
        wait_s = self.timeout_s if timeout is None else timeout
        correlation = uuid.uuid4().bytes
        future: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
        self._pending[correlation] = future
        try:
            async with asyncio.timeout(wait_s):
                await producer.send_and_wait(
                    self.request_topic,
                    req.model_dump_json(exclude_none=True).encode(),
                    key=key.encode() if isinstance(key, str) else key,
                    headers=request_headers(self.reply_topic, correlation),
                )
                return await future
        except TimeoutError:
            message = f"no verdict on {self.reply_topic} within {wait_s:g}s"
            return unanswered(req, request_id, "reply_timeout", message)
        except KafkaError as exc:
            message = f"the request could not be produced to {self.request_topic}: {exc!r}"
            return unanswered(req, request_id, "request_not_sent", message)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if future.cancelled() and task is not None and not task.cancelling():
                return unanswered(req, request_id, "reply_timeout", "the client was closed")
            raise  # this screen itself was cancelled
        finally:
            self._pending.pop(correlation, None)

    async def _read(self) -> None:
        """Hand each reply to the screen waiting for its correlation id. A failing fetch is
        logged and tried again after ``READ_RETRY_S`` (screens waiting meanwhile time out)."""
        assert self._consumer is not None
        while True:
            try:
                batch = await self._consumer.getmany(timeout_ms=1000)
            except KafkaError as exc:
                log.warning("client.read_failed", error=repr(exc), retry_in_s=READ_RETRY_S)
                await asyncio.sleep(READ_RETRY_S)
                continue
            for records in batch.values():
                for record in records:
                    self._answer(record)

    def _answer(self, record: ConsumerRecord[Any, Any]) -> None:
        correlation = correlation_of(record.headers or ())
        future = self._pending.get(correlation) if correlation is not None else None
        if future is None or future.done():
            self.late_replies += 1
            return
        try:
            future.set_result(VerdictRecord.model_validate_json(record.value or b""))
        except ValidationError as exc:
            future.set_exception(exc)
