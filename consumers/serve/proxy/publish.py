"""Publishing the proxy's verdicts to Kafka, without ever holding or failing a client's stream.

On when ``serve`` is given a broker (:attr:`consumers.settings.ServiceSettings.proxy_publishes`:
``bootstrap_servers`` set, ``serve.proxy.publish`` not false). Each proxied answer
(:class:`Judged`: its final verdict, or the ``error`` verdict of one that ended without one,
:mod:`consumers.serve.proxy.unfinished`) becomes, keyed by its request id
(:func:`answer_records`):

* a verdict record on ``topics.verdicts``: :class:`~consumers.records.VerdictRecord` with
  ``input`` null and ``proxy`` (:class:`~consumers.records.ProxyOutcome`: release mode, the
  released prefix, where it stopped, span verdicts);
* when the verdict blocks (a fail; an undecided one under ``serve.proxy.undecided: block``,
  ``judge_error`` among them, never ``client_disconnected``, ``upstream_failed``),
  a :class:`~consumers.records.QuarantineRecord` on ``topics.quarantine`` whose payload is the
  request as judged (the whole answer in ``output``; omitted, and said so, when the record
  would pass ``max_output_bytes``).

The released prefix is cut so the verdict record fits ``max_output_bytes``
(``released_prefix_truncated``). :meth:`ProxyPublisher.offer` puts an answer's records on a
queue of ``serve.proxy.publish_queue`` answers (``serve.proxy.publish_queue_bytes`` of records)
and returns at once; one more is dropped. A
background task starts the producer (again and again while the broker is away), logs an output
topic the broker does not have (``proxy.publish_topic_missing``, its setting and the fix), and
publishes
what is queued, retrying transient errors for ``publish_timeout_s``
(:func:`consumers.runtime.publisher.publish`). :meth:`ProxyPublisher.aclose`, at ``serve``'s
stop after the requests drained, waits up to ``serve.proxy.publish_flush_s`` for the queue to
be acknowledged, then closes the producer. Every answer not published is counted in
``groundguard_proxy_publish_dropped_total{reason}`` (``queue_full``, ``publish_failed``,
``shutdown``) and logged (``proxy.publish_dropped``, throttled); those published in
``groundguard_proxy_published_total{kind}``.

The producer is never transactional (``guarantee: exactly_once`` is ``run``'s): at least once,
idempotent, ``acks=all``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import orjson
import structlog
from aiokafka.errors import KafkaError
from prometheus_client import CollectorRegistry, Counter, Gauge

from consumers.errors import PublishFailed
from consumers.metrics import NS
from consumers.records import ProxyOutcome, QuarantineRecord
from consumers.runtime.envelope import OutRecord
from consumers.runtime.fitting import RECORD_OVERHEAD, measure_headers
from consumers.runtime.kafka import KafkaProducer, Producer, make_producer
from consumers.runtime.kinds import OutputKind
from consumers.runtime.publisher import publish
from consumers.runtime.replies import Throttle
from consumers.settings import Guarantee, ServiceSettings
from guard.models import JudgeRequest, Verdict
from guard.stream.release import Release

log = structlog.get_logger("consumers.serve.proxy")
START_BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0)  # between producer starts while the broker is away
MAX_ANSWERS_PER_SEND = 200  # queued answers published together
DROP_LOG_INTERVAL_S = 10.0  # a drop reason is logged at most this often (the metric counts all)
CLOSE_MIN_S = 1.0  # the producer's close gets at least this, after the flush wait


@dataclass(frozen=True)
class Judged:
    """One proxied answer with its final verdict (or its ``error`` verdict), as it ended for
    the client."""

    request: JudgeRequest  # as judged: ``output`` is the whole answer
    verdict: Verdict
    route: str
    stream: bool
    release: Release
    outcome: str
    released: int
    stopped_at: int | None
    stopped_span: int | None
    spans: int
    blocks: bool


def answer_records(
    judged: Judged, *, verdicts: str, quarantine: str, limit: int
) -> list[OutRecord]:
    """The records of one answer (see the module docstring), fitted to ``limit`` bytes."""
    verdict = judged.verdict
    key = verdict.request_id.encode()
    headers = [
        ("groundguard-request-id", key),
        ("groundguard-label", verdict.label.value.encode()),
        ("groundguard-proxy-route", judged.route.encode()),
        ("content-type", b"application/json"),
    ]
    verdict_json = verdict.model_dump_json().encode()
    bare = _outcome(judged, "", truncated=False)
    envelope = RECORD_OVERHEAD + len(key) + measure_headers(headers)[1]
    room = limit - envelope - len(_verdict_value(verdict_json, bare))
    prefix, truncated = fit_text(judged.request.output[: judged.released], room)
    outcome = _outcome(judged, prefix, truncated=truncated)
    label = verdict.label.value
    out = [
        OutRecord(
            verdicts, key, _verdict_value(verdict_json, outcome), headers, OutputKind.VERDICT, label
        )
    ]
    if judged.blocks:
        value = _quarantine_value(judged, outcome, limit - envelope)
        out.append(OutRecord(quarantine, key, value, headers, OutputKind.QUARANTINE, label))
    return out


def fit_text(text: str, room: int) -> tuple[str, bool]:
    """The longest prefix of ``text`` whose JSON string takes at most ``room`` bytes (quotes
    included), and whether it was cut."""
    if len(orjson.dumps(text)) <= room:
        return text, False
    low, high = 0, len(text)  # text[:low] fits (or is empty), text[:high] does not
    while high - low > 1:
        middle = (low + high) // 2
        if len(orjson.dumps(text[:middle])) <= room:
            low = middle
        else:
            high = middle
    return text[:low], True


def _outcome(judged: Judged, prefix: str, *, truncated: bool) -> ProxyOutcome:
    return ProxyOutcome(
        route=judged.route,
        stream=judged.stream,
        release=judged.release.value,
        monitoring_only=judged.release is Release.IMMEDIATE,
        outcome=judged.outcome,
        released_chars=judged.released,
        answer_chars=len(judged.request.output),
        released_prefix=prefix,
        released_prefix_truncated=truncated,
        stopped_at=judged.stopped_at,
        stopped_span=judged.stopped_span,
        spans_judged=judged.spans,
    )


def _verdict_value(verdict_json: bytes, outcome: ProxyOutcome) -> bytes:
    """The :class:`~consumers.records.VerdictRecord`: the verdict's fields, ``input`` null and
    ``proxy``."""
    return b'%s,"input":null,"proxy":%s}' % (
        verdict_json[:-1],
        outcome.model_dump_json().encode(),
    )


def _quarantine_value(judged: Judged, outcome: ProxyOutcome, room: int) -> bytes:
    payload = judged.request.model_dump(mode="json")
    size = len(orjson.dumps(payload))
    record = QuarantineRecord(
        request_id=judged.verdict.request_id,
        input=None,
        payload=payload,
        payload_bytes=size,
        verdict=judged.verdict,
        proxy=outcome,
    )
    value = record.model_dump_json().encode()
    if len(value) <= room:
        return value
    slim = record.model_copy(update={"payload": None, "payload_omitted": True})
    return slim.model_dump_json().encode()


def _log_end(task: asyncio.Task[None]) -> None:
    """A publishing task that ended by an error (a bug): said at once, not at the stop; what
    is offered from then on waits in the queue and is dropped at the stop (counted)."""
    if not task.cancelled() and task.exception() is not None:
        log.error("proxy.publish_failed", exc_info=task.exception())


def _size(records: list[OutRecord]) -> int:
    return sum(len(out.value) for out in records)


class Publisher(Protocol):
    """What the proxy hands its verdicts to: :class:`ProxyPublisher`, or a test's fake."""

    def start(self) -> None: ...

    def offer(self, judged: Judged) -> bool: ...

    async def aclose(self) -> None: ...


