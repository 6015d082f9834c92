"""Records groundguard writes besides verdicts: quarantine records and dead letters.

Verdict records are :class:`guard.models.Verdict` plus ``source`` coordinates. Payloads travel as
text when they are valid UTF-8 and as base64 otherwise, so no byte is lost.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from guard.defaults import SCHEMA_VERSION
from guard.models import Verdict


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


class VerdictRecord(Verdict):
    """A verdict as published to the verdicts topic, with the input's coordinates."""

    input: SourceCoordinates


class QuarantineRecord(BaseModel):
    """A failing (or, under fail-closed, undecided) response, with its original payload."""

    schema_version: str = SCHEMA_VERSION
    request_id: str
    input: SourceCoordinates
    payload: Any = Field(description="The original message, decoded as JSON (null when omitted).")
    payload_omitted: bool = Field(
        default=False,
        description="The payload was left out so the record fits "
        "max_output_bytes; read it from the input coordinates.",
    )
    payload_bytes: int | None = Field(default=None, description="Size of the original value.")
    verdict: Verdict


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
