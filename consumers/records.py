"""Records groundguard writes besides verdicts: quarantine records, dead letters and release
events; and the delta records of streamed answers it reads (``topics.deltas``).

Verdict records are :class:`guard.models.Verdict` plus ``source`` coordinates. Payloads travel as
text when they are valid UTF-8 and as base64 otherwise, so no byte is lost.

A verdict of ``serve``'s streaming proxy (:mod:`consumers.serve.proxy.publish`) is the same
record with no input coordinates (it read no Kafka record: ``input`` is null) and a ``proxy``
object (:class:`ProxyOutcome`) saying what reached the client; ``run``'s records carry
``"proxy": null``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from guard.defaults import SCHEMA_VERSION
from guard.models import Context, ContextField, Label, Message, Verdict

RESPONSE_ID_MAX_CHARS = 256
MAX_SEQ = 2**31 - 1


class SourceCoordinates(BaseModel):
    """Where the input record was read from."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None = None
    key: str | None = Field(
        default=None,
        description="The input key as text (base64: and its "
        "base64 if binary; sha256: and its hex digest if longer than 4096 "
        "bytes).",
    )


class ProxyOutcome(BaseModel):
    """What ``serve``'s proxy let through of one answer (see the README's proxy section)."""

    route: Literal["openai", "anthropic"] = Field(description="The proxy route's wire format.")
    stream: bool = Field(description="Streamed (stream: true) or answered whole.")
    release: Literal["verified", "final", "immediate"] = Field(
        description="serve.proxy.release; immediate is monitoring only (nothing was stopped)."
    )
    monitoring_only: bool = Field(description="True under release: immediate.")
    outcome: str = Field(
        description="finished, stopped, or why the answer ended before its verdict "
        "(client_left, upstream_dropped, judge_raised, ...: then the verdict is an error "
        "verdict whose reason says so, client_disconnected, upstream_failed, judge_error)."
    )
    released_chars: int = Field(description="Characters of the answer the client received.")
    answer_chars: int = Field(description="Characters of the answer the upstream sent.")
    released_prefix: str = Field(
        description="The text the client received (the answer's first released_chars "
        "characters), cut to fit max_output_bytes (see released_prefix_truncated)."
    )
    released_prefix_truncated: bool = Field(
        description="released_prefix is shorter than released_chars: the record had to fit "
        "max_output_bytes."
    )
    stopped_at: int | None = Field(
        description="Where the answer was stopped: the character offset of the span that "
        "blocked; for an answer cut short without a verdict (the client left, the upstream "
        "broke off), the end of what the client received; null: it reached the client whole."
    )
    stopped_span: int | None = Field(
        description="The index (from 0) of the span that blocked (null: not stopped)."
    )
    spans_judged: int = Field(description="Span verdicts the answer got.")


class VerdictRecord(Verdict):
    """A verdict as published to the verdicts topic, with the input's coordinates."""

    input: SourceCoordinates | None = Field(
        description="Where the judged record was read from; null for a verdict of serve's "
        "proxy (see proxy)."
    )
    proxy: ProxyOutcome | None = Field(
        default=None,
        description="Set for a verdict of serve's streaming proxy: what reached the client; "
        "null for a verdict of run.",
    )


class QuarantineRecord(BaseModel):
    """A failing (or, under fail-closed, undecided) response, with its original payload."""

    schema_version: str = SCHEMA_VERSION
    request_id: str
    input: SourceCoordinates | None = Field(
        description="Where the judged record was read from; null for serve's proxy."
    )
    payload: Any = Field(description="The original message, decoded as JSON (null when omitted).")
    payload_omitted: bool = Field(
        default=False,
        description="The payload was left out so the record fits "
        "max_output_bytes; read it from the input coordinates.",
    )
    payload_bytes: int | None = Field(default=None, description="Size of the original value.")
    verdict: Verdict
    proxy: ProxyOutcome | None = Field(
        default=None,
        description="Set for an answer of serve's streaming proxy (its payload: the request "
        "as judged, the whole answer in output); null for run.",
    )


