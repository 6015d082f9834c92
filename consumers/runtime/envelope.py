"""What travels in and out of the runtime: a message's :class:`Origin` (taken once from its
Kafka record) and the :class:`OutRecord` s to publish, with the headers carried between them.

Every later step (routing, fitting, dead letters, delivery) works on the :class:`Origin`, never
on the raw ``ConsumerRecord``. A key longer than ``KEY_MAX_BYTES`` is shown as ``sha256:`` and
its hex digest (see :mod:`consumers.runtime.fitting`).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from consumers.records import SourceCoordinates
from consumers.runtime.headers import safe_tracing
from consumers.runtime.kinds import OutputKind

Headers = tuple[tuple[str, bytes], ...]
KEY_MAX_BYTES = 4096  # longer keys travel as sha256:<hex> (same key, same digest, same partition)
MAX_HEADERS = 256  # headers read per record (a 1 MB record can carry 500,000 empty ones)
HEADER_MEMORY = 160  # bytes of Python objects per fetched header, besides its name and value
TRACING_HEADERS = frozenset(
    {
        "traceparent",
        "tracestate",
        "baggage",
        "b3",
        "uber-trace-id",
        "x-request-id",
        "request-id",
        "x-correlation-id",
        "correlation-id",
        "x-cloud-trace-context",
        "sw8",
    }
)
TRACING_PREFIXES = ("x-b3-", "uberctx-", "ot-baggage-")


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
class Origin:
    """What the steps after the fetch need of a message's record: where it was read, its raw
    key and value, and its first ``MAX_HEADERS`` headers."""

    source: SourceCoordinates
    key: bytes | None
    value: bytes | None
    headers: Headers


@dataclass(frozen=True)
class OutRecord:
    """One record to publish."""

    topic: str
    key: bytes | None
    value: bytes
    headers: list[tuple[str, bytes]]
    kind: OutputKind
    tag: str = ""  # the verdict's label, or the dead letter's reason (for counters)
    partition: int | None = None  # None: by the key (a reply's kafka_replyPartition sets it)


def origin_of(record: RecordLike) -> Origin:
    return Origin(
        source=source_of(record), key=record.key, value=record.value, headers=headers_of(record)
    )


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
    return SourceCoordinates(
        topic=record.topic,
        partition=record.partition,
        offset=record.offset,
        timestamp_ms=record.timestamp,
        key=key,
    )


def record_bytes(record: RecordLike) -> int:
    """The memory a fetched record holds: key, value and headers (each header costs
    ``HEADER_MEMORY`` bytes of Python objects besides its name and value)."""
    headers = sum(len(name) + len(value or b"") for name, value in record.headers)
    headers += HEADER_MEMORY * len(record.headers)
    return len(record.key or b"") + len(record.value or b"") + headers


def outputs_bytes(outputs: Sequence[OutRecord]) -> int:
    """The memory records to publish hold (values and keys; their headers are mostly the
    input's, counted with it)."""
    return sum(len(out.value) + len(out.key or b"") for out in outputs)


def headers_of(record: RecordLike) -> Headers:
    """The record's first ``MAX_HEADERS`` headers: the only ones the runtime reads (tracing
    headers to carry, a request id, a dead letter's copy), so a record carrying hundreds of
    thousands of tiny headers costs no more than one with a few."""
    if not record.headers:
        return ()
    return tuple(
        (name, value if value is not None else b"")
        for name, value in itertools.islice(record.headers, MAX_HEADERS)
    )


def tracing_headers(headers: Headers) -> list[tuple[str, bytes]]:
    """The tracing headers to carry onto outputs, without credentials
    (:func:`consumers.runtime.headers.safe_tracing`)."""
    carried: list[tuple[str, bytes]] = []
    for name, value in headers:
        lowered = name.lower()
        if lowered in TRACING_HEADERS or lowered.startswith(TRACING_PREFIXES):
            safe = safe_tracing(name, value)
            if safe is not None:
                carried.append((name, safe))
    return carried


def coordinate_headers(source: SourceCoordinates) -> list[tuple[str, bytes]]:
    return [
        ("groundguard-source-topic", source.topic.encode()),
        ("groundguard-source-partition", str(source.partition).encode()),
        ("groundguard-source-offset", str(source.offset).encode()),
    ]
