"""Fitting output records to ``max_output_bytes``: key, headers and value together.

The broker refuses a record whose key, value and headers together exceed its limit, and a
refusal used to stop the service. So before publishing:

* a key longer than ``envelope.KEY_MAX_BYTES`` becomes ``sha256:<hex>`` of it (the same input key
  always gives the same output key, hence the same partition), marked by a
  ``groundguard-key-hashed`` header holding the original length;
* headers too large are dropped and named (:func:`consumers.runtime.headers.fit_headers`);
* a quarantine record still too large loses its copied payload (``payload_omitted``);
* any other record still too large is replaced by one dead letter (reason ``oversized``) for
  the message; the verdict stays when it fits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from consumers.records import QuarantineRecord
from consumers.runtime.envelope import KEY_MAX_BYTES, OutRecord, hashed_key
from consumers.runtime.headers import (
    HEADER_MAX_BYTES,
    HEADERS_MAX_BYTES,
    fit_headers,
    header_size,
    name_bytes,
)

RECORD_OVERHEAD = 64  # varints, attributes, offsets and timestamps of one record in a batch
KEY_HASHED_HEADER = "groundguard-key-hashed"
OWN_HEADER_PREFIX = "groundguard-"  # kept first: input headers are dropped before these


def record_size(out: OutRecord) -> int:
    """Bytes of ``out`` as the broker counts them (key, value, headers), over-estimated."""
    headers = sum(len(name_bytes(name)) + len(value) + 2 for name, value in out.headers)
    return RECORD_OVERHEAD + len(out.key or b"") + len(out.value) + headers


def output_key(key: bytes | None) -> tuple[bytes | None, list[tuple[str, bytes]]]:
    """The key for output records, and the header saying it was hashed (if it was)."""
    if key is None:
        return None, []
    hashed = hashed_key(key)
    if hashed is None:
        return key, []
    return hashed, [(KEY_HASHED_HEADER, str(len(key)).encode())]


def headers_fit(headers: list[tuple[str, bytes]]) -> bool:
    """Whether :func:`consumers.runtime.headers.fit_headers` would keep every header."""
    total = 0
    for name, value in headers:
        size = header_size(name, value)
        if size > HEADER_MAX_BYTES:
            return False
        total += size
    return total <= HEADERS_MAX_BYTES


def fit_envelope(out: OutRecord) -> OutRecord:
    """``out`` with its key and headers fitted (see the module docstring); ``out`` itself when
    both fit already (the common case: nothing copied)."""
    if (out.key is None or len(out.key) <= KEY_MAX_BYTES) and headers_fit(out.headers):
        return out
    key, extra = output_key(out.key)
    own: list[tuple[str, bytes]] = []
    carried: list[tuple[str, bytes]] = []
    for header in out.headers:
        mine = header[0].startswith(OWN_HEADER_PREFIX) or header[0] == "content-type"
        (own if mine else carried).append(header)
    return dataclasses.replace(out, key=key, headers=fit_headers([*own, *extra, *carried]))


def without_payload(out: OutRecord) -> OutRecord:
    """A quarantine record without its copied payload, saying so."""
    record = QuarantineRecord.model_validate_json(out.value)
    size = len(out.value)
    slim = record.model_copy(update={"payload": None, "payload_omitted": True,
                                     "payload_bytes": record.payload_bytes or size})
    return dataclasses.replace(out, value=slim.model_dump_json().encode())


def fit_outputs(outputs: list[OutRecord], limit: int,
                oversized: Callable[[str], OutRecord]) -> list[OutRecord]:
    """``outputs`` fitted to ``limit`` bytes each; records that cannot be made to fit are
    replaced by ``oversized(detail)``, one dead letter for the message."""
    fitted = [fit_envelope(out) for out in outputs]
    fitted = [without_payload(out) if out.kind == "quarantine" and record_size(out) > limit
              else out for out in fitted]
    sizes = [record_size(out) for out in fitted]
    if max(sizes, default=0) <= limit:
        return fitted
    detail = ", ".join(f"the {out.kind} record is {size} bytes"
                       for out, size in zip(fitted, sizes, strict=True) if size > limit)
    kept = [out for out, size in zip(fitted, sizes, strict=True) if size <= limit]
    return [*kept, oversized(f"{detail}; the output limit is {limit} bytes (max_output_bytes, "
                             "or the output topics' max.message.bytes if lower)")]
