"""Which records a message produces, and where they go.

* every verdict goes to the verdicts topic, keyed like the input, with the input's coordinates;
* a ``fail`` verdict, and under ``fail_closed`` an ``error`` or ``skipped`` one (except messages
  left out by sampling), also sends the original payload and the verdict to quarantine;
* with an approved topic configured, every message not quarantined is copied there (so under
  ``fail_open`` undecided messages are approved, marked by their ``groundguard-label`` header);
* a message that cannot be decoded goes to the dead-letter topic, with its original bytes,
  headers, coordinates and the reason (:mod:`consumers.runtime.deadletters`);
* a request that asks for a reply (:mod:`consumers.runtime.replies`) also sends the verdict
  record to its reply topic, keyed like the input, with the verdict's headers except
  credentials (:func:`consumers.runtime.headers.is_credential`) and its correlation id.

Tracing headers of the input (W3C, B3, Jaeger, request ids) are carried over to every output.
"""

from __future__ import annotations

import orjson

from consumers.records import SourceCoordinates
from consumers.reply.headers import CORRELATION_ID_HEADER, ReplyTo
from consumers.runtime.codec import Decoded
from consumers.runtime.envelope import Headers, OutRecord, coordinate_headers, tracing_headers
from consumers.runtime.headers import safe_headers
from consumers.runtime.kinds import OutputKind
from consumers.settings import FailurePolicy, TopicSettings
from guard.defaults import SCHEMA_VERSION
from guard.models import Label, Verdict
from guard.skips import skip_reason

JSON_SPACE = b" \t\n\r"  # whitespace JSON allows around a value


def quarantined(verdict: Verdict, policy: FailurePolicy) -> bool:
    """Whether the message must be held back: failed, or undecided under fail-closed."""
    if verdict.label is Label.FAIL:
        return True
    skipped = skip_reason(verdict)
    if verdict.label is Label.PASS or (skipped is not None and skipped.sampled_out):
        return False
    return policy is FailurePolicy.FAIL_CLOSED


def with_input(verdict_value: bytes, source_json: bytes) -> bytes:
    """The verdict record (:class:`consumers.records.VerdictRecord`: the verdict's fields, then
    ``input``, and ``proxy`` null: no proxy's) from the verdict's own JSON, so the verdict is
    serialized once per message."""
    return b'%s,"input":%s,"proxy":null}' % (verdict_value[:-1], source_json)


def quarantine_json(
    verdict: Verdict, verdict_value: bytes, source_json: bytes, payload: bytes
) -> bytes:
    """The :class:`consumers.records.QuarantineRecord`, field for field, with the payload
    copied as it came (it was read as strict JSON already, so it is valid JSON text, integers
    beyond 64 bits exact), and the verdict's own JSON, serialized once for both records."""
    return b"".join(
        (
            b'{"schema_version":',
            orjson.dumps(SCHEMA_VERSION),
            b',"request_id":',
            orjson.dumps(verdict.request_id),
            b',"input":',
            source_json,
            b',"payload":',
            payload.strip(JSON_SPACE),
            b',"payload_omitted":false,"payload_bytes":',
            str(len(payload)).encode(),
            b',"verdict":',
            verdict_value,
            b',"proxy":null}',
        )
    )


def verdict_headers(
    source: SourceCoordinates, verdict: Verdict, headers: Headers
) -> list[tuple[str, bytes]]:
    """The headers of a verdict's records: the input's coordinates, the request id and label,
    and the input's tracing headers."""
    return [
        *coordinate_headers(source),
        ("groundguard-request-id", verdict.request_id.encode()),
        ("groundguard-label", verdict.label.value.encode()),
        ("content-type", b"application/json"),
        *tracing_headers(headers),
    ]


def route_verdict(
    decoded: Decoded,
    verdict: Verdict,
    *,
    topics: TopicSettings,
    policy: FailurePolicy,
    key: bytes | None,
    reply: ReplyTo | None = None,
) -> list[OutRecord]:
    """The verdict record, plus the quarantine or approved copy and the reply where due."""
    source = decoded.source
    base = verdict_headers(source, verdict, decoded.headers)
    source_json = source.model_dump_json().encode()
    verdict_value = verdict.model_dump_json().encode()
    value = with_input(verdict_value, source_json)
    label = verdict.label.value
    out = [OutRecord(topics.verdicts, key, value, base, OutputKind.VERDICT, label)]
    if quarantined(verdict, policy):
        payload = quarantine_json(verdict, verdict_value, source_json, decoded.payload)
        out.append(OutRecord(topics.quarantine, key, payload, base, OutputKind.QUARANTINE, label))
    elif topics.approved:
        out.append(
            OutRecord(topics.approved, key, decoded.payload, base, OutputKind.APPROVED, label)
        )
    if reply is not None:
        out.append(reply_record(reply, key, value, base, label))
    return out


def reply_record(
    reply: ReplyTo, key: bytes | None, value: bytes, base: list[tuple[str, bytes]], label: str
) -> OutRecord:
    """The verdict record sent to a reply topic: the requester chose that topic, so headers
    that may hold credentials stay behind; the correlation id goes along."""
    headers = [*safe_headers(base)[0], (CORRELATION_ID_HEADER, reply.correlation_id)]
    return OutRecord(reply.topic, key, value, headers, OutputKind.REPLY, label, reply.partition)