class DeadLetter(BaseModel):
    """A message that could not be decoded or validated, with why."""

    schema_version: str = SCHEMA_VERSION
    reason: Literal[
        "invalid_utf8",
        "invalid_json",
        "invalid_request",
        "oversized",
        "not_an_object",
        "internal_error",
    ]
    detail: str = Field(description="A human-readable explanation: which field, what was wrong.")
    input: SourceCoordinates
    payload_text: str | None = Field(default=None, description="Original bytes, if valid UTF-8.")
    payload_base64: str | None = Field(default=None, description="Original bytes otherwise.")
    payload_truncated: bool = Field(
        default=False,
        description="Only a prefix of the original value is kept (an oversized "
        "input, or a dead letter shrunk to fit max_output_bytes).",
    )
    payload_bytes: int | None = Field(default=None, description="Size of the original value.")
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Original headers (values base64 if binary), except "
        "credentials (authorization, cookie, names with token, secret, password, key...).",
    )
    headers_withheld: list[str] = Field(
        default_factory=list, description="Names of input headers not copied: credentials."
    )
    failed_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class DeltaRecord(BaseModel):
    """One delta of a streamed answer, published to ``topics.deltas`` keyed by ``response_id``
    as the answer streams. Deltas are assembled in ``seq`` order (0, 1, 2, ...): a duplicate
    ``seq`` is dropped, a missing one is waited for (``stream.timeout_s``). The delta with
    ``final: true`` is the last. The evidence and question (the fields of an ordinary request
    but ``output``) are read from ``seq`` 0 only; on other deltas they are ignored. Unknown
    fields are ignored."""

    model_config = {"extra": "ignore"}

    response_id: str = Field(
        min_length=1,
        max_length=RESPONSE_ID_MAX_CHARS,
        description="The streamed answer this delta belongs to; also the record key and the "
        "verdict's request_id.",
    )
    seq: int = Field(ge=0, le=MAX_SEQ, description="The delta's place in the answer, from 0.")
    delta: str = Field(default="", description="The text of this delta (may be empty).")
    final: bool = Field(default=False, description="Whether this is the answer's last delta.")
    context: Context | None = Field(
        default=None, description="seq 0: retrieved evidence, as in a request."
    )
    messages: list[Message] | None = Field(
        default=None, description="seq 0: a conversation; user and tool turns are evidence."
    )
    question: str | None = Field(default=None, description="seq 0: the question answered.")
    input: str | None = Field(default=None, description="seq 0: the user's input.")
    context_field: ContextField | None = Field(
        default=None, description="seq 0: this answer's grounding source, as in a request."
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="seq 0: passed through to the verdict untouched."
    )


class SpanVerdict(BaseModel):
    """The verdict on one span (sentence) of a streamed answer, judged on the answer up to
    and including it."""

    index: int = Field(description="The span's place in the answer, from 0.")
    start: int = Field(description="Where the span starts in the answer (characters).")
    end: int = Field(description="Where it ends (characters, exclusive).")
    label: Label
    reason: str | None
    score: float | None


class ReleaseRecord(BaseModel):
    """How far a streamed answer may be shown, published to ``topics.releases`` keyed by
    ``response_id`` each time it moves, and once more when the answer is decided. A reader
    shows the answer's first ``released_up_to`` characters (Unicode code points of the
    assembled deltas); ``stopped`` means nothing after that may ever be shown. Release events
    may repeat after a restart (the answer is assembled again from its deltas): the same
    ``released_up_to`` again, never less for the same answer."""

    schema_version: str = SCHEMA_VERSION
    response_id: str
    released_up_to: int = Field(description="Characters of the answer verified for release.")
    spans: list[SpanVerdict] = Field(
        description="The span verdicts applied since the previous release event of the answer, "
        "in order; when stopped, the span that stopped it last."
    )
    stopped: bool = Field(description="A span failed: the answer stops at released_up_to.")
    final: bool = Field(description="The answer is decided: its verdict is on topics.verdicts.")
