"""One message, from its record to the records to publish, without ever raising.

The service judges; everything else a message goes through is here: decode, route, serialize,
fit to the size limit. Any exception in these steps turns the message into a dead letter
(reason ``internal_error``, the step and the exception in ``detail``), so one message can never
stop the service or hold its partition: the poison ends on the dead-letter topic and the
messages behind it are judged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from consumers import codec, routing
from consumers.fitting import fit_envelope, fit_outputs, record_size
from consumers.records import DeadLetter, SourceCoordinates
from consumers.routing import OutRecord
from consumers.settings import ServiceSettings
from guard.models import JudgeRequest, Verdict

log = structlog.get_logger("consumers.pipeline")
DETAIL_ERROR_CHARS = 1000


def failure_detail(step: str, exc: BaseException) -> str:
    return f"{step} raised {type(exc).__name__}: {str(exc)[:DETAIL_ERROR_CHARS]}"


@dataclass(frozen=True)
class Pipeline:
    """The per-message steps for ``settings``; ``parse`` is the judge core's request parser;
    ``output_limit`` the bytes an output record may have (default ``max_output_bytes``; the
    service lowers it to the output topics' ``max.message.bytes``)."""

    settings: ServiceSettings
    parse: Callable[[Any], JudgeRequest]
    output_limit: int | None = None

    @property
    def limit(self) -> int:
        return self.output_limit or self.settings.max_output_bytes

    def decode(self, record: codec.RecordLike) -> codec.Decoded | DeadLetter:
        try:
            return codec.decode(record, parse=self.parse,
                                max_bytes=self.settings.max_message_bytes)
        except Exception as exc:  # the guarantee: a message never stops the service
            return self._crashed(record, "decoding", exc)

    def outputs(self, record: codec.RecordLike, decoded: codec.Decoded,
                verdict: Verdict) -> list[OutRecord]:
        """The verdict's records, fitted to ``max_output_bytes``; a dead letter when building
        them fails."""
        s = self.settings
        try:
            routed = routing.route_verdict(decoded, verdict, topics=s.topics,
                                           policy=s.failure_policy, key=record.key)
            return fit_outputs(routed, self.limit, lambda detail: self.dead_letter(
                codec.dead_letter(record, "oversized", detail), record))
        except Exception as exc:
            return [self.failed(record, "building the verdict records", exc)]

    def failed(self, record: codec.RecordLike, step: str, exc: BaseException) -> OutRecord:
        """The dead letter for a message whose ``step`` raised ``exc``."""
        log.warning("message.failed", step=step, error=type(exc).__name__, topic=record.topic,
                    partition=record.partition, offset=record.offset)
        letter = self._crashed(record, step, exc)
        return self.dead_letter(letter, record)

    def _crashed(self, record: codec.RecordLike, step: str, exc: BaseException) -> DeadLetter:
        try:
            return codec.dead_letter(record, "internal_error", failure_detail(step, exc))
        except Exception:  # the record itself is unusable: keep its coordinates only
            return DeadLetter(reason="internal_error", detail=failure_detail(step, exc),
                              input=SourceCoordinates(
                                  topic=record.topic, partition=record.partition,
                                  offset=record.offset),
                              payload_truncated=True)

    def dead_letter(self, letter: DeadLetter, record: codec.RecordLike) -> OutRecord:
        """The dead-letter record, its value shrunk so that key, headers and value fit
        ``max_output_bytes`` (see :func:`codec.fit_dead_letter`): a dead letter never fails
        for its size."""
        out = fit_envelope(routing.route_dead_letter(letter, headers=codec.headers_of(record),
                                                     topics=self.settings.topics,
                                                     key=record.key))
        room = self.limit - (record_size(out) - len(out.value))
        letter = codec.fit_dead_letter(letter, record.value or b"", max(room, 0))
        log.info("message.dead_lettered", reason=letter.reason, topic=record.topic,
                 partition=record.partition, offset=record.offset, detail=letter.detail[:300])
        return dataclasses.replace(out, value=letter.model_dump_json().encode())
