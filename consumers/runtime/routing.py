"""Which records a message produces, and where they go.

* every verdict goes to the verdicts topic, keyed like the input, with the input's coordinates;
* a ``fail`` verdict, and under ``fail_closed`` an ``error`` or ``skipped`` one (except messages
  left out by sampling), also sends the original payload and the verdict to quarantine;
* with an approved topic configured, every message not quarantined is copied there (so under
  ``fail_open`` undecided messages are approved, marked by their ``groundguard-label`` header);
* a message that cannot be decoded goes to the dead-letter topic, with its original bytes,
  headers, coordinates and the reason (:mod:`consumers.runtime.deadletters`).

Tracing headers of the input (W3C, B3, Jaeger, request ids) are carried over to every output.
"""

from __future__ import annotations

from consumers.records import QuarantineRecord, SourceCoordinates, VerdictRecord
from consumers.runtime.codec import Decoded, payload_json
from consumers.runtime.envelope import OutRecord, coordinate_headers, tracing_headers
from consumers.settings import FailurePolicy, TopicSettings
from guard.models import Label, Verdict

SAMPLING_REASON_PREFIXES = ("not_sampled", "sampled_out", "sampling")


def is_sampling_skip(verdict: Verdict) -> bool:
    reason = (verdict.reason or "").lower()
    return verdict.label is Label.SKIPPED and reason.startswith(SAMPLING_REASON_PREFIXES)


def quarantined(verdict: Verdict, policy: FailurePolicy) -> bool:
    """Whether the message must be held back: failed, or undecided under fail-closed."""
    if verdict.label is Label.FAIL:
        return True
    if verdict.label is Label.PASS or is_sampling_skip(verdict):
        return False
    return policy is FailurePolicy.FAIL_CLOSED


def verdict_record(verdict: Verdict, source: SourceCoordinates) -> VerdictRecord:
    fields = {name: getattr(verdict, name) for name in Verdict.model_fields}
    return VerdictRecord.model_construct(**fields, input=source)


def route_verdict(decoded: Decoded, verdict: Verdict, *, topics: TopicSettings,
                  policy: FailurePolicy, key: bytes | None) -> list[OutRecord]:
    """The verdict record, plus the quarantine or approved copy where due."""
    base = [*tracing_headers(decoded.headers), *coordinate_headers(decoded.source),
            ("groundguard-request-id", verdict.request_id.encode()),
            ("groundguard-label", verdict.label.value.encode()),
            ("content-type", b"application/json")]
    value = verdict_record(verdict, decoded.source).model_dump_json().encode()
    label = verdict.label.value
    out = [OutRecord(topics.verdicts, key, value, base, "verdict", label)]
    if quarantined(verdict, policy):
        record = QuarantineRecord(request_id=verdict.request_id, input=decoded.source,
                                  payload=payload_json(decoded.payload),
                                  payload_bytes=len(decoded.payload), verdict=verdict)
        out.append(OutRecord(topics.quarantine, key, record.model_dump_json().encode(), base,
                             "quarantine", label))
    elif topics.approved:
        out.append(OutRecord(topics.approved, key, decoded.payload, base, "approved", label))
    return out
