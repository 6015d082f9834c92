"""Short factual answers as RAG assistants give them: an amount taken from a clause the
question fits less well than a rival's (guard/offline/rivals.py), a unit spelled out
(checks.py), a few words in the question's language (judge.py), a frequency ("every 8 hours")
that is no universal (relations.py)."""

from __future__ import annotations

from guard.offline import rivals
from tests.unit.test_offline_relations import decide, index

GYM = (
    "Membership. The off-peak pass costs £19 per month, weekdays before 4 pm. "
    "The anytime pass costs £32 per month; towels are £2 extra."
)


class TestMisplacedAmount:
    def test_the_rival_clause_s_amount_put_in_the_answer_fails_and_names_the_clause(
        self,
    ) -> None:
        decision = decide("£19 per month.", GYM, "How much is the anytime pass?")
        assert decision.label == "fail"
        assert decision.basis == "fail:amount_misplaced"
        assert "anytime pass costs £32" in decision.results[0].reason

    def test_the_amount_beside_the_question_s_words_is_not_misplaced(self) -> None:
        decision = decide("£32 a month.", GYM, "How much is the anytime pass?")
        assert decision.basis != "fail:amount_misplaced"

    def test_a_rival_time_in_the_same_sentence_is_read_by_clause(self) -> None:
        context = "The support act starts at 18:30, the main act starts at 19:30. Bar until 23:00."
        failed = decide("At 6:30 pm.", context, "When does the main act start?")
        right = decide("At 7.30 pm.", context, "When does the main act start?")
        assert failed.basis == "fail:amount_misplaced"
        assert right.basis != "fail:amount_misplaced"

    def test_an_amount_of_another_kind_is_no_rival(self) -> None:
        context = "Each room sleeps 4 guests. The family room costs €140 per night."
        found = rivals.misplaced(
            "4 guests", index(context), "How many guests fit in a family room?"
        )
        assert found is None

    def test_an_amount_the_question_states_is_its_premise_not_a_rival(self) -> None:
        context = "The 1990 album Seaward sold well. Its singer, Mara Olin, was born in 1961."
        found = rivals.misplaced(
            "1961", index(context), "The singer of the 1990 album Seaward was born when?"
        )
        assert found is None

    def test_an_answer_clause_sharing_no_question_word_is_left_undecided(self) -> None:
        context = (
            "Tom Reyes (1950-2011) was a painter. The Reyes prize was founded in 1990 in Porto."
        )
        found = rivals.misplaced(
            "1950", index(context), "The founder of the Porto prize was born in?"
        )
        assert found is not None
        assert not found.shown


class TestParallelClauses:
    def test_a_rival_clause_of_the_answer_s_own_sentence_shows_the_swap(self) -> None:
        context = "Late fees. Standard loans: 20p per day, DVDs: 50p per day."
        decision = decide("20p a day.", context, "What is the late fee for DVDs?")
        assert decision.basis == "fail:amount_misplaced"

    def test_the_right_clause_of_the_same_sentence_is_not_misplaced(self) -> None:
        context = "Late fees. Standard loans: 20p per day, DVDs: 50p per day."
        decision = decide("50p a day.", context, "What is the late fee for DVDs?")
        assert decision.basis != "fail:amount_misplaced"


class TestRestatedUnit:
    def test_a_unit_spelled_out_is_not_an_absent_answer(self) -> None:
        context = "Uploads. Each video may be up to 2 GB. Thumbnails are limited to 5 MB."
        decision = decide("2 gigabytes per video.", context, "How large can a video be?")
        assert decision.label != "fail"

    def test_words_no_document_has_beside_a_stated_amount_still_fail(self) -> None:
        context = "Uploads. Each video may be up to 2 GB. Thumbnails are limited to 5 MB."
        decision = decide("2 GB per thumbnail cache drive.", context, "How large can a video be?")
        assert decision.label == "fail"


class TestLanguageOfAShortAnswer:
    def test_a_few_german_words_answering_a_german_question_are_not_read_as_names(
        self,
    ) -> None:
        context = "Bonus. Mitarbeitende erhalten 500 Euro Prämie pro Geschäftsjahr."
        decision = decide("500 Euro pro Jahr.", context, "Wie hoch ist die Prämie?")
        assert decision.label != "fail"

    def test_an_english_short_answer_to_an_english_question_is_still_read(self) -> None:
        context = "Contacts. Billing questions go to Sofia Marquez."
        decision = decide("Sofia Martens.", context, "Who handles billing questions?")
        assert decision.label == "fail"


class TestFrequencyIsNoUniversal:
    def test_every_few_hours_restating_a_dose_is_not_a_quantifier_shift(self) -> None:
        context = "Dosage. Take one tablet twice a day, about 12 hours apart, with food."
        decision = decide("Twice a day, every 12 hours, with food.", context, "How do I take it?")
        assert decision.basis != "fail:quantifier"

    def test_every_before_a_noun_is_still_a_universal(self) -> None:
        context = "Refunds. Some orders over £40 qualify for a free return label."
        decision = decide("Every order gets a free return label.", context)
        assert decision.label == "fail"
