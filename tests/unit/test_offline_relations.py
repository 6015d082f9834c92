"""Relations the offline judge reads across the evidence (issue 10, held-out categories): a
negation flipped against the clause a claim restates, wherever it sits and in es/de/fr too; a
universal where the evidence limits the noun; comparisons across documents or against the
claim's own amounts; who said what. And the grounded restatements of those that must never
fail."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest

from guard import Guard, JudgeSettings
from guard.case import Passage, PreparedCase
from guard.models import JudgeRequest
from guard.offline import OfflineJudge, comparison, entities, polarity, quantifiers
from guard.offline.align import EvidenceIndex
from guard.offline.claims import split_claims
from guard.offline.judge import Decision
from tests.unit.offline_helpers import decide


def index(*texts: str) -> EvidenceIndex:
    passages = tuple(Passage(f"[{n}]", t) for n, t in enumerate(texts, 1))
    return EvidenceIndex.build(passages, "\n".join(texts))


def failed_by(decision: Decision) -> set[str]:
    return {r.basis for r in decision.results if r.status == "contradicted"}


PARKING = (
    "Visitor parking. Permits bought through the app are valid in zones A and B only; "
    "they cannot be used in the hospital car park. Each permit lasts 24 hours."
)


class TestNegatedClause:
    @pytest.mark.parametrize(
        ("claim", "context"),
        [
            # the negated clause opens with a pronoun: its subject is in the clause before
            ("Permits bought through the app can be used in the hospital car park.", PARKING),
            # the negation sits in the sentence after the one naming the subject
            (
                "The bulk import endpoint is idempotent.",
                "POST /v3/bulk-import loads a CSV file. The endpoint is not idempotent: "
                "repeating a request imports the rows again.",
            ),
            # two cues against one: "may ... without" against "must not ... without"
            (
                "Tenants may keep a pet without written permission from the landlord.",
                "Tenants must not keep a pet without written permission from the landlord.",
            ),
        ],
    )
    def test_the_opposite_polarity_of_the_restated_clause_fails(
        self, claim: str, context: str
    ) -> None:
        decision = decide(claim, [context])
        assert decision.label == "fail"
        assert "negation" in decision.basis

    @pytest.mark.parametrize(
        ("claim", "context"),
        [
            ("Permits from the app can't be used in the hospital car park.", PARKING),
            # "notice-free" is "without notice"
            (
                "You get two notice-free withdrawals a year.",
                "Two withdrawals a year without notice are allowed.",
            ),
            # a limit the clause sets is not the claim's statement
            (
                "Adults can take one or two tablets every four to six hours.",
                "Take 1 to 2 tablets every 4 to 6 hours. Do not take more than 8 tablets in "
                "24 hours.",
            ),
            # "stopped sending" negates without a cue
            (
                "Reminder emails weren't sent between 9 and 10.",
                "Between 9 and 10 a faulty worker stopped sending reminder emails.",
            ),
            # the list item takes the polarity of its sentence
            (
                "Damage from floods, fire or theft isn't included.",
                "The policy covers accidental damage and does not cover damage from floods, "
                "fire or theft.",
            ),
        ],
    )
    def test_a_restatement_that_keeps_the_polarity_is_not_failed(
        self, claim: str, context: str
    ) -> None:
        assert "negation_clause" not in failed_by(decide(claim, [context]))

    @pytest.mark.parametrize(
        ("claim", "context"),
        [
            (
                "Puede tomar este jarabe durante la lactancia sin consultar a su médico.",
                "No tome este jarabe durante la lactancia sin consultar antes a su médico.",
            ),
            (
                "Die Karte kann im Ausland benutzt werden.",
                "Die Karte kann nicht im Ausland benutzt werden.",
            ),
            (
                "Les animaux sont acceptés dans les chambres.",
                "Les animaux ne sont pas acceptés dans les chambres.",
            ),
            (
                "Il biglietto è rimborsabile dopo la partenza.",
                "Il biglietto non è rimborsabile dopo la partenza.",
            ),
            (
                "O cartão pode ser usado no estrangeiro.",
                "O cartão não pode ser usado no estrangeiro.",
            ),
        ],
    )
    def test_negations_are_read_in_spanish_german_french_italian_portuguese(
        self, claim: str, context: str
    ) -> None:
        assert polarity.flipped_clause(claim, index(context)) is not None
        assert polarity.flipped_clause(context, index(context)) is None

    def test_negations_are_counted(self) -> None:
        assert polarity.cues("It is not unusual.") == 1
        assert polarity.cues("You can't leave without paying.") == 2
        assert polarity.cues("A fee-free account, nothing to pay.") == 2
        assert polarity.cues("Not only cheap but fast.") == 0


class TestLimitedNouns:
    @pytest.mark.parametrize(
        ("claim", "context", "limit"),
        [
            (
                "The storm cut power to all households in the valley.",
                "The storm cut power to some households in the valley for six hours.",
                "some households",
            ),
            (
                "Any booking can be cancelled free of charge.",
                "Bookings over 30 days ahead can be cancelled free of charge.",
                "Bookings over 30",
            ),
            (
                "All trains have a quiet coach.",
                "Long-distance trains have a quiet coach; regional trains do not.",
                "Long-distance trains",
            ),
            (
                "Every card payment abroad is free.",
                "Card payments in euro are free. Card payments in other currencies cost 1%.",
                "payments in other currencies",
            ),
        ],
    )
    def test_all_of_a_noun_the_evidence_limits_fails(
        self, claim: str, context: str, limit: str
    ) -> None:
        found = quantifiers.shifted(claim, index(context))
        assert found is not None
        assert limit in found[0]
        assert "quantifier_limited" in failed_by(decide(claim, [context]))

    @pytest.mark.parametrize(
        ("claim", "context"),
        [
            (
                "All bookings over 30 days ahead can be cancelled free.",
                "Bookings over 30 days ahead can be cancelled free of charge.",
            ),
            ("Every order ships free.", "All orders ship free; most arrive in two days."),
            ("Not every booking can be cancelled.", "Some bookings can be cancelled."),
            # "any" under a negation says none, not all
            ("The fee is not charged on any transfers.", "Some transfers over €1,000 pay a fee."),
        ],
    )
    def test_a_kept_limit_or_a_universal_evidence_is_not_failed(
        self, claim: str, context: str
    ) -> None:
        assert quantifiers.shifted(claim, index(context)) is None
        decision = decide(claim, [context])
        assert not failed_by(decision) & {"quantifier", "quantifier_limited"}


class TestComparisons:
    def test_a_comparison_across_two_documents_is_read(self) -> None:
        context = ["Basic plan: 20 GB storage, one user.", "Team plan: 200 GB storage."]
        failed = decide("The Team plan has less storage than the Basic plan.", context)
        assert failed.label == "fail"
        assert "comparison_reversed" in failed_by(failed)
        held = decide("The Team plan has more storage than the Basic plan.", context)
        assert "comparison_reversed" not in failed_by(held)

    def test_models_named_by_their_figures_are_compared(self) -> None:
        context = ["Tablet 10 32 GB: £329. Tablet 10 256 GB: £449."]
        wrong = decide("The 32 GB model is more expensive than the 256 GB model.", context)
        assert "comparison_reversed" in failed_by(wrong)
        right = decide("The 256 GB model is more expensive than the 32 GB model.", context)
        assert "comparison_reversed" not in failed_by(right)

    @pytest.mark.parametrize(
        ("claim", "reversed_"),
        [
            ("The evening course costs more: £300 a term against £450.", True),
            ("The evening course costs less: £300 a term against £450.", False),
            ("The express is faster, 40 minutes against 65 by bus.", False),
            ("The express is slower, 40 minutes against 65 by bus.", True),
        ],
    )
    def test_a_claim_whose_own_amounts_reverse_it(self, claim: str, reversed_: bool) -> None:
        assert (comparison.reversed_comparison(claim, ()) is not None) is reversed_


class TestWhoSaidWhat:
    LETTERS: ClassVar[list[dict[str, str]]] = [
        {"id": "gp", "source": "GP note, Dr Amara Osei", "text": "Blood pressure 150/95 today."},
        {
            "id": "renal",
            "source": "Renal clinic letter, Dr Henrik Dahl",
            "text": "I recommend stopping the ibuprofen and repeating the blood test in a month.",
        },
    ]

    def test_a_recommendation_credited_to_the_wrong_author_fails(self) -> None:
        decision = decide(
            "Dr Osei recommended stopping the ibuprofen and repeating the blood test.",
            self.LETTERS,
        )
        assert "attribution" in failed_by(decision)

    def test_the_right_author_with_a_role_apposition_is_not_failed(self) -> None:
        decision = decide(
            "Dr Dahl, the kidney specialist, suggests stopping the ibuprofen and repeating the "
            "blood test in a month.",
            self.LETTERS,
        )
        assert decision.label != "fail"

    EMAILS: ClassVar[list[dict[str, str]]] = [
        {
            "id": "e1",
            "source": "Email from the letting agent",
            "text": "The boiler will be replaced on Friday.",
        },
        {"id": "e2", "source": "Email from the landlord", "text": "I have approved the budget."},
    ]

    def test_a_statement_credited_to_the_wrong_role_fails(self) -> None:
        decision = decide("The landlord said the boiler will be replaced on Friday.", self.EMAILS)
        assert "attribution" in failed_by(decision)

    @pytest.mark.parametrize(
        "output",
        [
            "The letting agent said the boiler will be replaced on Friday.",
            "According to the letting agent, the boiler will be replaced on Friday.",
            "They said the boiler will be replaced on Friday.",
        ],
    )
    def test_a_statement_credited_to_its_author_is_not_failed(self, output: str) -> None:
        assert "attribution" not in failed_by(decide(output, self.EMAILS))

    def test_a_subject_set_off_by_an_apposition_stays_with_its_predicate(self) -> None:
        claims = split_claims("The auditor, Ms Rao, asked for the invoices to be kept.")
        assert [c.text for c in claims] == [
            "The auditor, Ms Rao, asked for the invoices to be kept."
        ]

    def test_a_date_in_a_document_header_is_evidence(self) -> None:
        context = [{"id": "t1", "source": "Billing note, 12 May", "text": "Refund of £40 sent."}]
        decision = decide("The refund of £40 was sent on 12 May.", context)
        assert decision.label != "fail"


def test_a_label_opening_a_sentence_is_no_certain_name() -> None:
    (name,) = entities.names("Size L is in stock online.")
    assert name.guessed
    decision = decide(
        "Size L is in stock online and size M is at the Leeds store.",
        ['{"online": {"M": 0, "L": 4}, "stores": [{"store": "Leeds", "M": 2}]}'],
    )
    assert decision.label != "fail"


class TestGroundedFormsAreNotFailed:
    """Grounded answers in forms real traffic has (tables, record fields, conditions, worked
    computations, time zones): none may be a confident fail."""

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            # a Markdown table: its header cells are labels, not names
            (
                "| Room | Price |\n|---|---|\n| Single | €80 |\n| Double | €110 |",
                ["Single rooms cost €80 a night. Double rooms cost €110 a night."],
            ),
            # a record line refers back to the one before it: its own words say Thursday
            (
                "Dr Okafor's clinic runs on Mondays; the physio clinic is on Wednesdays.",
                [
                    {
                        "id": "t",
                        "source": "timetable",
                        "text": "Monday: Dr Okafor. Wednesday: physio clinic.",
                    }
                ],
            ),
            # the negated claim restates the main clause; the condition keeps its own polarity
            (
                "The plan doesn't cover dental work unless you bought the dental add-on.",
                ["Dental work is excluded, unless you add Dental Cover to your plan."],
            ),
            # a computation of more steps than the arithmetic tries, its operands all grounded
            (
                "Your overall grade is 74%: 50% of the project (80) plus 50% of the exam (68).",
                ["Overall grade = 50% project + 50% exam. Project: 80. Exam: 68."],
            ),
            # a time zone beside a city is no name in the city's slot
            (
                "The webinar starts at 14:00 in Paris.",
                ["The webinar starts at 14:00 CET (Paris)."],
            ),
            # a change from one day to another names two days, not the days between
            (
                "The review moved from Monday to Wednesday, same time.",
                ["Update: the review has moved from Monday 09:00 to Wednesday 09:00."],
            ),
            # a code written with a space
            ("Your train ICE 578 leaves at 08:12.", ['{"train": "ICE578", "dep": "08:12"}']),
            # a count the evidence writes as an ordinal
            (
                "The late fee applies once you're three days overdue.",
                ["A late fee is charged from the third day after the due date."],
            ),
            # a negation and a negating prefix say the same thing
            (
                "On the Team plan there's no limit on projects.",
                ["Team plan: unlimited projects, 10 users."],
            ),
            # an age band written with a hyphen is a number of the evidence
            (
                "Nobody under 12 can use the pool without an adult.",
                ["Under-12s must be accompanied by an adult in the pool."],
            ),
            # a record's next field is not what its number counts
            (
                "Your order (3 items) arrives in two parcels: the lamp tomorrow, two cushions "
                "next week.",
                ['{"order": "77212", "items": [{"name": "lamp"}, {"name": "cushion", "qty": 2}]}'],
            ),
            # a rise as a share of the old amount
            (
                "The fee went up by 5% in January: it is now €21 a month instead of €20.",
                ["From 1 January the monthly fee rises from €20 to €21."],
            ),
            # a fraction is no ordinal ("a third of")
            (
                "About a third of the members voted for the change.",
                ["Of 300 members, 104 voted for the change."],
            ),
            # a summary's framing restates the evidence: no addition of its own
            (
                "Overall the survey finds that staff morale has improved, with the average "
                "score up from 6.1 to 7.4.",
                ["Average staff satisfaction score rose from 6.1 in 2024 to 7.4 in 2025."],
            ),
            # a conclusion whose date the evidence gives, in words of its own
            (
                "Your phone was delivered on 4 April and has a one-year warranty, so you're "
                "protected until 4 April next year.",
                ["Order 5512: phone delivered 4 April 2026.", "Phones carry a 12-month warranty."],
            ),
            # "monthly" for "per month": how often, said another way
            (
                "Plan A has a higher monthly fee than Plan B.",
                ["Plan A: £25 per month. Plan B: £18 per month."],
            ),
            # a legal "thirty (30) days" is a duration; a month does not convert exactly
            (
                "Either party can end the agreement with one month's written notice.",
                ["Either party may terminate on not less than thirty (30) days' written notice."],
            ),
            # "level three" is the 3rd
            (
                "The clinic is on the 3rd floor.",
                ["The clinic is on level three of the health centre."],
            ),
            # a common technical abbreviation is no missing name
            (
                "The API returns at most 50 results per page.",
                ["Search results are paginated; a page holds up to 50 results."],
            ),
            (
                "It interacts with warfarin, so your GP should check your INR more often.",
                ["Interactions: increases the effect of warfarin. Monitor INR closely."],
            ),
        ],
    )
    def test_a_grounded_form_is_not_failed(self, output: str, context: list[str]) -> None:
        decision = decide(output, context, "When is it?")
        assert decision.label != "fail", [r.reason for r in decision.results]

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            (
                "The fee went up by 10%, from €20 to €21.",
                ["The monthly fee rises from €20 to €21."],
            ),
            (
                "You bought 50 seats; 30 are assigned and 5 are pending, so 18 remain.",
                ["Seats purchased: 50. Assigned: 30. Pending invitations: 5."],
            ),
        ],
    )
    def test_a_wrong_computation_still_fails(self, output: str, context: list[str]) -> None:
        assert decide(output, context, "How many?").label == "fail"


def test_an_age_band_is_a_number_and_a_code_is_not() -> None:
    from guard.offline import numbers

    assert [q.value for q in numbers.extract("Under-12s and over-65s go free.")] == [12.0, 65.0]
    assert numbers.extract("COVID-19 rules, form A-38.") == []


@pytest.mark.parametrize(
    ("text", "short"),
    [
        ("Members can't bring guests.", False),
        ("All flights include a free meal.", False),
        ("All Saints", True),
        ("Growth includes up to 3 users.", False),
        ("The ticket costs £5.", False),
        ("Two days", True),
        ("President Richard Nixon", True),
        ("6.213 km long", True),
    ],
)
def test_a_short_sentence_with_a_verb_is_no_short_answer(text: str, short: bool) -> None:
    from guard.offline.claims import is_short_answer

    assert is_short_answer(text) is short


def test_a_short_claim_is_not_passed_as_an_answer_beside_the_question() -> None:
    decision = decide(
        "Growth includes up to 3 users.",
        ["Starter includes up to 3 users. Growth includes unlimited users."],
        "How many users does Growth include?",
    )
    assert decision.label != "pass"


def decide_conversation(output: str, tool: dict[str, object]) -> Decision:
    settings = JudgeSettings()
    request = JudgeRequest.model_validate(
        {
            "output": output,
            "messages": [
                {"role": "user", "content": "Can you check?"},
                {"role": "tool", "name": "lookup", "content": json.dumps(tool)},
            ],
            "context_field": "messages",
        }
    )
    case = Guard(OfflineJudge(settings), settings).prepare(request)
    assert isinstance(case, PreparedCase)
    return OfflineJudge(settings).decide(case)


@pytest.mark.parametrize(
    ("output", "tool"),
    [
        # a code the tool writes without its space is no name absent from the places
        (
            "Your train IC 2041 leaves Leipzig at 07:50.",
            {"train": "IC2041", "from": "Leipzig Hbf", "dep": "07:50"},
        ),
        # a total of three amounts, said with "totalling"
        (
            "You have 3 unpaid invoices totalling $900; the oldest is 30 days overdue.",
            {"unpaid": [{"amount": 500, "days": 30}, {"amount": 250}, {"amount": 150}]},
        ),
        # an ISO date-time holds a time of day
        (
            "Dr Ruiz has a free slot on Tuesday at 11:15.",
            {"doctor": "Dr Ruiz", "free_slots": ["2026-06-09T11:15 (Tue)"]},
        ),
    ],
)
def test_a_tool_result_read_as_its_json_writes_it(output: str, tool: dict[str, object]) -> None:
    decision = decide_conversation(output, tool)
    assert decision.label != "fail", [r.reason for r in decision.results]


@pytest.mark.parametrize(
    ("output", "context", "wrong"),
    [
        ("La farmacia cierra a las nueve de la noche.", "Horario: de 9:00 a 21:00.", False),
        ("La farmacia cierra a las diez de la noche.", "Horario: de 9:00 a 21:00.", True),
        ("La pharmacie ferme à 8 heures du soir.", "Horaires : 9h00 - 20h00.", False),
        ("Die Apotheke schließt um neun Uhr abends.", "Öffnungszeiten: 9:00-21:00 Uhr.", False),
        ("Die Apotheke schließt um zehn Uhr abends.", "Öffnungszeiten: 9:00-21:00 Uhr.", True),
    ],
)
def test_an_hour_with_its_part_of_the_day_is_a_time(output: str, context: str, wrong: bool) -> None:
    decision = decide(output, [context], "¿Hasta qué hora?")
    assert (decision.label == "fail") is wrong, [r.reason for r in decision.results]
