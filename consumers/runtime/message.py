"""One message, from its record to the records to publish: decode -> judge -> route -> fit.

:meth:`Pipeline.process` takes a record and a judge and returns :class:`Finished` (the records
to publish, never raising) or :class:`Unfinished` (nothing to publish: the message is fetched
and judged again, after a rewind or by the partition's next owner). It needs no Kafka: the
service supplies a judge that waits for a concurrency slot and says when the message must be
left (:mod:`consumers.runtime.service`).

Any exception in these steps turns the message into a dead letter (reason ``internal_error``,
the step and the exception in ``detail``; :mod:`consumers.runtime.deadletters`), so one message
can never stop the service or hold its partition: the poison ends on the dead-letter topic and
the messages behind it are judged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

from consumers.logging import bind_request_id
from consumers.records import DeadLetter, SourceCoordinates
from consumers.runtime import codec, deadletters, routing
from consumers.runtime.envelope import Origin, OutRecord, RecordLike, origin_of
from consumers.runtime.fitting import OutputLimits, fit_outputs
from consumers.runtime.kinds import OutputKind
from consumers.runtime.replies import Replies
from consumers.settings import ServiceSettings
from guard.models import JudgeRequest, Verdict
from guard.offload import off_loop

log = structlog.get_logger("consumers.pipeline")


@dataclass(frozen=True)
class Unfinished:
    """The message is left unfinished: nothing published, its offset not passed by commits."""

    why: str  # "revoked", "rewind", "draining", "intake_stopped"


@dataclass(frozen=True)
class Finished:
    """The records to publish for one message (a verdict's, or a dead letter)."""

    outputs: list[OutRecord]
    origin: Origin | SourceCoordinates
    verdict: Verdict | None = None


Judge = Callable[[codec.Decoded], Awaitable[Verdict | Unfinished]]


@dataclass(frozen=True)
class Pipeline:
    """The per-message steps for ``settings``; ``parse`` is the judge core's request parser;
    ``output_limits`` the bytes an output record may have, per topic (default
    ``max_output_bytes``; the service lowers each to its topic's ``max.message.bytes``);
    ``replies`` reads which reply a message asks for (request-reply; None: no replies)."""

    settings: ServiceSettings
    parse: Callable[[Any], JudgeRequest]
    output_limits: OutputLimits | None = None
    replies: Replies | None = None

    @property
    def limits(self) -> OutputLimits:
        return self.output_limits or OutputLimits(self.settings.max_output_bytes)

    async def process(self, record: RecordLike, judge: Judge) -> Finished | Unfinished:
        """The message's outputs, or :class:`Unfinished` when ``judge`` says so."""
        finished = await self._process(record, judge)
        return self.answered(finished) if isinstance(finished, Finished) else finished

    def answered(self, finished: Finished) -> Finished:
        """``finished``, plus an ``error`` reply when the message was dead-lettered and asks
        for a reply (:meth:`consumers.runtime.replies.Replies.error_reply`)."""
        if self.replies is None or not isinstance(finished.origin, Origin):
            return finished
        kinds = [out.kind for out in finished.outputs]
        if OutputKind.DEAD_LETTER not in kinds or OutputKind.REPLY in kinds:
            return finished
        letter = finished.outputs[kinds.index(OutputKind.DEAD_LETTER)]
        try:
            reply = self.replies.error_reply(letter, finished.origin, self.limits)
        except Exception:  # the courtesy reply must never cost the message its dead letter
            log.exception("reply.error_reply_failed", dead_letter_reason=letter.tag)
            return finished
        if reply is None:
            return finished
        return Finished([*finished.outputs, reply], finished.origin, finished.verdict)

    async def _process(self, record: RecordLike, judge: Judge) -> Finished | Unfinished:
        size = len(record.value or b"")  # a big value is parsed and built off the event loop
        decoded = await off_loop(size, self.decode, record)
        if isinstance(decoded, Finished):
            return decoded
        if decoded.request.id is not None:  # on every log line of this message from here
            bind_request_id(decoded.request.id[: codec.REQUEST_ID_MAX_CHARS])
        try:
            verdict = await judge(decoded)
        except Exception as exc:  # a bug in the judge core must not stop the consumer
            log.exception("judge.crashed", request_id=decoded.request.id)
            return Finished([self.failed(decoded.origin, "the judge", exc)], decoded.origin)
        if isinstance(verdict, Unfinished):
            return verdict
        outputs = await off_loop(size, self.outputs, decoded, verdict)
        return Finished(outputs, decoded.origin, verdict)

    def decode(self, record: RecordLike) -> codec.Decoded | Finished:
        """The request, or the message's dead letter."""
        try:
            origin = origin_of(record)
        except Exception as exc:  # the record itself is unusable: keep its coordinates only
            source = SourceCoordinates(
                topic=record.topic, partition=record.partition, offset=record.offset
            )
            return Finished([self.failed(source, "decoding", exc)], source)
        try:
            decoded = codec.decode(
                origin, parse=self.parse, max_bytes=self.settings.max_message_bytes
            )
        except Exception as exc:  # the guarantee: a message never stops the service
            return Finished([self.failed(origin, "decoding", exc)], origin)
        if isinstance(decoded, DeadLetter):
            return Finished([self.dead_letter(decoded, origin)], origin)
        return decoded

    def outputs(self, decoded: codec.Decoded, verdict: Verdict) -> list[OutRecord]:
        """The verdict's records, fitted to the output limit; a dead letter when building them
        fails."""
        s, origin = self.settings, decoded.origin
        try:
            reply = self.replies.target(decoded.headers) if self.replies is not None else None
            routed = routing.route_verdict(
                decoded,
                verdict,
                topics=s.topics,
                policy=s.failure_policy,
                key=origin.key,
                reply=reply,
            )
            return fit_outputs(routed, self.limits, self.refused(origin))
        except Exception as exc:
            return [self.failed(origin, "building the verdict records", exc)]

    def refused(self, origin: Origin | SourceCoordinates) -> Callable[[str], OutRecord]:
        """Builds the message's ``oversized`` dead letter when its records are too large."""

        def oversized(detail: str) -> OutRecord:
            letter = (
                deadletters.build(origin, "oversized", detail)
                if isinstance(origin, Origin)
                else DeadLetter(reason="oversized", detail=detail, input=origin)
            )
            return self.dead_letter(letter, origin)

        return oversized

    def failed(
        self, origin: Origin | SourceCoordinates, step: str, exc: BaseException
    ) -> OutRecord:
        """The dead letter for a message whose ``step`` raised ``exc``."""
        source = origin.source if isinstance(origin, Origin) else origin
        log.warning(
            "message.failed",
            step=step,
            error=type(exc).__name__,
            topic=source.topic,
            partition=source.partition,
            offset=source.offset,
        )
        return self.dead_letter(deadletters.crashed(origin, step, exc), origin)

    def dead_letter(self, letter: DeadLetter, origin: Origin | SourceCoordinates) -> OutRecord:
        """The dead-letter record, fitted to the dead-letter topic's limit."""
        topics = self.settings.topics
        return deadletters.publishable(
            letter, origin, topics=topics, limit=self.limits.of(topics.dlq)
        )
