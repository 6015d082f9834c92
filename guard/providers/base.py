"""The judge interface every provider implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from guard.case import PreparedCase
from guard.decide.assessment import Assessment
from guard.models import Usage

TierKind = Literal["llm", "offline", "detector", "specialist"]


@dataclass(frozen=True)
class TierScore:
    """One tier's reading of a message in a cascade: its grounded probability (None when it
    failed: ``error`` names the error kind) and whether it decided."""

    name: str
    kind: TierKind
    grounded_p: float | None
    decided: bool
    error: str | None = None
    basis: str | None = None  # what the reading rests on: a rule, or a score bucket
    bound: float | None = None  # learning cascade: the basis's lower bound of agreement
    audited: bool = False  # learning cascade: it could decide, and was sent on to measure it
    window_cuts: int = 0  # a detector's inputs cut at its model's window


@dataclass(frozen=True)
class JudgeOutcome:
    """What a judge returns: its assessment, and what the call cost.

    ``confidence`` is set by judges that know it (the offline judge); ``tier`` says which kind
    of judge decided. ``grounded_p`` is the judge's probability (or normalised score) that the
    output is grounded, in [0, 1]: what a tier's ``pass_at``/``fail_at`` bounds compare; judges
    that leave it None are read through their assessment's score. ``tier_name`` and
    ``tier_scores`` are set by the cascade: the tier that decided, and every tier consulted.
    """

    assessment: Assessment
    provider: str
    model: str
    usage: Usage = field(default_factory=Usage)
    tier: TierKind = "llm"
    confidence: float | None = None
    rate_limit: dict[str, str] = field(default_factory=dict)  # provider's rate-limit headers
    cached: bool = False
    fallback_reason: str | None = None
    unsure: bool = False  # the offline judge could not decide (an undecided pass)
    grounded_p: float | None = None
    basis: str | None = None  # the rule that decided (offline), for the learning cascade
    window_cuts: int = 0  # a detector's inputs cut at its model's window (text not read)
    tier_name: str | None = None
    tier_scores: tuple[TierScore, ...] = ()


class Judge(Protocol):
    """Judges one prepared case. Raises :class:`guard.errors.JudgeError` when it cannot."""

    provider: str
    model: str

    async def assess(self, case: PreparedCase) -> JudgeOutcome: ...

    async def aclose(self) -> None: ...
