"""The verdict cache's wire format in Redis: what one replica stored, another reads back as the
same outcome; anything else in the key (another version's format, junk) is a miss, never an
error."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from guard.budgets.shared import decode_outcome, encode_outcome
from guard.decide.assessment import BinaryAssessment, ClaimAssessment, Scale5Assessment
from guard.providers.base import JudgeOutcome

claims = st.lists(
    st.builds(
        ClaimAssessment,
        claim=st.text(max_size=40),
        reason=st.text(max_size=40),
        evidence_quote=st.none() | st.text(max_size=40),
        supported=st.booleans(),
    ),
    max_size=3,
)
assessments = st.one_of(
    st.builds(
        Scale5Assessment,
        explanation=st.text(max_size=80),
        claims=claims,
        score=st.sampled_from([1, 2, 3, 4, 5]),
    ),
    st.builds(
        BinaryAssessment, explanation=st.text(max_size=80), claims=claims, grounded=st.booleans()
    ),
)


@given(
    assessment=assessments,
    tier=st.sampled_from(["llm", "offline"]),
    confidence=st.none() | st.floats(0, 1),
    unsure=st.booleans(),
)
def test_a_stored_outcome_reads_back_the_same(
    assessment: Scale5Assessment | BinaryAssessment,
    tier: str,
    confidence: float | None,
    unsure: bool,
) -> None:
    outcome = JudgeOutcome(
        assessment=assessment,
        provider="openai",
        model="gpt-4o-mini",
        tier=tier,  # type: ignore[arg-type]
        confidence=confidence,
        unsure=unsure,
    )
    again = decode_outcome(encode_outcome(outcome).decode())
    assert again is not None
    assert type(again.assessment) is type(assessment)
    assert again.assessment == assessment
    assert (again.tier, again.confidence, again.unsure) == (tier, confidence, unsure)


@given(st.text(max_size=200) | st.from_regex(r'\{"kind": "(scale5|binary)".*', fullmatch=True))
def test_anything_else_in_the_key_is_a_miss_not_an_error(text: str) -> None:
    found = decode_outcome(text)
    if found is not None:
        assert isinstance(found.assessment, Scale5Assessment | BinaryAssessment)
        assert found.confidence is None or isinstance(found.confidence, float)


def test_a_confidence_that_is_not_a_number_is_a_miss() -> None:
    stored = encode_outcome(
        JudgeOutcome(
            assessment=BinaryAssessment(explanation="", claims=[], grounded=True),
            provider="openai",
            model="m",
        )
    ).decode()
    assert decode_outcome(stored.replace('"confidence":null', '"confidence":"high"')) is None
