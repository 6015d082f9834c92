"""The offline judge: deterministic, pure Python, no network, no model.

It splits the output into claims, checks each against the evidence
(:mod:`guard.offline.checks`) and decides the answer selectively: *fail* when a claim is
contradicted by something it can show, *pass* when every claim is proven near-verbatim, and
*undecided* otherwise. An undecided answer passes (the offline judge flags only what it can
show) with a low confidence and an explanation that says so, so a cascade asks its LLM and an
offline-only deployment can route on confidence. Confidence is the calibrated accuracy of the
rule that decided (:mod:`guard.offline.calibration`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from guard.case import Passage, PreparedCase
from guard.decide.assessment import Assessment, BinaryAssessment, ClaimAssessment, Scale5Assessment
from guard.models import ScoringMode, Usage
from guard.offline import arithmetic, hearsay, numbers
from guard.offline.align import MAX_SENTENCES, EvidenceIndex
from guard.offline.calibration import Calibration, bundled
from guard.offline.checks import ClaimResult, Premise, check_claim
from guard.offline.claims import Claim, split_claims
from guard.offline.details import Answer
from guard.offline.families import family
from guard.offline.lexicon import european
from guard.offline.registry import ANSWER_RULES, RULES
from guard.offline.rules import AnswerView
from guard.offline.status import off_rules
from guard.offload import off_loop
from guard.providers.base import JudgeOutcome
from guard.settings import JudgeSettings

OFFLINE_MODEL = "offline-v2"
MAX_CLAIMS = 48  # claims checked per answer; a longer answer is undecided past them
LATIN_SHARE = 0.7  # below this share of Latin letters the output is not checkable here
CHECK_COST = 20  # CPU of the checks per character, in characters of a linear scan (guard.offload)
REORDERED_BASIS = "fail:display_reordered"
_SCORES: dict[str, Literal[1, 2, 3, 4, 5]] = {"fail": 1, "undecided": 4, "pass": 5}


@dataclass(frozen=True)
class Decision:
    """The answer-level outcome: its label, the rule that decided it, and how sure it is."""

    label: Literal["pass", "fail", "undecided"]
    basis: str
    confidence: float
    results: tuple[ClaimResult, ...]

    @property
    def grounded(self) -> bool:
        return self.label != "fail"


class OfflineJudge:
    """Implements :class:`guard.providers.base.Judge` with rules instead of a model."""

    provider = "offline"
    model = OFFLINE_MODEL

    def __init__(
        self,
        settings: JudgeSettings | None = None,
        *,
        calibration: Calibration | None = None,
    ) -> None:
        self.settings = settings or JudgeSettings()
        self.calibration = calibration or bundled()
        # the rules this table switched off do not run (every rule runs with an empty table)
        self.skip = off_rules(RULES, self.calibration)

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        # the checks are CPU only, about CHECK_COST times a linear scan: off the event loop
        cost = CHECK_COST * (len(case.output) + len(case.evidence))
        decision = await off_loop(cost, self.decide, case)
        # unsure exactly when no rule the labelled data vouches for decided: the answer passes
        # unflagged and a subscriber routes on it (a decided verdict's confidence says how sure)
        unsure = decision.label == "undecided" or decision.basis == REORDERED_BASIS
        return JudgeOutcome(
            assessment=_assessment(case, decision),
            provider=self.provider,
            model=self.model,
            usage=Usage(),
            tier="offline",
            confidence=decision.confidence,
            unsure=unsure,
            grounded_p=decision.confidence if decision.grounded else 1.0 - decision.confidence,
            basis=decision.basis,
        )

    def decide(self, case: PreparedCase) -> Decision:
        """The decision on ``case`` (synchronous; :meth:`assess` wraps it). An output a reader
        sees in another order than it is stored is not checked: it fails, with confidence 0
        so a cascade asks its LLM (:mod:`guard.prepare.bidi`)."""
        if case.display_reordered:
            return Decision("fail", REORDERED_BASIS, 0.0, ())
        return decide(self.check(case), self.calibration, truncated=self.too_long(case))

    def check(self, case: PreparedCase) -> list[ClaimResult]:
        """The per-claim results for ``case``."""
        passages, evidence = hearsay.evidence_of(tuple(case.passages), case.evidence)
        index = _index(passages, evidence, case.labels)
        if not latin_script(case.output):
            return _numbers_only(
                case.output, case.question, index
            )  # words of other scripts: unread
        premise = Premise.of(case.question)
        answer = Answer.of(case.output, index)
        claims = list(dict.fromkeys(_claims(case.output, bool(case.question))))
        readable = _readable(case.output, case.question)
        results = [
            check_claim(claim, index, premise, answer, readable=readable, skip=self.skip)
            for claim in claims[:MAX_CLAIMS]
        ]
        if readable:
            results = _whole_answer(claims, results, index, premise, case.output, self.skip)
        return [_unread(r) for r in results] if index.capped else results

    def too_long(self, case: PreparedCase) -> bool:
        return len(_claims(case.output, bool(case.question))) > MAX_CLAIMS

    async def aclose(self) -> None:
        return None


ID_DIGITS = 5  # a bare number this long is an id (an order, a ticket), not an amount stated


def _numbers_only(output: str, question: str | None, index: EvidenceIndex) -> list[ClaimResult]:
    """An answer in a script the rules do not read (Russian, Chinese, Arabic ...): only its
    numbers are checked. A number the evidence neither states nor computes, where the evidence
    states numbers of that kind, fails the answer ("90 дней" against "30 дней"); a number the
    question gives, or a bare count of ``ID_DIGITS`` digits or more (an order number), is not
    checked. Otherwise nothing is decided (no results: undecided, the next tier reads the
    words)."""
    asked = {q.value for q in numbers.extract(question or "")}
    for quantity in numbers.extract(output)[:MAX_CLAIMS]:
        if quantity.value in asked or (
            quantity.kind == "count" and len(quantity.text.strip()) >= ID_DIGITS
        ):
            continue
        if index.amounts.supports(quantity) or arithmetic.derivable(quantity, index.quantities):
            continue
        stated = [q for q in index.quantities if q.kind == quantity.kind]
        if stated:
            return [
                ClaimResult(
                    output[:200],
                    "contradicted",
                    "number_absent",
                    f"number {quantity.text} not in evidence (it states "
                    f"{', '.join(q.text for q in stated[:3])})",
                )
            ]
    return []


def _whole_answer(
    claims: list[Claim],
    results: list[ClaimResult],
    index: EvidenceIndex,
    premise: Premise,
    output: str,
    skip: frozenset[str] = frozenset(),
) -> list[ClaimResult]:
    """The checks that read a claim with the rest of the answer and the question, in the
    order of :data:`~guard.offline.registry.ANSWER_RULES`: names assembled from pieces, one
    thing said of two, the answer to the question and the kind of detail it asks for, the
    doer an act is credited to. Each reads the results the one before left."""
    view = AnswerView(claims, results, index, premise, output)
    for rule in ANSWER_RULES:
        if rule.status != "off" and rule.name not in skip:
            view = view.applied(rule.check(view))
    return view.results


TOO_FEW_TO_TELL = 6  # words of an output below which its language is read off the question


def _readable(output: str, question: str | None) -> bool:
    """Whether the rules read the output's words: not Spanish, German or French. An output of
    a few words ("30 Arbeitstage pro Jahr") is too short to tell, so a question in one of
    those languages decides it (its capitalised nouns are not names)."""
    if european(output):
        return False
    return not (question and len(output.split()) < TOO_FEW_TO_TELL and european(question))


@lru_cache(maxsize=4)
def _index(passages: tuple[Passage, ...], evidence: str, labels: str) -> EvidenceIndex:
    """The evidence of one case, indexed once for every window of its output (the windows of
    one message share their evidence; its lazy caches only ever grow)."""
    return EvidenceIndex.build(passages, evidence, labels)


@lru_cache(maxsize=8)
def _claims(output: str, answers_question: bool) -> tuple[Claim, ...]:
    """The claims of one window, split once for :meth:`OfflineJudge.check` and
    :meth:`OfflineJudge.too_long` (a short answer is one claim either way)."""
    return tuple(split_claims(output, answers_question=answers_question))


def _unread(result: ClaimResult) -> ClaimResult:
    """A claim judged on part of the evidence only: a sentence never read may prove or refute
    it, so whatever the read part showed leaves it undecided (and never an addition: words
    past the cap only look missing)."""
    if result.status == "neutral":
        return result
    return replace(
        result,
        status="undecided",
        basis="evidence_capped",
        reason=f"the evidence has more than {MAX_SENTENCES} sentences and only the "
        f"first were read (they showed: {result.reason})",
    )


def latin_script(text: str) -> bool:
    """Whether most letters of ``text`` are Latin (the only script the rules read)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return True
    latin = sum(1 for ch in letters if ch.isascii() or "LATIN" in unicodedata.name(ch, ""))
    return latin / len(letters) >= LATIN_SHARE


