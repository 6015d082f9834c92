"""The kind of detail a question asks for (guard.offline.asked): a year or date asked and none
given fails as ``kind_unanswered``; an age other than the evidence's, or a region where a
city is asked, fails as ``kind_mismatch``; an answer with a year, a number word, a refusal, a
negated answer, a "when" question and another language are left alone."""

from __future__ import annotations

from guard.offline import asked
from tests.unit.test_offline_relations import decide, failed_by, index

COMPOSER = (
    "The main theme of the series was rearranged in 2004 by Ines Falk. Ines Falk (born 12 "
    "March 1961) is an Austrian composer and conductor."
)
DIVER = "Lea Moreau is a French diver. She won the 2011 European title at the age of 16."


class TestKindUnanswered:
    def test_a_year_asked_and_none_given_fails(self) -> None:
        decision = decide(
            "Ines Falk rearranged the theme.",
            COMPOSER,
            "In what year was the composer who rearranged the theme born?",
        )
        assert decision.label == "fail"
        assert decision.basis == "fail:kind_mismatch"  # the rule it is a case of
        failed = next(r for r in decision.results if r.basis == "kind_unanswered")
        assert "2004" in failed.reason or "1961" in failed.reason

    def test_a_year_given_is_an_answer(self) -> None:
        decision = decide("She was born in 1961.", COMPOSER, "In what year was the composer born?")
        assert "kind_unanswered" not in failed_by(decision)

    def test_a_date_in_words_is_an_answer(self) -> None:
        decision = decide(
            "Ines Falk was born in the early sixties, in March.",
            COMPOSER,
            "What is the birth date of Ines Falk?",
        )
        assert "kind_unanswered" not in failed_by(decision)

    def test_a_when_question_answered_without_a_date_is_left_alone(self) -> None:
        context = "The pharmacy opens at 9:00 on weekdays and is closed on Sundays."
        decision = decide(
            "It's closed on Sundays.", context, "When does the pharmacy open on Sunday?"
        )
        assert decision.label != "fail"

    def test_a_refusal_is_left_alone(self) -> None:
        decision = decide(
            "The documents don't say when she was born.",
            "Ines Falk is an Austrian composer. She studied in Graz in 1980.",
            "What year was Ines Falk born?",
        )
        assert decision.label != "fail"


class TestKindMismatch:
    def test_an_age_other_than_the_evidence_states_fails(self) -> None:
        question = "At what age did Lea Moreau win the European title?"
        assert decide("Lea Moreau was 14.", DIVER, question).label == "fail"
        found = asked.kind_failure("She was 14.", question, index(DIVER))
        assert found is not None
        assert found[0] == "kind_mismatch"
        assert "age of 16" in found[1]

    def test_the_age_the_evidence_states_passes(self) -> None:
        assert asked.kind_failure("She was 16.", "How old was Lea Moreau?", index(DIVER)) is None

    def test_a_region_given_for_a_city_fails(self) -> None:
        context = "The Halle Gallery is a museum in Leipzig, Germany, opened in 1901."
        found = asked.kind_failure(
            "The Halle Gallery is located in Germany.",
            "What city is the Halle Gallery in?",
            index(context),
        )
        assert found is not None
        assert found[0] == "kind_mismatch"
        assert "Leipzig" in found[1]

    def test_the_city_with_its_region_passes(self) -> None:
        context = "The Halle Gallery is a museum in Leipzig, Germany, opened in 1901."
        question = "What city is the Halle Gallery in?"
        assert asked.kind_failure("Leipzig, Germany.", question, index(context)) is None

    def test_a_french_answer_is_not_read(self) -> None:
        decision = decide(
            "Lea Moreau a remporté le titre à quatorze ans.",
            DIVER,
            "At what age did Lea Moreau win the European title?",
        )
        assert "kind_mismatch" not in failed_by(decision)
