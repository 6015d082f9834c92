"""Scoring: scale5 maps raw 1-5 onto [0, 1]; binary is 1/0; the wrong shape is malformed."""

from __future__ import annotations

import pytest

from guard.decide.assessment import BinaryAssessment, ClaimAssessment, Scale5Assessment
from guard.decide.scoring import score
from guard.errors import MalformedJudgeOutput
from guard.models import Label, ScoringMode


def scale5(raw: int) -> Scale5Assessment:
    return Scale5Assessment(explanation="e", claims=[], score=raw)  # type: ignore[arg-type]


def binary(grounded: bool, *supported: bool) -> BinaryAssessment:
    claims = [
        ClaimAssessment(claim="c", reason="r", evidence_quote=None, supported=s) for s in supported
    ]
    return BinaryAssessment(explanation="e", claims=claims, grounded=grounded)


@pytest.mark.parametrize(("raw", "expected"), [(1, 0.0), (2, 0.25), (3, 0.5), (4, 0.75), (5, 1.0)])
def test_scale5_score_is_raw_minus_one_over_four(raw: int, expected: float) -> None:
    scored = score(scale5(raw), ScoringMode.SCALE5, 0.5)
    assert scored.score == expected
    assert scored.raw == raw


@pytest.mark.parametrize(
    ("raw", "label"), [(1, Label.FAIL), (2, Label.FAIL), (3, Label.PASS), (5, Label.PASS)]
)
def test_scale5_passes_at_or_above_the_threshold(raw: int, label: Label) -> None:
    scored = score(scale5(raw), ScoringMode.SCALE5, 0.5)
    assert scored.label is label
    assert scored.hallucinated is (label is Label.FAIL)


def test_a_stricter_threshold_fails_a_middling_score() -> None:
    assert score(scale5(4), ScoringMode.SCALE5, 0.8).label is Label.FAIL
    assert score(scale5(5), ScoringMode.SCALE5, 1.0).label is Label.PASS


def test_binary_grounded_is_one_and_passes() -> None:
    scored = score(binary(True, True), ScoringMode.BINARY, 0.5)
    assert (scored.score, scored.raw, scored.label, scored.hallucinated) == (
        1.0,
        1,
        Label.PASS,
        False,
    )


def test_binary_not_grounded_is_zero_and_fails() -> None:
    scored = score(binary(False), ScoringMode.BINARY, 0.5)
    assert (scored.score, scored.raw, scored.label, scored.hallucinated) == (
        0.0,
        0,
        Label.FAIL,
        True,
    )


def test_binary_grounded_with_an_unsupported_claim_fails_closed() -> None:
    scored = score(binary(True, True, False), ScoringMode.BINARY, 0.5)
    assert scored.label is Label.FAIL
    assert scored.hallucinated


def test_binary_not_grounded_fails_even_at_threshold_zero() -> None:
    assert score(binary(False), ScoringMode.BINARY, 0.0).label is Label.FAIL


def test_a_scale5_assessment_in_binary_mode_is_malformed() -> None:
    with pytest.raises(MalformedJudgeOutput, match="binary"):
        score(scale5(5), ScoringMode.BINARY, 0.5)


def test_a_binary_assessment_in_scale5_mode_is_malformed() -> None:
    with pytest.raises(MalformedJudgeOutput, match="scale5"):
        score(binary(True), ScoringMode.SCALE5, 0.5)


def test_full_marks_with_an_unsupported_claim_are_capped_below_full() -> None:
    """A judge that says 5 (fully grounded) but lists an unsupported claim contradicts itself:
    the raw score is taken as 4, so the verdict never claims full grounding."""
    from guard.decide.assessment import ClaimAssessment, Scale5Assessment
    from guard.decide.scoring import score
    from guard.models import ScoringMode

    claim = ClaimAssessment(
        claim="x", reason="not in evidence", evidence_quote=None, supported=False
    )
    scored = score(
        Scale5Assessment(explanation="e", claims=[claim], score=5), ScoringMode.SCALE5, 0.9
    )
    assert (scored.raw, scored.score, scored.label.value) == (4, 0.75, "fail")