def decide(
    results: list[ClaimResult],
    calibration: Calibration,
    *,
    truncated: bool = False,
    vetted: bool = True,
) -> Decision:
    """Fail on the surest contradiction; pass when every factual claim is proven; else
    undecided. Only ``active`` rules decide (:meth:`Calibration.status`): a contradiction by
    an ``annotate`` rule is reported on its claim and leaves the claim undecided, one by an
    ``off`` rule is dropped the same way. ``vetted=False`` lets every rule decide: how the
    calibration counts each rule's record, unproven rules included."""
    results = _additions(results)
    if vetted:
        results = [_vetted(r, calibration) for r in results]
    failed = [r for r in results if r.status == "contradicted"]
    if failed:
        confidence, basis = max(
            (calibration.confidence(key), key) for key in (_key("fail", r) for r in failed)
        )
        return Decision("fail", basis, confidence, tuple(results))
    factual = [r for r in results if r.status != "neutral"]
    if factual and not truncated and all(r.status == "supported" for r in factual):
        confidence, basis = min(
            (calibration.confidence(key), key) for key in (_key("pass", r) for r in factual)
        )
        if not vetted or all(calibration.status(_key("pass", r)) == "active" for r in factual):
            return Decision("pass", basis, confidence, tuple(results))
        # a proof no labelled data vouches for (or one more often wrong than right) proves nothing
        basis = basis.replace("pass:", "undecided:unproven_", 1)
        return Decision("undecided", basis, calibration.confidence(basis), tuple(results))
    basis = _undecided_basis(results, factual)
    return Decision("undecided", basis, calibration.confidence(basis), tuple(results))


