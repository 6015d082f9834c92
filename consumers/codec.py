"""From a Kafka record to a judge request, or to the reason it cannot be judged.

Validation itself is the judge core's (:meth:`guard.engine.Guard.parse`); this module adds what
only the runtime knows: the size limit, tombstones, the record's coordinates and headers, and a
request id for requests that carry none (a header of at most ``REQUEST_ID_MAX_CHARS``, else the
record's coordinates, so a replay of the same record gets the same id).

Integers too large for 64 bits (an ``id``, a ``metadata`` value) are kept exact: a payload with a
run of 19 or more digits is read with the standard library's JSON parser (orjson would turn such
integers into floats). A key longer than ``KEY_MAX_BYTES`` is shown as ``sha256:`` and its hex
digest (see :mod:`consumers.fitting`).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from consumers.headers import safe_headers, shown_names
from consumers.records import DeadLetter, SourceCoordinates
from guard import strictjson
from guard.errors import InvalidRequest
from guard.models import JudgeRequest

Headers = tuple[tuple[str, bytes], ...]
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-correlation-id", "correlation-id")
DEAD_LETTER_REASONS = ("invalid_utf8", "invalid_json", "invalid_request", "not_an_object")
DEAD_LETTER_MARGIN = 65_536  # room for everything but the payload in a shrunk dead letter
DEAD_LETTER_HEADERS = 32  # headers copied into a shrunk dead letter
DEAD_LETTER_HEADER_CHARS = 512  # characters kept of each of them
DEAD_LETTER_DETAIL_CHARS = 4096
KEY_MAX_BYTES = 4096  # longer keys travel as sha256:<hex> (same key, same digest, same partition)
REQUEST_ID_MAX_CHARS = 256  # a longer request-id header is not used as the request's id
MAX_HEADERS = 256  # headers read per record (a 1 MB record can carry 500,000 empty ones)
HEADER_MEMORY = 160  # bytes of Python objects per fetched header, besides its name and value
LONG_DIGITS = re.compile(rb"\d{19}")  # may be an integer beyond 64 bits


class RecordLike(Protocol):
    """The parts of :class:`aiokafka.structs.ConsumerRecord` the runtime uses."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes]]


@dataclass(frozen=True)
class Decoded:
    """A valid request, with where it came from."""

    request: JudgeRequest
    source: SourceCoordinates
    payload: bytes
    headers: Headers


def as_text(data: bytes) -> str:
    """``data`` as text when it is UTF-8, else ``base64:`` and its base64."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data).decode("ascii")


def hashed_key(key: bytes) -> bytes | None:
    """``sha256:<hex>`` for a key longer than ``KEY_MAX_BYTES``; None for a key that fits."""
    if len(key) <= KEY_MAX_BYTES:
        return None
    return b"sha256:" + hashlib.sha256(key).hexdigest().encode("ascii")


def key_text(key: bytes | None) -> str | None:
    if key is None:
        return None
    hashed = hashed_key(key)
    return hashed.decode("ascii") if hashed is not None else as_text(key)


def header_name(name: str) -> str:
    """A header name safe to write as JSON text (lone surrogates escaped)."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def source_of(record: RecordLike) -> SourceCoordinates:
    key = key_text(record.key)
    return SourceCoordinates(topic=record.topic, partition=record.partition, offset=record.offset,
                             timestamp_ms=record.timestamp, key=key)


def record_bytes(record: RecordLike) -> int:
    """The memory a fetched record holds: key, value and headers (each header costs
    ``HEADER_MEMORY`` bytes of Python objects besides its name and value)."""
    headers = sum(len(name) + len(value or b"") for name, value in record.headers)
    headers += HEADER_MEMORY * len(record.headers)
    return len(record.key or b"") + len(record.value or b"") + headers


def headers_of(record: RecordLike) -> Headers:
    """The record's first ``MAX_HEADERS`` headers: the only ones the runtime reads (tracing
    headers to carry, a request id, a dead letter's copy), so a record carrying hundreds of
    thousands of tiny headers costs no more than one with a few."""
    return tuple((name, value if value is not None else b"")
                 for name, value in itertools.islice(record.headers, MAX_HEADERS))


def header(headers: Headers, *names: str) -> bytes | None:
    wanted = {name.lower() for name in names}
    for name, value in headers:
        if name.lower() in wanted:
            return value
    return None


def dead_letter(record: RecordLike, reason: str, detail: str, *,
                keep_bytes: int | None = None) -> DeadLetter:
    """A dead letter holding the original bytes (at most ``keep_bytes`` of them)."""
    value = record.value or b""
    kept = value if keep_bytes is None else value[:keep_bytes]
    try:
        text, encoded = kept.decode("utf-8"), None
    except UnicodeDecodeError:
        text, encoded = None, base64.b64encode(kept).decode("ascii")
    return DeadLetter(
        reason=reason,  # one of the literals by construction
        detail=detail, input=source_of(record),
        payload_text=text, payload_base64=encoded,
        payload_truncated=len(kept) < len(value), payload_bytes=len(value),
        **dead_letter_headers(headers_of(record)),
    )


def dead_letter_headers(headers: Headers) -> dict[str, Any]:
    """The ``headers`` and ``headers_withheld`` fields of a dead letter: credentials are never
    copied (:func:`consumers.headers.is_credential`), only named."""
    kept, withheld = safe_headers(headers)
    return {"headers": {header_name(name): as_text(data) for name, data in kept},
            "headers_withheld": [header_name(name) for name in shown_names(withheld)]}


