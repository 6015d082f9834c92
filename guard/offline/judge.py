"""The offline judge: deterministic, pure Python, no network, no model.

It splits the output into claims, checks each against the best-matching evidence sentence
(:mod:`guard.offline.checks`), and returns the same structured assessment an LLM judge returns,
with a confidence the cascade uses to decide whether to ask an LLM.
"""

from __future__ import annotations

import unicodedata

from guard.assessment import Assessment, BinaryAssessment, ClaimAssessment, Scale5Assessment
from guard.case import PreparedCase
from guard.models import ScoringMode, Usage
from guard.offline.align import EvidenceIndex
from guard.offline.checks import MIN_SUPPORT, ClaimResult, Premise, check_claim
from guard.offline.claims import split_claims
from guard.offload import off_loop
from guard.providers.base import JudgeOutcome
from guard.settings import JudgeSettings

OFFLINE_MODEL = "offline-v1"
EMPTY_OUTPUT_CONFIDENCE = 0.2
CHECK_COST = 20  # CPU of the checks per character, in characters of a linear scan (guard.offload)


class OfflineJudge:
    """Implements :class:`guard.providers.base.Judge` with rules instead of a model."""

    provider = "offline"
    model = OFFLINE_MODEL

    def __init__(self, settings: JudgeSettings | None = None, *,
                 min_support: float = MIN_SUPPORT) -> None:
        self.settings = settings or JudgeSettings()
        self.min_support = min_support

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        # the checks are CPU only, about CHECK_COST times a linear scan: off the event loop
        cost = CHECK_COST * (len(case.output) + len(case.evidence))
        results = await off_loop(cost, self.check, case)
        return JudgeOutcome(assessment=_assessment(case, results), provider=self.provider,
                            model=self.model, usage=Usage(), tier="offline",
                            confidence=confidence(results))

    def check(self, case: PreparedCase) -> list[ClaimResult]:
        """The per-claim results for ``case`` (synchronous; :meth:`assess` wraps it)."""
        if not latin_script(case.output):
            return []  # the rules read Latin-script languages only: nothing checkable
        index = EvidenceIndex.build(case.passages, case.evidence)
        premise = Premise.of(case.question)
        return [check_claim(claim, index, premise, self.min_support)
                for claim in split_claims(case.output, answers_question=bool(case.question))]

    async def aclose(self) -> None:
        return None


LATIN_SHARE = 0.7  # below this share of Latin letters the output is not checkable here


def latin_script(text: str) -> bool:
    """Whether most letters of ``text`` are Latin (the only script the rules read)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return True
    latin = sum(1 for ch in letters if ch.isascii() or "LATIN" in unicodedata.name(ch, ""))
    return latin / len(letters) >= LATIN_SHARE


def confidence(results: list[ClaimResult]) -> float:
    """How sure the judge is: the surest failure decides a fail, the least sure claim a pass."""
    if not results:
        return EMPTY_OUTPUT_CONFIDENCE
    failures = [r.confidence for r in results if not r.supported]
    if failures:
        return max(failures)
    return min(r.confidence for r in results)


def _assessment(case: PreparedCase, results: list[ClaimResult]) -> Assessment:
    claims = [_claim(case, r) for r in results]
    supported = sum(r.supported for r in results)
    grounded = bool(results) and supported == len(results)  # nothing checked: never a pass
    explanation = _explain(results, supported)
    if case.mode is ScoringMode.BINARY:
        return BinaryAssessment(explanation=explanation, claims=claims, grounded=grounded)
    return Scale5Assessment(explanation=explanation, claims=claims, score=_score(results))


def _score(results: list[ClaimResult]) -> int:
    if not results:  # e.g. a script the rules cannot read: fail closed, with low confidence
        return 1
    supported = sum(r.supported for r in results) / len(results)
    if supported == 1.0:
        return 5 if confidence(results) >= 0.6 else 4
    return 2 if supported >= 0.5 else 1


def _claim(case: PreparedCase, result: ClaimResult) -> ClaimAssessment:
    quote = result.sentence.text if result.sentence is not None else None
    if quote is not None and quote not in case.evidence:
        quote = None
    return ClaimAssessment(claim=result.claim, reason=result.reason, evidence_quote=quote,
                           supported=result.supported)


def _explain(results: list[ClaimResult], supported: int) -> str:
    if not results:
        return ("offline checks: the output has no claims these rules can check (unsupported "
                "script or no content words); not grounded until a judge that can read it says so")
    head = f"offline checks: {supported} of {len(results)} claims supported"
    failed = [f"'{_short(r.claim)}': {r.reason}" for r in results if not r.supported]
    return head + ("; " + "; ".join(failed) if failed else "")


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