def _key(label: str, result: ClaimResult) -> str:
    """The calibration key of a claim's finding: its label and the rule it counts under
    (:func:`guard.offline.families.family`): "fail:time_contradicted" for a weekday."""
    return f"{label}:{family(result.basis)}"


def _vetted(result: ClaimResult, calibration: Calibration) -> ClaimResult:
    """``result`` with a contradiction by a rule that is not ``active`` made undecided, the
    finding kept in its reason (``refuted_X`` for an ``off`` rule, ``unproven_X`` for one
    that only annotates)."""
    if result.status != "contradicted":
        return result
    status = calibration.status(_key("fail", result))
    if status == "active":
        return result
    if status == "off":
        basis, note = f"refuted_{result.basis}", "a rule more often wrong than right"
    else:
        basis, note = f"unproven_{result.basis}", "a rule too few labelled answers vouch for"
    return replace(
        result, status="undecided", basis=basis, reason=f"{result.reason} ({note}: decides nothing)"
    )


ADDITION_SUPPORT = 0.34  # a claim this unsupported ...
GROUNDED_SUPPORT = 0.8  # ... among claims mostly this well supported is an addition


def _additions(results: list[ClaimResult]) -> list[ClaimResult]:
    """In an answer whose claims are mostly supported, a claim with almost none of its words
    in the evidence is an addition of the answer's own (a weak failure, never a confident
    one: calibration caps it)."""
    factual = [r for r in results if r.status != "neutral"]
    grounded = [r for r in factual if r.support >= GROUNDED_SUPPORT]
    if len(factual) < 2 or len(grounded) * 2 < len(factual):
        return results
    return [
        replace(
            r,
            status="contradicted",
            basis="unsupported_addition",
            reason=f"an addition the evidence does not support: {r.reason}",
        )
        if r.basis == "low_support" and r.support < ADDITION_SUPPORT and not _FRAMED.match(r.claim)
        else r
        for r in results
    ]


