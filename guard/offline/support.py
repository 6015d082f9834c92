"""The claim-level rules that read no contradiction: a refusal or courtesy (stage ``text``),
what is read of a Spanish, German or French claim (``foreign``), and how well the evidence
proves a claim that nothing contradicted (``support``). :mod:`guard.offline.registry` runs
them in order; the last, :func:`partial`, always decides.

A claim is *supported* only when it is close to verbatim: every content word found, together
in one sentence, every detail matched. Anything else is *undecided*; low lexical support alone
never fails a claim.
"""

from __future__ import annotations

import re

from guard.offline import honorifics, polarity, quantifiers, rivals
from guard.offline.align import EvidenceIndex, EvidenceSentence, in_order, in_sentence
from guard.offline.details import MAX_AMOUNTS, Details, an_hour_of
from guard.offline.numbers import Quantity
from guard.offline.rules import ClaimView, Finding, Premise
from guard.offline.text import GENERIC_STEMS, content_stems, normalize, stem, words

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


def refusal(text: str) -> Finding | None:
    """A refusal ("I couldn't find that in the documents") or a courtesy: no factual claim."""
    if _REFUSAL.search(text) or _HEDGE_ONLY.match(text):
        return Finding("refusal", "a refusal or courtesy, not a factual claim", status="neutral")
    return None


def titled(view: ClaimView) -> Finding | None:
    """ "Frau Kessler" where it says "Frau Keller": a titled name of another language."""
    found = None if view.readable else honorifics.wrong_titled_name(view.text, view.index)
    return None if found is None else Finding("name_titled", found)


def foreign_negation(view: ClaimView) -> Finding | None:
    """A negation the evidence does not make: read in Spanish, German and French too."""
    if view.readable:
        return None
    flip = polarity.flipped_clause(view.text, view.index, view.details.stems)
    return None if flip is None else Finding("negation_clause", flip[0], flip[1])


def foreign_quantifier(view: ClaimView) -> Finding | None:
    """ "todos", "alle", "tous" where the evidence limits what it says of them."""
    if view.readable:
        return None
    shift = quantifiers.shifted(view.text, view.index, view.details.stems)
    return None if shift is None else Finding("quantifier_limited", shift[0], shift[1])


def foreign_details(view: ClaimView) -> Finding | None:
    """A foreign claim whose numbers, dates and times the evidence has: nothing more is read."""
    details = view.details
    if view.readable or not (details.quantities or details.clock or details.days):
        return None
    return Finding(
        "foreign_details_found",
        "its numbers, dates and times are in the evidence; the words are not checked in this "
        "language",
        status="undecided",
    )


def unreadable(view: ClaimView) -> Finding | None:
    """A foreign claim with no detail to check: undecided."""
    if view.readable:
        return None
    return Finding("unreadable", "the rules cannot read this language", status="undecided")


def no_content(view: ClaimView) -> Finding | None:
    """A claim with no content word, amount or time: nothing to check."""
    details = view.details
    if details.stems or details.quantities or details.clock:
        return None
    return Finding("no_content", "no checkable content", status="neutral")


def too_many_amounts(view: ClaimView) -> Finding | None:
    """A claim with more amounts than are checked cannot be proven."""
    if not view.details.overflow:
        return None
    return Finding(
        "too_many_amounts",
        f"more than {MAX_AMOUNTS} amounts; only the first were checked",
        status="undecided",
    )


def rival(view: ClaimView) -> Finding | None:
    """A short answer's amount read off the wrong clause (:mod:`guard.offline.rivals`)."""
    if not view.claim.short_answer:
        return None
    found = rivals.misplaced(view.text, view.index, view.premise.text)
    if found is None:
        return None
    if found.shown:
        return Finding("amount_misplaced", found.reason, found.sentence)
    return Finding("short_answer_unproven", found.reason, found.sentence, "undecided")


def short_answer(view: ClaimView) -> Finding | None:
    """A short answer every word of which is stated beside the question's subject."""
    if not view.claim.short_answer or view.share < 0.999:
        return None
    if not _answers_question(view.details.stems, view.premise, view.index):
        return None
    return Finding(
        "short_answer",
        f"the answer is stated beside the question's subject{_where(view.sentence)}",
        status="supported",
    )


def answer_absent(view: ClaimView) -> Finding | None:
    """A short answer whose own words (not the question's) are mostly nowhere in the evidence."""
    if not view.claim.short_answer:
        return None
    details, premise = view.details, view.premise
    units = _unit_stems(details, view.index)
    lacking = [
        m
        for m in view.missing
        if m not in premise.stems and m not in GENERIC_STEMS and m not in units
    ]
    if not (lacking and len(lacking) * 2 >= len(details.stems) and len(details.stems) > 1):
        return None
    return Finding(
        "answer_absent",
        f"the answer itself ({_as_written(lacking, view.text)}) is nowhere in the "
        f"evidence{_closest(view.sentence)}",
    )


def short_answer_unproven(view: ClaimView) -> Finding | None:
    """Any other short answer: its link to the question is not shown."""
    if not view.claim.short_answer:
        return None
    return Finding(
        "short_answer_unproven",
        "a short answer whose link to the question is not shown",
        status="undecided",
    )


def verbatim(view: ClaimView) -> Finding | None:
    """The claim is a sentence of the evidence, word for word."""
    if normalize(view.text).strip(" .,;:!?") not in view.index.normalized:
        return None
    return Finding("verbatim", f"stated verbatim{_where(view.sentence)}", status="supported")


