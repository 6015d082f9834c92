"""Specific details an answer adds that no evidence states: a comparison the evidence never
makes ("a fee, which is cheaper online than at the airport") and an evaluative word it never
uses ("named after a famous musician", "a prolific writer").

Such a word is a claim of its own: the answer asserts a judgement or a ranking that no
document supports. It is reported only when the evidence has neither the word (nor a close
form) nor, for a comparison, any comparison of that family or its opposite, and when the
question did not bring the word in. A comparison with amounts in the claim is left to the
arithmetic and comparison checks, which can compute it.
"""

from __future__ import annotations

import re

from guard.offline import entities
from guard.offline.align import EvidenceIndex
from guard.offline.negation import OPPOSITE
from guard.offline.text import GENERIC_STEMS, content_stems, stem, word_set

_COMPARATIVES = word_set("""
cheaper dearer pricier costlier faster quicker slower bigger larger smaller higher lower longer
shorter older younger newer better worse more less fewer greater easier harder safer riskier
stronger weaker heavier lighter closer farther further wider narrower warmer colder hotter
richer poorer cleaner healthier busier quieter
""")
_COMPARISON = re.compile(r"\b(?P<word>[a-z]+)(?=\s+(?:[a-z]+\s+){0,2}?than\b)", re.IGNORECASE)
# Judgements and rankings that are facts of their own when an answer adds them.
EVALUATIVE = word_set("""
famous renowned well-known prominent legendary iconic influential acclaimed celebrated
notable prestigious successful best-selling award-winning wealthy talented exceptional fantastic
amazing greatest unique bustling remarkable outstanding beloved controversial groundbreaking
pioneering innovative revolutionary world-class prolific notorious infamous elite premier
renowned highly-regarded critically-acclaimed world-famous internationally-known
""")
_DIGIT = re.compile(r"\d")


def unsupported(claim: str, index: EvidenceIndex, asked: frozenset[str]) -> tuple[str, str] | None:
    """The basis and reason of a comparison or judgement in ``claim`` that no evidence makes,
    or None. ``asked`` holds the question's stems (words it brought in are not additions)."""
    return (
        _comparison(claim, index, asked)
        or _judgement(claim, index, asked)
        or _predicate(claim, index, asked)
    )


def _comparison(claim: str, index: EvidenceIndex, asked: frozenset[str]) -> tuple[str, str] | None:
    if _DIGIT.search(claim) or _measured(claim, index):
        return None  # "€5 cheaper than", or amounts to compare: computed, judged elsewhere
    for match in _COMPARISON.finditer(claim):
        word = match.group("word").lower()
        if word not in _COMPARATIVES:
            continue
        family = {word, *OPPOSITE.get(stem(word), ())}
        if {stem(w) for w in family} & asked:
            continue
        if any(_said(w, index) for w in family):
            continue
        return (
            "comparison_absent",
            f"the comparison '{word} ... than' is made by no document (none compares "
            "anything this way)",
        )
    return None


NEAR_SENTENCES = 6  # sentences sharing the claim's words searched for amounts


def _measured(claim: str, index: EvidenceIndex) -> bool:
    """Whether a sentence about the claim's things gives an amount (not a date): the answer
    may have compared amounts ("returned more than" from +12.4 % and +9.8 %)."""
    for number in index.candidates(content_stems(claim))[:NEAR_SENTENCES]:
        if any(q.kind not in ("date", "year") for q in index.sentences[number].quantities):
            return True
    return False


def _said(word: str, index: EvidenceIndex) -> bool:
    """Whether the evidence uses ``word`` (stop words such as "more" have no stem there)."""
    return (
        index.has(stem(word)) or re.search(rf"\b{re.escape(word)}\b", index.normalized) is not None
    )


def _judgement(claim: str, index: EvidenceIndex, asked: frozenset[str]) -> tuple[str, str] | None:
    for word in re.findall(r"[a-z]+(?:-[a-z]+)*", claim.lower()):
        if word not in EVALUATIVE:
            continue
        stems = {stem(part) for part in word.split("-")}
        if stems & asked or any(index.has(s) for s in stems) or _said(word, index):
            continue
        return "judgement_absent", f"the word '{word}' is used by no document"
    return None


# "X is a fashion magazine", "Y was also an astronaut": what the claim says its subject is
_PREDICATE = re.compile(
    r"\b(?:is|was|are|were)\s+(?:also\s+|actually\s+|just\s+|only\s+|both\s+)?"
    r"(?:a|an)\s+(?P<np>(?:[a-z][\w-]*\s+){0,3}?[a-z][\w-]*)(?=\s*(?:[.,;:!?]|$|\s+(?:and|or|"
    r"but|who|which|that|in|of|for|from|with|at|on|by|to|when|while|since)\b))",
)


def _predicate(claim: str, index: EvidenceIndex, asked: frozenset[str]) -> tuple[str, str] | None:
    """A claim saying what a named subject is with a word no document and not the question
    uses ("Cid Corman was just a publisher", "Thomas Harris is a playwright"). Only a name
    right before the verb is such a subject: "the clinic is a walk-in centre" may paraphrase
    what the evidence says of it."""
    for match in _PREDICATE.finditer(claim):
        if not _named_subject(claim[: match.start()]):
            continue
        stems = [s for s in content_stems(match.group("np")) if s not in GENERIC_STEMS]
        lacking = [s for s in stems if s not in asked and not index.has(s)]
        if lacking:
            return (
                "predicate_absent",
                f"'{match.group(0).strip()}': no document says so "
                f"(no '{_written(lacking[0], match.group('np'))}' in the evidence)",
            )
    return None


def _written(stemmed: str, text: str) -> str:
    return next((w for w in re.findall(r"[\w-]+", text) if stem(w) == stemmed), stemmed)


def _named_subject(before: str) -> bool:
    """Whether ``before`` ends with a name (the subject of the verb that follows)."""
    found = entities.names(before)
    return bool(found) and not found[-1].guessed and before.rstrip().endswith(found[-1].text)