# a claim framed as a summary of the evidence, or as a conclusion drawn from the claims
# before it ("so you're covered until ..."), restates or derives: no addition of its own
_FRAMED = re.compile(
    r"\W*(?:overall|in short|in summary|to sum up|to summari[sz]e|in brief|all in all|"
    r"key points?|summary|the (?:report|document|letter|policy|minutes|article) (?:says|finds|"
    r"states|shows|records)|so|therefore|thus|hence|which means|that means|meaning)\b",
    re.IGNORECASE,
)


def _undecided_basis(results: list[ClaimResult], factual: list[ClaimResult]) -> str:
    if not results:
        return "undecided:unreadable"
    if not factual:
        return "undecided:no_claims"
    open_ = [r for r in factual if r.status == "undecided"]
    return f"undecided:{open_[0].basis}" if open_ else "undecided:too_long"


def _assessment(case: PreparedCase, decision: Decision) -> Assessment:
    proofs_stand = decision.label == "pass"
    claims = [_claim(case, r, proofs_stand) for r in decision.results]
    explanation = _explain(decision)
    if case.mode is ScoringMode.BINARY:
        return BinaryAssessment(explanation=explanation, claims=claims, grounded=decision.grounded)
    return Scale5Assessment(explanation=explanation, claims=claims, score=_SCORES[decision.label])


def _claim(case: PreparedCase, result: ClaimResult, proofs_stand: bool) -> ClaimAssessment:
    """The verdict's claim: a match by a rule that did not decide (the answer is undecided)
    is shown not verified, as it is."""
    quote = result.sentence.text if result.sentence is not None else None
    if quote is not None and quote not in case.evidence:
        quote = None
    reason = result.reason
    if result.status == "undecided":
        reason = f"not verified: {reason}"
    elif result.status == "supported" and not proofs_stand:
        reason = f"not verified: {reason}, by a rule not trusted alone"
    return ClaimAssessment(
        claim=result.claim, reason=reason, evidence_quote=quote, supported=result.supported
    )


def _explain(decision: Decision) -> str:
    if decision.basis == REORDERED_BASIS:
        return (
            f"offline checks ({REORDERED_BASIS}): the output holds bidirectional control "
            "characters that make a reader see it in another order than it is stored, so what "
            "a reader sees cannot be checked; failed (confidence 0: a cascade asks its LLM)"
        )
    results = decision.results
    head = f"offline checks ({decision.basis}, confidence {decision.confidence:.2f})"
    if decision.label == "pass":
        return f"{head}: {len(results)} of {len(results)} claims proven near-verbatim"
    matched = sum(r.status == "supported" for r in results)
    if decision.label == "fail":
        failed = [f"'{_short(r.claim)}': {r.reason}" for r in results if r.status == "contradicted"]
        return f"{head}: {matched} of {len(results)} claims matched; contradicted: " + "; ".join(
            failed
        )
    if not results:
        return (
            f"{head}: offline tier unsure: the output has no claims these rules can read "
            "(unsupported script); passed unflagged, ask an LLM judge to be sure"
        )
    annotated = [r.basis.split("_", 1)[1] for r in results if r.basis.startswith(_NOT_DECIDING)]
    if annotated:
        why = "contradicted only by rules not trusted alone (" + ", ".join(annotated) + ")"
    elif matched == len(results):
        why = "every claim matched, by rules not trusted alone"
    else:
        why = "nothing contradicted, not everything proven"
    return (
        f"{head}: {matched} of {len(results)} claims matched; offline tier unsure: {why}; "
        "passed unflagged (the offline judge flags only what it can show)"
    )


_NOT_DECIDING = ("unproven_", "refuted_")


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
