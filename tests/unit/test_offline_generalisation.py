"""Grounded restatements the offline judge must not fail: forms a rule read too narrowly
(a hedged duration between two times, words before a unit, "only until", a verb's particle,
opposites about different things, names that credit nobody, numbers and times written out in
words, day/month dates), and the errors those rules still catch."""

from __future__ import annotations

from typing import ClassVar

import pytest

from guard.offline import times
from guard.offline.claims import split_claims
from guard.offline.judge import Decision
from guard.offline.numbers import extract
from tests.unit.offline_helpers import decide


def failed_by(decision: Decision) -> set[str]:
    return {r.basis for r in decision.results if r.status == "contradicted"}


class TestGroundedFormsAreNotFailed:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (
                "The lifts were out of service for about 40 minutes, from 07:10 to 07:52.",
                "Lift outage. The lifts stopped at 07:10 and were back in service at 07:52.",
            ),
            (
                "There is a half-day workshop on Friday.",
                "Friday: half-day practical workshop in lab 3, bring safety glasses.",
            ),
            (
                "You may bring forward up to four days of leave.",
                "Staff may bring forward up to four unused days of leave into the new year.",
            ),
            (
                "The seats can be swapped for £5, but only until the day before the match.",
                "Seat swaps cost £5 and are possible up to one day before the match.",
            ),
            (
                "Any points you transfer expire after a year.",
                "Points transferred over to a partner scheme expire after 12 months.",
            ),
            (
                "The museum is open from 9:00 to 17:00 on weekdays, and on public holidays "
                "you should check the website.",
                "The museum is open 9:00-17:00 Monday to Friday. It is closed on public "
                "holidays; check the website for special events.",
            ),
            (
                "The first three hundred and fifty euros are not charged.",
                "No fee is charged on the first €350 you transfer each month.",
            ),
            (
                "Votre entretien aura lieu le 14 mars 2026 à 10 h.",
                "Entretien : le 14/03/2026 à 10 h, bâtiment C.",
            ),
            (
                "La tienda cierra a las nueve menos cuarto de la noche.",
                "Horario: de 10:00 a 20:45 de lunes a sábado.",
            ),
        ],
    )
    def test_a_grounded_restatement_is_not_failed(self, output: str, context: str) -> None:
        assert decide(output, context).label != "fail"

    def test_a_thing_named_in_another_document_credits_nobody(self) -> None:
        context = [
            {"id": "a", "source": "your accounts", "text": "Accounts: Daily Current, Bonus Saver."},
            {"id": "b", "source": "rules", "text": "Savings accounts cannot hold direct debits."},
        ]
        output = "Not on the Bonus Saver: savings accounts cannot hold direct debits."
        assert "attribution" not in failed_by(decide(output, context))


class TestTheErrorsAreStillCaught:
    def test_a_duration_far_from_the_times_still_fails(self) -> None:
        decision = decide(
            "The lifts were out of service for about 2 hours, from 07:10 to 07:52.",
            "Lift outage. The lifts stopped at 07:10 and were back in service at 07:52.",
        )
        assert decision.label == "fail"

    def test_a_time_in_words_that_differs_still_fails(self) -> None:
        decision = decide(
            "La tienda cierra a las diez menos cuarto de la noche.",
            "Horario: de 10:00 a 20:45 de lunes a sábado.",
        )
        assert decision.label == "fail"


class TestNumbersAndTimesInWords:
    @pytest.mark.parametrize(
        ("text", "value"),
        [("two hundred and fifty pounds", 250.0), ("one hundred and ten days", 110.0)],
    )
    def test_hundreds_with_their_rest_are_one_number(self, text: str, value: float) -> None:
        (quantity,) = extract(text)
        assert quantity.number == value

    @pytest.mark.parametrize(
        ("text", "value"),
        [("on 24/06/2026", 20260624.0), ("due 06/24/2026", 20260624.0)],
    )
    def test_a_slashed_date_with_a_day_over_12_is_read(self, text: str, value: float) -> None:
        (quantity,) = extract(text)
        assert (quantity.kind, quantity.value) == ("date", value)

    def test_a_slashed_date_of_unknown_order_is_not_read_as_a_date(self) -> None:
        assert all(q.kind != "date" for q in extract("on 05/06/2026"))

    @pytest.mark.parametrize(
        ("text", "minute"),
        [
            ("diez menos diez de la noche", 21 * 60 + 50),
            ("nueve y cuarto de la mañana", 9 * 60 + 15),
            ("dix heures moins le quart du soir", 21 * 60 + 45),
            ("neuf heures et demie du soir", 21 * 60 + 30),
        ],
    )
    def test_minutes_past_or_to_an_hour_of_the_day(self, text: str, minute: int) -> None:
        (found,) = times.times(text)
        assert found.minutes == frozenset({minute})


