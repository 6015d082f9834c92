"""An in-process judge for tests: scripted assessments, optional latency, counts its calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from guard.case import PreparedCase
from guard.decide.assessment import Assessment, BinaryAssessment, Scale5Assessment
from guard.errors import JudgeError
from guard.models import ScoringMode, Usage
from guard.providers.base import JudgeOutcome

Script = Callable[[PreparedCase], Assessment | JudgeError]


def grounded_if_in_evidence(case: PreparedCase) -> Assessment:
    """Default script: grounded when the whole output occurs in the evidence (case-insensitive)."""
    ok = case.output.strip().lower().rstrip(".") in case.evidence.lower()
    if case.mode is ScoringMode.BINARY:
        return BinaryAssessment(explanation="fake judge: substring check", claims=[], grounded=ok)
    return Scale5Assessment(
        explanation="fake judge: substring check", claims=[], score=5 if ok else 1
    )


class FakeJudge:
    """Implements :class:`guard.providers.base.Judge` without any network.

    ``script`` is a function of the case, or a sequence of assessments returned in turn (the last
    one repeats). An item that is a :class:`JudgeError` is raised instead of returned.
    ``peak_in_flight`` reports the most concurrent calls seen.
    """

    provider = "fake"

    def __init__(
        self,
        script: Script | Sequence[Assessment | JudgeError] | None = None,
        *,
        latency_s: float = 0.0,
        model: str = "fake-judge",
        usage: Usage | None = None,
    ) -> None:
        self.model = model
        self._script = script if script is not None else grounded_if_in_evidence
        self._latency_s = latency_s
        self._usage = usage or Usage(input_tokens=100, output_tokens=20)
        self.calls = 0
        self.in_flight = 0
        self.peak_in_flight = 0

    def _next(self, case: PreparedCase) -> Assessment | JudgeError:
        if callable(self._script):
            return self._script(case)
        items = list(self._script)
        return items[min(self.calls - 1, len(items) - 1)]

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        self.calls += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self._latency_s:
                await asyncio.sleep(self._latency_s)
            item = self._next(case)
        finally:
            self.in_flight -= 1
        if isinstance(item, JudgeError):
            raise item
        return JudgeOutcome(
            assessment=item, provider=self.provider, model=self.model, usage=self._usage
        )

    async def aclose(self) -> None:
        return None
