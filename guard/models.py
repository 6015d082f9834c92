"""The request and verdict models: the contract between producers, the judge and subscribers.

A request carries the ``output`` to judge and the evidence it must be grounded in. A verdict
says whether it is, why, which claims are not, and everything an operator needs to trust the
decision (what was cut, what looked like an injection, what it cost).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from guard.defaults import SCHEMA_VERSION


class ContextField(StrEnum):
    """Which part of a request is the grounding source."""

    CONTEXT = "context"
    INPUT = "input"
    EXPECTED_OUTPUT = "expected_output"
    MESSAGES = "messages"


class ScoringMode(StrEnum):
    """``scale5``: raw 1-5, score (raw-1)/4. ``binary``: grounded 1 / not grounded 0."""

    SCALE5 = "scale5"
    BINARY = "binary"


class Label(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIPPED = "skipped"


# --------------------------------------------------------------------------- requests


class Document(BaseModel):
    """One retrieved document."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    text: str
    id: str | None = None
    source: str | None = None


class Message(BaseModel):
    """One turn of a conversation."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    role: Literal["user", "assistant", "system", "tool"]
    content: str
    name: str | None = Field(default=None, description="Tool name, for tool turns.")


Context = str | list[str] | list[Document]


class JudgeRequest(BaseModel):
    """One answer to judge, with its evidence. Unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    output: str = Field(description="The answer to judge.")
    context: Context | None = Field(
        default=None, description="Retrieved evidence: a string, strings, or documents."
    )
    messages: list[Message] | None = Field(
        default=None, description="A conversation; user and tool turns are evidence."
    )
    question: str | None = None
    input: str | None = None
    expected_output: str | None = Field(
        default=None, validation_alias=AliasChoices("expected_output", "expectedOutput")
    )
    context_field: ContextField | None = Field(
        default=None,
        description="This request's grounding source, overriding the configured context_field "
        "(e.g. 'messages' for agent conversations on a topic that mostly carries RAG answers).",
    )
    id: str | None = None
    metadata: dict[str, Any] | None = Field(
        default=None, description="Passed through to the verdict untouched."
    )

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: object) -> object:
        """Accept integer ids (common in producers) as their decimal text."""
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value


# --------------------------------------------------------------------------- verdicts


class ClaimVerdict(BaseModel):
    """The judge's decision on one claim of the output."""

    claim: str
    supported: bool
    reason: str = ""
    evidence_quote: str | None = None
    quote_found: bool | None = Field(
        default=None,
        description="Whether evidence_quote really occurs in the evidence (None: no quote).",
    )


class UnsupportedClaim(BaseModel):
    claim: str
    reason: str


class InjectionFinding(BaseModel):
    """Instruction-like text aimed at the judge, found inside the judged text."""

    kind: Literal[
        "override_instructions", "score_request", "fake_verdict", "role_marker", "fence_forgery"
    ]
    location: Literal["output", "evidence", "attribute"] = Field(
        description="output; evidence (documents, turns, question); attribute (a document's "
        "id or source, a tool's name)."
    )
    excerpt: str = Field(
        description="The text around the match; 'base64: ...' when the "
        "instruction was hidden in base64."
    )


class Cut(BaseModel):
    """What truncation did to one text."""

    original_chars: int
    kept_chars: int
    truncated: bool


class Truncation(BaseModel):
    context: Cut
    output: Cut


TruncatedOutputPolicy = Literal["fail", "judge_chunks", "pass"]


class OutputCoverage(BaseModel):
    """Which part of the output a judge saw, and what happened to the rest."""

    policy: TruncatedOutputPolicy = Field(
        description="on_truncated_output: 'judge_chunks' judges the output in consecutive "
        "windows (up to max_output_chunks), 'fail' fails an output longer than one window, "
        "'pass' judges the first window only (complete is then false)."
    )
    total_chars: int = Field(description="Characters of the sanitized output.")
    judged_chars: int = Field(
        description="Characters shown to the judge, over all chunks (a character in two "
        "overlapping windows counts once)."
    )
    chunks: int = Field(
        description="How many windows of the output were shown to a judge "
        "(0: none, the output failed as too long)."
    )
    complete: bool = Field(description="Whether every part of the output was shown to a judge.")


