"""The offline judge's rules on whole answers: it fails only on what it can show, passes only
what it can prove, and leaves the rest undecided (issue 10's examples among them)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.models import JudgeRequest
from guard.offline import OfflineJudge, entities
from guard.offline.calibration import bundled
from guard.offline.details import denied
from guard.offline.judge import Decision

HOURS = "Office hours: 8am to 6pm, Monday to Friday."


def decide(output: str, context: str | list[str], question: str | None = None) -> Decision:
    settings = JudgeSettings()
    case = Guard(OfflineJudge(settings), settings).prepare(
        JudgeRequest(output=output, context=context, question=question)
    )
    assert isinstance(case, PreparedCase)
    return OfflineJudge(settings).decide(case)


def reasons(decision: Decision) -> str:
    return " | ".join(r.reason for r in decision.results)


class TestHardEvidenceFails:
    @pytest.mark.parametrize(
        ("output", "context", "shown"),
        [
            ("The office is open 8am to 8pm.", HOURS, "8pm"),
            ("The office is open Monday to Saturday.", HOURS, "Monday to Saturday"),
            ("The fee is 45 dollars.", "The fee is $30.", "45 dollars"),
            ("Your total is $45.", "The jacket costs $25 and shipping is $15.", "$45"),
            ("Order 48213 shipped via DHL.", "Order 48213 shipped on June 3 via UPS.", "DHL"),
            ("All lectures are recorded.", "Some lectures are recorded automatically.", "all"),
            (
                "Matching is case-sensitive.",
                "Matching is case-insensitive and ignores accents.",
                "insensitiv",
            ),
            (
                "Refunds are issued before the item arrives.",
                "Refunds are issued after the item arrives at our warehouse.",
                "after",
            ),
        ],
    )
    def test_a_contradicted_detail_fails_and_the_reason_shows_it(
        self, output: str, context: str, shown: str
    ) -> None:
        decision = decide(output, context)
        assert decision.label == "fail"
        assert shown in reasons(decision)

    def test_the_reason_names_the_evidence_it_compared(self) -> None:
        decision = decide("The office is open 8am to 8pm.", ["Parking is free.", HOURS])
        assert "[2]" in reasons(decision)
        assert decision.results[0].sentence is not None
        assert decision.results[0].sentence.text == HOURS

    def test_a_number_only_the_question_states_is_not_evidence(self) -> None:
        """The question is the user's text: "Is the fee 45 dollars?" proves nothing."""
        decision = decide(
            "The fee is 45 dollars.", "The fee is $30.", question="Is the fee 45 dollars?"
        )
        assert decision.label == "fail"


class TestProvenPasses:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("Paris is the capital of France.", "Paris is the capital of France. It is big."),
            ("Dinner is served until 8:00 PM.", "Dinner is served until 20:00."),
            ("The annual fee is $1,200.", "The annual fee is 1200 dollars."),
        ],
    )
    def test_near_verbatim_claims_with_matching_details_are_proven(
        self, output: str, context: str
    ) -> None:
        """Every claim is proven; whether the answer is a confident pass is up to the
        calibration (word-level proofs were often wrong on the dev sets)."""
        decision = decide(output, context)
        assert decision.label != "fail"
        assert all(r.status == "supported" for r in decision.results)


class TestNeverAFalseConfidentFail:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("The request times out after 30 seconds.", "The timeout defaults to 30."),
            ("Your total is $40.", "The jacket costs $25 and shipping is $15."),
            (
                "You'll need 21 capsules: one three times a day for seven days.",
                "Take one capsule 3 times a day for 7 days.",
            ),
            (
                "The break is available from 1 November 2026.",
                "The start date is 1 May 2026. The break clause applies 6 months after the start.",
            ),
            (
                "I couldn't find anything about pets in the documents.",
                "Our return policy allows returns within 30 days.",
            ),
            (
                "Returns are possible within a month, more or less.",
                "Our return policy allows returns within 30 days.",
            ),
            (
                "Your flight now leaves 80 minutes later than before.",
                "Flight LH 903 was moved from 16:05 to 17:25.",
            ),
        ],
    )
    def test_restatements_sums_and_refusals_are_not_failed(self, output: str, context: str) -> None:
        decision = decide(output, context)
        assert decision.label != "fail", reasons(decision)

    def test_low_overlap_alone_is_undecided_with_low_confidence(self) -> None:
        decision = decide(
            "Customers love how quick and friendly the whole process feels.",
            "Our return policy allows returns within 30 days.",
        )
        assert decision.label == "undecided"
        assert decision.confidence < JudgeSettings().cascade_confidence


