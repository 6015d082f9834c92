"""From a Kafka record to a judge request, or to the reason it cannot be judged.

Validation itself is the judge core's (:meth:`guard.engine.Guard.parse`); this module adds what
only the runtime knows: the size limit, tombstones, the record's coordinates and headers, and a
request id for requests that carry none (a header of at most ``REQUEST_ID_MAX_CHARS``, else the
record's coordinates, so a replay of the same record gets the same id).

Integers too large for 64 bits (an ``id``, a ``metadata`` value) are kept exact: a payload with a
run of 19 or more digits is read with the standard library's JSON parser (orjson would turn such
integers into floats, and refuses those beyond the double range), up to Python's limit of digits
per integer (4,300 by default; a longer one is an ``invalid_request`` saying so).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from consumers.records import DeadLetter, SourceCoordinates
from consumers.runtime import deadletters
from consumers.runtime.envelope import Headers, Origin, RecordLike, as_text, origin_of
from guard import strictjson
from guard.errors import InvalidRequest
from guard.models import JudgeRequest

REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-correlation-id", "correlation-id")
DEAD_LETTER_REASONS = ("invalid_utf8", "invalid_json", "invalid_request", "not_an_object")
REQUEST_ID_MAX_CHARS = 256  # a longer request-id header is not used as the request's id
LONG_DIGITS = 19  # a run of this many digits may be an integer beyond 64 bits
_LONG_DIGITS = re.compile(rb"[0-9]{%d,}" % LONG_DIGITS)
_DIGITS_AS_ZERO = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))  # 0-9 -> "0"


@dataclass(frozen=True)
class Decoded:
    """A valid request, with where it came from."""

    request: JudgeRequest
    origin: Origin

    @property
    def source(self) -> SourceCoordinates:
        return self.origin.source

    @property
    def payload(self) -> bytes:
        return self.origin.value or b""

    @property
    def headers(self) -> Headers:
        return self.origin.headers


def header(headers: Headers, *names: str) -> bytes | None:
    wanted = {name.lower() for name in names}
    for name, value in headers:
        if name.lower() in wanted:
            return value
    return None


def fallback_id(origin: Origin) -> str:
    """The id of a request that carries none: its request-id header, else its coordinates."""
    from_header = header(origin.headers, *REQUEST_ID_HEADERS)
    if from_header and len(from_header) <= REQUEST_ID_MAX_CHARS:
        return as_text(from_header)
    source = origin.source
    return f"{source.topic}-{source.partition}-{source.offset}"


def _with_id(request: JudgeRequest, origin: Origin) -> JudgeRequest:
    if request.id:
        return request
    return request.model_copy(update={"id": fallback_id(origin)})


def decode(
    record: RecordLike | Origin, *, parse: Callable[[Any], JudgeRequest], max_bytes: int
) -> Decoded | DeadLetter:
    """The record's request, or a dead letter saying why there is none. Never raises for the
    record's content (an unreadable record raises; :mod:`message` dead-letters it)."""
    origin = record if isinstance(record, Origin) else origin_of(record)
    value = origin.value
    if value is None:
        return deadletters.build(origin, "invalid_request", "the record has no value (a tombstone)")
    if len(value) > max_bytes:
        return deadletters.build(
            origin,
            "oversized",
            f"the value is {len(value)} bytes; the limit (max_message_bytes) is {max_bytes}",
            keep_bytes=max_bytes,
        )
    try:
        request = parse_exact(value, parse)
    except InvalidRequest as exc:
        reason = getattr(exc, "reason", "invalid_request")
        if reason not in DEAD_LETTER_REASONS:
            reason = "invalid_request"
        return deadletters.build(origin, reason, str(exc))
    return Decoded(request=_with_id(request, origin), origin=origin)


def has_long_digits(value: bytes) -> bool:
    """Whether ``value`` holds ``LONG_DIGITS`` digits in a row (one C pass and a substring
    search: ten times cheaper than the regular expression on a 1 KB request)."""
    return b"0" * LONG_DIGITS in value.translate(_DIGITS_AS_ZERO)


def exact_json(value: bytes) -> Any | None:
    """``value`` as JSON with integers beyond 64 bits kept exact, when it holds a long run of
    digits and is valid JSON; None otherwise (then orjson's reading is as good, or its error).

    orjson refuses an integer beyond the double range ("number is infinity"), though it is
    valid JSON: the core's other rules (no NaN, no lone surrogates) are then checked by orjson
    on a copy whose long digit runs are cut to one digit, and the value read by the standard
    parser, up to Python's ``sys.get_int_max_str_digits()`` digits per integer (beyond that,
    :class:`InvalidRequest` says so)."""
    if not has_long_digits(value):
        return None
    try:
        orjson.loads(value)  # the core's rules: the standard parser accepts NaN, lone surrogates
    except orjson.JSONDecodeError:
        try:
            orjson.loads(_LONG_DIGITS.sub(b"0", value))
        except orjson.JSONDecodeError:
            return None
    try:
        found = json.loads(value, parse_constant=_no_constant)
    except json.JSONDecodeError:
        return None
    except ValueError as exc:  # an integer longer than Python converts
        raise InvalidRequest(_too_long(value), reason="invalid_request") from exc
    except RecursionError:
        return None
    strictjson.reject_duplicate_keys(value)  # the core reads a parsed value as it is
    return found


def _too_long(value: bytes) -> str:
    """Which field holds an integer longer than Python converts, said for a dead letter."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rb'"((?:[^"\\]|\\.){0,64})"\s*:\s*-?[0-9]{%d}' % (limit + 1), value)
    where = f"field {found.group(1).decode(errors='replace')!r}" if found else "an array"
    return f"an integer in {where} has more than {limit} digits (Python's int_max_str_digits)"


def _no_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


def parse_exact(value: bytes, parse: Callable[[Any], JudgeRequest]) -> JudgeRequest:
    """``parse(value)``, but big integers reach the core as integers, not floats."""
    exact = exact_json(value)
    return parse(value if exact is None else exact)
