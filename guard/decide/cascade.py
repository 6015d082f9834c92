"""The cascade: a cheap offline screen first, an LLM only when the screen is not sure.

The offline judge's outcome stands when its confidence is at least ``confidence``; otherwise
the LLM decides. The returned outcome's ``tier`` says which one did, and the counters
``decided_offline`` / ``decided_llm`` say how often each has.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from guard.case import PreparedCase
from guard.errors import ConfigError
from guard.providers.base import Judge, JudgeOutcome

if TYPE_CHECKING:
    from guard.settings import JudgeSettings


def make_cascade(settings: JudgeSettings, llm: Judge) -> CascadeJudge:
    """The cascade of ``settings``: the offline judge first, ``llm`` when it is unsure. The one
    place a cascade is built, whether ``llm`` is a bare provider judge or a budgeted one."""
    from guard.offline import OfflineJudge

    return CascadeJudge(OfflineJudge(settings), llm, settings.cascade_confidence)


class CascadeJudge:
    """Implements :class:`guard.providers.base.Judge` by routing between two judges."""

    provider = "cascade"

    def __init__(self, offline: Judge, llm: Judge, confidence: float) -> None:
        if not 0.0 <= confidence <= 1.0:
            raise ConfigError(
                "cascade_confidence",
                f"{confidence} is outside [0, 1]",
                "use a confidence between 0 and 1, such as 0.8",
            )
        self.offline = offline
        self.llm = llm
        self.confidence = confidence
        self.model = f"{offline.model}+{llm.model}"
        self.decided_offline = 0
        self.decided_llm = 0

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        screened = await self.offline.assess(case)
        if screened.confidence is not None and screened.confidence >= self.confidence:
            self.decided_offline += 1
            return replace(screened, tier="offline")
        outcome = await self.llm.assess(case)
        self.decided_llm += 1
        return replace(outcome, tier="llm", confidence=screened.confidence)

    async def aclose(self) -> None:
        try:
            await self.offline.aclose()
        finally:
            await self.llm.aclose()