def aligned(view: ClaimView) -> Finding | None:
    """Every word and detail of the claim in one sentence (in its order: ``ordered``; with an
    amount computed from the evidence's: ``computed``)."""
    if view.share < 0.999 or view.local < 0.9:
        return None
    sentence, index, details = view.sentence, view.index, view.details
    ordered = (
        sentence is not None
        and in_order([s for s in details.stems if in_sentence(s, sentence, index)], sentence, index)
        >= IN_ORDER
    )
    basis = "computed" if _computed(view) else ("ordered" if ordered else "aligned")
    if basis == "computed":
        what = "computed from amounts in one sentence"
    elif view.local >= 0.999:
        order = " in the same order" if ordered else ""
        what = (
            f"every word and detail matched to one sentence{order} (its words or its "
            "document's subject)"
        )
    else:  # "every word" of one sentence would name a word that sentence lacks
        what = f"every word found in the evidence, {view.local:.0%} of them in one sentence"
    return Finding(basis, f"{what}{_where(sentence)}", status="supported")


def near(view: ClaimView) -> Finding | None:
    """Nearly every word of the claim, most of them in one sentence."""
    if view.share < NEAR_SUPPORT or view.local < NEAR_LOCAL:
        return None
    return Finding(
        "near",
        f"near-verbatim support ({view.share:.2f}){_where(view.sentence)}",
        status="supported",
    )


def scattered(view: ClaimView) -> Finding | None:
    """Every word of the claim in the evidence, but not together: a relation not stated."""
    if view.share < 0.999:
        return None
    return Finding(
        "scattered",
        f"its words occur in the evidence but not together (best sentence has "
        f"{view.local:.2f} of them{_where(view.sentence)}): a relation the evidence does not "
        "state",
        status="undecided",
    )


def _low(view: ClaimView) -> bool:
    return view.share < LOW_SUPPORT and len(view.missing) >= MIN_MISSING_FOR_LOW


def details_restated(view: ClaimView) -> Finding | None:
    """A claim whose amounts, dates and times the evidence states, and few of its words."""
    details = view.details
    if not _low(view) or not (details.quantities or details.clock) or _computed(view):
        return None
    return Finding(
        "details_restated",
        f"its amounts, dates and times are in the evidence, its words mostly not "
        f"(missing: {_as_written(view.missing, view.text)}{_closest(view.sentence)}): a "
        "restatement, not proof",
        status="undecided",
    )


def low_support(view: ClaimView) -> Finding | None:
    """Most of the claim's words are not in the evidence: undecided, never failed alone."""
    if not _low(view):
        return None
    return Finding(
        "low_support",
        f"most of its words are not in the evidence (missing: "
        f"{_as_written(view.missing, view.text)}{_closest(view.sentence)}); low overlap alone "
        "is not proof",
        status="undecided",
    )


def partial(view: ClaimView) -> Finding:
    """Any other claim: partly supported, undecided (the last rule: it always decides)."""
    return Finding(
        "partial",
        f"partly supported ({view.share:.2f}; missing: {_as_written(view.missing, view.text)}"
        f"{_closest(view.sentence)})",
        status="undecided",
    )


def _computed(view: ClaimView) -> list[Quantity]:
    """The claim's amounts the evidence does not state (and that are no hour of its times)."""
    index = view.index
    return [
        q
        for q in view.details.quantities
        if not index.amounts.supports(q) and not an_hour_of(q, index)
    ]


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


# "Which sitcom ...", "What kind of bird ...": the kind of thing the question asks for
_KIND_ASKED = re.compile(
    r"^\W*(?:which|what)\s+(?:(?:kind|type|sort)\s+of\s+)?(?P<kind>[^\W\d_]{3,})\b",
    re.IGNORECASE,
)
_NOT_KINDS = frozenset(
    stem(w)
    for w in (
        "is",
        "are",
        "was",
        "were",
        "does",
        "did",
        "do",
        "has",
        "have",
        "had",
        "can",
        "will",
        "would",
        "should",
        "could",
        "year",
        "time",
        "day",
        "date",
        "one",
        "ones",
    )
)


def _answers_question(stems: list[str], premise: Premise, index: EvidenceIndex) -> bool:
    """Whether some evidence sentence holding a short answer also mentions the question's
    subject: without one, the answer may be a true fact that answers another question. When
    the question asks for a kind of thing the evidence names ("Which sitcom ..."), that
    sentence must name the kind too: "Final Answer" from "Rao also hosts the quiz show Final
    Answer" is a quiz show, not the sitcom asked for."""
    asked = premise.stems - set(stems)
    if not premise.text or not asked or not stems:
        return True
    kind = _kind_asked(premise.text, index)
    for number in index.candidates(stems):
        sentence = index.sentences[number]
        if (
            asked & sentence.scope
            and (kind is None or kind in sentence.scope)
            and all(in_sentence(s, sentence, index) for s in stems)
        ):
            return True
    return False


def _kind_asked(question: str, index: EvidenceIndex) -> str | None:
    """The stem of the kind of thing ``question`` asks for, when the evidence names it."""
    match = _KIND_ASKED.match(question)
    if match is None:
        return None
    kind = stem(match.group("kind").lower())
    return kind if kind not in _NOT_KINDS and index.has(kind) else None
