"""The judge interface every provider implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from guard.case import PreparedCase
from guard.decide.assessment import Assessment
from guard.models import Usage


@dataclass(frozen=True)
class JudgeOutcome:
    """What a judge returns: its assessment, and what the call cost.

    ``confidence`` is set by judges that know it (the offline judge); ``tier`` says which kind
    of judge decided.
    """

    assessment: Assessment
    provider: str
    model: str
    usage: Usage = field(default_factory=Usage)
    tier: Literal["llm", "offline"] = "llm"
    confidence: float | None = None
    rate_limit: dict[str, str] = field(default_factory=dict)  # provider's rate-limit headers
    cached: bool = False
    fallback_reason: str | None = None
    unsure: bool = False  # the offline judge decided below its cascade_confidence


class Judge(Protocol):
    """Judges one prepared case. Raises :class:`guard.errors.JudgeError` when it cannot."""

    provider: str
    model: str

    async def assess(self, case: PreparedCase) -> JudgeOutcome: ...

    async def aclose(self) -> None: ...