class TestLanguages:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("La tienda abre a las 10:00.", "La tienda abre a las 9:00 de lunes a sábado."),
            (
                "Die Kündigungsfrist beträgt zwei Wochen.",
                "Die Kündigungsfrist beträgt während der Probezeit 4 Wochen.",
            ),
            (
                "Le magasin est ouvert du lundi au samedi.",
                "Le magasin est ouvert du lundi au vendredi de 9h à 18h.",
            ),
            ("El envío cuesta 7,50 €.", "El envío cuesta 5,50 € en toda España."),
        ],
    )
    def test_numbers_times_and_days_are_checked_in_spanish_german_french(
        self, output: str, context: str
    ) -> None:
        assert decide(output, context).label == "fail"

    def test_foreign_words_alone_are_undecided_never_confident(self) -> None:
        decision = decide(
            "Die Praxis ist sehr freundlich und hilfsbereit.", "Die Praxis hat montags geöffnet."
        )
        assert decision.label == "undecided"
        assert decision.confidence < JudgeSettings().cascade_confidence


class TestWhatUsersSee:
    def test_claims_are_verbatim_spans_of_the_answer(self) -> None:
        output = (
            "The Eiffel Tower, which is in Paris, was finished in 1889 and is 330 m tall. "
            "It draws millions of visitors, and it is lit every night."
        )
        decision = decide(output, "The Eiffel Tower in Paris was finished in 1889.")
        assert decision.results
        assert all(r.claim in output for r in decision.results)

    def test_a_contradiction_quotes_the_sentence_that_contradicts(self) -> None:
        context = ["Parking is free for guests.", "Checkout is at 11 AM. Breakfast is at 7 AM."]
        decision = decide("Checkout is at noon.", context)
        assert decision.label == "fail"
        assert decision.results[0].sentence is not None
        assert decision.results[0].sentence.text == "Checkout is at 11 AM."


class TestAnswerLevelRules:
    def test_a_change_whose_numbers_go_the_other_way_fails(self) -> None:
        decision = decide(
            "Your dose has gone up from 100 to 75 micrograms.",
            "The dose was changed from 100 micrograms to 75 micrograms.",
        )
        assert decision.label == "fail"
        assert decision.basis == "fail:comparison_reversed"  # the rule it is a case of
        assert "direction" in {r.basis for r in decision.results}

    def test_a_dropped_condition_fails_only_when_the_answer_never_states_it(self) -> None:
        context = "Returns are free only if you use the prepaid label from your order email."
        assert decide("Returns are free.", context).label == "fail"
        kept = decide(
            "Returns are free. You must use the prepaid label from your order email.", context
        )
        assert kept.basis != "fail:condition_changed"

    def test_an_unsupported_addition_to_a_grounded_answer_is_reported_not_decided(self) -> None:
        context = (
            "Returns are accepted within 30 days of delivery. Refunds go back to the "
            "original payment method within 5 business days."
        )
        decision = decide(
            "Returns are accepted within 30 days of delivery. Refunds go back to "
            "the original payment method. Most shoppers adore our cheerful "
            "courier partners everywhere.",
            context,
        )
        # 10 of 14 right on the labelled data: its bound is below a coin flip, so it annotates
        assert decision.label == "undecided"
        assert decision.basis == "undecided:unproven_unsupported_addition"
        assert "an addition the evidence does not support" in reasons(decision)
        table = bundled()
        assert table.status("fail:unsupported_addition") == "annotate"
        assert table.confidence("fail:unsupported_addition") < JudgeSettings().cascade_confidence


