"""Polarity against the clause a claim restates, wherever the evidence states it.

A claim restates a clause of the evidence when nearly every word of that clause is in the claim
and the sentence holding it (with what its pronoun refers to) has most of the claim's words:
"Gift cards bought online can be used in our stores" restates "they cannot be used in our
stores" of "E-gift cards bought on our website can only be redeemed online; they cannot be used
in our stores". If the best such clause negates what the claim affirms, or the other way round,
and no other clause restates the claim with its own polarity, the claim is contradicted.

Negation is counted, not just seen: "may subcontract without asking" (one cue) against "shall
not subcontract without consent" (two) flips; "notice-free" against "without notice" does not.
The cues are English, Spanish, German and French, so the check also reads answers in those
languages, whose other words the rules do not check: only words the claim shares with the
evidence are compared.
"""

from __future__ import annotations

import re

from guard.offline import negation, numbers
from guard.offline.align import EvidenceIndex, EvidenceSentence, in_sentence
from guard.offline.claims import is_short_answer
from guard.offline.lexicon import FOREIGN_FUNCTION_WORDS
from guard.offline.text import content_stems, stem

Flip = tuple[str, EvidenceSentence]

MAX_SENTENCES = 6  # candidate sentences read for the restated clause
SENTENCE_COVER = 0.75  # of the claim's words, the share the clause's sentence must have
CLAUSE_SHARE = 0.75  # of the clause's words, the share the claim must have
MIN_SHARED = 2  # words of the clause the claim shares, at least
MAX_ABOUT = 40  # words of a claim that can restate one clause, at most (longer: not read)

# negation cues, counted once each: English (see guard.offline.negation), Spanish, German,
# French ("ne" / "n'" for the French pair "ne ... pas", whose second half is not counted),
# Italian and Portuguese
_CUES = negation.CUES - {"nor"} | frozenset(
    {
        "nunca",
        "jamás",
        "sin",
        "tampoco",
        "nadie",
        "ningún",
        "ninguno",
        "ninguna",
        "nicht",
        "kein",
        "keine",
        "keinen",
        "keinem",
        "keiner",
        "keines",
        "nie",
        "niemals",
        "ohne",
        "nichts",
        "ne",
        "n",
        "sans",
        "non",
        "senza",
        "nessun",
        "nessuno",
        "nessuna",
        "não",
        "sem",
        "nenhum",
        "nenhuma",
    }
)
_CONDITION = re.compile(
    r"\s*(?:if|unless|provided|as long as|except|when|si|a menos que|wenn|falls|sofern|sauf si)\b",
    re.IGNORECASE,
)
# implicit negatives that are negation cues themselves: "no longer includes" is counted
_CUE_PHRASES = re.compile(r"\b(?:no longer|neither)\b", re.IGNORECASE)
_TOKEN = re.compile(r"[^\W\d_]+(?:-free\b)?")
_CONTRACTED = re.compile(r"(?<=\w)n['’]t\b", re.IGNORECASE)
_CLAUSE = re.compile(
    r"[;:()]|,\s|\s(?:but|while|whereas|although|pero|aunque|aber|während|mais|alors que)\s"
    r"|\s[-–—]\s"
)


def cues(text: str) -> int:
    """How many negations ``text`` holds (idioms that only look negative left out)."""
    cleaned = negation.NOT_NEGATING.sub(" ", text)
    count = len(_CONTRACTED.findall(cleaned))
    for token in _TOKEN.findall(cleaned.lower()):
        count += token in _CUES or token.endswith("-free")
    return count


_IGNORED = frozenset(stem(w) for w in FOREIGN_FUNCTION_WORDS)


def _stems(text: str) -> set[str]:
    """The words compared: content words, not the function words of es/de/fr."""
    return set(content_stems(text)) - _IGNORED


def flipped_clause(
    claim: str, index: EvidenceIndex, claim_stems: list[str] | None = None
) -> Flip | None:
    """The reason and the sentence when the clause ``claim`` restates has the other polarity,
    or None when no clause is restated or one keeps the claim's polarity (``claim_stems``:
    its content stems, when the caller has them)."""
    about = _stems(claim) if claim_stems is None else set(claim_stems) - _IGNORED
    if not MIN_SHARED <= len(about) <= MAX_ABOUT:
        return None
    mine = cues(claim) % 2
    parts = _PARTS_OF_CLAIM.split(claim)
    implicit = negation.IMPLICIT_NEGATIVE.search(claim) is not None
    best: tuple[float, int, str, EvidenceSentence] | None = None
    for number in index.candidates(sorted(about))[:MAX_SENTENCES]:
        sentence = index.sentences[number]
        if sum(in_sentence(s, sentence, index) for s in about) < SENTENCE_COVER * len(about):
            continue
        for clause in _CLAUSE.split(sentence.text):
            if is_short_answer(clause):
                continue  # "liquids or drops": a list item, in the polarity of its sentence
            stems = _stems(clause)
            shared = len(stems & about)
            if shared < MIN_SHARED or shared < CLAUSE_SHARE * len(stems):
                continue
            if _CONDITION.match(clause):
                continue  # "unless you add flood cover": the condition's polarity, not the claim's
            part = _part_restating(parts, stems)
            parity = cues(clause) % 2
            if parity == mine or (part is not None and parity == cues(part) % 2):
                return None  # a clause restated with the claim's (or that part's) polarity
            if part is not None and negation.IMPLICIT_NEGATIVE.search(part):
                return None
            if negation.prefixed_denial(claim, clause):
                return None  # "unaffected" for "not affected"
            if implicit or negation.IMPLICIT_NEGATIVE.search(_CUE_PHRASES.sub(" ", clause)):
                return None  # "stopped sending" for "weren't sent": negation without a cue
            if _other_amounts(clause, claim):
                return None  # "do not take more than 8": a limit, not the claim's statement
            if best is None or (shared / len(stems), shared) > best[:2]:
                best = (shared / len(stems), shared, clause.strip(), sentence)
    if best is None:
        return None
    _, _, clause, sentence = best
    said = "negated" if mine == 0 else "not negated"
    return f'negation flipped: {sentence.passage} says "{clause}" ({said})', sentence


# where a claim joins two statements: "some people feel drowsy, and they shouldn't drive"
_PARTS_OF_CLAIM = re.compile(r";\s*|,\s+(?:and|but|so|while|whereas)\s+", re.IGNORECASE)


def _part_restating(parts: list[str], stems: set[str]) -> str | None:
    """The one part of a claim of several that shares the most words with an evidence
    clause's ``stems`` (its polarity is the one compared), or None for a claim of one part."""
    if len(parts) < 2:
        return None
    return max(parts, key=lambda part: len(_stems(part) & stems))


def _other_amounts(clause: str, claim: str) -> bool:
    """Whether the clause states an amount the claim does not."""
    stated = numbers.extract(claim)
    return any(not any(numbers.matches(c, q) for c in stated) for q in numbers.extract(clause))
