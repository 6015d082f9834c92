"""Denials of what the evidence states: "Kim Yool-ho did not star in Train to Busan" against
"He is best known for his role in ... the 2016 film 'Train to Busan'"; "Wenling is in China,
Xinzheng isn't" against "Xinzheng is a county-level city ... of Central China".

A negated claim ("did not", "was never", "isn't") says the evidence's statement is false. When
one evidence sentence, itself without any negation (plain or implicit: "only", "except",
"former"), names every name of the claim and states its other words (all but one of them,
for a claim of three or more: "star" for "starring"), the claim denies what the evidence
states of the same subject (``denied_stated``, with the sentence). An elliptic denial ("A is
P, B isn't") is read as the denial of "B is P".

Left alone: a claim without a name (who or what it denies is then unclear); a claim with no
word besides its names, unless it denies a place ("B isn't in China"); a sentence that is
negated itself or limits what it says; a name the evidence lacks (an absence, not a denial);
a "No" that answers a question (the question's words are not the claim's).
"""

from __future__ import annotations

import re

from guard.offline import entities, negation
from guard.offline.align import EvidenceIndex, EvidenceSentence, in_sentence
from guard.offline.details import short
from guard.offline.text import GENERIC_STEMS, content_stems, word_set

# "Wenling is in China, Xinzheng isn't."
_ELLIPTIC = re.compile(
    r"^(?P<a>[^,;]+?)\s+(?P<be>is|are|was|were)\s+(?P<said>[^,;]+?)[,;]\s*"
    r"(?:but\s+|while\s+|whereas\s+)?(?P<b>[^,;]+?)\s+"
    r"(?:isn['’]t|aren['’]t|wasn['’]t|weren['’]t|is\s+not|are\s+not|was\s+not|were\s+not)"
    r"\W*$",
    re.IGNORECASE,
)
_IN_PLACE = re.compile(r"^\s*(?:is|are|was|were)\s+(?:not\s+)?(?:located\s+)?in\b", re.I)
_DENYING = word_set("not never no none neither nor any anything anyone even ever")
MAX_SENTENCES = 200  # evidence sentences read
MIN_FOR_ONE_OUTSIDE = 3  # words besides the names before one may be missing from the sentence


def denied(claim: str, index: EvidenceIndex) -> tuple[str, EvidenceSentence] | None:
    """Why ``claim`` denies what an evidence sentence states, with the sentence; or None."""
    if not negation.negated(_unnamed(claim)):
        return None  # "No Fences", "Never Let Me Go": a title, no denial
    elliptic = _ELLIPTIC.match(claim)
    stated = (
        f"{elliptic.group('b')} {elliptic.group('be')} {elliptic.group('said')}"
        if elliptic is not None
        else claim
    )
    names = [n for n in entities.names(stated) if n.parts]
    if not names:
        return None
    name_stems = {p for n in names for p in n.parts}
    others = [
        s
        for s in content_stems(stated)
        if s not in name_stems and s not in GENERIC_STEMS and s not in _DENYING
    ]
    if not others and not _places(stated, names):
        return None
    for sentence in index.sentences[:MAX_SENTENCES]:
        if _states(sentence, name_stems, others, index):
            return (
                f'the claim denies it; {sentence.passage} states it ("{short(sentence.text)}")',
                sentence,
            )
    return None


def _unnamed(text: str) -> str:
    """``text`` without its quoted strings and names."""
    for quote in entities.quoted(text):
        text = text.replace(quote, " ")
    for name in entities.names(text):
        text = text.replace(name.text, " ")
    return text


def _places(stated: str, names: list[entities.Name]) -> bool:
    """Whether ``stated`` says its first name is in its last ("Xinzheng is in China")."""
    if len(names) < 2:
        return False
    first, last = names[0].text, names[-1].text
    start, end = stated.find(first), stated.rfind(last)
    return 0 <= start < end and _IN_PLACE.match(stated[start + len(first) : end]) is not None


def _states(
    sentence: EvidenceSentence, names: set[str], others: list[str], index: EvidenceIndex
) -> bool:
    if not names <= sentence.scope:
        return False
    if negation.negated(sentence.text) or negation.IMPLICIT_NEGATIVE.search(sentence.text):
        return False
    outside = sum(not in_sentence(s, sentence, index) for s in others)
    return outside <= (1 if len(others) >= MIN_FOR_ONE_OUTSIDE else 0)