class TestPolarityAcrossTheEvidence:
    def test_restating_a_negated_clause_positively_fails(self) -> None:
        context = (
            "Returns: you can return most items within 30 days of delivery. Final-sale "
            "items and gift cards cannot be returned."
        )
        decision = decide("Gift cards can be returned within 30 days.", context)
        assert decision.label == "fail"
        assert "cannot be returned" in reasons(decision)

    def test_no_limit_where_the_evidence_sets_one_fails(self) -> None:
        decision = decide(
            "The headphones come with a lifetime warranty.",
            "The headphones come with a 2-year limited warranty.",
        )
        assert decision.basis == "fail:quantifier"  # the rule it is a case of
        assert "unbounded" in {r.basis for r in decision.results}

    def test_a_verbless_list_item_takes_no_polarity_from_the_evidence(self) -> None:
        decision = decide(
            "Damage from power surges", "The warranty does not cover damage from power surges."
        )
        assert decision.label != "fail"


class TestComparisons:
    SPECS = (
        "Specs. Model A: 6.1-inch display, 4,500 mAh battery, 128 GB. "
        "Model B: 6.7-inch display, 5,000 mAh battery, 256 GB."
    )
    LATENCY = "Latency from EU clients (p50): eu-west region 18 ms, us-east region 92 ms."

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("Model A has the bigger battery.", SPECS),
            ("For EU clients, us-east has the lower latency.", LATENCY),
            (
                "The V11 is the lighter one.",
                "AeroClean V8: weight 2.6 kg, runtime 40 min. "
                "AeroClean V11: weight 3.1 kg, runtime 60 min.",
            ),
        ],
    )
    def test_a_reversed_comparison_fails_and_quotes_the_amount(
        self, output: str, context: str
    ) -> None:
        decision = decide(output, context)
        assert decision.basis == "fail:comparison_reversed"
        assert "reversed" in reasons(decision)

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("Model B has the bigger battery.", SPECS),
            ("For EU clients, eu-west has the lower latency.", LATENCY),
        ],
    )
    def test_a_comparison_that_holds_is_not_failed(self, output: str, context: str) -> None:
        assert decide(output, context).label != "fail"


def test_a_condition_that_opens_the_sentence_must_be_kept() -> None:
    context = (
        "If your train arrives 30 minutes or more late, you can claim 50% of the single "
        "fare; 60 minutes or more, 100%."
    )
    assert decide("You can claim half of your single fare back.", context).basis == (
        "fail:condition_changed"
    )
    kept = decide(
        "If your train arrives 30 minutes or more late, you can claim half of your "
        "single fare back.",
        context,
    )
    assert kept.label != "fail"


class TestLabelledNames:
    REVIEWS = (
        "Reviewer 1: The methodology is sound, but the sample size limits generalisability.",
        "Reviewer 2: The literature review omits recent work on transfer learning.",
    )

    def test_a_comment_credited_to_the_wrong_labelled_sibling_fails(self) -> None:
        decision = decide(
            "Reviewer 1 pointed out that the literature review omits recent work "
            "on transfer learning.",
            list(self.REVIEWS),
        )
        assert decision.basis == "fail:attribution"
        assert "Reviewer 1" in reasons(decision)

    def test_the_right_sibling_is_not_failed(self) -> None:
        decision = decide(
            "Reviewer 2 pointed out that the literature review omits recent work "
            "on transfer learning.",
            list(self.REVIEWS),
        )
        assert decision.label != "fail"

    def test_a_sentence_opening_verb_before_a_number_is_not_a_missing_name(self) -> None:
        decision = decide("Take 2 tablets with water.", "Adults: two tablets with water.")
        assert decision.basis != "fail:name_absent"


def test_an_amount_said_of_something_else_is_a_swap() -> None:
    context = (
        "From Airport North the express train takes 55 minutes. From City Airport the "
        "metro takes 25 minutes."
    )
    decision = decide("From Airport North, the express train takes 25 minutes.", context)
    assert decision.basis == "fail:number_swapped"
    right = decide("From Airport North, the express train takes 55 minutes.", context)
    assert right.label != "fail"


