"""Shared helpers for the budget tests: prepared cases, a flat price, a clock-stamped fake."""

from __future__ import annotations

from collections.abc import Callable

from guard.budgets import VirtualClock
from guard.case import Passage, PreparedCase
from guard.decide.assessment import Assessment, Scale5Assessment
from guard.errors import JudgeError
from guard.models import ContextField, Cut, ScoringMode, Truncation, Usage
from guard.testing import FakeJudge

EVIDENCE = "[1] Our return policy allows returns within 30 days."
GROUNDED = Scale5Assessment(explanation="supported", claims=[], score=5)


def case(
    n: int | str, *, output: str | None = None, key: str | None = None, evidence: str = EVIDENCE
) -> PreparedCase:
    text = output if output is not None else f"Answer number {n}."
    cut = Cut(original_chars=len(text), kept_chars=len(text), truncated=False)
    return PreparedCase(
        request_id=f"req-{n}",
        output=text,
        evidence=evidence,
        passages=(Passage(label="[1]", text=evidence),),
        source=ContextField.CONTEXT,
        mode=ScoringMode.SCALE5,
        threshold=0.5,
        question=None,
        truncation=Truncation(context=cut, output=cut),
        injections=(),
        message_key=key,
    )


def flat_price(usd_per_call: float) -> Callable[[str, Usage], float]:
    """Every call costs the same, whatever its usage (zero usage costs nothing)."""

    def price(model: str, usage: Usage) -> float:
        del model
        return usd_per_call if (usage.input_tokens or usage.output_tokens) else 0.0

    return price


class StampedJudge(FakeJudge):
    """A FakeJudge that records the virtual time of each call; ``fail(now)`` may raise."""

    def __init__(
        self,
        clock: VirtualClock,
        fail: Callable[[float], JudgeError | None] | None = None,
        usage: Usage | None = None,
        model: str = "fake-judge",
    ) -> None:
        super().__init__(self._answer, usage=usage, model=model)
        self.clock = clock
        self._fail = fail
        self.stamps: list[float] = []

    def _answer(self, case: PreparedCase) -> Assessment | JudgeError:
        del case
        self.stamps.append(self.clock.now())
        error = self._fail(self.clock.now()) if self._fail else None
        return error if error is not None else GROUNDED


def max_in_any_window(
    stamps: list[float], window_s: float, weights: list[int] | None = None
) -> int:
    """The largest total weight of stamps falling in any half-open window of ``window_s``."""
    weights = weights or [1] * len(stamps)
    pairs = sorted(zip(stamps, weights, strict=True))
    best = 0
    for i, (start, _) in enumerate(pairs):
        best = max(best, sum(w for t, w in pairs[i:] if t < start + window_s))
    return best