def dead_letter_size(letter: DeadLetter) -> int:
    """Bytes of ``letter`` as published (its JSON)."""
    return len(letter.model_dump_json().encode())


def fit_dead_letter(letter: DeadLetter, original: bytes, limit: int) -> DeadLetter:
    """``letter`` if its JSON is at most ``limit`` bytes, else a smaller copy that is.

    JSON escaping can make a payload six times larger (control characters become ``\\u0001``),
    so the copy keeps a base64 prefix of ``original`` instead (growth fixed at 4/3), of
    ``(limit - margin) * 3 // 4`` bytes, with ``payload_truncated`` and ``payload_bytes`` set,
    and caps the copied headers and the detail. When even that does not fit, the dead letter
    goes without payload or headers: it must always be publishable."""
    if dead_letter_size(letter) <= limit:
        return letter
    headers = {name[:DEAD_LETTER_HEADER_CHARS]: value[:DEAD_LETTER_HEADER_CHARS]
               for name, value in list(letter.headers.items())[:DEAD_LETTER_HEADERS]}
    detail = letter.detail[:DEAD_LETTER_DETAIL_CHARS]
    keep = (limit - min(DEAD_LETTER_MARGIN, limit // 4)) * 3 // 4
    if keep > 0:
        kept = original[:keep]
        smaller = letter.model_copy(update={
            "detail": detail, "headers": headers, "payload_text": None,
            "payload_base64": base64.b64encode(kept).decode("ascii"),
            "payload_truncated": len(kept) < len(original), "payload_bytes": len(original)})
        if dead_letter_size(smaller) <= limit:
            return smaller
    bare = letter.model_copy(update={
        "detail": detail[:DEAD_LETTER_HEADER_CHARS], "headers": {}, "payload_text": None,
        "payload_base64": None, "payload_truncated": bool(original),
        "payload_bytes": len(original)})
    if dead_letter_size(bare) <= limit:
        return bare
    key = bare.input.key[:DEAD_LETTER_HEADER_CHARS] if bare.input.key else bare.input.key
    return bare.model_copy(update={  # a huge key or topic name: the coordinates, cut short
        "detail": "", "input": bare.input.model_copy(update={
            "key": key, "topic": bare.input.topic[:DEAD_LETTER_HEADER_CHARS]})})


def bare_dead_letter(value: bytes) -> bytes:
    """A published dead letter (its JSON) without payload or headers: the last resort when the
    broker still refuses it as too large (e.g. a topic's max.message.bytes below the limit)."""
    letter = DeadLetter.model_validate_json(value)
    bare = letter.model_copy(update={
        "payload_text": None, "payload_base64": None, "headers": {},
        "payload_truncated": letter.payload_truncated or bool(letter.payload_text
                                                             or letter.payload_base64),
        "detail": letter.detail[:DEAD_LETTER_HEADER_CHARS]})
    return bare.model_dump_json().encode()


def _with_id(request: JudgeRequest, record: RecordLike, headers: Headers) -> JudgeRequest:
    if request.id:
        return request
    from_header = header(headers, *REQUEST_ID_HEADERS)
    if from_header and len(from_header) <= REQUEST_ID_MAX_CHARS:
        request_id = as_text(from_header)
    else:
        request_id = f"{record.topic}-{record.partition}-{record.offset}"
    return request.model_copy(update={"id": request_id})


def decode(record: RecordLike, *, parse: Callable[[Any], JudgeRequest],
           max_bytes: int) -> Decoded | DeadLetter:
    """The record's request, or a dead letter saying why there is none. Never raises."""
    value = record.value
    if value is None:
        return dead_letter(record, "invalid_request", "the record has no value (a tombstone)")
    if len(value) > max_bytes:
        return dead_letter(record, "oversized",
                           f"the value is {len(value)} bytes; the limit (max_message_bytes) is "
                           f"{max_bytes}", keep_bytes=max_bytes)
    try:
        request = parse_exact(value, parse)
    except InvalidRequest as exc:
        reason = getattr(exc, "reason", "invalid_request")
        if reason not in DEAD_LETTER_REASONS:
            reason = "invalid_request"
        return dead_letter(record, reason, str(exc))
    headers = headers_of(record)
    return Decoded(request=_with_id(request, record, headers), source=source_of(record),
                   payload=value, headers=headers)


def exact_json(value: bytes) -> Any | None:
    """``value`` as JSON with integers beyond 64 bits kept exact, when it holds a long run of
    digits and is valid JSON; None otherwise (then orjson's reading is as good)."""
    if LONG_DIGITS.search(value) is None:
        return None
    try:
        orjson.loads(value)  # the core's rules: the standard parser accepts NaN, lone surrogates
        found = json.loads(value)
    except (orjson.JSONDecodeError, ValueError, RecursionError):
        return None
    strictjson.reject_duplicate_keys(value)  # the core reads a parsed value as it is
    return found


def parse_exact(value: bytes, parse: Callable[[Any], JudgeRequest]) -> JudgeRequest:
    """``parse(value)``, but big integers reach the core as integers, not floats."""
    exact = exact_json(value)
    return parse(value if exact is None else exact)


def payload_json(payload: bytes) -> Any:
    """The payload as JSON (it was validated already), big integers kept exact."""
    exact = exact_json(payload)
    return orjson.loads(payload) if exact is None else exact
