"""The offline judge end to end: the issue's reference examples, claims, quotes, confidence."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.decide.assessment import BinaryAssessment, Scale5Assessment
from guard.models import JudgeRequest, Label, ScoringMode
from guard.offline import OfflineJudge
from guard.offline.calibration import ONE_SOURCE_CAP
from guard.providers.base import JudgeOutcome

RETURNS = "Our return policy allows returns within 30 days."
PARIS = "Paris is the capital of France. It has a population of 2.1 million."


def prepared(
    output: str,
    context: str | list[str],
    question: str | None = None,
    mode: ScoringMode = ScoringMode.SCALE5,
) -> PreparedCase:
    settings = JudgeSettings(mode=mode)
    case = Guard(OfflineJudge(settings), settings).prepare(
        JudgeRequest(output=output, context=context, question=question)
    )
    assert isinstance(case, PreparedCase)
    return case


async def assess(
    output: str,
    context: str | list[str],
    question: str | None = None,
    mode: ScoringMode = ScoringMode.SCALE5,
) -> JudgeOutcome:
    return await OfflineJudge().assess(prepared(output, context, question, mode))


def grounded(outcome: JudgeOutcome) -> bool:
    a = outcome.assessment
    return a.grounded if isinstance(a, BinaryAssessment) else a.score >= 3


class TestReferenceExamples:
    async def test_a_wrong_return_window_fails_naming_both_numbers(self) -> None:
        outcome = await assess("You can return items within 90 days for a full refund.", RETURNS)
        assert not grounded(outcome)
        reason = outcome.assessment.claims[0].reason
        assert "90 days" in reason
        assert "30 days" in reason

    async def test_an_invented_founding_date_fails(self) -> None:
        outcome = await assess("Paris, the capital of France, was founded in 250 BC.", PARIS)
        assert not grounded(outcome)
        assert "250 BC" in outcome.assessment.claims[0].reason

    @pytest.mark.parametrize(
        ("output", "context"),
        [
            ("Paris, the capital of France, has about 2.1 million residents.", PARIS),
            ("You can return items within 30 days.", RETURNS),
        ],
    )
    async def test_faithful_paraphrases_pass(self, output: str, context: str) -> None:
        assert grounded(await assess(output, context))


class TestVerdictShape:
    async def test_outcome_is_offline_tier_with_a_confidence_and_no_usage(self) -> None:
        outcome = await assess("You can return items within 30 days.", RETURNS)
        assert outcome.tier == "offline"
        assert outcome.provider == "offline"
        assert outcome.confidence is not None
        assert 0.0 <= outcome.confidence <= 1.0
        assert outcome.usage.input_tokens == 0

    async def test_binary_mode_gives_a_binary_assessment(self) -> None:
        good = await assess(
            "You can return items within 30 days.", RETURNS, mode=ScoringMode.BINARY
        )
        bad = await assess("You can return items within 60 days.", RETURNS, mode=ScoringMode.BINARY)
        assert isinstance(good.assessment, BinaryAssessment)
        assert good.assessment.grounded
        assert isinstance(bad.assessment, BinaryAssessment)
        assert not bad.assessment.grounded

    async def test_each_claim_gets_a_verdict_and_quotes_are_exact_evidence_spans(self) -> None:
        case = prepared("Paris is the capital of France. It has 3 million residents.", PARIS)
        outcome = await OfflineJudge().assess(case)
        assert isinstance(outcome.assessment, Scale5Assessment)
        assert [c.supported for c in outcome.assessment.claims] == [True, False]
        quotes = [c.evidence_quote for c in outcome.assessment.claims]
        assert all(q is not None and q in case.evidence for q in quotes)

    async def test_some_claims_unsupported_scores_below_the_pass_mark(self) -> None:
        outcome = await assess("Paris is the capital of France. It was founded by Lyon.", PARIS)
        assert isinstance(outcome.assessment, Scale5Assessment)
        assert outcome.assessment.score <= 2
        assert "name 'Lyon' not in evidence" in outcome.assessment.explanation

    async def test_quoted_titles_must_occur_in_the_evidence(self) -> None:
        context = 'The film "Song of the South" was released in 1946.'
        assert grounded(await assess('"Song of the South" was released in 1946.', context))
        outcome = await assess('"Song of the North" was released in 1946.', context)
        assert not grounded(outcome)
        assert "quoted string 'Song of the North'" in outcome.assessment.claims[0].reason

    async def test_a_negated_claim_fails_on_a_positive_sentence(self) -> None:
        outcome = await assess("Our return policy does not allow returns within 30 days.", RETURNS)
        assert not grounded(outcome)
        assert "negation" in outcome.assessment.claims[0].reason


class TestShortAnswers:
    CONTEXT = (
        "The Oberoi family is an Indian family famous for hotels. The Oberoi Group is a "
        "hotel company with its head office in Delhi."
    )
    QUESTION = "The Oberoi family is part of a hotel company with a head office in what city?"

    async def test_a_short_answer_found_with_the_question_subject_passes(self) -> None:
        assert grounded(await assess("Delhi", self.CONTEXT, self.QUESTION))

    async def test_a_short_answer_absent_from_the_evidence_fails(self) -> None:
        outcome = await assess("Mumbai", self.CONTEXT, self.QUESTION)
        assert not grounded(outcome)
        assert "Mumbai" in outcome.assessment.claims[0].reason

    async def test_a_bare_yes_cannot_be_checked_so_it_is_undecided(self) -> None:
        outcome = await assess("Yes", self.CONTEXT, "Is the Oberoi Group a hotel company?")
        assert outcome.confidence is not None
        assert outcome.confidence <= 0.5
        assert "offline tier unsure" in outcome.assessment.explanation


class TestExplanation:
    async def test_an_unsure_answer_whose_claims_all_matched_does_not_say_unproven(self) -> None:
        # it said "1 of 1 claims proven; ... not everything proven", then "1 of 1 claims proven;
        # offline tier unsure": a match by a rule that did not decide is no proof
        outcome = await assess("Our return policy allows returns within 30 days.", RETURNS)
        explanation = outcome.assessment.explanation
        assert "1 of 1 claims matched" in explanation
        assert "claims proven" not in explanation
        assert "offline tier unsure" in explanation
        assert outcome.unsure is True
        assert outcome.assessment.claims[0].reason.startswith("not verified")


class TestConfidence:
    async def test_a_number_conflict_is_more_certain_than_a_vague_paraphrase(self) -> None:
        conflict = await assess("You can return items within 90 days.", RETURNS)
        vague = await assess("Returns are possible for a while.", RETURNS)
        assert conflict.confidence is not None
        assert vague.confidence is not None
        assert conflict.confidence > vague.confidence

    async def test_full_support_is_at_least_as_certain_as_partial_support(self) -> None:
        full = await assess("Paris is the capital of France.", PARIS)
        partial = await assess("Paris is the lovely capital of France.", PARIS)
        assert full.confidence is not None
        assert partial.confidence is not None
        assert grounded(full)
        assert full.confidence >= partial.confidence
        assert "1 of 1 claims matched" in full.assessment.explanation
        assert "0 of 1 claims matched" in partial.assessment.explanation

    async def test_a_verbatim_claim_is_matched_but_not_trusted_on_three_labelled_answers(
        self,
    ) -> None:
        """``pass:verbatim`` was decided 3 times in the labelled data (3 right): with the
        calibration's prior that is no proof, so the answer passes as unsure."""
        outcome = await assess("Paris is the capital of France.", PARIS)
        assert grounded(outcome)
        assert "verbatim" in outcome.assessment.explanation

    async def test_a_short_answer_beside_the_question_subject_is_a_pass(self) -> None:
        outcome = await assess("Delhi", TestShortAnswers.CONTEXT, TestShortAnswers.QUESTION)
        assert grounded(outcome)
        assert outcome.confidence is not None
        assert "pass:short_answer" in outcome.assessment.explanation
        # right 221 of 228 times, all on HaluEval: one source, so below the default threshold
        assert 0.5 < outcome.confidence <= ONE_SOURCE_CAP < JudgeSettings().cascade_confidence

    async def test_the_same_case_always_gets_the_same_outcome(self) -> None:
        case = prepared("Paris, the capital of France, has about 2.1 million residents.", PARIS)
        judge = OfflineJudge()
        first, second = await judge.assess(case), await judge.assess(case)
        assert first == second