def test_a_document_header_is_evidence_of_who_said_what() -> None:
    """The rendered documents' sources ("cardiology letter, Dr Hughes") are evidence too: a
    recommendation credited to the wrong letter's author fails."""
    context = [
        {
            "id": "c1",
            "source": "cardiology letter, Dr Hughes",
            "text": "Recommend continuing bisoprolol 2.5 mg.",
        },
        {
            "id": "c2",
            "source": "endocrinology letter, Dr Nair",
            "text": "Recommend increasing metformin to 1 g twice daily.",
        },
    ]
    settings = JudgeSettings()
    judge = OfflineJudge(settings)
    guard = Guard(judge, settings)

    def decided(output: str) -> Decision:
        case = guard.prepare(JudgeRequest.model_validate({"output": output, "context": context}))
        assert isinstance(case, PreparedCase)
        return judge.decide(case)

    assert decided("Dr Hughes suggested increasing metformin to 1 g twice daily.").basis == (
        "fail:attribution"
    )
    assert decided("Dr Nair suggested increasing metformin to 1 g twice daily.").label != "fail"


class TestComputedAnswersAreNeverConfidentFails:
    """Numbers an answer derives from the evidence and its own grounded numbers (issue 10's
    held-out errors, in other words): at worst undecided."""

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (
                "For 4 nights at €135 that's €540, plus city tax of €28 (€3.50 for each of you "
                "for 4 nights), so €568 in total.",
                [
                    "Room rate: €135 per night. City tax: €3.50 per person per night.",
                    "Booking: 2 adults, 4 nights.",
                ],
            ),
            (
                "At 4.00% on £7,500 you'd earn £300 in interest over a year.",
                ["The saver pays 4.00% a year.", "Your balance is £7,500."],
            ),
            (
                "You land at 10:05 and the connection leaves at 11:15, so you have 70 minutes.",
                ["Flight LH400 arrives at 10:05.", "Flight LH902 departs at 11:15."],
            ),
            (
                "She was born on 2 March 2023, so the booster falls due in early July 2026.",
                ["Date of birth: 2 March 2023.", "The booster is given at 3 years 4 months."],
            ),
            (
                "Bei einer 4-Tage-Woche hast du 30 geteilt durch 5, mal 4, also 24 Urlaubstage.",
                [
                    "Es gibt 30 Urlaubstage pro Jahr, gerechnet auf eine 5-Tage-Woche.",
                    "Vertrag: Sie arbeiten in einer 4-Tage-Woche.",
                ],
            ),
            (
                "Steps:\n1. Hold reset for 10 seconds.\n2. Wait for the green light.\n"
                "3. Log in with the sticker password.",
                [
                    "Hold reset for 10 seconds, wait for the green light, then log in with the "
                    "sticker password."
                ],
            ),
            (
                "On the free tier that's 60 requests a minute, so 3,600 an hour.",
                ["Free tier: 60 requests per minute."],
            ),
        ],
    )
    def test_a_derived_number_does_not_fail(self, output: str, context: list[str]) -> None:
        decision = decide(output, context)
        assert decision.label != "fail", reasons(decision)

    def test_a_count_of_listed_items_is_not_a_claimed_amount(self) -> None:
        context = (
            '{"modules": [{"name": "Statistics", "credits": 20}, {"name": "Databases", '
            '"credits": 20}, {"name": "Ethics", "credits": 20}]}'
        )
        decision = decide(
            "You are enrolled in 3 modules: Statistics, Databases and Ethics.", context
        )
        assert decision.label != "fail", reasons(decision)
        restated = decide(
            "The Starter plan allows up to 7 users.",
            "Plans. The Starter plan allows up to 5 users and community support.",
        )
        assert restated.label == "fail"

    @pytest.mark.parametrize(
        ("output", "context", "wrong"),
        [
            (
                "Overtime pays £18 an hour.",
                "Overtime is paid at 1.5 times the hourly rate of £12.",
                "Overtime pays £20 an hour.",
            ),
            (
                "That's 4 nights, so €360 in total.",
                "Check-in 12 May, check-out 16 May. Rate €90 per night.",
                "That's 5 nights, so €450 in total.",
            ),
            (
                "Deliveries come on weekdays, not on Saturday or Sunday.",
                "Deliveries arrive Monday to Friday.",
                "Deliveries also come on Saturday.",
            ),
        ],
    )
    def test_computed_from_the_restated_sentence_or_excluded_days(
        self, output: str, context: str, wrong: str
    ) -> None:
        assert decide(output, context).label != "fail", reasons(decide(output, context))
        assert decide(wrong, context).label == "fail"

    def test_a_wrong_product_still_fails(self) -> None:
        decision = decide(
            "For 4 nights at €135 per night the total is €560.",
            ["Room rate: €135 per night.", "Booking: 4 nights."],
        )
        assert decision.label == "fail"
        assert "€560" in reasons(decision)

    def test_a_restated_number_fails_even_if_a_sum_reaches_it(self) -> None:
        """No computing words and the sentence it restates holds another amount of the kind:
        a swapped number, though 5 + 5 is 10."""
        decision = decide(
            "Refunds are issued within 10 business days.",
            "Shipping takes 3 to 5 business days. Refunds are issued to your "
            "card within 5 business days.",
        )
        assert decision.label == "fail"
        assert "10 business days" in reasons(decision)


