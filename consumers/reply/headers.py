"""The request-reply headers, and which reply a request asks for.

The names are those of Spring for Apache Kafka (``KafkaHeaders.REPLY_TOPIC`` and
``KafkaHeaders.CORRELATION_ID``), so a ``ReplyingKafkaTemplate`` can screen through groundguard
unchanged:

* ``kafka_replyTopic``: the topic to send the verdict to, as UTF-8 text;
* ``kafka_correlationId``: opaque bytes (Spring sends a 16-byte UUID), copied to the reply;
* ``kafka_replyPartition`` (optional): the reply topic's partition to send the verdict to, a
  4-byte big-endian signed int as Spring writes it; without it the reply is keyed like the
  request and partitioned by its key.

:func:`reply_target` reads them from a request's headers and never raises, whatever the bytes:
it returns the :class:`ReplyTo`, ``None`` when the request asks for no reply, or
:class:`Ignored` with the reason the reply will not be sent (one of ``IGNORED_REASONS``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

REPLY_TOPIC_HEADER = "kafka_replyTopic"
CORRELATION_ID_HEADER = "kafka_correlationId"
REPLY_PARTITION_HEADER = "kafka_replyPartition"
PARTITION_BYTES = 4  # Spring's KafkaHeaders.REPLY_PARTITION: an int, big-endian
CORRELATION_ID_MAX_BYTES = 256  # Spring's are 16; room for any UUID or request id as text
TOPIC_MAX_CHARS = 249  # Kafka's limit on a topic name
SHOWN_TOPIC_CHARS = 64  # of an invalid topic, in logs
_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}\Z")
IGNORED_REASONS = (
    "not_allowed",  # no allowed prefix matches (or request-reply is off)
    "invalid_topic",  # not a legal Kafka topic name
    "reserved_topic",  # the service's own requests or output topic
    "no_correlation_id",
    "invalid_correlation_id",  # empty, or longer than CORRELATION_ID_MAX_BYTES
    "invalid_reply_partition",  # not a 4-byte big-endian int >= 0
    "duplicate_header",  # a header given twice: which one was meant is unknown
)


@dataclass(frozen=True)
class ReplyTo:
    """Where a verdict's reply goes, and the correlation id it carries."""

    topic: str
    correlation_id: bytes
    partition: int | None = None  # None: partitioned by the reply's key


@dataclass(frozen=True)
class Ignored:
    """A reply asked for and not sent: why, and the topic as far as it could be read."""

    reason: str
    topic: str


def shown_topic(value: bytes) -> str:
    """A reply-topic header's value as safe, short text for logs."""
    return value[:SHOWN_TOPIC_CHARS].decode("utf-8", "backslashreplace")


def valid_topic(name: str) -> bool:
    return bool(_TOPIC.match(name)) and name not in (".", "..")


def partition_of(value: bytes) -> int | None:
    """A ``kafka_replyPartition`` value: a 4-byte big-endian int >= 0, else None."""
    if len(value) != PARTITION_BYTES:
        return None
    partition = int.from_bytes(value, "big", signed=True)
    return partition if partition >= 0 else None


def _values(headers: Iterable[tuple[str, bytes | None]], name: str) -> list[bytes]:
    return [value or b"" for key, value in headers if key == name]


def reply_target(
    headers: Sequence[tuple[str, bytes | None]],
    *,
    allowed_prefixes: Sequence[str],
    reserved: Iterable[str] = (),
) -> ReplyTo | Ignored | None:
    """The reply a request's ``headers`` ask for (see the module docstring); ``reserved``:
    topics a reply may never go to (the service's own)."""
    topics = _values(headers, REPLY_TOPIC_HEADER)
    if not topics:
        return None
    ids = _values(headers, CORRELATION_ID_HEADER)
    partitions = _values(headers, REPLY_PARTITION_HEADER)
    shown = shown_topic(topics[0])
    if len(topics) > 1 or len(ids) > 1 or len(partitions) > 1:
        return Ignored("duplicate_header", shown)
    try:
        topic = topics[0].decode("ascii")
    except UnicodeDecodeError:
        return Ignored("invalid_topic", shown)
    if not valid_topic(topic):
        return Ignored("invalid_topic", shown)
    if topic in set(reserved):
        return Ignored("reserved_topic", topic)
    if not any(prefix and topic.startswith(prefix) for prefix in allowed_prefixes):
        return Ignored("not_allowed", topic)
    if not ids:
        return Ignored("no_correlation_id", topic)
    if not 0 < len(ids[0]) <= CORRELATION_ID_MAX_BYTES:
        return Ignored("invalid_correlation_id", topic)
    partition = partition_of(partitions[0]) if partitions else None
    if partitions and partition is None:
        return Ignored("invalid_reply_partition", topic)
    return ReplyTo(topic, ids[0], partition)


def request_headers(
    reply_topic: str, correlation_id: bytes, partition: int | None = None
) -> list[tuple[str, bytes]]:
    """The headers a requester adds to a request to get its verdict on ``reply_topic`` (and
    its ``partition``, when given)."""
    headers = [
        (REPLY_TOPIC_HEADER, reply_topic.encode("ascii")),
        (CORRELATION_ID_HEADER, correlation_id),
    ]
    if partition is not None:
        headers.append((REPLY_PARTITION_HEADER, partition.to_bytes(PARTITION_BYTES, "big")))
    return headers


def correlation_of(headers: Iterable[tuple[str, bytes | None]]) -> bytes | None:
    """The correlation id of a reply record (the first one), or None."""
    found = _values(headers, CORRELATION_ID_HEADER)
    return found[0] if found else None