async def test_guard_with_the_offline_judge_passes_and_fails_requests() -> None:
    settings = JudgeSettings()
    guard = Guard(OfflineJudge(settings), settings)
    good = await guard.judge_payload(
        {"output": "You can return items within 30 days.", "context": RETURNS}
    )
    bad = await guard.judge_payload(
        {"output": "You can return items within 90 days.", "context": [RETURNS]}
    )
    assert good.label is Label.PASS
    assert bad.label is Label.FAIL
    assert bad.judge.tier == "offline"
    assert bad.quote_check.fabricated == 0


class TestRelations:
    EVIDENCE = (
        "Boston College is a private research university in Chestnut Hill, Massachusetts. "
        "Stanford University is a private research university in Stanford, California."
    )

    async def test_two_names_never_mentioned_together_are_not_related_by_the_evidence(self) -> None:
        outcome = await assess("Stanford University is in Chestnut Hill.", self.EVIDENCE)
        assert not grounded(outcome)
        assert "never appear together" in outcome.assessment.claims[0].reason

    async def test_two_names_of_one_sentence_may_be_related(self) -> None:
        assert grounded(await assess("Boston College is in Chestnut Hill.", self.EVIDENCE))

    async def test_words_scattered_over_unrelated_sentences_are_not_stated_together(self) -> None:
        evidence = (
            "Alice Smith leads the finance team. The office cafeteria serves vegetarian "
            "lunches every Friday."
        )
        outcome = await assess("Alice Smith serves vegetarian lunches every Friday.", evidence)
        assert outcome.confidence is not None
        assert outcome.confidence < JudgeSettings().cascade_confidence
        assert "not together" in outcome.assessment.claims[0].reason
        assert "offline tier unsure" in outcome.assessment.explanation

    async def test_a_sentence_opening_with_a_pronoun_continues_its_subject(self) -> None:
        evidence = (
            "Acme Corp reported revenue of $4.2 billion for 2025. Net income fell to "
            "$310 million. The company employs about 18,000 people."
        )
        assert grounded(await assess("Acme has roughly 18,000 employees.", evidence))

    async def test_fields_of_a_tool_record_belong_to_the_record(self) -> None:
        record = (
            "Order 48213: 1 x rain jacket. Status: shipped on June 3 via UPS. "
            "Estimated delivery: June 6."
        )
        assert grounded(
            await assess(
                "Order 48213 shipped on June 3 via UPS and should arrive on June 6.", record
            )
        )
        assert not grounded(await assess("Order 48213 shipped on June 3 via DHL.", record))

    async def test_another_sentence_saying_the_opposite_fails_the_claim(self) -> None:
        evidence = (
            "The clinic is open Monday to Friday from 8 a.m. to 6 p.m. and on Saturday "
            "from 9 a.m. to 1 p.m. It is closed on Sundays and public holidays."
        )
        outcome = await assess("The clinic is open on Sundays from 9 a.m. to 1 p.m.", evidence)
        assert not grounded(outcome)
        assert "opposite meaning" in outcome.assessment.claims[0].reason

    async def test_a_short_sentence_with_a_verb_is_a_claim_not_a_short_answer(self) -> None:
        question = "Who directed Beowulf?"
        evidence = (
            "Beowulf is a 2007 film directed by Robert Zemeckis. Neil Gaiman is an "
            "English author of comics."
        )
        outcome = await assess("Neil Gaiman directed Beowulf.", evidence, question)
        assert not grounded(outcome)


