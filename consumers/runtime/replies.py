"""Request-reply in ``run``: the reply a message asks for, whether its topic can take it, and
what happens when it cannot.

* :meth:`Replies.target` reads the ``kafka_replyTopic`` / ``kafka_correlationId`` headers
  (:func:`consumers.reply.headers.reply_target`); a reply to a topic outside
  ``reply.allowed_prefixes`` (all of them while that list is empty), or with bad headers, is
  ignored: counted by reason (``groundguard_replies_ignored_total``) and logged at most once per
  topic and reason every ``reply.log_interval_s``.
* The reply is one more output of the message (kind ``reply``, built by
  :func:`consumers.runtime.routing.route_verdict`): keyed like the input, the verdict record as
  value, the verdict's headers without credentials, plus the correlation id; fitted to size like
  the verdict, and delivered with the other outputs before the input offset is committed
  (at-least-once on a producer of its own without linger, so it never waits behind the
  verdicts' batches; exactly-once in the transaction: :mod:`consumers.runtime.commits`).
* A reply must never stop the service or hold a partition: before delivery
  :meth:`Replies.deliverable` drops replies whose topic does not exist (its metadata is awaited
  at most ``reply.timeout_s``; a missing topic is remembered for
  ``reply.missing_topic_recheck_s``), and a reply the broker refuses or does not acknowledge
  within ``reply.timeout_s`` is dropped too. Drops are counted by reason
  (``groundguard_replies_dropped_total``: ``unknown_topic``, ``refused``) and logged like
  ignored replies; the verdicts topic stays the record of truth, and the requester's client
  times out and fails closed.
* The producer asks metadata only for the ``TRACKED_TOPICS`` reply topics used last (and those
  it is still sending to): aiokafka keeps every topic it ever sent to in each metadata request,
  and with a reply topic per requester (deleted at its close) they would pile up.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Hashable
from typing import Any

import structlog
from aiokafka.errors import KafkaError

from consumers.reply.headers import Ignored, ReplyTo, reply_target
from consumers.runtime.envelope import Headers, OutRecord
from consumers.runtime.kafka import Producer
from consumers.runtime.stats import ServiceStats
from consumers.settings import ServiceSettings

log = structlog.get_logger("consumers.replies")
REPLY = "reply"  # the OutRecord kind
THROTTLE_KEYS = 1024  # (topic, reason) pairs remembered for log throttling
THROTTLE_LINES = 20  # log lines per interval over all topics
TRACKED_TOPICS = 64  # reply topics whose metadata the producer keeps (the most recent)


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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings.reply
        self._reserved = frozenset([settings.topics.requests, *settings.topics.outputs()])
        self._stats = stats
        self._clock = clock
        self._throttle = Throttle(settings.reply.log_interval_s, clock)
        self._missing: dict[str, float] = {}  # topic -> when it was found missing
        self._known: dict[str, None] = {}  # topics found, least recently used first (bounded)
        self._producer: Producer | None = None  # the one replies go out on
        self._lookups: dict[str, asyncio.Task[bool]] = {}
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
        """``outputs`` without the replies whose topic does not exist (counted, logged)."""
        if not any(out.kind == REPLY for out in outputs):
            return outputs
        self._producer = producer
        kept: list[OutRecord] = []
        for out in outputs:
            if out.kind == REPLY and not await self._exists(producer, out.topic):
                self.dropped(out, "unknown_topic")
                continue
            kept.append(out)
        return kept

    async def _exists(self, producer: Producer, topic: str) -> bool:
        if topic in self._known:
            self._known[topic] = self._known.pop(topic)  # the most recently used
            return True
        found = self._missing.get(topic)
        if found is not None and self._clock() - found < self.settings.missing_topic_recheck_s:
            return False
        lookup = self._lookups.get(topic)
        if lookup is None:  # one lookup per topic, shared by the messages waiting for it
            lookup = self._lookups[topic] = asyncio.create_task(self._lookup(producer, topic))
            lookup.add_done_callback(lambda _: self._lookups.pop(topic, None))
        return await asyncio.shield(lookup)

    async def _lookup(self, producer: Producer, topic: str) -> bool:
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                partitions = await producer.partitions_for(topic)
        except (TimeoutError, KafkaError):
            partitions = set()
        if partitions:
            self._missing.pop(topic, None)
            self._known[topic] = None
            while len(self._known) > TRACKED_TOPICS:
                self._unknown(next(iter(self._known)))
            return True
        producer.forget(topic)
        self._missing[topic] = self._clock()
        while len(self._missing) > THROTTLE_KEYS:
            del self._missing[next(iter(self._missing))]
        return False

    def _unknown(self, topic: str) -> None:
        """Forget ``topic``: the producer stops asking for its metadata (with a reply topic per
        requester, deleted at its close, they would pile up in every metadata request)."""
        self._known.pop(topic, None)
        if self._producer is not None:
            self._producer.forget(topic)

    async def close(self) -> None:
        """End the topic lookups still running (at shutdown)."""
        logging.getLogger("aiokafka.cluster").removeFilter(self._noise)
        lookups = list(self._lookups.values())
        for lookup in lookups:
            lookup.cancel()
        if lookups:
            await asyncio.wait(lookups)
