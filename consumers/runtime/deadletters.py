"""Dead letters, in one place: built (:func:`build`, :func:`crashed`), shrunk to a size
(:func:`shrink`, :func:`bare`) and made into the record to publish (:func:`publishable`).

A message becomes a dead letter when it cannot be decoded or validated (:mod:`codec`), when any
step of its pipeline raises (:mod:`message`, reason ``internal_error``), or when its outputs are
too large (:mod:`fitting`, or refused by the broker in :mod:`publisher`; reason ``oversized``).
A dead letter always fits: it is shrunk to the output limit, and as a last resort sent bare.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

import structlog

from consumers.records import DeadLetter, SourceCoordinates
from consumers.runtime.envelope import (
    Headers,
    Origin,
    OutRecord,
    RecordLike,
    as_text,
    coordinate_headers,
    header_name,
    origin_of,
    tracing_headers,
)
from consumers.runtime.fitting import fit_envelope, record_size
from consumers.runtime.headers import safe_headers, shown_names
from consumers.runtime.kinds import OutputKind
from consumers.settings import TopicSettings

log = structlog.get_logger("consumers.pipeline")
DEAD_LETTER_MARGIN = 65_536  # room for everything but the payload in a shrunk dead letter
DEAD_LETTER_HEADERS = 32  # headers copied into a shrunk dead letter
DEAD_LETTER_HEADER_CHARS = 512  # characters kept of each of them
DEAD_LETTER_DETAIL_CHARS = 4096
DETAIL_ERROR_CHARS = 1000


def failure_detail(step: str, exc: BaseException) -> str:
    return f"{step} raised {type(exc).__name__}: {str(exc)[:DETAIL_ERROR_CHARS]}"


# --------------------------------------------------------------------------- build


def build(origin: Origin, reason: str, detail: str, *, keep_bytes: int | None = None) -> DeadLetter:
    """A dead letter holding the original bytes (at most ``keep_bytes`` of them)."""
    value = origin.value or b""
    kept = value if keep_bytes is None else value[:keep_bytes]
    try:
        text, encoded = kept.decode("utf-8"), None
    except UnicodeDecodeError:
        text, encoded = None, base64.b64encode(kept).decode("ascii")
    return DeadLetter(
        reason=reason,  # one of the literals by construction
        detail=detail,
        input=origin.source,
        payload_text=text,
        payload_base64=encoded,
        payload_truncated=len(kept) < len(value),
        payload_bytes=len(value),
        **copied_headers(origin.headers),
    )


def copied_headers(headers: Headers) -> dict[str, Any]:
    """The ``headers`` and ``headers_withheld`` fields of a dead letter: credentials are never
    copied (:func:`consumers.runtime.headers.is_credential`), only named."""
    kept, withheld = safe_headers(headers)
    return {
        "headers": {header_name(name): as_text(data) for name, data in kept},
        "headers_withheld": [header_name(name) for name in shown_names(withheld)],
    }


def salvage(record: RecordLike) -> Origin | SourceCoordinates:
    """The record's :class:`Origin`, or only its coordinates when the record itself is unusable
    (e.g. headers that cannot be read)."""
    try:
        return origin_of(record)
    except Exception:
        return SourceCoordinates(
            topic=record.topic, partition=record.partition, offset=record.offset
        )


def crashed(origin: Origin | SourceCoordinates, step: str, exc: BaseException) -> DeadLetter:
    """The dead letter (reason ``internal_error``) of a message whose ``step`` raised ``exc``."""
    detail = failure_detail(step, exc)
    if isinstance(origin, Origin):
        try:
            return build(origin, "internal_error", detail)
        except Exception:  # e.g. coordinates that do not validate: keep what is known
            origin = origin.source
    return DeadLetter(reason="internal_error", detail=detail, input=origin, payload_truncated=True)


# --------------------------------------------------------------------------- shrink


def size(letter: DeadLetter) -> int:
    """Bytes of ``letter`` as published (its JSON)."""
    return len(letter.model_dump_json().encode())


def shrink(letter: DeadLetter, original: bytes, limit: int) -> DeadLetter:
    """``letter`` if its JSON is at most ``limit`` bytes, else a smaller copy that is.

    JSON escaping can make a payload six times larger (control characters become ``\\u0001``),
    so the copy keeps a base64 prefix of ``original`` instead (growth fixed at 4/3), of
    ``(limit - margin) * 3 // 4`` bytes, with ``payload_truncated`` and ``payload_bytes`` set,
    and caps the copied headers and the detail. When even that does not fit, the dead letter
    goes without payload or headers: it must always be publishable."""
    if size(letter) <= limit:
        return letter
    headers = {
        name[:DEAD_LETTER_HEADER_CHARS]: value[:DEAD_LETTER_HEADER_CHARS]
        for name, value in list(letter.headers.items())[:DEAD_LETTER_HEADERS]
    }
    detail = letter.detail[:DEAD_LETTER_DETAIL_CHARS]
    keep = (limit - min(DEAD_LETTER_MARGIN, limit // 4)) * 3 // 4
    if keep > 0:
        kept = original[:keep]
        smaller = letter.model_copy(
            update={
                "detail": detail,
                "headers": headers,
                "payload_text": None,
                "payload_base64": base64.b64encode(kept).decode("ascii"),
                "payload_truncated": len(kept) < len(original),
                "payload_bytes": len(original),
            }
        )
        if size(smaller) <= limit:
            return smaller
    bare_letter = letter.model_copy(
        update={
            "detail": detail[:DEAD_LETTER_HEADER_CHARS],
            "headers": {},
            "payload_text": None,
            "payload_base64": None,
            "payload_truncated": bool(original),
            "payload_bytes": len(original),
        }
    )
    if size(bare_letter) <= limit:
        return bare_letter
    key = (
        bare_letter.input.key[:DEAD_LETTER_HEADER_CHARS]
        if bare_letter.input.key
        else bare_letter.input.key
    )
    return bare_letter.model_copy(
        update={  # a huge key or topic name: the coordinates, cut short
            "detail": "",
            "input": bare_letter.input.model_copy(
                update={"key": key, "topic": bare_letter.input.topic[:DEAD_LETTER_HEADER_CHARS]}
            ),
        }
    )


def bare(value: bytes) -> bytes:
    """A published dead letter (its JSON) without payload or headers: the last resort when the
    broker still refuses it as too large (e.g. a topic's max.message.bytes below the limit)."""
    letter = DeadLetter.model_validate_json(value)
    slim = letter.model_copy(
        update={
            "payload_text": None,
            "payload_base64": None,
            "headers": {},
            "payload_truncated": letter.payload_truncated
            or bool(letter.payload_text or letter.payload_base64),
            "detail": letter.detail[:DEAD_LETTER_HEADER_CHARS],
        }
    )
    return slim.model_dump_json().encode()


# --------------------------------------------------------------------------- fit


def route(
    letter: DeadLetter, *, headers: Headers, topics: TopicSettings, key: bytes | None
) -> OutRecord:
    """The dead-letter record: the input's tracing headers, its coordinates and the reason."""
    extra = [
        *tracing_headers(headers),
        *coordinate_headers(letter.input),
        ("groundguard-dlq-reason", letter.reason.encode()),
        ("content-type", b"application/json"),
    ]
    return OutRecord(
        topics.dlq,
        key,
        letter.model_dump_json().encode(),
        extra,
        OutputKind.DEAD_LETTER,
        letter.reason,
    )


def publishable(
    letter: DeadLetter, origin: Origin | SourceCoordinates, *, topics: TopicSettings, limit: int
) -> OutRecord:
    """The dead-letter record, its value shrunk so that key, headers and value fit ``limit``
    bytes (see :func:`shrink`): a dead letter never fails for its size."""
    headers, key, value = (
        (origin.headers, origin.key, origin.value or b"")
        if isinstance(origin, Origin)
        else ((), None, b"")
    )
    out = fit_envelope(route(letter, headers=headers, topics=topics, key=key))
    room = limit - (record_size(out) - len(out.value))
    letter = shrink(letter, value, max(room, 0))
    source = letter.input
    log.info(
        "message.dead_lettered",
        reason=letter.reason,
        topic=source.topic,
        partition=source.partition,
        offset=source.offset,
        detail=letter.detail[:300],
    )
    return dataclasses.replace(out, value=letter.model_dump_json().encode())