class TestNegatedPredicates:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (
                "Interns are entitled to the commuting bonus of £40 a month.",
                "Commuting bonus: £40 a month for salaried staff. Interns and temporary staff "
                "are not entitled to the bonus.",
            ),
            (
                "Tickets bought from a resale site can be refunded.",
                "Refunds. Tickets bought from resale sites cannot be refunded by the venue.",
            ),
            (
                "The Team plan supports audit logs.",
                "Neither the Solo nor the Team plan supports audit logs; they come with Scale.",
            ),
            (
                "The Lite subscription includes offline maps.",
                "The Lite subscription no longer includes offline maps.",
            ),
        ],
    )
    def test_a_predicate_the_evidence_denies_of_the_subject_fails(
        self, output: str, context: str
    ) -> None:
        assert decide(output, context).label == "fail"

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (  # another subject
                "Salaried staff are entitled to the commuting bonus.",
                "Interns are not entitled to the commuting bonus.",
            ),
            (  # a second verb the negation does not reach
                "Extra legroom can be added for €20.",
                "Extra legroom is not included and can be added for €20 per flight.",
            ),
            (  # a negation bounded by a condition
                "The account is active once you verify your email.",
                "The account is not active until you verify your email.",
            ),
            (  # the claim keeps the negation
                "Drops aren't covered, and neither are power surges.",
                "The warranty does not cover drops or power surges.",
            ),
        ],
    )
    def test_what_the_evidence_does_not_deny_is_not_failed(self, output: str, context: str) -> None:
        assert "negation_predicate" not in failed_by(decide(output, context))


class TestComparisonsAndOpposites:
    @pytest.mark.parametrize(
        "output",
        [
            "Porto outpaced Lisbon in bookings last spring.",
            "Lisbon trails Porto on bookings.",
            "Porto is ahead of Lisbon in bookings.",
            "Porto had more bookings than Lisbon.",
        ],
    )
    def test_a_comparison_the_amounts_reverse_fails(self, output: str) -> None:
        context = "Spring bookings: Porto 2,300 nights, Lisbon 3,950 nights."
        assert "comparison_reversed" in failed_by(decide(output, context))

    def test_a_comparison_the_amounts_bear_out_is_not_failed(self) -> None:
        context = "Spring bookings: Porto 2,300 nights, Lisbon 3,950 nights."
        output = "Lisbon outpaced Porto in bookings, and Porto trails Lisbon."
        assert decide(output, context).label != "fail"

    def test_a_clause_saying_the_opposite_fails_in_a_longer_claim(self) -> None:
        decision = decide(
            "The bridge works are behind schedule, unlike the tunnel works, which are ahead",
            "The bridge works are a week ahead of schedule. The tunnel works are two weeks "
            "behind because of flooding.",
        )
        assert "opposite" in failed_by(decision)


class TestAttribution:
    CONTEXT: ClassVar[list[dict[str, str]]] = [
        {
            "id": "p1",
            "source": "site inspection report (Harlow Surveyors)",
            "text": "The inspection found damp in two of the ground-floor rooms.",
        },
        {
            "id": "p2",
            "source": "landlord's letter",
            "text": "I will have the damp treated by a contractor before the end of May.",
        },
    ]

    @pytest.mark.parametrize(
        "output",
        [
            "According to the landlord's letter, damp was found in two ground-floor rooms.",
            "The landlord found damp in two of the ground-floor rooms.",
            "Harlow Surveyors' report says a contractor will treat the damp before the end of May.",
        ],
    )
    def test_a_statement_credited_to_the_wrong_source_fails(self, output: str) -> None:
        assert "attribution" in failed_by(decide(output, self.CONTEXT))

    @pytest.mark.parametrize(
        "output",
        [
            "According to the inspection report, damp was found in two ground-floor rooms.",
            "The landlord's letter says a contractor will treat the damp before the end of May.",
        ],
    )
    def test_a_statement_credited_to_its_own_source_is_not_failed(self, output: str) -> None:
        assert decide(output, self.CONTEXT).label != "fail"

    def test_an_according_to_opener_is_one_claim_with_what_it_credits(self) -> None:
        (claim,) = split_claims("According to the audit memo, two ledgers were wrong.")
        assert claim.text.startswith("According to")


