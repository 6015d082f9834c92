"""Names and amounts written in another form than the evidence's: the offline judge never
fails them confidently (a translated, accented or abbreviated name is the same name; a
duration in another unit is compared converted, and left undecided when the units do not
convert exactly), while a really different name or amount still fails."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard import JudgeSettings
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
            ("Acme Corporation reported a loss.", "Acme Corp. reported a loss of $2m."),
            ("Bill Gates founded the foundation.", "The foundation was founded by William Gates."),
            ("Professor Jane Doe teaches the course.", "The course is taught by Prof. Jane Doe."),
            ("The Acme GmbH office is in Berlin.", "The Acme office is in Berlin."),
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
            ("Jane Smith runs the clinic.", "The clinic is run by John Smith."),
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
            ("The pool is heated to 82°F.", "The pool water is kept at 28 °C."),
            ("The trail is 3.1 miles long.", "The trail is 5 km long."),
            ("It costs 1.5k dollars.", "It costs $1,500."),
            ("The limit is 2 GB.", "The limit is 2,048 MB."),
            ("The app needs 512 MB of RAM.", "The app needs half a gigabyte of RAM."),
            ("It weighs 2.2 pounds.", "It weighs 1 kg."),
        ],
    )
    def test_an_amount_restated_in_other_units_is_not_failed(
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
            ("82 °F", "28 °C", True),
            ("90 °F", "28 °C", False),
            ("2 GB", "2,048 MB", True),
            ("3.1 miles", "5 km", True),
            ("4 miles", "5 km", False),
            ("2.2 pounds", "1 kg", True),
        ],
    )
    def test_inexact_units_and_rounded_conversions(
        self, claim: str, evidence: str, expected: bool
    ) -> None:
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
                "Elizabeth Stuart was actually born first.",
                "Sir Francis Nethersole (1587–1659) was an English diplomat. Elizabeth Stuart "
                "(19 August 1596 – 13 February 1662) was Electress of the Palatinate.",
                "Who was born first, Francis Nethersole or Elizabeth Stuart?",
            ),
            (
                "Ross Lynch is the older one.",
                "Glenn Hughes (born 21 August 1951) is an English rock bassist.Ross Shor Lynch "
                "(born December 29, 1995) is an American singer.",
                "Who is older Glenn Hughes or Ross Lynch?",
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


class TestAddedJudgementsAndComparisons:
    @pytest.mark.parametrize(
        ("output", "context", "basis"),
        [
            (
                "Milhouse was named after a famous musician.",
                "Matt Groening named the character after President Richard Nixon's middle name.",
                "fail:judgement_absent",
            ),
            (
                "Cid Corman was just a publisher.",
                "Cid Corman (1924–2004) was an American poet, translator and editor.",
                "fail:predicate_absent",
            ),
            (
                "You can add a cabin bag for a fee, which is cheaper online than at the airport.",
                "Cabin bags are not included and can be added for a fee during booking.",
                # seen twice in the labelled data: reported on the claim, decides nothing
                "undecided:unproven_comparison_absent",
            ),
        ],
    )
    def test_a_judgement_or_comparison_no_document_makes_fails(
        self, output: str, context: str, basis: str
    ) -> None:
        decision = decide(output, context)
        assert decision.basis == basis
        assert "no document" in reasons(decision)

    @pytest.mark.parametrize(
        ("output", "context", "question"),
        [
            (  # the evidence says so
                "It is a popular rock band.",
                "Kings of Leon is a popular American rock band.",
                None,
            ),
            (  # the question brought the word in
                "Yes, it is the most famous painting in the museum.",
                "The Mona Lisa hangs in the Louvre.",
                "Is the Mona Lisa the most famous painting in the Louvre?",
            ),
            (  # a paraphrase of what the evidence says of an unnamed subject
                "The clinic is a walk-in centre on weekdays.",
                "Walk-in patients are seen Monday to Friday.",
                None,
            ),
            (  # what the evidence says it is
                "Cid Corman was an American poet.",
                "Cid Corman (1924–2004) was an American poet, translator and editor.",
                None,
            ),
            (  # amounts to compare: computed, judged by the comparison checks
                "The Sustainable Leaders Fund returned more than the Global Equity Fund.",
                "Global Equity Fund: +9.8%. Sustainable Leaders Fund: +12.4%.",
                None,
            ),
        ],
    )
    def test_a_word_the_evidence_or_question_has_or_a_computable_comparison_is_no_addition(
        self, output: str, context: str, question: str | None
    ) -> None:
        assert decide(output, context, question).basis not in (
            "fail:judgement_absent",
            "fail:comparison_absent",
            "fail:predicate_absent",
        )


class TestNarrowedConditions:
    FEE = (
        "Premium card. The £195 annual fee is refunded in full if you close the account "
        "within 30 days of the fee being charged. After 30 days, the fee is not refundable."
    )

    def test_a_condition_restated_without_its_limit_fails_and_names_it(self) -> None:
        decision = decide(
            "The £195 annual fee is refunded in full if you close your account.", self.FEE
        )
        assert decision.basis == "fail:condition_changed"
        assert "condition_narrowed" in {r.basis for r in decision.results}
        assert '"30 days"' in reasons(decision)

    @pytest.mark.parametrize(
        "output",
        [
            "The £195 annual fee is refunded in full if you close your account within 30 days.",
            "Close the account within 30 days of being charged: the £195 fee is then refunded "
            "in full if you close it.",
        ],
    )
    def test_a_condition_with_its_limit_anywhere_in_the_answer_is_kept(self, output: str) -> None:
        assert decide(output, self.FEE).basis != "fail:condition_narrowed"


class TestRelationsOfSeveralNames:
    STANFORD = (
        "Boston College is a private research university located in the village of Chestnut "
        "Hill, Massachusetts. Stanford University is a private research university in "
        "Stanford, California."
    )

    def test_the_subject_never_named_with_a_place_it_is_put_in_fails(self) -> None:
        decision = decide(
            "Stanford University is located in Chestnut Hill, Massachusetts.", self.STANFORD
        )
        assert decision.basis == "fail:names_apart"
        assert "Stanford University" in reasons(decision)

    def test_names_named_together_are_not_apart(self) -> None:
        decision = decide(
            "Boston College is located in Chestnut Hill, Massachusetts.", self.STANFORD
        )
        assert decision.label != "fail"

    def test_a_negated_claim_with_one_word_from_the_next_sentence_still_flips(self) -> None:
        decision = decide(
            "The Oberoi family is not involved in any hotel company.",
            "The Oberoi family is an Indian family famous for its involvement in hotels, "
            "namely through The Oberoi Group.The Oberoi Group is a hotel company with its head "
            "office in Delhi.",
        )
        assert decision.basis == "fail:negation"


class TestNamesLinkedAcrossSentences:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (
                "The Berlin team reports to Maria Keller.",
                "Team structure. The Berlin team is part of Sales Europe. Sales Europe is headed "
                "by Maria Keller.",
            ),
            (
                "Tom Baker moved from Leeds to the London office.",
                "Tom Baker joined in 2019 in Leeds. In 2022 he transferred to London.",
            ),
            (
                "You can pay with Visa or Mastercard at the Paris store.",
                "Paris store. We accept Visa and Mastercard. Cash is not accepted.",
            ),
        ],
    )
    def test_names_the_passage_links_are_no_confident_names_apart(
        self, output: str, context: str
    ) -> None:
        decision = decide(output, context)
        assert decision.basis != "fail:names_apart"
        assert decision.confidence < JudgeSettings().cascade_confidence

    def test_a_year_before_he_is_a_year(self) -> None:
        (year,) = numbers.extract("In 2022 he transferred to London.")
        assert (year.kind, year.value) == ("year", 2022.0)


class TestCodesWrittenOtherwise:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("The SKU is AB-1234.", "SKU: AB1234. Colour: blue."),
            ("Version 2.1 added dark mode.", "Dark mode was added in v2.1."),
        ],
    )
    def test_a_code_or_version_with_other_separators_is_not_absent(
        self, output: str, context: str
    ) -> None:
        assert decide(output, context).label != "fail"

    def test_another_code_still_fails(self) -> None:
        assert decide("The SKU is AB-1235.", "SKU: AB1234. Colour: blue.").label == "fail"


class TestWhoDoesIt:
    APPROVALS = (
        "Approvals. Expense claims are approved by your cost-centre manager. Overtime must be "
        "signed off in advance by your shift supervisor."
    )

    def test_an_agent_the_restated_sentence_does_not_name_fails(self) -> None:
        decision = decide("Expense claims are approved by your shift supervisor.", self.APPROVALS)
        assert decision.basis == "fail:slot_misbound"
        assert "agent_swapped" in {r.basis for r in decision.results}
        assert "cost-centre manager" in reasons(decision)

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("Expense claims are approved by your cost-centre manager.", APPROVALS),
            (
                "The association was founded by Matthew Granahan.",
                "The association is a small company founded by wrestler Kamal Shalorus and "
                "fighter Matthew Granahan.",
            ),
        ],
    )
    def test_the_agent_the_sentence_names_is_not_swapped(self, output: str, context: str) -> None:
        assert decide(output, context).basis != "fail:agent_swapped"
