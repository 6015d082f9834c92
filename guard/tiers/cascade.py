"""The cascade: an ordered list of tiers, each deciding what it is sure of.

A tier before the last decides when its reading is a pass with a grounded probability at or
above its ``pass_at``, or a fail at or below its ``fail_at``; otherwise it hands the message
on. A tier that errs (a detector server down, a reply it cannot parse) hands on too, and says
so in the outcome's ``tier_scores``: a failing screen never passes anything. The last tier
always decides, and its errors are the message's (an error verdict). The returned outcome
names the tier that decided (``tier_name``, and its kind in ``tier``) and carries every
consulted tier's reading; :attr:`CascadeJudge.decided` counts decisions by tier name.

With a :class:`~guard.learning.learner.Learner` (``judge.cascade.learn``) the bounds are not
used: a screen decides while the basis of its reading is trusted (:mod:`guard.learning`), an
audited share goes on to the last tier anyway, and the last tier's label teaches the learner
every reading it judged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from guard.case import PreparedCase
from guard.decide.scoring import score
from guard.errors import ConfigError, JudgeError
from guard.learning.learner import Learner, bucket
from guard.learning.ledger import Key
from guard.models import Label
from guard.providers.base import Judge, JudgeOutcome, TierKind, TierScore


@dataclass(frozen=True)
class Tier:
    """One built tier: its judge, its name and kind, and its decision bounds."""

    name: str
    kind: TierKind
    judge: Judge
    pass_at: float = 1.0
    fail_at: float = 0.0

    def __post_init__(self) -> None:
        for field, value in (("pass_at", self.pass_at), ("fail_at", self.fail_at)):
            if not 0.0 <= value <= 1.0:
                raise ConfigError(
                    f"judge.tiers.{self.name}.{field}",
                    f"{value} is outside [0, 1]",
                    "use a probability between 0 and 1, such as 0.9",
                )


def grounded_p(outcome: JudgeOutcome, case: PreparedCase) -> tuple[float, bool]:
    """The tier's grounded probability and whether its reading passes: the judge's own
    ``grounded_p`` when it gives one, else its assessment's normalised score."""
    scored = score(outcome.assessment, case.mode, case.threshold)
    p = outcome.grounded_p if outcome.grounded_p is not None else scored.score
    return p, scored.label is Label.PASS


class CascadeJudge:
    """Implements :class:`guard.providers.base.Judge` by asking ``screens`` in order and
    ``last`` for what none of them decided."""

    provider = "cascade"

    def __init__(
        self, screens: Sequence[Tier], last: Tier, *, learner: Learner | None = None
    ) -> None:
        self.screens = tuple(screens)
        self.last = last
        self.learner = learner
        self.model = "+".join(t.judge.model for t in (*self.screens, last))
        self.decided: Counter[str] = Counter()

    @classmethod
    def two_tier(cls, offline: Judge, llm: Judge, confidence: float) -> CascadeJudge:
        """The classic cascade: ``offline`` stands at ``confidence`` or above, else ``llm``."""
        if not 0.0 <= confidence <= 1.0:
            raise ConfigError(
                "cascade_confidence",
                f"{confidence} is outside [0, 1]",
                "use a confidence between 0 and 1, such as 0.8",
            )
        screen = Tier("offline", "offline", offline, pass_at=confidence, fail_at=1.0 - confidence)
        return cls([screen], Tier("llm", "llm", llm))

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        readings: list[TierScore] = []
        keys: list[Key] = []  # the learning cascade's keys of the readings
        first_confidence: float | None = None
        for tier in self.screens:
            try:
                outcome = await tier.judge.assess(case)
            except JudgeError as exc:
                readings.append(TierScore(tier.name, tier.kind, None, False, error=exc.kind))
                continue
            if first_confidence is None:
                first_confidence = outcome.confidence
            p, passes = grounded_p(outcome, case)
            reading, audited = self._read(tier, outcome, case, p, passes, keys)
            readings.append(reading)
            if reading.decided:
                if self.learner is not None:
                    self.learner.observe(case.request_id, keys, None)
                self.decided[tier.name] += 1
                return replace(
                    outcome,
                    tier=tier.kind,
                    tier_name=tier.name,
                    grounded_p=p,
                    tier_scores=tuple(readings),
                )
            if audited:
                break  # it could have decided: the last tier judges, to keep measuring
        outcome = await self.last.judge.assess(case)
        self.decided[self.last.name] += 1
        p, passes = grounded_p(outcome, case)
        if self.learner is not None:
            self.learner.observe(case.request_id, keys, "pass" if passes else "fail")
        last = TierScore(
            self.last.name,
            self.last.kind,
            p,
            True,
            basis=outcome.basis,
            window_cuts=outcome.window_cuts,
        )
        readings.append(last)
        return replace(
            outcome,
            tier=self.last.kind,
            tier_name=self.last.name,
            grounded_p=p,
            tier_scores=tuple(readings),
            confidence=outcome.confidence if outcome.confidence is not None else first_confidence,
        )

    def _read(
        self,
        tier: Tier,
        outcome: JudgeOutcome,
        case: PreparedCase,
        p: float,
        passes: bool,
        keys: list[Key],
    ) -> tuple[TierScore, bool]:
        """The tier's reading, whether it decides, and whether it was audited instead."""
        if self.learner is None:
            decided = p >= tier.pass_at if passes else p <= tier.fail_at
            reading = TierScore(
                tier.name,
                tier.kind,
                p,
                decided,
                basis=outcome.basis,
                window_cuts=outcome.window_cuts,
            )
            return reading, False
        basis = outcome.basis or bucket(p)
        key = Key(tier.name, basis, "pass" if passes else "fail")
        keys.append(key)
        decidable = self.learner.trusted(key)
        audited = decidable and self.learner.audit(case.request_id)
        bound = round(self.learner.bound(key), 4)
        reading = TierScore(
            tier.name,
            tier.kind,
            p,
            decidable and not audited,
            basis=basis,
            bound=bound,
            audited=audited,
            window_cuts=outcome.window_cuts,
        )
        return reading, audited

    async def aclose(self) -> None:
        try:
            for tier in self.screens:
                await tier.judge.aclose()
        finally:
            await self.last.judge.aclose()
