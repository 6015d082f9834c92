"""Reading a check request: the body within its size limit, the JSON, the request models, and
the deadline header. Every problem is a :class:`~consumers.serve.errors.BadRequest` naming the
field (or header) at fault; nothing here raises anything else for any input.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from pydantic import ValidationError
from starlette.requests import ClientDisconnect, Request

from consumers.serve.errors import BadRequest
from guard import strictjson
from guard.errors import InvalidRequest
from guard.models import JudgeRequest

DEADLINE_HEADER = "x-groundguard-deadline-ms"
BATCH_FIELD = "requests"
# ``metadata`` is passed through to the verdict untouched (every other field is typed by the
# request model); nested past ~250 levels the verdict could not be written as JSON
MAX_METADATA_DEPTH = 64

Parse = Callable[[Mapping[str, Any]], JudgeRequest]
"""Turns one JSON object into a request (``GuardCore.parse``: the field map applies)."""


async def read_body(
    request: Request, limit: int, within_s: float, reserve: Callable[[int], None]
) -> bytes:
    """The whole body, or 413 as soon as it is known to exceed ``limit`` bytes, or 408 when it
    has not arrived whole ``within_s`` (the request's deadline: a trickling body never holds a
    request past it). ``reserve`` is given the declared ``Content-Length`` before a byte is read
    (without one, each chunk's size as it arrives) and raises to refuse it."""
    declared = request.headers.get("content-length")
    length = None if declared is None else _whole_number(declared.strip(), limit)
    if declared is not None:
        if length is None:
            raise _too_large(limit)
        reserve(length)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(within_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                if declared is None:
                    reserve(len(chunk))
                chunks.append(chunk)
    except ClientDisconnect:
        raise BadRequest("client_disconnected", "the body was not sent whole") from None
    except TimeoutError:
        raise BadRequest(
            "body_timeout", "the body did not arrive by the deadline", field="body", status=408
        ) from None
    return b"".join(chunks)


def _too_large(limit: int) -> BadRequest:
    return BadRequest(
        "body_too_large",
        f"the body is larger than {limit} bytes (serve.max_body_bytes)",
        field="body",
        status=413,
    )


def check_content_type(request: Request) -> None:
    """JSON only: an absent content type is taken as JSON, any other one is 415."""
    kind = request.headers.get("content-type", "application/json").split(";", 1)[0].strip()
    if kind.lower() not in ("application/json", "") and not kind.lower().endswith("+json"):
        raise BadRequest(
            "unsupported_media_type",
            f"send application/json, not {kind[:60]}",
            field="content-type",
            status=415,
        )


def decode_object(body: bytes) -> dict[str, Any]:
    """The JSON object in ``body``; strict (no duplicate keys, UTF-8, no NaN)."""
    try:
        value = strictjson.loads(body)
    except InvalidRequest as exc:
        raise BadRequest(exc.reason, str(exc), field="body") from None
    except (ValueError, RecursionError) as exc:
        raise BadRequest("invalid_json", f"not JSON: {type(exc).__name__}", field="body") from None
    if not isinstance(value, dict):
        kind = type(value).__name__
        raise BadRequest("not_an_object", f"expected a JSON object, got {kind}", field="body")
    return value


def parse_one(parse: Parse, value: Any, *, at: str = "") -> JudgeRequest:
    """One request from a JSON value; 422 naming the field (prefixed with ``at``) otherwise."""
    if not isinstance(value, dict):
        kind = type(value).__name__
        raise BadRequest(
            "not_an_object", f"expected a JSON object, got {kind}", field=at or "body", status=422
        )
    try:
        request = parse(value)
    except InvalidRequest as exc:
        field = _first_field(exc)
        path = ".".join(p for p in (at, field) if p) or "body"
        raise BadRequest(exc.reason, _prefixed(str(exc), at), field=path, status=422) from None
    except (ValueError, TypeError, RecursionError) as exc:  # a field map on odd values
        kind = type(exc).__name__
        raise BadRequest("invalid_request", kind, field=at or "body", status=422) from None
    if _nested_deeper(request.metadata, MAX_METADATA_DEPTH):
        raise BadRequest(
            "invalid_request",
            f"metadata is nested more than {MAX_METADATA_DEPTH} levels deep",
            field=".".join(p for p in (at, "metadata") if p),
            status=422,
        )
    return request


def _nested_deeper(value: Any, most: int) -> bool:
    """Whether ``value`` holds objects or arrays more than ``most`` levels deep (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > most:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_batch(parse: Parse, body: dict[str, Any], most: int) -> list[JudgeRequest]:
    """The requests of a batch body ``{"requests": [...]}``, at most ``most`` of them."""
    items = body.get(BATCH_FIELD)
    if not isinstance(items, list):
        raise BadRequest(
            "invalid_request",
            f"{BATCH_FIELD}: expected a list of requests",
            field=BATCH_FIELD,
            status=422,
        )
    if not items or len(items) > most:
        raise BadRequest(
            "invalid_request",
            f"{BATCH_FIELD}: give 1 to {most} requests (serve.max_batch_items), not {len(items)}",
            field=BATCH_FIELD,
            status=422,
        )
    return [parse_one(parse, item, at=f"{BATCH_FIELD}.{n}") for n, item in enumerate(items)]


def deadline_ms(request: Request, default_ms: int, most_ms: int) -> int:
    """The request's deadline: the header's whole milliseconds, 1 to ``most_ms``, or the
    default."""
    raw = request.headers.get(DEADLINE_HEADER)
    if raw is None:
        return default_ms
    ms = _whole_number(raw.strip(), most_ms)
    if ms is None or ms < 1:
        raise BadRequest(
            "invalid_deadline",
            f"{DEADLINE_HEADER} must be whole milliseconds from 1 to {most_ms}",
            field=DEADLINE_HEADER,
        )
    return ms


def _whole_number(text: str, most: int) -> int | None:
    """``text`` as a number from 0 to ``most``, or None: ASCII digits only (headers arrive as
    Latin-1, where ``²`` is ``isdigit()`` but not ``int()``), and never ``int()`` of more
    digits than ``most`` has (5,000 digits would pass Python's limit on ``int()`` of a
    string)."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(most)) or int(digits) > most:
        return None
    return int(digits)


def _first_field(exc: InvalidRequest) -> str:
    """The path of the first bad field (``context``, ``messages.2.role``), without pydantic's
    union member tags (``str``, ``list[Document]``)."""
    cause = exc.__cause__
    if not isinstance(cause, ValidationError) or not cause.errors():
        return ""
    path: list[str] = []
    for part in cause.errors()[0].get("loc", ()):
        if isinstance(part, str) and (part in _UNION_TAGS or "[" in part):
            break
        path.append(str(part))
    return ".".join(path)


_UNION_TAGS = frozenset({"str", "int", "float", "bool", "list", "dict", "none"})


def _prefixed(message: str, at: str) -> str:
    return f"{at}: {message}" if at else message


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)
