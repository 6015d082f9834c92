"""Request-reply in ``run``: the reply a message asks for, whether its topic can take it, and
what happens when it cannot.

* :meth:`Replies.target` reads the ``kafka_replyTopic`` / ``kafka_correlationId`` /
  ``kafka_replyPartition`` headers (:func:`consumers.reply.headers.reply_target`); a reply to
  a topic outside ``reply.allowed_prefixes`` (all of them while that list is empty), or with
  bad headers, is ignored: counted by reason (``groundguard_replies_ignored_total``) and logged
  at most once per topic and reason every ``reply.log_interval_s``.
* The reply is one more output of the message (kind ``reply``, built by
  :func:`consumers.runtime.routing.route_verdict`): keyed like the input, the verdict record as
  value, the verdict's headers without credentials, plus the correlation id; fitted to size like
  the verdict, and delivered with the other outputs before the input offset is committed
  (at-least-once on a producer of its own without linger, so it never waits behind the
  verdicts' batches; exactly-once in the transaction: :mod:`consumers.runtime.commits`).
* A message that is dead-lettered and asks for a reply gets an ``error`` verdict as its reply
  (:meth:`Replies.error_reply`: the dead letter's reason as ``reason`` and ``error.kind``), so
  its requester does not wait for its timeout.
* A reply must never stop the service or hold a partition: before delivery
  :meth:`Replies.deliverable` drops replies whose topic (or named partition) does not exist
  (its metadata is awaited at most ``reply.timeout_s``; a missing topic is remembered for
  ``reply.missing_topic_recheck_s``; a partition missing from the known metadata is asked for
  afresh, at most once per topic in that interval, since partitions may have been added), and
  a reply the broker refuses or does not acknowledge within ``reply.timeout_s`` is dropped too.
  Drops are counted by reason (``groundguard_replies_dropped_total``: ``unknown_topic``,
  ``unknown_partition``, ``refused``) and logged like ignored replies; the verdicts topic
  stays the record of truth, and the requester's client times out and fails closed.
* The producer asks metadata only for the ``TRACKED_TOPICS`` reply topics used last (and those
  it is still sending to): aiokafka keeps every topic it ever sent to in each metadata request,
  and with a reply topic per requester (deleted at its close) they would pile up. A topic
  forgotten while a reply to it is staged (exactly-once) is forgotten again once that reply is
  sent (:meth:`consumers.runtime.kafka.KafkaProducer.forget`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from typing import Any

import orjson
import structlog
from aiokafka.errors import KafkaError

from consumers.reply.failclosed import error_verdict
from consumers.reply.headers import Ignored, ReplyTo, reply_target
from consumers.runtime import codec, routing
from consumers.runtime.envelope import Headers, Origin, OutRecord
from consumers.runtime.fitting import OutputLimits, fit_envelope, record_size
from consumers.runtime.kafka import Producer
from consumers.runtime.kinds import OutputKind
from consumers.runtime.stats import ServiceStats
from consumers.settings import ServiceSettings
from guard.models import JudgeInfo

log = structlog.get_logger("consumers.replies")
THROTTLE_KEYS = 1024  # (topic, reason) pairs remembered for log throttling
THROTTLE_LINES = 20  # log lines per interval over all topics
TRACKED_TOPICS = 64  # reply topics whose metadata the producer keeps (the most recent)
ERROR_DETAIL_CHARS = 500  # of a dead letter's detail, in its error reply
ID_SCAN_BYTES = 1_048_576  # a dead-lettered payload up to this size is read for its "id"


class Throttle:
    """Says whether to log: once per key per ``interval_s``, at most ``THROTTLE_LINES`` lines
    per interval in all, remembering at most ``THROTTLE_KEYS`` keys (so a flood of distinct
    topics costs bounded memory and log lines)."""

    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._last: dict[Hashable, float] = {}
        self._window_start = -float("inf")
        self._lines = 0
        self.suppressed = 0  # lines not logged since the last one that was

    def allow(self, key: Hashable) -> bool:
        now = self._clock()
        if now - self._window_start >= self.interval_s:
            self._window_start, self._lines = now, 0
        last = self._last.get(key)
        if (last is not None and now - last < self.interval_s) or self._lines >= THROTTLE_LINES:
            self.suppressed += 1
            return False
        self._last.pop(key, None)
        self._last[key] = now
        while len(self._last) > THROTTLE_KEYS:
            del self._last[next(iter(self._last))]
        self._lines += 1
        return True


class MissingReplyTopicNoise(logging.Filter):
    """Drops aiokafka's ``Topic ... not found in cluster metadata`` errors about reply topics
    (names under an allowed prefix): aiokafka logs one at every metadata request while a missing
    topic is looked up, and at every refresh after; ``reply.dropped`` says it once instead."""

    MESSAGE = "Topic %s not found in cluster metadata"

    def __init__(self, prefixes: tuple[str, ...]) -> None:
        super().__init__()
        self.prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (
            record.msg == self.MESSAGE and len(args) == 1 and str(args[0]).startswith(self.prefixes)
        )


class Replies:
    """The reply side of request-reply for one service (see the module docstring)."""

    def __init__(
        self,
        settings: ServiceSettings,
        stats: ServiceStats,
        judge: JudgeInfo,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings.reply
        self._judge = judge  # named by error replies: the service's configured judge
        self._judge_settings = settings.judge
        self._reserved = frozenset([*settings.topics.inputs(), *settings.topics.outputs()])
        self._stats = stats
        self._clock = clock
        self._throttle = Throttle(settings.reply.log_interval_s, clock)
        self._missing: dict[str, float] = {}  # topic -> when it was found missing
        # topics found and their partitions, least recently used first (bounded)
        self._known: dict[str, frozenset[int]] = {}
        self._producer: Producer | None = None  # the one replies go out on
        self._lookups: dict[str, asyncio.Task[frozenset[int]]] = {}
        self._refreshes: dict[str, asyncio.Task[frozenset[int]]] = {}
        self._refreshed: dict[str, float] = {}  # topic -> its last fresh metadata request
        self._noise = MissingReplyTopicNoise(settings.reply.allowed_prefixes)
        if settings.reply.enabled:
            logging.getLogger("aiokafka.cluster").addFilter(self._noise)

    def target(self, headers: Headers) -> ReplyTo | None:
        """The reply the message asks for; an ignored one is counted and logged."""
        found = reply_target(
            headers, allowed_prefixes=self.settings.allowed_prefixes, reserved=self._reserved
        )
        if isinstance(found, Ignored):
            self._stats.replies_ignored[found.reason] += 1
            self._log("reply.ignored", found.topic, found.reason)
            return None
        return found

    def error_reply(
        self, letter: OutRecord, origin: Origin, limits: OutputLimits
    ) -> OutRecord | None:
        """The reply for a message dead-lettered as ``letter`` when it asks for one: an
        ``error`` verdict whose ``reason`` and ``error.kind`` are the dead letter's reason, so
        the requester learns at once instead of at its timeout. None when it asks for none (or
        the reply would not fit its topic's limit in ``limits``)."""
        reply = self.target(origin.headers)
        if reply is None:
            return None
        verdict = error_verdict(
            _request_id(origin),
            letter.tag,
            _detail(letter)[:ERROR_DETAIL_CHARS],
            judge=self._judge,
            retriable=letter.tag == "internal_error",
            source=self._judge_settings.context_field,
            threshold=self._judge_settings.threshold,
            mode=self._judge_settings.mode,
        )
        source = origin.source
        value = routing.with_input(
            verdict.model_dump_json().encode(), source.model_dump_json().encode()
        )
        base = routing.verdict_headers(source, verdict, origin.headers)
        out = fit_envelope(routing.reply_record(reply, origin.key, value, base, "error"))
        return out if record_size(out) <= limits.of(out.topic) else None

    def dropped(self, out: OutRecord, reason: str, error: BaseException | None = None) -> None:
        self._unknown(out.topic)  # looked up again: it may be gone
        self._stats.replies_dropped[reason] += 1
        self._log("reply.dropped", out.topic, reason, error)

    def _log(self, event: str, topic: str, reason: str, error: Any = None) -> None:
        if not self._throttle.allow((topic, reason)):
            return
        suppressed, self._throttle.suppressed = self._throttle.suppressed, 0
        log.warning(
            event,
            reply_topic=topic,
            reason=reason,
            error=repr(error) if error is not None else None,
            allowed_prefixes=list(self.settings.allowed_prefixes),
            similar_lines_suppressed=suppressed,
        )

    # ------------------------------------------------------------------ delivery

    async def deliverable(self, producer: Producer, outputs: list[OutRecord]) -> list[OutRecord]:
        """``outputs`` without the replies whose topic, or partition (``kafka_replyPartition``),
        does not exist (counted, logged)."""
        if not any(out.kind is OutputKind.REPLY for out in outputs):
            return outputs
        self._producer = producer
        kept: list[OutRecord] = []
        for out in outputs:
            if out.kind is OutputKind.REPLY and (
                reason := await self._missing_reason(producer, out)
            ):
                self.dropped(out, reason)
                continue
            kept.append(out)
        return kept

    async def _missing_reason(self, producer: Producer, out: OutRecord) -> str | None:
        """Why the reply ``out`` cannot be delivered (its topic or partition is missing)."""
        partitions = await self._partitions(producer, out.topic)
        if partitions and out.partition is not None and out.partition not in partitions:
            partitions = await self._refresh(producer, out.topic)  # added since?
        if not partitions:
            return "unknown_topic"
        if out.partition is not None and out.partition not in partitions:
            return "unknown_partition"
        return None

    async def _partitions(self, producer: Producer, topic: str) -> frozenset[int]:
        """The topic's partitions; empty when it does not exist."""
        known = self._known.pop(topic, None)
        if known is not None:
            self._known[topic] = known  # the most recently used
            return known
        found = self._missing.get(topic)
        if found is not None and self._clock() - found < self.settings.missing_topic_recheck_s:
            return frozenset()
        return await _shared(self._lookups, topic, lambda: self._lookup(producer, topic))

    async def _lookup(self, producer: Producer, topic: str) -> frozenset[int]:
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                partitions = frozenset(await producer.partitions_for(topic))
        except (TimeoutError, KafkaError):
            partitions = frozenset()
        if partitions:
            self._missing.pop(topic, None)
            self._known[topic] = partitions
            while len(self._known) > TRACKED_TOPICS:
                self._unknown(next(iter(self._known)))
            return partitions
        producer.forget(topic)
        _remember(self._missing, topic, self._clock())
        return partitions

    async def _refresh(self, producer: Producer, topic: str) -> frozenset[int]:
        """The topic's partitions after a fresh metadata request (a partition may have been
        added since they were learnt), at most once per topic every
        ``reply.missing_topic_recheck_s``; the known ones otherwise."""
        known = self._known.get(topic, frozenset())
        last = self._refreshed.get(topic)
        if last is not None and self._clock() - last < self.settings.missing_topic_recheck_s:
            return known
        if topic not in self._refreshes:
            _remember(self._refreshed, topic, self._clock())
        return await _shared(self._refreshes, topic, lambda: self._fresh(producer, topic))

    async def _fresh(self, producer: Producer, topic: str) -> frozenset[int]:
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                partitions = frozenset(await producer.fresh_partitions(topic))
        except (TimeoutError, KafkaError):
            return self._known.get(topic, frozenset())
        if partitions and topic in self._known:
            self._known[topic] = partitions
        return partitions

    def _unknown(self, topic: str) -> None:
        """Forget ``topic``: the producer stops asking for its metadata (with a reply topic per
        requester, deleted at its close, they would pile up in every metadata request)."""
        self._known.pop(topic, None)
        if self._producer is not None:
            self._producer.forget(topic)

    async def close(self) -> None:
        """End the topic lookups still running (at shutdown)."""
        logging.getLogger("aiokafka.cluster").removeFilter(self._noise)
        lookups = [*self._lookups.values(), *self._refreshes.values()]
        for lookup in lookups:
            lookup.cancel()
        if lookups:
            await asyncio.wait(lookups)


def _shared(
    tasks: dict[str, asyncio.Task[frozenset[int]]],
    topic: str,
    work: Callable[[], Coroutine[Any, Any, frozenset[int]]],
) -> Awaitable[frozenset[int]]:
    """The result of ``work`` for ``topic``: one task per topic in ``tasks``, shared by the
    messages waiting for it (a waiter cancelled does not cancel it)."""
    task = tasks.get(topic)
    if task is None:
        task = tasks[topic] = asyncio.create_task(work())
        task.add_done_callback(lambda _: tasks.pop(topic, None))
    return asyncio.shield(task)


def _remember(found: dict[str, float], topic: str, when: float) -> None:
    """``topic`` as the newest entry of ``found``, which keeps the latest ``THROTTLE_KEYS``."""
    found.pop(topic, None)
    found[topic] = when
    while len(found) > THROTTLE_KEYS:
        del found[next(iter(found))]


def _request_id(origin: Origin) -> str:
    """A dead-lettered request's id: its ``id`` field when the payload is a JSON object with
    one, else as the codec gives one (header, or coordinates)."""
    value = origin.value or b""
    if len(value) <= ID_SCAN_BYTES:
        try:
            found = orjson.loads(value)
        except orjson.JSONDecodeError:
            found = None
        ident = found.get("id") if isinstance(found, dict) else None
        if isinstance(ident, str) and 0 < len(ident) <= codec.REQUEST_ID_MAX_CHARS:
            return ident
    return codec.fallback_id(origin)


def _detail(letter: OutRecord) -> str:
    """The ``detail`` of a dead-letter record."""
    try:
        detail = orjson.loads(letter.value).get("detail")
    except (orjson.JSONDecodeError, AttributeError):
        detail = None
    return detail if isinstance(detail, str) and detail else f"dead-lettered ({letter.tag})"