def test_a_conclusion_after_so_is_not_an_addition() -> None:
    """ ", so ..." draws a conclusion from the claims before it; the clause keeps its "so"."""
    context = [
        "Order 5521: desk lamp, delivered 9 April 2026.",
        "Lighting products carry a 24-month warranty from the delivery date.",
    ]
    output = (
        "Your lamp was delivered on 9 April 2026 and lighting products have a 24-month "
        "warranty from delivery, so a fault this winter is still covered."
    )
    decision = decide(output, context)
    assert "unsupported_addition" not in failed_by(decision)
    assert any(r.claim.startswith("so ") for r in decision.results)


class TestDetailsInOtherLanguages:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (
                "Bitte wenden Sie sich an Frau Brandt im Sekretariat.",
                "Ansprechpartnerin im Sekretariat ist Frau Bergmann (Raum 12).",
            ),
            (
                "Votre demande est traitée par M. Lefèvre.",
                "Votre demande est traitée par M. Lambert, service client.",
            ),
            (
                "La taquilla abre de 9 h a 20 h.",
                "Horario de taquilla: de 9 h a 18 h todos los días.",
            ),
        ],
    )
    def test_a_wrong_titled_name_or_hour_fails(self, output: str, context: str) -> None:
        assert decide(output, context).label == "fail"

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (
                "Bitte wenden Sie sich an Frau Bergmann im Sekretariat.",
                "Ansprechpartnerin im Sekretariat ist Frau Bergmann (Raum 12).",
            ),
            (
                "Votre demande est traitée par M. Lefèvre, du service client.",
                "Votre demande est traitée par M. Lefèvre, service client.",
            ),
        ],
    )
    def test_the_evidence_titled_name_is_not_failed(self, output: str, context: str) -> None:
        assert decide(output, context).label != "fail"

    def test_a_count_said_with_the_same_verb_is_compared(self) -> None:
        decision = decide(
            "The Orion hall seats 62 and has a stage.",
            "Halls. Orion: seats 60, with a stage and two projectors.",
        )
        assert "number_contradicted" in failed_by(decision)


class TestGroundedSummariesAndToolResults:
    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (  # ISO 8601 date-times: the time after "T", the offset no time of day
                "The parcel left the depot on 5 March at 14:20.",
                ['{"event": "departed_depot", "at": "2026-03-05T14:20:00+01:00"}'],
            ),
            (  # "unaffected" says what "not affected" says
                "Night buses are unaffected by the works.",
                "Engineering works. Night buses are not affected by the works.",
            ),
            (  # two names in two items of a list relate nothing
                "The new release moves storage to Postgres, and drops support for Windows 7.",
                "Release 9. Storage now uses Postgres. Windows 7 is no longer supported.",
            ),
            (  # the negation belongs to the claim's other part
                "Some patients feel dizzy, and they should not stand up quickly.",
                "Side effects. It can make some patients dizzy. Do not stand up quickly.",
            ),
            (  # "rejected" is the evidence's "did not uphold"
                "The tribunal upheld the first claim but rejected the second one.",
                "The tribunal upheld the first claim and did not uphold the second claim.",
            ),
            (  # a date without a year the claim counts with its own duration
                "It was delivered on 3 June and you have 14 days, so you can return it until "
                "17 June.",
                ['{"delivered": "2026-06-03", "return_days": 14}'],
            ),
        ],
    )
    def test_a_grounded_form_is_not_failed(self, output: str, context: str | list[str]) -> None:
        assert decide(output, context).label != "fail"

    def test_a_wrong_iso_time_still_fails(self) -> None:
        decision = decide(
            "The parcel left the depot on 5 March at 16:20.",
            ['{"event": "departed_depot", "at": "2026-03-05T14:20:00+01:00"}'],
        )
        assert decision.label == "fail"

    def test_a_year_less_date_the_claim_does_not_count_is_still_checked(self) -> None:
        decision = decide(
            "You can cancel for free until 10 June.",
            "Booking: check-in 14 June, 3 nights. Free cancellation until 7 June.",
        )
        assert decision.label == "fail"


def test_a_four_digit_record_value_is_an_amount_not_a_year() -> None:
    """'"budget_gbp": 1200' reads like the year 1200; under a key that names no year it is
    the amount an answer restates and computes with."""
    context = ['{"budget_gbp": 1200, "spent_gbp": 1085.5}']
    assert decide("You have £114.50 left of your £1,200 budget.", context).label != "fail"
    assert [q.kind for q in extract('{"founded_year": 1998, "staff": 1998}')] == [
        "year",
        "count",
    ]


def test_a_negation_spanning_both_parts_of_a_claim_is_kept() -> None:
    """'has shipped, so it cannot be changed' restates 'cannot be changed after it has
    shipped' as a whole: the part without the negation does not make it a flip."""
    decision = decide(
        "Your booking has already started, so it cannot be cancelled.",
        "Bookings cannot be cancelled after they have started.",
    )
    assert decision.label != "fail"
