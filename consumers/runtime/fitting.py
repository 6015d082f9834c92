"""Fitting output records to ``max_output_bytes``: key, headers and value together.

The broker refuses a record whose key, value and headers together exceed its limit, and a
refusal used to stop the service. So before publishing:

* a key longer than ``envelope.KEY_MAX_BYTES`` becomes ``sha256:<hex>`` of it (the same input key
  always gives the same output key, hence the same partition), marked by a
  ``groundguard-key-hashed`` header holding the original length;
* headers too large are dropped and named (:func:`consumers.runtime.headers.fit_headers`),
  groundguard's own and a reply's correlation id last;
* a quarantine record still too large loses its copied payload (``payload_omitted``);
* any other record still too large is replaced by one dead letter (reason ``oversized``) for
  the message; the verdict stays when it fits.

Each output topic has its own limit (:class:`OutputLimits`: ``max_output_bytes``, lowered to the
topic's ``max.message.bytes``), so a small dead-letter or quarantine topic never changes where a
verdict goes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from consumers.records import QuarantineRecord
from consumers.reply.headers import CORRELATION_ID_HEADER
from consumers.runtime.envelope import KEY_MAX_BYTES, OutRecord, hashed_key
from consumers.runtime.headers import (
    HEADER_MAX_BYTES,
    HEADERS_MAX_BYTES,
    fit_headers,
    header_size,
)
from consumers.runtime.kinds import OutputKind

RECORD_OVERHEAD = 64  # varints, attributes, offsets and timestamps of one record in a batch
KEY_HASHED_HEADER = "groundguard-key-hashed"
OWN_HEADER_PREFIX = "groundguard-"  # kept first: input headers are dropped before these
KEPT_FIRST = frozenset({"content-type", CORRELATION_ID_HEADER})  # a reply is useless without it


@dataclass(frozen=True)
class OutputLimits:
    """The bytes an output record may have, per topic: ``default`` (``max_output_bytes``) for
    any topic not in ``topics`` (e.g. a reply topic), the lowered limit of those that are."""

    default: int
    topics: Mapping[str, int] = field(default_factory=dict)

    def of(self, topic: str) -> int:
        return self.topics.get(topic, self.default)


def record_size(out: OutRecord, headers: int | None = None) -> int:
    """Bytes of ``out`` as the broker counts them (key, value, headers), over-estimated;
    ``headers``: the bytes of its headers (:func:`measure_headers`) when known."""
    if headers is None:
        headers = measure_headers(out.headers)[1]
    return RECORD_OVERHEAD + len(out.key or b"") + len(out.value) + headers


def measure_headers(headers: list[tuple[str, bytes]]) -> tuple[bool, int]:
    """Whether :func:`consumers.runtime.headers.fit_headers` would keep every header, and the
    bytes they add to a record (name, value and two length bytes each)."""
    total, largest = 0, 0
    for name, value in headers:
        size = header_size(name, value)
        total += size
        largest = max(largest, size)
    fits = largest <= HEADER_MAX_BYTES and total <= HEADERS_MAX_BYTES
    return fits, total + 2 * len(headers)


def key_fits(key: bytes | None) -> bool:
    return key is None or len(key) <= KEY_MAX_BYTES


def output_key(key: bytes | None) -> tuple[bytes | None, list[tuple[str, bytes]]]:
    """The key for output records, and the header saying it was hashed (if it was)."""
    if key is None:
        return None, []
    hashed = hashed_key(key)
    if hashed is None:
        return key, []
    return hashed, [(KEY_HASHED_HEADER, str(len(key)).encode())]


def fit_envelope(out: OutRecord) -> OutRecord:
    """``out`` with its key and headers fitted (see the module docstring); ``out`` itself when
    both fit already (the common case: nothing copied)."""
    if key_fits(out.key) and measure_headers(out.headers)[0]:
        return out
    key, extra = output_key(out.key)
    own: list[tuple[str, bytes]] = []
    carried: list[tuple[str, bytes]] = []
    for header in out.headers:
        mine = header[0].startswith(OWN_HEADER_PREFIX) or header[0] in KEPT_FIRST
        (own if mine else carried).append(header)
    return dataclasses.replace(out, key=key, headers=fit_headers([*own, *extra, *carried]))


def without_payload(out: OutRecord) -> OutRecord:
    """A quarantine record without its copied payload, saying so."""
    record = QuarantineRecord.model_validate_json(out.value)
    size = len(out.value)
    slim = record.model_copy(
        update={
            "payload": None,
            "payload_omitted": True,
            "payload_bytes": record.payload_bytes or size,
        }
    )
    return dataclasses.replace(out, value=slim.model_dump_json().encode())


def fit_outputs(
    outputs: list[OutRecord], limits: OutputLimits, oversized: Callable[[str], OutRecord]
) -> list[OutRecord]:
    """``outputs`` fitted each to its topic's limit (``limits``); records that cannot be made to
    fit are replaced by ``oversized(detail)``, one dead letter for the message."""
    fitted: list[OutRecord] = []
    sizes: list[int] = []
    allowed = [limits.of(out.topic) for out in outputs]
    measured: dict[int, tuple[bool, int]] = {}  # the records of a message share their headers
    for out in outputs:
        known = measured.get(id(out.headers))
        if known is None:
            known = measured[id(out.headers)] = measure_headers(out.headers)
        fits, header_bytes = known
        if not (fits and key_fits(out.key)):
            out = fit_envelope(out)
            header_bytes = measure_headers(out.headers)[1]
        size = record_size(out, header_bytes)
        if out.kind is OutputKind.QUARANTINE and size > limits.of(out.topic):
            out = without_payload(out)
            size = record_size(out, header_bytes)
        fitted.append(out)
        sizes.append(size)
    over = [size > limit for size, limit in zip(sizes, allowed, strict=True)]
    if not any(over):
        return fitted
    detail = ", ".join(
        f"the {out.kind} record is {size} bytes, the limit of {out.topic} {limit}"
        for out, size, limit, big in zip(fitted, sizes, allowed, over, strict=True)
        if big
    )
    kept = [out for out, big in zip(fitted, over, strict=True) if not big]
    return [
        *kept,
        oversized(f"{detail} (max_output_bytes, or the topic's max.message.bytes if lower)"),
    ]