_WORDS = st.sampled_from(
    [
        "Paris",
        "capital",
        "France",
        "returns",
        "30",
        "days",
        "90",
        "$5",
        "not",
        "never",
        "the",
        "is",
        "was",
        "founded",
        "in",
        "250",
        "BC",
        "2.1",
        "million",
        "Lyon",
        '"quoted',
        'text"',
        "and",
        "but",
        ",",
        ".",
        ";",
        "Mr.",
        "D.C.",
        "twenty-first",
        "March",
        "5,",
        "2020",
        "it",
        "The",
        "company",
        "–",
        "é",
        "\n",
        "?",
        "!",
        "50%",
        "per",
        "cent",
        "a",
        "week",
        "Yes,",
    ]
)
_TEXT = st.lists(_WORDS, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(output=_TEXT, evidence=_TEXT, question=st.none() | _TEXT)
async def test_any_text_gets_a_bounded_confidence_and_only_real_quotes(
    output: str, evidence: str, question: str | None
) -> None:
    settings_ = JudgeSettings()
    case = Guard(OfflineJudge(settings_), settings_).prepare(
        JudgeRequest(output=output, context=evidence, question=question)
    )
    if not isinstance(case, PreparedCase):
        return  # nothing left to judge after sanitising: the engine decides, not the judge
    outcome = await OfflineJudge().assess(case)
    assert outcome.confidence is not None
    assert 0.0 <= outcome.confidence <= 1.0
    for claim in outcome.assessment.claims:
        assert claim.evidence_quote is None or claim.evidence_quote in case.evidence


@pytest.mark.parametrize("mode", [ScoringMode.SCALE5, ScoringMode.BINARY])
@pytest.mark.parametrize(
    "output",
    [
        "Возврат невозможен, деньги не возвращаются.",
        "不能退货。",
        "退货期为90天。",
        "لا يمكن إرجاع المنتجات.",
    ],
)
async def test_text_the_rules_cannot_read_is_undecided_never_confident(
    output: str, mode: ScoringMode
) -> None:
    """No checkable claims: the offline judge flags only what it can show, so the answer
    passes with a low confidence and says the offline tier was unsure (a cascade asks its
    LLM)."""
    outcome = await assess(output, "Our return policy allows returns within 30 days.", mode=mode)
    assert grounded(outcome)
    assert outcome.confidence is not None
    assert outcome.confidence < JudgeSettings().cascade_confidence
    assert "offline tier unsure" in outcome.assessment.explanation


class TestOfflineOnlyVerdicts:
    """The embedded default: every message gets a label, and an unsure one says so."""

    async def test_unsure_is_true_exactly_when_the_offline_tier_could_not_decide(self) -> None:
        """A decided fail is not unsure though its confidence is below cascade_confidence
        (it said unsure on every offline verdict); routing on ``judge.unsure`` sends a
        reviewer the undecided passes and nothing else (README: route on them)."""
        settings = JudgeSettings()
        guard = Guard(OfflineJudge(settings), settings)
        payloads = {
            "fail": {"output": "You can return items within 90 days.", "context": RETURNS},
            "undecided": {
                "output": "Customers love how quick and friendly the whole process feels.",
                "context": RETURNS,
            },
            "day": {
                "output": "The store opens on Tuesday.",
                "context": "The store opens on Monday.",
            },
            "annotated": {  # an unsupported addition: a rule that annotates, decides nothing
                "output": "The outage on March 14, 2026 lasted 47 minutes and was caused by a "
                "failed database migration.",
                "context": "On March 14, 2026, the EU-West region had an outage lasting 47 "
                "minutes. The cause was an expired TLS certificate on the load balancer.",
            },
        }
        verdicts = {k: await guard.judge_payload(v) for k, v in payloads.items()}
        assert verdicts["fail"].label is Label.FAIL
        assert verdicts["fail"].confidence is not None
        assert verdicts["fail"].confidence < settings.cascade_confidence
        assert verdicts["fail"].judge.unsure is False
        assert verdicts["day"].label is Label.FAIL  # a weekday is a time: the time rule's record
        review = {k for k, v in verdicts.items() if v.judge.unsure}
        assert review == {"undecided", "annotated"}
        assert "unsupported_addition" in verdicts["annotated"].explanation
        assert all(v.judge.unsure == (v.label is Label.PASS) for v in verdicts.values())

    async def test_an_undecided_answer_passes_and_the_verdict_says_the_tier_was_unsure(
        self,
    ) -> None:
        settings = JudgeSettings()
        guard = Guard(OfflineJudge(settings), settings)
        verdict = await guard.judge_payload(
            {
                "output": "Customers love how quick and friendly the whole process feels.",
                "context": RETURNS,
            }
        )
        assert verdict.label is Label.PASS
        assert verdict.judge.tier == "offline"
        assert verdict.judge.unsure
        assert verdict.confidence is not None
        assert verdict.confidence < settings.cascade_confidence
        assert "offline tier unsure" in verdict.explanation
        assert verdict.unsupported_claims == []

    async def test_a_contradiction_fails_and_names_what_it_compared(self) -> None:
        settings = JudgeSettings()
        guard = Guard(OfflineJudge(settings), settings)
        verdict = await guard.judge_payload(
            {"output": "You can return items within 90 days.", "context": [RETURNS]}
        )
        assert verdict.label is Label.FAIL
        assert verdict.claims[0].quote_found
        assert "[1]" in verdict.claims[0].reason