class TestNames:
    def test_one_word_of_a_name_the_evidence_lacks_fails(self) -> None:
        decision = decide(
            "She served as Attorney General of California.",
            "She served as Attorney General of Nevada from 2007 to 2015.",
        )
        assert decision.basis == "fail:name_absent"
        assert "California" in reasons(decision)

    def test_a_denied_name_is_not_claimed_but_the_asserted_one_is(self) -> None:
        context = "Dennis Howard Marks was a Welsh drug smuggler."
        assert decide("There is no Rust SDK.", "SDKs: Python and Go.").label != "fail"
        decision = decide("Don Barry Mason was Welsh, not Dennis Howard Marks.", context)
        assert decision.label == "fail"
        assert "Barry Mason" in reasons(decision)
        assert "Dennis" not in reasons(decision)

    @settings(max_examples=60, deadline=None)
    @given(
        st.sampled_from(["Jana Novotna", "Lord Black", "Acme Bank", "Rust"]),
        st.sampled_from(["no", "not", "never", "isn't", "without"]),
        st.lists(st.sampled_from(["the", "a", "official", "new"]), max_size=3),
    )
    def test_a_name_after_a_negation_is_denied(
        self, name: str, cue: str, between: list[str]
    ) -> None:
        text = f"It is {cue} {' '.join(between)} {name} at all."
        found = next(n for n in entities.names(text) if n.text == name)
        assert denied(found, text)
        plain = f"It is {' '.join(between)} {name} at all."
        assert not denied(next(n for n in entities.names(plain) if n.text == name), plain)

    def test_an_acronym_may_stand_for_words_of_the_evidence(self) -> None:
        assert (
            decide(
                "Maria Lopez has been CEO since 2021.",
                "Maria Lopez became chief executive in 2021.",
            ).label
            != "fail"
        )
        assert (
            decide(
                "You can reset it via the Help Centre.", "Visit the help center to reset it."
            ).label
            != "fail"
        )

    def test_an_abbreviated_word_of_a_name_list_is_that_name(self) -> None:
        assert (
            decide(
                "We deliver to the UK and Ireland.", "We ship to the United Kingdom and Ireland."
            ).label
            != "fail"
        )
        assert (
            decide(
                "We deliver to the UK and Iceland.", "We ship to the United Kingdom and Ireland."
            ).label
            == "fail"
        )

    def test_a_paraphrase_in_quotes_is_no_fabricated_quote(self) -> None:
        context = "Error E42 means the card reader is offline."
        assert (
            decide("The message 'card reader offline' is what error E42 means.", context).label
            != "fail"
        )
        assert (
            decide("The message 'printer jammed' is what error E42 means.", context).label == "fail"
        )

    def test_a_name_in_another_names_slot_fails(self) -> None:
        context = (
            "The data controller is Northwind Retail Ltd, registered in England. "
            "We use Stripe Payments Europe Ltd as a payment processor."
        )
        decision = decide("The data controller is Stripe Payments Europe Ltd.", context)
        assert decision.basis == "fail:name_swapped"
        assert "Northwind Retail Ltd" in reasons(decision)
        assert (
            decide(
                "The data controller, Northwind Retail Ltd, is registered in England, "
                "and payments go through Stripe Payments Europe Ltd.",
                context,
            ).label
            != "fail"
        )


