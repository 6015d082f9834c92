"""Turning a judge's assessment into a score and a label.

* ``scale5``: raw 1-5, score = (raw - 1) / 4, pass iff score >= threshold. A 5 (fully
  grounded) that lists an unsupported claim contradicts itself and counts as 4.
* ``binary``: raw 1 (grounded) or 0, score 1.0 or 0.0, pass iff grounded. A ``grounded: true``
  that lists an unsupported claim contradicts itself and fails closed.

``hallucinated`` is true exactly when the label is ``fail``. An assessment of the wrong shape for
the mode is :class:`~guard.errors.MalformedJudgeOutput`: the judge did not answer the question
asked.
"""

from __future__ import annotations

from dataclasses import dataclass

from guard.decide.assessment import Assessment, BinaryAssessment, Scale5Assessment
from guard.errors import MalformedJudgeOutput
from guard.models import Label, ScoringMode


@dataclass(frozen=True)
class Scored:
    score: float
    raw: int
    label: Label
    hallucinated: bool


def _scored(score: float, raw: int, passed: bool) -> Scored:
    label = Label.PASS if passed else Label.FAIL
    return Scored(score=score, raw=raw, label=label, hallucinated=not passed)


FULLY_GROUNDED = 5


def _wrong_shape(mode: str, assessment: object) -> str:
    return f"expected a {mode} assessment, got {type(assessment).__name__}"


def score(assessment: Assessment, mode: ScoringMode, threshold: float) -> Scored:
    """The score, raw score, label and hallucination flag of ``assessment`` in ``mode``."""
    if mode is ScoringMode.SCALE5:
        if not isinstance(assessment, Scale5Assessment):
            raise MalformedJudgeOutput(_wrong_shape("scale5", assessment))
        raw: int = assessment.score
        if raw == FULLY_GROUNDED and not all(c.supported for c in assessment.claims):
            raw = FULLY_GROUNDED - 1  # "fully grounded" yet a claim unsupported: self-contradiction
        value = (raw - 1) / 4
        return _scored(value, raw, value >= threshold)
    if not isinstance(assessment, BinaryAssessment):
        raise MalformedJudgeOutput(_wrong_shape("binary", assessment))
    grounded = assessment.grounded and all(c.supported for c in assessment.claims)
    return _scored(1.0 if grounded else 0.0, 1 if grounded else 0, grounded)
