"""The checks run on one claim, in order of how decisive they are.

Quoted strings, amounts and names must occur in the evidence; the claim must not flip the
polarity of the sentence it is aligned to; and enough of its content words must be supported.
The first failed check decides, and its reason names what failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import pairwise

from guard.offline import entities, negation, numbers
from guard.offline.align import (
    EvidenceIndex,
    EvidenceSentence,
    best_sentence,
    local_support,
    related,
    support,
)
from guard.offline.claims import Claim
from guard.offline.text import GENERIC, content_stems, normalize

MIN_SUPPORT = 0.65
MIN_LOCAL_SUPPORT = 0.75
PASS_CONFIDENCE_CAP = 0.78
ALIGN_FOR_POLARITY = 0.6
NO_CONTENT_CONFIDENCE = 0.3


@dataclass(frozen=True)
class Premise:
    """What the question already states: its words and amounts are not the answer's claims."""

    text: str = ""
    stems: frozenset[str] = frozenset()
    quantities: tuple[numbers.Quantity, ...] = ()
    normalized: str = ""

    @classmethod
    def of(cls, question: str | None) -> Premise:
        if not question:
            return cls()
        return cls(question, frozenset(content_stems(question)),
                   tuple(numbers.extract(question)), normalize(question))


@dataclass(frozen=True)
class ClaimResult:
    claim: str
    supported: bool
    reason: str
    confidence: float
    support: float
    sentence: EvidenceSentence | None = None
    missing: tuple[str, ...] = field(default=())
    local: float = 1.0


def check_claim(claim: Claim, index: EvidenceIndex, premise: Premise,
                min_support: float = MIN_SUPPORT) -> ClaimResult:
    stems = content_stems(claim.text)
    quantities = numbers.extract(claim.text)
    query = stems + sorted(premise.stems) if claim.short_answer else stems
    sentence, overlap = best_sentence(query, quantities, index)
    names = entities.names(claim.text, whole_answer=claim.short_answer)
    name_stems = {part for name in names for part in name.parts}
    new = [s for s in stems if s not in premise.stems or not index.has(s)]
    found = sum(1 for q in quantities if numbers.supported(q, index.quantities))
    share, missing = support(new, index, name_stems, found)
    known = [s for s in stems if index.has(s)]
    local = local_support(known, [q for q in quantities if numbers.supported(q, index.quantities)],
                          sentence, name_stems)

    def result(ok: bool, reason: str, confidence: float) -> ClaimResult:
        return ClaimResult(claim.text, ok, reason, round(confidence, 3), round(share, 3),
                           sentence, tuple(missing), round(local, 3))

    failure = (_quote_failure(claim.text, index, premise)
               or _number_failure(quantities, index, premise, sentence)
               or _name_failure(names, index, premise))
    if failure is not None:
        return result(False, failure[0], failure[1])
    apart = _names_apart(names, index)
    if apart is not None:
        return result(False, apart, 0.7)
    if sentence is not None and overlap >= ALIGN_FOR_POLARITY and not claim.short_answer:
        flip = negation.flipped(claim.text, sentence.text)
        if flip is not None:
            return result(False, flip, 0.75 + 0.2 * overlap)
    contrary = _contrary_sentence(claim, stems, index, sentence)
    if contrary is not None:
        reason, contrary_sentence = contrary
        return replace(result(False, reason, 0.8), sentence=contrary_sentence)
    if not stems and not quantities:
        return result(True, "no checkable content", NO_CONTENT_CONFIDENCE)
    if share < min_support:
        return result(False, f"low content-word support {share:.2f} (missing: "
                      f"{', '.join(missing[:5])})", 0.5 + min(0.35, (min_support - share) * 1.2))
    if not claim.short_answer and local < MIN_LOCAL_SUPPORT:
        return result(False, f"not stated together: the best-matching sentence supports only "
                      f"{local:.2f} of the claim", 0.5 + (MIN_LOCAL_SUPPORT - local))
    return result(True, f"supported: content-word support {share:.2f}, amounts and names found",
                  _pass_confidence(claim, share, local, min_support,
                                   claim.short_answer and _answers_question(stems, premise, index)))


