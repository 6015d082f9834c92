"""An assessment in the case's scoring mode from a tier's grounded probability.

Detectors and specialist models give a probability (or a yes/no), not a 1-5 rating; the engine
scores assessments. ``scale5``: raw = 1 + round(4p), so the normalised score (raw - 1) / 4 is p
to the nearest quarter; ``binary``: grounded when p >= 0.5 and every claim is supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, cast

from guard.decide.assessment import (
    Assessment,
    BinaryAssessment,
    ClaimAssessment,
    Scale5Assessment,
)
from guard.models import ScoringMode


def assessment_from_p(
    grounded_p: float,
    mode: ScoringMode,
    claims: Sequence[ClaimAssessment],
    explanation: str,
) -> Assessment:
    """The assessment that says ``grounded_p`` in ``mode``, with ``claims`` and ``explanation``."""
    p = min(1.0, max(0.0, grounded_p))
    if mode is ScoringMode.BINARY:
        grounded = p >= 0.5 and all(c.supported for c in claims)
        return BinaryAssessment(explanation=explanation, claims=list(claims), grounded=grounded)
    raw = cast(Literal[1, 2, 3, 4, 5], 1 + round(4 * p))
    return Scale5Assessment(explanation=explanation, claims=list(claims), score=raw)