class TestSlots:
    """A listed sentence's clause is the slot a day or time is compared in."""

    def test_a_day_of_another_clause_fails(self) -> None:
        context = (
            "Specialist clinics: asthma clinic Monday mornings; diabetes review clinic "
            "Wednesday afternoons with nurse J. Owusu; baby clinic Friday mornings."
        )
        decision = decide(
            "The diabetes review clinic is on Monday afternoons with nurse J. Owusu.", context
        )
        assert decision.basis == "fail:time_contradicted"
        assert "Wednesday" in reasons(decision)
        assert (
            decide(
                "The diabetes review clinic is on Wednesday afternoons with nurse J. Owusu.",
                context,
            ).label
            != "fail"
        )

    def test_daily_in_another_clause_does_not_cover_a_wrong_day(self) -> None:
        context = (
            "The bakery counter bakes sourdough on Tuesdays and Fridays only; other "
            "breads are baked daily."
        )
        decision = decide("Sourdough is baked on Tuesdays and Thursdays.", context)
        assert decision.label == "fail"
        assert "Thursdays" in reasons(decision)

    def test_ten_pm_is_not_the_ten_oclock_of_a_24_hour_timetable(self) -> None:
        context = (
            "Opening hours: Tuesday-Sunday 10:00-18:00; late opening on Thursdays until 21:00."
        )
        decision = decide("On Thursdays it stays open late, until 10 PM.", context)
        assert decision.label == "fail"
        assert "10 PM" in reasons(decision)
        assert decide("On Thursdays it stays open late, until 9 PM.", context).label != "fail"


class TestComparisonsOfNamedThings:
    FUNDS = (
        "Fund factsheet. Global Equity Fund: +9.8%. Sustainable Leaders Fund: +12.4%. "
        "Ongoing charges: Global Equity 0.22%, Sustainable Leaders 0.45%."
    )
    TRANSFERS = (
        "Airport Express train: every 15 minutes, journey time 22 minutes, €11. "
        "Bus line 100: every 10 minutes, journey time 40 minutes, €4."
    )

    def test_more_than_a_named_thing_is_checked_against_both_amounts(self) -> None:
        decision = decide(
            "The Global Equity Fund returned more than the Sustainable Leaders Fund.", self.FUNDS
        )
        assert decision.basis == "fail:comparison_reversed"
        assert (
            decide(
                "The Sustainable Leaders Fund returned more than the Global Equity Fund.",
                self.FUNDS,
            ).label
            != "fail"
        )

    def test_how_often_is_not_how_long(self) -> None:
        decision = decide("The bus is the quicker option.", self.TRANSFERS)
        assert decision.basis == "fail:comparison_reversed"
        assert "40 minutes" in reasons(decision)
        assert decide("The train is the quicker option.", self.TRANSFERS).label != "fail"


class TestNegatedOpenings:
    def test_no_opening_a_claim_is_its_negation_not_an_interjection(self) -> None:
        context = "Pets are not allowed in the rental."
        assert decide("No pets are allowed in the rental.", context).label != "fail"
        assert decide("Pets are allowed in the rental.", context).label == "fail"

    def test_a_closed_day_against_another_closed_day(self) -> None:
        context = "The pool is closed on Mondays for cleaning."
        decision = decide("The pool is closed on Tuesdays for cleaning.", context)
        assert decision.label == "fail"
        assert "Tuesdays" in reasons(decision)
        assert (
            decide("The shop is closed on Sundays.", "The shop is open Monday to Saturday.").label
            != "fail"
        )


class TestExplanationsNameOnlyEvidenceThatExists:
    """It said "$59 is said of something else" when $59 was nowhere in the evidence (issue 28)."""

    def test_an_amount_nowhere_in_the_evidence_is_said_to_be_missing(self) -> None:
        decision = decide("The Basic plan costs $59 a month.", "The Basic plan costs $49 a month.")
        assert decision.label == "fail"
        assert "$59 not in evidence" in reasons(decision)
        assert "said of something else" not in reasons(decision)

    def test_an_amount_the_evidence_gives_another_thing_is_said_to_be_its(self) -> None:
        decision = decide(
            "The Basic plan costs $59 a month.",
            "The Basic plan costs $49 a month. The Pro plan costs $59 a month.",
        )
        assert decision.label == "fail"
        assert "$59 is said of something else" in reasons(decision)
        assert "says $49 here" in reasons(decision)  # the sentence the claim restates