def _pass_confidence(claim: Claim, share: float, local: float, min_support: float,
                     answers: bool) -> float:
    """How sure a pass is. Word checks prove absence (a number, name or quote the evidence
    lacks) far better than presence: a sentence whose words are all found may still relate
    them wrongly ("Hot Rod was founded in 1987" when 1987 is another magazine's year). So a
    sentence's pass stays below PASS_CONFIDENCE_CAP, leaving it to an LLM in a cascade at the
    default threshold; a bare answer found beside the question's subject is surer."""
    strength = min(1.0, (min(share, local) - min_support) / (1.0 - min_support))
    if not claim.short_answer:
        return 0.5 + (PASS_CONFIDENCE_CAP - 0.5) * max(strength, 0.0)
    base = 0.5 + min(0.45, (share - min_support) * 1.2)
    return base * (0.9 if answers else 0.5)


def _answers_question(stems: list[str], premise: Premise, index: EvidenceIndex) -> bool:
    """Whether some evidence sentence holding a short answer also mentions the question's
    subject: without one, the answer may be a true fact that answers another question."""
    asked = premise.stems - set(stems)
    if not premise.text or not asked or not stems:
        return True
    return any(asked & sentence.scope for sentence in index.sentences
               if all(s in sentence.scope or (index.has(s) and any(
                   related(s, o) for o in sentence.scope)) for s in stems))


def _contrary_sentence(claim: Claim, stems: list[str], index: EvidenceIndex,
                       best: EvidenceSentence | None) -> tuple[str, EvidenceSentence] | None:
    """Another sentence about the same thing that says the opposite ("open on Sundays" against
    "It is closed on Sundays")."""
    about = set(stems) - GENERIC
    for sentence in index.sentences:
        if sentence is best or not about & sentence.stems:
            continue
        reason = negation.opposed(claim.text, sentence.text)
        if reason is not None and not about & negation.OPPOSITE.keys() & sentence.stems:
            return reason, sentence
    return None


def _names_apart(names: list[entities.Name], index: EvidenceIndex) -> str | None:
    """Why a claim relating two names is unsupported when no sentence mentions both."""
    distinct = {n.text: n for n in names if any(len(p) > 1 for p in n.parts)}
    if len(distinct) < 2:
        return None
    listed = list(distinct.values())
    for first, second in pairwise(listed):
        if not any(_mentions(first, s.scope) and _mentions(second, s.scope)
                   for s in index.sentences):
            return (f"names '{first.text}' and '{second.text}' never appear together in the "
                    "evidence")
    return None


def _mentions(name: entities.Name, stems: frozenset[str]) -> bool:
    """Whether a sentence names ``name``: all its words, or two thirds of a long name."""
    parts = [p for p in name.parts if len(p) > 1]
    present = sum(p in stems for p in parts)
    return present == len(parts) or (len(parts) >= 3 and present * 3 >= len(parts) * 2)


def _quote_failure(text: str, index: EvidenceIndex,
                   premise: Premise) -> tuple[str, float] | None:
    for quote in entities.quoted(text):
        if not entities.quote_in(quote, index.normalized) and not entities.quote_in(
                quote, premise.normalized):
            return f"quoted string '{quote}' not in evidence", 0.9
    return None


def _number_failure(quantities: list[numbers.Quantity], index: EvidenceIndex, premise: Premise,
                    sentence: EvidenceSentence | None) -> tuple[str, float] | None:
    for quantity in quantities:
        if numbers.supported(quantity, index.quantities) or numbers.supported(
                quantity, list(premise.quantities)):
            continue
        nearby = list(sentence.quantities) if sentence is not None else []
        instead = numbers.closest(quantity, nearby) or numbers.closest(quantity, index.quantities)
        if instead is not None:
            return (f"number {quantity.text} not in evidence (evidence says {instead.text})",
                    0.95)
        return f"number {quantity.text} not in evidence", 0.85
    return None


def _name_failure(names: list[entities.Name], index: EvidenceIndex,
                  premise: Premise) -> tuple[str, float] | None:
    for name in names:
        if entities.quote_in(name.text, index.normalized):
            continue
        absent = [p for p in name.parts if len(p.strip(".")) > 1 and not index.has(p)]
        if absent and len(absent) * 2 >= len(name.parts):
            return f"name '{name.text}' not in evidence", 0.85
    return None
