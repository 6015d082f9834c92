"""What every specialist format does: turn a case into chat calls, and read the replies into a
grounded probability with claims.

The document a specialist reads is the case's evidence passages, joined by blank lines: the
documents, or a conversation's user turns and tool results. Earlier assistant and system turns,
which the LLM judge's prompt shows labelled *not evidence*, are left out, since these models
read everything in their document as evidence; so are the producer-given labels (ids,
sources).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from guard.case import PreparedCase
from guard.decide.assessment import ClaimAssessment
from guard.specialist.reply import Reply
from guard.specialist.settings import SpecialistFormat

EXPLANATION_CHARS = 1000  # of a specialist's own words kept in the explanation
CLAIM_CHARS = 500  # of the output kept as one claim's text
REASON_CHARS = 300


@dataclass(frozen=True)
class Call:
    """One chat completion to make: its messages and the body fields it adds (logprobs, the
    chat template's arguments). ``claim`` is the part of the output it checks."""

    messages: tuple[Mapping[str, str], ...]
    claim: str
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """What a format read from its replies. ``confidence`` is the model's own probability of
    its decision (None when the server sent no logprobs)."""

    grounded_p: float
    confidence: float | None
    explanation: str
    claims: tuple[ClaimAssessment, ...] = ()


class Format(Protocol):
    name: SpecialistFormat

    def calls(self, case: PreparedCase) -> list[Call]: ...

    def read(self, calls: Sequence[Call], replies: Sequence[Reply]) -> Reading: ...


def document_text(case: PreparedCase) -> str:
    """The evidence a specialist reads: the passages' texts (see the module docstring)."""
    if not case.passages:
        return case.evidence
    return "\n\n".join(p.text for p in case.passages)


def clipped(text: str, limit: int) -> str:
    """``text`` without surrounding space, cut to ``limit`` characters (an ellipsis marks a
    cut)."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def unsupported(claim: str, reason: str) -> ClaimAssessment:
    return ClaimAssessment(
        claim=clipped(claim, CLAIM_CHARS),
        evidence_quote=None,
        supported=False,
        reason=clipped(reason, REASON_CHARS),
    )


def supported(claim: str) -> ClaimAssessment:
    return ClaimAssessment(
        claim=clipped(claim, CLAIM_CHARS), evidence_quote=None, supported=True, reason=""
    )


def decision_confidence(grounded_p: float) -> float:
    """The model's own probability of the side of 0.5 that ``grounded_p`` is on."""
    return max(grounded_p, 1.0 - grounded_p)


def logprob_fields(use_logprobs: bool, top: int) -> dict[str, Any]:
    """The body fields asking for token logprobs (none when ``use_logprobs`` is off)."""
    return {"logprobs": True, "top_logprobs": top} if use_logprobs else {}