class PublishMetrics:
    """``groundguard_proxy_published_total{kind}``, ``groundguard_proxy_publish_dropped_total
    {reason}`` and ``groundguard_proxy_publish_queued`` on ``registry``."""

    def __init__(self, registry: CollectorRegistry, queued: Callable[[], float]) -> None:
        self.published = Counter(
            f"{NS}_proxy_published",
            "Records of proxied answers acknowledged by the broker, by kind.",
            ["kind"],
            registry=registry,
        )
        self.dropped = Counter(
            f"{NS}_proxy_publish_dropped",
            "Proxied answers whose verdict was not published, by reason.",
            ["reason"],
            registry=registry,
        )
        gauge = Gauge(
            f"{NS}_proxy_publish_queued",
            "Proxied answers waiting to be published.",
            registry=registry,
        )
        gauge.set_function(queued)


def kafka_producer(settings: ServiceSettings) -> Producer:
    """The proxy's producer: the service's (``acks=all``, idempotent), never transactional."""
    plain = settings.model_copy(update={"guarantee": Guarantee.AT_LEAST_ONCE})
    return KafkaProducer(make_producer(plain))


class ProxyPublisher:
    """The bounded queue and the background producer (see the module docstring)."""

    def __init__(
        self,
        settings: ServiceSettings,
        registry: CollectorRegistry,
        producer: Callable[[], Producer] | None = None,
    ) -> None:
        self._settings = settings
        self._proxy = settings.serve.proxy
        self._make = producer or (lambda: kafka_producer(settings))
        self._queue: asyncio.Queue[list[OutRecord]] = asyncio.Queue(self._proxy.publish_queue)
        self._task: asyncio.Task[None] | None = None
        self._producer: Producer | None = None
        self._sending = 0  # answers handed to the producer, not yet settled
        self._bytes = 0  # of the records queued or being sent
        self._closing = False
        self._throttle = Throttle(DROP_LOG_INTERVAL_S)
        self.metrics = PublishMetrics(registry, lambda: self._queue.qsize() + self._sending)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())
        self._task.add_done_callback(_log_end)

    def offer(self, judged: Judged) -> bool:
        """Queue an answer's records; never waits. False: dropped (counted and logged)."""
        if self._closing:
            self._dropped("shutdown", 1, judged.verdict.request_id)
            return False
        records = answer_records(
            judged,
            verdicts=self._settings.topics.verdicts,
            quarantine=self._settings.topics.quarantine,
            limit=self._settings.max_output_bytes,
        )
        size = _size(records)
        if self._queue.full() or self._bytes + size > self._proxy.publish_queue_bytes:
            self._dropped("queue_full", 1, judged.verdict.request_id)
            return False
        self._queue.put_nowait(records)
        self._bytes += size
        return True

    async def aclose(self) -> None:
        """Wait up to ``serve.proxy.publish_flush_s`` for what is queued, then close."""
        self._closing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._proxy.publish_flush_s
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), self._proxy.publish_flush_s)
        left = self._queue.qsize() + self._sending
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)  # an error: logged
        if left:
            self._dropped("shutdown", left, None)
        if self._producer is not None:
            await self._producer.close(max(CLOSE_MIN_S, deadline - loop.time()))
        log.info("proxy.publish_stopped", dropped_at_stop=left)

    # ------------------------------------------------------------------ inside

    async def _run(self) -> None:
        self._producer = await self._started()
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty() and len(batch) < MAX_ANSWERS_PER_SEND:
                batch.append(self._queue.get_nowait())
            self._sending = len(batch)
            try:
                await self._send(self._producer, batch)
            except Exception as exc:  # a bug: these answers are counted, the task ends (logged)
                self._dropped("publish_failed", len(batch), None, error=repr(exc))
                raise
            finally:
                self._sending = 0
                self._bytes -= sum(_size(records) for records in batch)
                for _ in batch:
                    self._queue.task_done()

    async def _send(self, producer: Producer, batch: list[list[OutRecord]]) -> None:
        records = [out for answer in batch for out in answer]
        try:
            delivered = await publish(producer, records, timeout_s=self._settings.publish_timeout_s)
        except PublishFailed as exc:
            self._dropped("publish_failed", len(batch), None, error=str(exc))
            return
        for out in delivered:
            self.metrics.published.labels(out.kind.value).inc()

    async def _started(self) -> Producer:
        """A started producer, tried again (backing off) while the broker cannot be reached."""
        for attempt in itertools.count():
            producer = self._make()
            try:
                await producer.start()
            except (KafkaError, OSError) as exc:
                with contextlib.suppress(KafkaError, OSError):
                    await producer.close(CLOSE_MIN_S)
                log.warning(
                    "proxy.publish_unavailable",
                    bootstrap_servers=self._settings.bootstrap_servers,
                    attempt=attempt + 1,
                    error=repr(exc),
                    fix="check bootstrap_servers and security; verdicts wait in "
                    "serve.proxy.publish_queue meanwhile, then are dropped",
                )
                await asyncio.sleep(START_BACKOFF_S[min(attempt, len(START_BACKOFF_S) - 1)])
                continue
            log.info(
                "proxy.publish_started",
                verdicts=self._settings.topics.verdicts,
                quarantine=self._settings.topics.quarantine,
                queue=self._proxy.publish_queue,
            )
            await self._check_topics(producer)
            return producer
        raise AssertionError("unreachable")  # pragma: no cover

    async def _check_topics(self, producer: Producer) -> None:
        """Log, naming the setting and the fix, output topics the broker does not have (their
        verdicts would wait ``publish_timeout_s``, then be dropped); serve goes on."""
        topics = self._settings.topics
        wanted = {"topics.verdicts": topics.verdicts, "topics.quarantine": topics.quarantine}
        try:
            existing = await producer.existing(set(wanted.values()))
        except KafkaError as exc:
            log.warning("proxy.publish_topics_unknown", error=repr(exc))
            return
        for field, topic in wanted.items():
            if topic not in existing:
                log.error(
                    "proxy.publish_topic_missing",
                    field=field,
                    topic=topic,
                    fix=f"create {topic} (run creates its topics with create_topics: true), "
                    f"or set {field} to an existing topic",
                )

    def _dropped(self, reason: str, answers: int, request_id: str | None, **extra: str) -> None:
        self.metrics.dropped.labels(reason).inc(answers)
        if self._throttle.allow(reason):
            suppressed, self._throttle.suppressed = self._throttle.suppressed, 0
            log.warning(
                "proxy.publish_dropped",
                reason=reason,
                answers=answers,
                request_id=request_id,
                similar_lines_suppressed=suppressed,
                **extra,
            )
