"""Names and amounts written in another form than the evidence's: the offline judge never
fails them confidently (a translated, accented or abbreviated name is the same name; a
duration in another unit is compared converted, and left undecided when the units do not
convert exactly), while a really different name or amount still fails."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard.offline import entities, numbers
from guard.offline.text import fold, stem
from tests.unit.test_offline_rules import decide, reasons


class TestNamesInAnotherForm:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("Our HQ is in Munich.", "The company's headquarters are in München, Bavaria."),
            ("The headquarters are in Munich.", "Die Firmenzentrale befindet sich in München."),
            ("Maria Gonzalez leads the audit team.", "The audit team is led by María González."),
            ("Contact the CFO for approval.", "Approval comes from the chief financial officer."),
            ("J. Smith signed the contract.", "The contract was signed by John Smith on 3 May."),
            ("Maria's report covers Q3.", "María González wrote the Q3 report."),
            ("Our offices in Vienna and Cologne are closed.", "Die Büros in Wien und Köln."),
            ("The Kündigungsfrist is three months.", "The notice period is three months."),
            ("Der Vertrag endet im März.", "The contract ends in March."),
        ],
    )
    def test_a_name_the_evidence_writes_otherwise_is_never_a_confident_fail(
        self, output: str, context: str
    ) -> None:
        decision = decide(output, context)
        assert decision.label != "fail", reasons(decision)

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("Maria Lopez leads the audit team.", "The audit team is led by María González."),
            ("Our HQ is in Berlin.", "The company's headquarters are in München, Bavaria."),
            ("Contact the CTO for approval.", "Approval comes from the chief financial officer."),
        ],
    )
    def test_a_different_name_still_fails(self, output: str, context: str) -> None:
        decision = decide(output, context)
        assert decision.label == "fail", reasons(decision)

    def test_accents_fold_on_both_sides(self) -> None:
        assert fold("María González, Köln, Straße") == "Maria Gonzalez, Koln, Strasse"
        assert stem("González") == stem("Gonzalez")
        assert stem("München") == stem("Munich")

    @given(st.text(alphabet="aeiouáéíóúäöüñçß ABCÉÖ", max_size=30))
    def test_folding_is_idempotent_and_ascii_only_changes_nothing(self, text: str) -> None:
        assert fold(fold(text)) == fold(text)
        assert (
            fold(text.encode("ascii", "ignore").decode()) == text.encode("ascii", "ignore").decode()
        )

    @pytest.mark.parametrize(
        ("acronym", "evidence", "expected"),
        [
            ("CFO", "ask the chief financial officer", True),
            ("DPO", "the data protection officer decides", True),
            ("VP", "our vice-president of sales", True),
            ("CTO", "ask the chief financial officer", False),
            ("ABCDEFGH", "a b c d e f g h", False),
        ],
    )
    def test_an_acronym_is_found_as_initials_of_evidence_words(
        self, acronym: str, evidence: str, expected: bool
    ) -> None:
        assert entities.initials_in(acronym, evidence) is expected


class TestDurationsInAnotherUnit:
    def test_a_wrong_duration_in_another_unit_fails_and_shows_the_conversion(self) -> None:
        decision = decide("The trial lasts five weeks.", "The trial period is 25 days.")
        assert decision.label == "fail"
        assert "five weeks (= 35 days)" in reasons(decision)
        assert "25 days" in reasons(decision)

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("Processing takes 3 months.", "Processing takes 90 days."),
            ("Delivery takes two weeks.", "Delivery takes 10 business days."),
            ("The warranty lasts 2 years.", "The warranty lasts 24 months."),
            ("The trial lasts five weeks.", "The trial period is 35 days."),
            ("The timeout is half a minute.", "The timeout defaults to 30 seconds."),
            ("Ships in 48 hours.", "Ships within two days."),
        ],
    )
    def test_a_duration_restated_in_other_units_is_not_failed(
        self, output: str, context: str
    ) -> None:
        decision = decide(output, context)
        assert decision.label != "fail", reasons(decision)

    @pytest.mark.parametrize(
        ("claim", "evidence", "expected"),
        [
            ("3 months", "90 days", True),
            ("two weeks", "10 business days", True),
            ("6 months", "90 days", False),
            ("5 weeks", "25 days", False),  # both convert exactly: a plain contradiction
            ("4 weeks", "10 business days", False),
        ],
    )
    def test_inexact_units(self, claim: str, evidence: str, expected: bool) -> None:
        a, b = numbers.extract(claim)[0], numbers.extract(evidence)[0]
        assert numbers.inexact(a, b) is expected

    @given(st.integers(min_value=1, max_value=52))
    def test_weeks_shown_in_days(self, weeks: int) -> None:
        claim = numbers.extract(f"{weeks} weeks")[0]
        evidence = numbers.extract("3 days")[0]
        assert numbers.converted(claim, evidence) == f"{weeks} weeks (= {7 * weeks} days)"

    @pytest.mark.parametrize(
        ("text", "value"),
        [("cuarenta días", 40.0), ("vierzig Tage", 40.0), ("quarante jours", 40.0)],
    )
    def test_spelled_out_tens_in_spanish_german_french(self, text: str, value: float) -> None:
        (quantity,) = numbers.extract(text)
        assert (quantity.kind, quantity.value) == ("duration", value)


class TestOrderingsInTime:
    @pytest.mark.parametrize(
        ("output", "context", "question"),
        [
            (
                "The salary review comes before the performance review.",
                "Annual cycle. Performance reviews are completed in March. Salary reviews "
                "take place in May and take the March performance rating into account.",
                None,
            ),
            (
                "Pablo Trapero was born first.",
                "Pablo Trapero (born 4 October 1971) is an Argentine film producer. Aleksander "
                "Ford (born 24 November 1908 in Kiev) was a Polish film director.",
                "Who was born first, Pablo Trapero or Aleksander Ford?",
            ),
            (
                "Lee Ranaldo is younger than Mary Ramsey.",
                "Lee Ranaldo (born February 3, 1956) is a guitarist. Mary Ramsey (born "
                "24 December 1963) is a singer.",
                None,
            ),
        ],
    )
    def test_an_ordering_the_dates_reverse_fails_and_shows_both_dates(
        self, output: str, context: str, question: str | None
    ) -> None:
        decision = decide(output, context, question)
        assert decision.label == "fail"
        assert decision.basis == "fail:order_reversed"

    @pytest.mark.parametrize(
        ("output", "context", "question"),
        [
            (
                "The performance review comes before the salary review.",
                "Performance reviews are completed in March. Salary reviews take place in May.",
                None,
            ),
            (
                "Aleksander Ford was born first.",
                "Pablo Trapero (born 4 October 1971) is an Argentine film producer. Aleksander "
                "Ford (born 24 November 1908 in Kiev) was a Polish film director.",
                "Who was born first, Pablo Trapero or Aleksander Ford?",
            ),
            (  # one side undated: not judged
                "The audit comes before the review.",
                "The audit is in March. The review follows the audit.",
                None,
            ),
        ],
    )
    def test_an_ordering_that_holds_or_cannot_be_dated_is_not_failed(
        self, output: str, context: str, question: str | None
    ) -> None:
        assert decide(output, context, question).basis != "fail:order_reversed"


class TestNegationAdded:
    def test_a_negated_claim_whose_words_one_plain_sentence_states_fails(self) -> None:
        decision = decide(
            "Warren Bryant was not a CEO.",
            "Warren Bryant was the CEO of Longs Drugs Store Corporation out of California.",
        )
        assert decision.label == "fail"
        assert "negation flipped" in reasons(decision)

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("The deposit isn't refundable.", "The deposit is non-refundable once paid."),
            (
                "From 1 January every parent gets 16 weeks of fully paid leave, not just 2 weeks "
                "for the secondary caregiver as before.",
                "Previously, the secondary caregiver was entitled to 2 weeks of paid leave. From "
                "1 January, all parents are entitled to 16 weeks of fully paid leave.",
            ),
            ("Smoking is not allowed indoors.", "Smoking is prohibited indoors."),
        ],
    )
    def test_an_implicit_negative_or_an_idiom_is_no_flip(self, output: str, context: str) -> None:
        assert "negation flipped" not in reasons(decide(output, context))


class TestShortAnswers:
    def test_a_short_answer_none_of_whose_words_the_evidence_has_fails(self) -> None:
        decision = decide(
            "hydrogen peroxide",
            "It is highly soluble in water and slightly soluble in alcohol. Ethanol, also "
            "called alcohol, is a simple alcohol.",
            "Cadmium chloride is slightly soluble in this chemical, it is also called what?",
        )
        assert decision.basis == "fail:answer_absent"
        assert "hydrogen, peroxide" in reasons(decision)

    def test_a_short_answer_the_evidence_has_is_not_failed(self) -> None:
        decision = decide(
            "Ethanol",
            "It is highly soluble in water and slightly soluble in alcohol. Ethanol, also "
            "called alcohol, is a simple alcohol.",
            "Cadmium chloride is slightly soluble in this chemical, it is also called what?",
        )
        assert decision.label != "fail"
