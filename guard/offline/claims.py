"""Split an answer into claims: its sentences, and the independent clauses of long sentences.

A bare short answer ("Delhi", "6.213 km long") is one claim read in the light of the question
it answers; a leading "Yes," or "No," is an answer to the question, not a claim of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guard.offline.hedges import unhedged
from guard.offline.text import content_stems, split_sentences, words

SHORT_ANSWER_WORDS = 6
MIN_CLAUSE_CONTENT_WORDS = 3
_CLAUSE_BREAK = re.compile(
    r";\s+|,\s+(?:and|but|whereas|while|although|though|however|yet|because|as long as|if|"
    r"provided that|unless)\s+|,\s+(?=so\s)|,\s+|\s+but\s+(?=\w+\s+\w+)"
    r"|\s+and\s+(?=(?:no|the|it|they|we|you|he|she|this|our|your|their|its|there|is|are|was|"
    r"were|has|have|had|can|will|would|should|must|may|might)\s)",
    re.IGNORECASE,
)
# "No, ..." answers the question; "No pets are allowed" is a claim: "no" and "nope" go only
# with punctuation after them
_INTERJECTION = re.compile(
    r"^\s*(?:(?:yes|yeah|sure|correct|indeed)\b[,.!:;]?|(?:no|nope)"
    r"\b[,.!:;]|(?:no|nope)$)\s*",
    re.IGNORECASE,
)
_PAST_TENSE = frozenset(
    {
        "won",
        "wrote",
        "made",
        "began",
        "became",
        "led",
        "held",
        "took",
        "gave",
        "sang",
        "ran",
        "built",
        "bought",
        "sold",
        "told",
        "said",
        "met",
        "left",
        "lost",
        "found",
        "got",
        "went",
    }
)
_FINITE_VERBS = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "does",
        "did",
        "do",
        "will",
        "would",
        "can",
        "could",
        "may",
        "might",
        "shall",
        "should",
        "must",
        # the verbs policies and product pages state things with ("the plan includes ...")
        "includes",
        "supports",
        "covers",
        "requires",
        "allows",
        "accepts",
        "offers",
        "provides",
        "applies",
        "qualifies",
        "operates",
    }
)


_LIST_MARK = re.compile(r"\W*(?:\d{1,2}|[a-z])?[.)]?\W*")


@dataclass(frozen=True)
class Claim:
    """One checkable statement of the output. ``short_answer`` marks a verbless reply."""

    text: str
    short_answer: bool = False


def split_claims(output: str, *, answers_question: bool = True) -> list[Claim]:
    """The claims of ``output``, in order. An output with no words gives no claims. A short
    answer is recognised only when the output ``answers_question`` (a question was given)."""
    sentences = [s.text for s in split_sentences(output)]
    # a short answer is told by the sentence with its "Yes,"/"No," (without it, "we ship to
    # P.O. boxes" reads as a short answer and its negation is never compared): only hedges go
    if answers_question and len(sentences) == 1 and is_short_answer(unhedged(sentences[0])):
        return [Claim(_opened(sentences[0]), short_answer=True)]
    claims: list[Claim] = []
    for sentence in sentences:
        claims.extend(Claim(clause) for clause in _clauses(_opened(sentence)))
    return [c for c in claims if words(c.text) and not _LIST_MARK.fullmatch(c.text)]


def _opened(sentence: str) -> str:
    """``sentence`` without what opens it but claims nothing: a "Yes," or "No," answering
    the question, a hedge ("I believe", "as far as I know": the claim after it is still a
    claim, :mod:`~guard.offline.hedges`), in any order."""
    for _ in range(2):
        sentence = _INTERJECTION.sub("", sentence).strip() or sentence
        sentence = unhedged(sentence).strip() or sentence
    return sentence


def is_short_answer(text: str) -> bool:
    """A few words without a verb: "Delhi", "6.213 km long", "President Richard Nixon" (not
    "Members can't bring guests", "Growth includes up to 3 users")."""
    tokens = words(text)
    return len(tokens) <= SHORT_ANSWER_WORDS and not any(
        _looks_like_verb(t)
        or _NEGATED_VERB.search(t)
        or _verb_before_object(t, following)
        or _quantified(t, following)
        for t, following in zip(tokens, [*tokens[1:], ""], strict=False)
    )


_NEGATED_VERB = re.compile(r"n['’]t$", re.IGNORECASE)
_OBJECT_OPENERS = frozenset({"a", "an", "the", "up", "no", "all", "only", "about"})


_QUANTIFIERS = frozenset({"all", "every", "each", "most", "some", "no", "none", "always", "never"})


def _quantified(word: str, following: str) -> bool:
    """ "All flights include a meal": a quantified statement, not a name ("All Saints")."""
    return word.lower() in _QUANTIFIERS and following[:1].islower()


def _verb_before_object(word: str, following: str) -> bool:
    """ "includes up to 3 users", "costs £5": a verb in the third person before its object."""
    return _THIRD_PERSON.fullmatch(word) is not None and (
        following.lower() in _OBJECT_OPENERS or following[:1].isdigit()
    )


def _looks_like_verb(word: str) -> bool:
    lower = word.lower()
    if lower in _FINITE_VERBS or lower in _PAST_TENSE:
        return True
    return word.islower() and len(word) >= 5 and lower.endswith("ed")


def _clauses(sentence: str) -> list[str]:
    """The clauses of ``sentence``, each a verbatim span of it; a short piece stays joined to
    its neighbour with the words between them."""
    merged: list[tuple[int, int]] = []
    joined: set[str] = set()  # the content stems of merged[-1], grown with it (linear)
    for begin, end in clause_spans(sentence):
        piece = sentence[begin:end].strip()
        if not piece:
            continue
        stems = content_stems(piece)
        if merged and (
            min(len(stems), len(joined)) < MIN_CLAUSE_CONTENT_WORDS
            or _predicate_of(sentence[merged[-1][0] : merged[-1][1]], piece)
            or _SOURCE_OPENER.fullmatch(sentence[merged[-1][0] : merged[-1][1]].strip())
        ):
            # the words between them (a separator such as "provided that") count too
            joined.update(content_stems(sentence[merged[-1][1] : begin]), stems)
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((begin, end))
            joined = set(stems)
    return [sentence[b:e].strip() for b, e in merged] or [sentence]


# "According to the CFO's memo, ...", "In Dr Ortiz's report, ...": who says the clause after
# it, one claim with it
_SOURCE_OPENER = re.compile(
    r"(?:according to|as (?:stated|noted|reported) (?:in|by)|as per)\s+[^,;]{2,60}"
    r"|in\s+[^,;]{2,40}['’]s\s+[\w-]+",
    re.IGNORECASE,
)


def _predicate_of(before: str, piece: str) -> bool:
    """Whether ``piece`` is the predicate of a verbless ``before``: "The external examiner,
    Professor Hale, | asked for ..." is one claim, its subject set off by an apposition."""
    first = words(piece)[:1]
    return (
        bool(first)
        and first[0].islower()
        and (_looks_like_verb(first[0]) or _THIRD_PERSON.fullmatch(first[0]) is not None)
        and not any(_looks_like_verb(w) for w in words(before))
    )


_THIRD_PERSON = re.compile(r"[a-z]{3,}[^s]s")  # "suggests", "confirms" (not "access")


def clause_spans(sentence: str) -> list[tuple[int, int]]:
    """The spans of ``sentence`` between clause breaks, before short ones are joined."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _CLAUSE_BREAK.finditer(sentence):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(sentence)))
    return spans
