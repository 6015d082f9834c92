"""The checks run on one claim: hard evidence first, then proof of support, else undecided.

A claim is *contradicted* only by something the judge can show: a detail the evidence lacks or
states differently (:mod:`guard.offline.details`), or a relation it reverses
(:mod:`guard.offline.relations`). It is *supported* only when it is close to verbatim: every
content word found, together in one sentence, every detail matched. Anything else is
*undecided*; low lexical support alone never fails a claim. Each result names its ``basis``,
the rule that decided, which the calibration table maps to a probability.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol

from guard.offline import (
    additions,
    denials,
    honorifics,
    ordering,
    polarity,
    quantifiers,
    ranks,
    rivals,
    unwritten,
)
from guard.offline.align import (
    EvidenceIndex,
    EvidenceSentence,
    best_sentence,
    in_order,
    in_sentence,
    local_support,
    support,
)
from guard.offline.claims import Claim
from guard.offline.details import MAX_AMOUNTS, Answer, Details, an_hour_of, detail_failure
from guard.offline.relations import dropped_condition, narrowed_condition, relation_failure
from guard.offline.text import GENERIC_STEMS, content_stems, normalize, stem, words

Status = Literal["supported", "contradicted", "undecided", "neutral"]

NEAR_SUPPORT = 0.85
NEAR_LOCAL = 0.8
IN_ORDER = 0.85
LOW_SUPPORT = 0.5
MIN_MISSING_FOR_LOW = 3


_REFUSAL = re.compile(
    r"\b(?:(?:could|can)(?:n['’]?t| not)|(?:do|does|did)(?:n['’]t| not)|unable to|no information|"
    r"not (?:mentioned|specified|stated|covered|included|provided|available)|not say|"
    r"(?:don['’]t|do not) (?:have|know|see)|no (?:mention|details?|data|record))\b.{0,60}"
    r"\b(?:find|found|information|documents?|context|sources?|say|says|mention|specif|"
    r"provided|records?|details?|knowledge|sure)",
    re.IGNORECASE,
)


# a courtesy, or a hedge with nothing after it ("I'm not sure."); a hedged claim is a claim
# (its lead-in is dropped by guard.offline.hedges before it gets here)
_HEDGE_ONLY = re.compile(
    r"^\s*(?:please|let me know|(?:i )?hope (?:this|that) helps|feel free|happy to help|"
    r"is there anything|"
    r"(?:that|this)(?:['’]s| is| covers| should cover) (?:all|everything|it)\b|"
    r"(?:i['’]m |i am )?not (?:\w+ )?(?:sure|certain)\W*$)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Premise:
    """What the question asks about: its words help find the answer's sentence, never support
    a claim (the question is the user's text, not evidence)."""

    text: str = ""
    stems: frozenset[str] = frozenset()

    @classmethod
    def of(cls, question: str | None) -> Premise:
        if not question:
            return cls()
        return cls(question, frozenset(content_stems(question)))


@dataclass(frozen=True)
class ClaimResult:
    claim: str
    status: Status
    basis: str
    reason: str
    support: float = 0.0
    sentence: EvidenceSentence | None = None
    local: float = 0.0

    @property
    def supported(self) -> bool:
        """Not contradicted: the offline judge flags only what it can show."""
        return self.status != "contradicted"


def check_claim(
    claim: Claim,
    index: EvidenceIndex,
    premise: Premise,
    answer: Answer | None = None,
    *,
    readable: bool = True,
) -> ClaimResult:
    """The status of one claim against the evidence, with the rule that decided it.
    ``readable`` is false for Spanish, German or French answers, whose words the rules do not
    check (their numbers, dates and times they do)."""
    answer = answer or Answer()
    if _REFUSAL.search(claim.text) or _HEDGE_ONLY.match(claim.text):
        return ClaimResult(
            claim.text, "neutral", "refusal", "a refusal or courtesy, not a factual claim"
        )
    details = Details.of(claim, readable)
    query = details.stems + sorted(premise.stems) if claim.short_answer else details.stems
    sentence, overlap = best_sentence(query, details.quantities, index)
    name_stems = {part for name in details.names for part in name.parts}
    found = [q for q in details.quantities if index.amounts.supports(q)]
    share, missing = support(details.stems, index, name_stems, len(found))
    local = local_support(
        [s for s in details.stems if index.has(s)], found, sentence, name_stems, index
    )

    def result(
        status: Status, basis: str, reason: str, at: EvidenceSentence | None = None
    ) -> ClaimResult:
        return ClaimResult(
            claim.text, status, basis, reason, round(share, 3), at or sentence, round(local, 3)
        )

    hard = detail_failure(claim.text, details, index, sentence, overlap, answer, readable)
    if hard is not None:
        return result("contradicted", hard[0], hard[1], hard[2])
    if not readable:
        titled = honorifics.wrong_titled_name(claim.text, index)
        if titled is not None:  # "Frau Kessler" where it says "Frau Keller"
            return result("contradicted", "name_titled", titled)
        flip = polarity.flipped_clause(claim.text, index, details.stems)
        if flip is not None:  # negations are read in Spanish, German and French too
            return result("contradicted", "negation_clause", flip[0], flip[1])
        shift = quantifiers.shifted(claim.text, index, details.stems)  # and "todos", "alle", "tous"
        if shift is not None:
            return result("contradicted", "quantifier_limited", shift[0], shift[1])
        if details.quantities or details.clock or details.days:
            return result(
                "undecided",
                "foreign_details_found",
                "its numbers, dates and times are in the evidence; the words are not "
                "checked in this language",
            )
        return result("undecided", "unreadable", "the rules cannot read this language")
    order = ordering.reversed_order(claim.text, premise.text, index)
    if order is not None:
        return result("contradicted", "order_reversed", order[0], order[1])
    relation = relation_failure(claim, details, index, sentence, overlap)
    if relation is not None:
        return result("contradicted", relation[0], relation[1], relation[2])
    stated = _stated_otherwise(claim, details, index, premise)
    if stated is not None:
        return result("contradicted", stated[0], stated[1], stated[2])
    dropped = dropped_condition(claim.text, details.stems, answer.stems, sentence, share)
    if dropped is not None:
        return result("contradicted", "condition_dropped", dropped)
    narrowed = narrowed_condition(claim.text, answer, sentence, share)
    if narrowed is not None:
        return result("contradicted", "condition_narrowed", narrowed)
    added = additions.unsupported(claim.text, index, premise.stems)
    if added is not None:
        return result("contradicted", added[0], added[1])
    return _support_status(claim, details, index, premise, sentence, share, local, missing, result)


def _stated_otherwise(
    claim: Claim, details: Details, index: EvidenceIndex, premise: Premise
) -> tuple[str, str, EvidenceSentence | None] | None:
    """The basis, reason and sentence when the claim denies what a sentence states
    (:mod:`~guard.offline.denials`), a short answer names what the evidence never writes as a
    name (:mod:`~guard.offline.unwritten`), or the claim gives a top rank the evidence lowers
    or gives another subject (:mod:`~guard.offline.ranks`); else None."""
    denial = denials.denied(claim.text, index)
    if denial is not None:
        return "denied_stated", denial[0], denial[1]
    name = unwritten.unwritten(
        details.names, claim.text, index, premise.text, short_answer=claim.short_answer
    )
    if name is not None:
        return name[0], name[1], None
    rank = ranks.raised(claim.text, index)
    return None if rank is None else ("rank_raised", rank[0], rank[1])


def _support_status(
    claim: Claim,
    details: Details,
    index: EvidenceIndex,
    premise: Premise,
    sentence: EvidenceSentence | None,
    share: float,
    local: float,
    missing: list[str],
    result: _Result,
) -> ClaimResult:
    named = _where(sentence)
    computed = [
        q for q in details.quantities if not index.amounts.supports(q) and not an_hour_of(q, index)
    ]
    if not details.stems and not details.quantities and not details.clock:
        return result("neutral", "no_content", "no checkable content")
    if details.overflow:
        return result(
            "undecided",
            "too_many_amounts",
            f"more than {MAX_AMOUNTS} amounts; only the first were checked",
        )
    if claim.short_answer:
        rival = rivals.misplaced(claim.text, index, premise.text)
        if rival is not None:
            if rival.shown:
                return result("contradicted", "amount_misplaced", rival.reason, rival.sentence)
            return result("undecided", "short_answer_unproven", rival.reason, rival.sentence)
        if share >= 0.999 and _answers_question(details.stems, premise, index):
            return result(
                "supported",
                "short_answer",
                f"the answer is stated beside the question's subject{named}",
            )
        units = _unit_stems(details, index)
        lacking = [
            m
            for m in missing
            if m not in premise.stems and m not in GENERIC_STEMS and m not in units
        ]
        if lacking and len(lacking) * 2 >= len(details.stems) and len(details.stems) > 1:
            return result(
                "contradicted",
                "answer_absent",
                f"the answer itself ({_as_written(lacking, claim.text)}) is nowhere in the "
                f"evidence{_closest(sentence)}",
            )
        return result(
            "undecided",
            "short_answer_unproven",
            "a short answer whose link to the question is not shown",
        )
    verbatim = normalize(claim.text).strip(" .,;:!?") in index.normalized
    if verbatim:
        return result("supported", "verbatim", f"stated verbatim{named}")
    if share >= 0.999 and local >= 0.9:
        ordered = (
            sentence is not None
            and in_order(
                [s for s in details.stems if in_sentence(s, sentence, index)], sentence, index
            )
            >= IN_ORDER
        )
        basis = "computed" if computed else ("ordered" if ordered else "aligned")
        if computed:
            what = "computed from amounts in one sentence"
        elif local >= 0.999:
            order = " in the same order" if ordered else ""
            what = (
                f"every word and detail matched to one sentence{order} (its words or its "
                "document's subject)"
            )
        else:  # "every word" of one sentence would name a word that sentence lacks
            what = f"every word found in the evidence, {local:.0%} of them in one sentence"
        return result("supported", basis, f"{what}{named}")
    if share >= NEAR_SUPPORT and local >= NEAR_LOCAL:
        return result("supported", "near", f"near-verbatim support ({share:.2f}){named}")
    if share >= 0.999:
        return result(
            "undecided",
            "scattered",
            f"its words occur in the evidence but not together (best sentence has "
            f"{local:.2f} of them{named}): a relation the evidence does not state",
        )
    if share < LOW_SUPPORT and len(missing) >= MIN_MISSING_FOR_LOW:
        absent = _as_written(missing, claim.text)
        if (details.quantities or details.clock) and not computed:
            return result(
                "undecided",
                "details_restated",
                f"its amounts, dates and times are in the evidence, its words mostly not "
                f"(missing: {absent}{_closest(sentence)}): a restatement, not proof",
            )
        return result(
            "undecided",
            "low_support",
            f"most of its words are not in the evidence (missing: {absent}"
            f"{_closest(sentence)}); low overlap alone is not proof",
        )
    return result(
        "undecided",
        "partial",
        f"partly supported ({share:.2f}; missing: {_as_written(missing, claim.text)}"
        f"{_closest(sentence)})",
    )


class _Result(Protocol):  # the signature of check_claim's local ``result``
    def __call__(
        self, status: Status, basis: str, reason: str, at: EvidenceSentence | None = None
    ) -> ClaimResult: ...


def _as_written(stems: list[str], text: str, limit: int = 5) -> str:
    """The claim's words behind ``stems``, as the answer writes them."""
    written: dict[str, str] = {}
    for word in words(text):
        for part in word.split("-") if "-" in word else [word]:
            written.setdefault(stem(part), part)
    return ", ".join(written.get(s, s) for s in stems[:limit])


def _closest(sentence: EvidenceSentence | None) -> str:
    return f"; closest: {sentence.passage}" if sentence is not None else ""


def _where(sentence: EvidenceSentence | None) -> str:
    return f" (in {sentence.passage})" if sentence is not None else ""


def _unit_stems(details: Details, index: EvidenceIndex) -> set[str]:
    """The words of the claim's unhedged amounts that the evidence states, as units ("25
    megabytes" for "25 MB", "45 pence" for "45p"): a restated unit, not an absent answer."""
    stated = [q for q in details.quantities if not q.hedged and index.amounts.supports(q)]
    return {s for q in stated for s in content_stems(q.text)}


def _answers_question(stems: list[str], premise: Premise, index: EvidenceIndex) -> bool:
    """Whether some evidence sentence holding a short answer also mentions the question's
    subject: without one, the answer may be a true fact that answers another question."""
    asked = premise.stems - set(stems)
    if not premise.text or not asked or not stems:
        return True
    for number in index.candidates(stems):
        sentence = index.sentences[number]
        if asked & sentence.scope and all(in_sentence(s, sentence, index) for s in stems):
            return True
    return False
