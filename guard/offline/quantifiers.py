"""Quantifier shifts on a noun: "all customers" where the evidence says "some customers",
"any order ships free" where it says "free on orders over £40".

The claim puts a universal ("all", "every", "any", "each"; "todos", "alle", "tous") before a
noun; an evidence sentence that shares another of the claim's words names the same noun with
a limit: a limiting word before it ("some", "most", "certain", "eligible") or a bound after it
("over £40", "of at least 2 years", "in other currencies", "marked E"). A claim that limits the
noun itself, or evidence that also says "all" of it, is left alone.
"""

from __future__ import annotations

import re

from guard.offline import negation
from guard.offline.align import EvidenceIndex, EvidenceSentence
from guard.offline.text import content_stems, stem, word_set

MAX_SENTENCES = 8  # candidate sentences read for the noun
MIN_SHARED = 2  # claim words a sentence must share, the noun included

_UNIVERSAL = re.compile(
    r"\b(?<!not )(?:all(?: (?:of )?(?:the|our|your|their))?|every|any|each|todos los|todas las|"
    r"cualquier|alle|jede[rsnm]?|tous les|toutes les|chaque)\s+(?P<noun>[^\W\d_][\w-]*)",
    re.IGNORECASE,
)
# words that limit a noun or a statement to part of it ("some customers", "usually")
LIMITING = word_set("""
some most many several certain select selected usually often sometimes typically eligible
limited specific one two three few
""")
_LIMITING = LIMITING | word_set("""
qualifying participating only algunos algunas ciertos einige manche bestimmte certains
certaines quelques
""")
_BOUND = re.compile(
    r"^\W*(?:[\w-]+\W+){0,1}?(?:over|above|under|below|at least|more than|less than|up to|"
    r"from|of at least|in other|other than|except|excluding|marked|labelled|labeled|"
    r"de más de|über|ab|unter|de plus de|sauf)\b",
    re.IGNORECASE,
)
# "days carried over", "items handed over": a verb's particle, not a bound on the noun
_VERB_PARTICLE = re.compile(
    r"^\W*[a-z]+(?:ed|en|wn|ne)\s+(?:over|above|under|below|from)\b(?!\s*[$€£\d])",
    re.IGNORECASE,
)
_EVERY = frozenset({"all", "every", "any", "each"})
_KIND = re.compile(r"[a-z]+-[a-z]+", re.IGNORECASE)  # "long-haul", "office-based", "part-time"


def shifted(
    claim: str, index: EvidenceIndex, stems: list[str] | None = None
) -> tuple[str, EvidenceSentence] | None:
    """The reason and the sentence when the claim says "all" of a noun the evidence limits
    (``stems``: the claim's content stems, when the caller has them)."""
    about: set[str] = set()
    for match in _UNIVERSAL.finditer(claim):
        if match.group(0).lower().startswith("any") and negation.negated(claim):
            continue  # "not a suspect in any slayings" says none, not all
        about = about or set(content_stems(claim) if stems is None else stems)
        noun = stem(match.group("noun"))
        if _limited(claim, match.end("noun"), match.start("noun")) is not None:
            continue  # "all orders over £40": the claim keeps the limit
        for number in index.candidates([noun, *sorted(about - {noun})])[:MAX_SENTENCES]:
            sentence = index.sentences[number]
            if not any(_same(noun, s) for s in sentence.stems):
                continue
            if len(about & sentence.stems) < MIN_SHARED:
                continue
            limit = _limit_of(sentence.text, noun)
            if limit is not None:
                return (
                    f"the claim says '{match.group(0).lower()}' where {sentence.passage} says "
                    f"'{limit}'",
                    sentence,
                )
    return None


_WORD = re.compile(r"[^\W\d_][\w'-]*")


def _limit_of(text: str, noun: str) -> str | None:
    """How ``text`` limits its mentions of ``noun`` ("some customers", "orders over £40"), or
    None when it does not or also says "all" of it."""
    found = None
    for match in _WORD.finditer(text):
        if not _same(stem(match.group(0)), noun):
            continue
        before = [
            w.lower() for w in _WORD.findall(text[max(0, match.start() - 30) : match.start()])
        ]
        if _EVERY & set(before[-3:]):
            return None  # "all orders", "every customer": the evidence says all
        if found is None:
            found = _limited(text, match.end(), match.start())
    return found


def _limited(text: str, end: int, start: int) -> str | None:
    """How the noun at ``start:end`` of ``text`` is limited: a limiting word just before it
    ("some customers") or a bound just after it ("orders over £40"); None if it is not."""
    before = _WORD.findall(text[max(0, start - 30) : start])[-2:]
    limiting = [w for w in before if w.lower() in _LIMITING]
    if limiting:
        return f"{limiting[-1]} {text[start:end]}"
    if before and _KIND.fullmatch(before[-1]) and text[start - len(before[-1]) - 1 : start].strip():
        return f"{before[-1]} {text[start:end]}"  # "long-haul flights": a kind of them
    bound = _BOUND.match(text[end : end + 40])
    if bound is None or _VERB_PARTICLE.match(text[end : end + 40]):
        return None
    words = text[end + bound.end() :].split()[:1]
    return (text[start:end] + bound.group(0) + "".join(f" {w.strip(',;.')}" for w in words)).strip()


def _same(one: str, other: str) -> bool:
    """The same noun: one stem, or one a prefix of the other ("book" / "booking")."""
    short, long_ = sorted((one, other), key=len)
    return short == long_ or (len(short) >= 4 and long_.startswith(short))
