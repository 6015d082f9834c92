"""Negated predicates: the evidence denies of a subject what the claim affirms of it.

"Contractors are eligible for the wellness allowance" against "Contractors and agency workers
are not eligible for the allowance"; "purchases through a reseller can be claimed" against
"Purchases made through third-party resellers cannot be claimed"; "the Standard tier supports
single sign-on" against "Neither the Starter nor the Standard tier supports single sign-on".

The evidence clause holds one negation (``no``, ``not``, ``cannot``, ``no longer``,
``neither``, a contracted ``n't``); the claim's clause holds none. The claim's predicate is its
first word (after at least one) that the evidence clause has after the negation and not before
it; the claim's words before it, its subject, must all be words of the evidence's subject (so
"physical items can be returned" never reads against "digital items cannot be returned"); the
words after it, when both sides have some, must share one. A clause whose negation is bounded
by a condition, an exception or a time ("not active until you verify", "cannot be used without
consent") is left alone: the claim may state the other side of it.
"""

from __future__ import annotations

import re

from guard.offline import negation, polarity
from guard.offline.align import EvidenceIndex, EvidenceSentence
from guard.offline.text import content_stems

MAX_SENTENCES = 6  # candidate sentences read for a denied predicate
MAX_CLAUSES = 6  # clauses of a claim read
MIN_SHARED = 2  # claim words a candidate sentence must share

_CUE = re.compile(r"\b(?:not|no longer|no|never|cannot|neither|none)\b|\w+n['’]t\b", re.IGNORECASE)
_BOUNDED = re.compile(
    r"\b(?:if|unless|without|except|excluding|only|until|till|before|after|once|when|"
    r"provided|unless|but|than|more|less|over|under|above|below|any|all|every|longer than)\b",
    re.IGNORECASE,
)
_SECOND_VERB = re.compile(
    r"\s(?:and|or)\s+(?=(?:can|could|may|must|will|is|are|was|were|has|have|should)\b)",
    re.IGNORECASE,
)
_NEITHER = re.compile(r"neither", re.IGNORECASE)
_CLAUSE = re.compile(r"[;:()]|,\s|\s(?:but|while|whereas|although)\s|\s[-–—]\s")


def denied(claim: str, index: EvidenceIndex) -> tuple[str, EvidenceSentence] | None:
    """The reason and the sentence when a clause of ``claim`` affirms what an evidence clause
    denies of the same subject, or None."""
    if polarity.cues(claim) or negation.IMPLICIT_NEGATIVE.search(claim):
        return None  # a negation anywhere in the claim may reach the clause read
    for part in _CLAUSE.split(claim)[:MAX_CLAUSES]:
        stems = content_stems(part)
        if len(stems) < MIN_SHARED:
            continue
        for number in index.candidates(stems)[:MAX_SENTENCES]:
            sentence = index.sentences[number]
            if len(set(stems) & sentence.stems) < MIN_SHARED:
                continue
            for clause in _CLAUSE.split(sentence.text):
                if _denies(stems, clause):
                    return (
                        f'negation flipped: {sentence.passage} says "{clause.strip()}" '
                        "of the same subject",
                        sentence,
                    )
    return None


def _denies(stems: list[str], clause: str) -> bool:
    """Whether ``clause``, negated once, denies the predicate the claim's ``stems`` affirm of
    a subject the clause names."""
    cue = _CUE.search(clause)
    if cue is None or polarity.cues(clause) != 1 or _BOUNDED.search(clause):
        return False
    before = set(content_stems(clause[: cue.start()]))
    # the negation reaches up to a second verb joined by "and" ("is not included and can be
    # added"), and "neither A nor B" names the subject after it
    scope = _SECOND_VERB.split(clause[cue.end() :])[0]
    after = content_stems(scope)
    for at, word in enumerate(stems[1:], 1):
        if word not in after or word in before:
            continue
        subject = set(stems[:at])
        named = before | (
            set(after[: after.index(word)]) if _NEITHER.match(cue.group(0)) else set()
        )
        if not subject <= named:
            return False
        rest, said = set(stems[at + 1 :]), set(after[after.index(word) + 1 :])
        return not (rest and said) or bool(rest & said)
    return False