class Usage(BaseModel):
    """Tokens a judge call used. ``input_tokens`` counts every input token; ``cached_tokens``
    (read from the provider's prompt cache) and ``cache_write_tokens`` (written to it) are
    parts of it, billed at their own prices (``guard/data/prices.json``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = Field(
        default=0, description="Input tokens written to the prompt cache (Anthropic)."
    )
    service_tier: Literal["default", "flex", "batch", "priority"] | None = Field(
        default=None,
        description="The provider tier that served and billed the call: flex and batch at "
        "batch prices (the price table's delivery_factor), priority at the model's priority "
        "price (list price, logged as unpriced, when the price table has none). None: the "
        "default tier, not reported.",
    )


class TierReading(BaseModel):
    """One tier's reading of the message in a cascade (``judge.tiers``)."""

    name: str
    kind: Literal["llm", "offline", "detector", "specialist"]
    grounded_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = Field(
        default=None,
        description="The tier's probability that the output is grounded; null when it erred.",
    )
    decided: bool = Field(description="Whether this tier's reading is the verdict.")
    error: str | None = Field(
        default=None, description="The error kind when the tier could not judge (it handed on)."
    )
    basis: str | None = Field(
        default=None,
        description="What the reading rests on: the offline rule, or a score bucket (p0.9).",
    )
    bound: Annotated[float, Field(ge=0.0, le=1.0)] | None = Field(
        default=None,
        description="Learning cascade: the lower bound of the basis's agreement with labels.",
    )
    audited: bool = Field(
        default=False,
        description="Learning cascade: the tier could have decided; the message went on to "
        "the last tier to keep measuring.",
    )
    window_cuts: int = Field(
        default=0,
        ge=0,
        description="A detector's inputs cut at its model's window (the text beyond was not read).",
    )


class JudgeInfo(BaseModel):
    provider: str
    model: str
    prompt_version: str
    tier: Literal["llm", "offline", "detector", "specialist", "none"] = Field(
        default="llm", description="The kind of judge that decided (none: no judge was asked)."
    )
    tier_name: str | None = Field(
        default=None, description="The name of the tier that decided, in a cascade of tiers."
    )
    tiers: list[TierReading] = Field(
        default_factory=list,
        description="Every tier consulted, in order, with its reading (empty for one judge).",
    )
    window_cuts: int = Field(
        default=0,
        ge=0,
        description="The deciding detector's inputs cut at its model's window: evidence or "
        "output beyond it was not read (0 for other judges).",
    )
    cached: bool = False
    fallback_reason: str | None = None
    unsure: bool = Field(
        default=False,
        description="The offline tier could not decide: no rule the labelled data vouches "
        "for showed a fault or proved every claim, so the answer passed unflagged (or it could "
        "not be read): route these to review or an LLM. False on every decided verdict.",
    )


class QuoteCheck(BaseModel):
    """Whether the evidence quotes the judge cited really occur in the evidence."""

    quotes: int = 0
    fabricated: int = 0
    trusted: bool = True


class ErrorInfo(BaseModel):
    kind: str
    message: str
    retriable: bool = False


class Verdict(BaseModel):
    """The decision on one request. ``score`` 1.0 means fully grounded."""

    schema_version: str = SCHEMA_VERSION
    request_id: str
    label: Label
    reason: str | None = Field(
        default=None,
        description="Why the verdict is what it is when no judge decided "
        "(empty_output, no_evidence, judge error kind, skipped reason).",
    )
    score: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    raw_score: int | None = None
    threshold: float
    mode: ScoringMode
    hallucinated: bool | None = Field(
        default=None, description="True when not grounded; None when undecided."
    )
    explanation: str = ""
    unsupported_claims: list[UnsupportedClaim] = Field(default_factory=list)
    claims: list[ClaimVerdict] = Field(default_factory=list)
    quote_check: QuoteCheck = Field(default_factory=QuoteCheck)
    injections: list[InjectionFinding] = Field(default_factory=list)
    truncation: Truncation
    coverage: OutputCoverage | None = Field(
        default=None,
        description="Which part of the output was judged (None: no output to "
        "judge). A pass never leaves text unjudged unless on_truncated_output is 'pass'.",
    )
    source: ContextField
    judge: JudgeInfo
    confidence: float | None = Field(
        default=None, description="The offline judge's confidence in [0, 1]."
    )
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    error: ErrorInfo | None = None
    metadata: dict[str, Any] | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class ReviewLabel(BaseModel):
    """A reviewer's label of a judged message (``topics.labels``, ``groundguard label``,
    ``POST /v1/labels``): it outranks the LLM's verdict in the learning cascade."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = SCHEMA_VERSION
    request_id: str = Field(min_length=1, max_length=512, description="The verdict's request_id.")
    label: Literal["pass", "fail"] = Field(description="Whether the answer was grounded.")
    reviewer: str | None = Field(default=None, max_length=256, description="Who labelled it.")
    note: str | None = Field(default=None, max_length=4096, description="Why, in their words.")
