"""Comparisons an answer makes between two things the evidence measures.

"Model A has the bigger battery" against "Model A: 4,500 mAh battery ... Model B: 5,000 mAh
battery"; "us-east has the lower latency" against "eu-west 18 ms, us-east 92 ms"; "the V11 is
the lighter one" against "V8: 2.6 kg ... V11: 3.1 kg". The comparative word gives a direction
(and sometimes a kind of amount: lighter is mass, cheaper is money, quicker is time); the noun
after it, when the evidence has it, picks the amounts compared. Only a comparison between
exactly two measured things is judged, and only a reversed one is reported: anything less
clear is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from guard.case import Passage
from guard.offline import numbers
from guard.offline.text import STOPWORDS, split_sentences

_MONEY = frozenset({"usd", "eur", "gbp", "jpy", "inr"})
# comparative -> (+1 greater / -1 smaller, kinds it measures or None for any)
_COMPARATIVES: dict[str, tuple[int, frozenset[str] | None]] = {
    "bigger": (1, None),
    "larger": (1, None),
    "greater": (1, None),
    "higher": (1, None),
    "smaller": (-1, None),
    "lower": (-1, None),
    "heavier": (1, frozenset({"mass"})),
    "lighter": (-1, frozenset({"mass"})),
    "cheaper": (-1, _MONEY),
    "pricier": (1, _MONEY),
    "dearer": (1, _MONEY),
    "quicker": (-1, frozenset({"duration"})),
    "faster": (-1, frozenset({"duration"})),
    "slower": (1, frozenset({"duration"})),
}
_COMPARATIVE = re.compile(r"\b(" + "|".join(_COMPARATIVES) + r")\b(?:\s+(\w+))?", re.IGNORECASE)
# "every 15 minutes" says how often, not how long: never the amount a comparison compares
_INTERVAL = re.compile(r"\b(?:every|each|alle|cada|toutes les|tous les)\s+$")
_VAGUE_NOUNS = frozenset({"one", "option", "choice", "of", "than", "and"})
_TOKEN = re.compile(r"[\w-]+")
MAX_SUBJECT_WORDS = 3
NEAR_NOUN = 20  # characters between an amount and the noun it measures


@dataclass(frozen=True)
class Reversal:
    """A comparison the evidence's amounts say the other way round."""

    reason: str
    passage: str
    amount: str  # the subject's amount as the passage writes it


def reversed_comparison(claim: str, passages: tuple[Passage, ...]) -> Reversal | None:
    """The reversal in ``claim``, or None when it holds or cannot be judged."""
    return (
        _comparative_reversed(claim, passages)
        or _than_reversed(claim, passages)
        or _self_reversed(claim)
    )


def _comparative_reversed(claim: str, passages: tuple[Passage, ...]) -> Reversal | None:
    match = _COMPARATIVE.search(claim)
    if match is None:
        return None
    direction, kinds = _COMPARATIVES[match.group(1).lower()]
    noun = (match.group(2) or "").lower()
    subject = _subject(claim[: match.start()])
    if not subject:
        return None
    for passage in passages:
        found = _measure(passage.text, subject, noun if noun not in _VAGUE_NOUNS else "", kinds)
        if found is None:
            continue
        named, mine, other = found
        if mine.value == other.value or (mine.value > other.value) == (direction > 0):
            return None
        return Reversal(
            f"'{match.group(0).strip()}' is reversed: {passage.label} gives "
            f"{named} {mine.text} against {other.text}",
            passage.label,
            mine.text,
        )
    return None


def _subject(before: str) -> list[str]:
    """The last few words before the comparative that name a thing ("Model A", "us-east")."""
    words = [w.lower() for w in _TOKEN.findall(before)]
    named = [w for w in words if w not in STOPWORDS and w not in ("has", "is", "are", "the")]
    return named[-MAX_SUBJECT_WORDS:] if named else []


def _measure(
    text: str, subject: list[str], noun: str, kinds: frozenset[str] | None
) -> tuple[str, numbers.Quantity, numbers.Quantity] | None:
    """The subject as the passage names it, its amount, and the one other amount it is
    compared with."""
    lower = text.lower()
    span = _find(lower, subject)
    if span is None:
        return None
    mention = span[1]
    amounts = [
        q
        for q in numbers.extract(text)
        if _fits(q, kinds) and not _INTERVAL.search(lower, max(0, q.start - 12), q.start)
    ]
    candidates = _by_noun(lower, amounts, noun) if noun else amounts
    if len({q.kind for q in candidates}) != 1 or len(candidates) != 2:
        return None
    after = [q for q in candidates if q.start > mention and _same_sentence(text, mention, q.start)]
    if not after:
        return None
    mine = after[0]
    other = next(q for q in candidates if q is not mine)
    return text[span[0] : span[1]], mine, other


def _find(lower: str, subject: list[str]) -> tuple[int, int] | None:
    """Where the subject's words are named, in order, close together."""
    pattern = r"\b" + r"\W+(?:\w+\W+){0,2}?".join(re.escape(w) for w in subject) + r"\b"
    found = re.search(pattern, lower)
    if found is None and len(subject) > 1:
        found = re.search(r"\b" + re.escape(subject[-1]) + r"\b", lower)
    return found.span() if found else None


def _fits(quantity: numbers.Quantity, kinds: frozenset[str] | None) -> bool:
    if quantity.kind in ("date", "year", "ordinal"):
        return False
    return kinds is None or quantity.kind in kinds


def _by_noun(lower: str, amounts: list[numbers.Quantity], noun: str) -> list[numbers.Quantity]:
    """The amounts the noun measures: the one written next to each mention of it ("4,500 mAh
    battery"), or else those of the sentences about it ("Latency: eu-west 18 ms, us-east
    92 ms")."""
    root = noun.rstrip("s")
    mentions = [m.start() for m in re.finditer(re.escape(root), lower)]
    nearest = []
    for at in mentions:
        close = [q for q in amounts if abs(q.start - at) <= NEAR_NOUN]
        if close:
            nearest.append(min(close, key=lambda q: abs(q.start + len(q.text) - at)))
    if len(set(nearest)) >= 2:
        return list(dict.fromkeys(nearest))
    about = [s for s in split_sentences(lower) if root in s.text]
    return [q for q in amounts if any(s.start <= q.start < s.end for s in about)]


def _same_sentence(text: str, a: int, b: int) -> bool:
    return not re.search(r"[.!?]\s", text[min(a, b) : max(a, b)])


# "A returned more than B", "A costs less than B": both things named, each with its amount
_OTHER = r"(?P<other>(?:[a-z]?[A-Z0-9][\w-]*\s*){1,4})"  # "Model S", "iOS", "the 64 GB"
_THAN = re.compile(
    r"\b(?P<way>more|less|fewer|higher|lower|bigger|smaller|larger|greater|"
    r"cheaper|longer|shorter)\s+(?:[a-z]+\s+){0,2}?than\s+(?:the\s+)?" + _OTHER
)
# "A outpaced B", "A trails B", "A is ahead of B": a verb that says which is greater
_RELATIVE = re.compile(
    r"\b(?P<way>outpac\w*|outperform\w*|outsold|outsell\w*|outstrip\w*|surpass\w*|"
    r"exceed\w*|beat|beats|ahead of|trail\w*|lag\w*(?: behind)?|behind|"
    r"underperform\w*|fell short of|falls short of)\s+(?:the\s+)?" + _OTHER
)
_RELATIVE_WAY = {
    "outpac": 1, "outperform": 1, "outsold": 1, "outsell": 1, "outstrip": 1, "surpass": 1,
    "exceed": 1, "beat": 1, "ahead": 1, "trail": -1, "lag": -1, "behind": -1,
    "underperform": -1, "fell": -1, "falls": -1,
}  # fmt: skip
_THAN_WAY = {
    "more": 1,
    "higher": 1,
    "bigger": 1,
    "larger": 1,
    "greater": 1,
    "longer": 1,
    "less": -1,
    "fewer": -1,
    "lower": -1,
    "smaller": -1,
    "cheaper": -1,
    "shorter": -1,
}
# a name, or a model written with its figures ("Model S", "the 64 GB model")
_CAPITALISED_RUN = re.compile(r"\b[A-Z0-9][\w-]*(?:\s+[A-Z0-9][\w-]*){0,3}")


def _than_reversed(claim: str, passages: tuple[Passage, ...]) -> Reversal | None:
    """ "The Global Equity Fund returned more than the Sustainable Leaders Fund" against
    "Global Equity Fund: +9.8%. Sustainable Leaders Fund: +12.4%": the first amount after
    each name, of one kind, in the one passage naming both."""
    match = _THAN.search(claim) or _RELATIVE.search(claim)
    if match is None:
        return None
    other = match.group("other").strip().lower().split()
    subjects = [
        m.group(0)
        for m in _CAPITALISED_RUN.finditer(claim[: match.start()])
        if m.start() > 0 or len(m.group(0).split()) > 1 or _named(m.group(0), passages)
    ]
    if not subjects or not other:
        return None
    subject = subjects[0].lower().split()
    if subject[0] == "the":
        subject = subject[1:]
    if not subject:
        return None
    direction = _way(match.group("way").lower())
    if not any(_find(p.text.lower(), subject) and _find(p.text.lower(), other) for p in passages):
        return _apart_reversed(match, subject, other, direction, passages)
    for passage in passages:
        lower = passage.text.lower()
        mine_at, other_at = _find(lower, subject), _find(lower, other)
        if mine_at is None or other_at is None or mine_at == other_at:
            continue
        amounts = [q for q in numbers.extract(passage.text) if _fits(q, None)]
        mine = _first_after(passage.text, amounts, mine_at[1])
        theirs = _first_after(passage.text, amounts, other_at[1])
        if mine is None or theirs is None or mine.kind != theirs.kind or mine is theirs:
            return None
        if mine.value == theirs.value or (mine.value > theirs.value) == (direction > 0):
            return None
        return Reversal(
            f"'{match.group(0).strip()}' is reversed: {passage.label} gives "
            f"{mine.text} against {theirs.text}",
            passage.label,
            mine.text,
        )
    return None


def _way(word: str) -> int:
    """+1 when the word says the subject is the greater, -1 the smaller."""
    if word in _THAN_WAY:
        return _THAN_WAY[word]
    return next(way for root, way in _RELATIVE_WAY.items() if word.startswith(root))


def _named(word: str, passages: tuple[Passage, ...]) -> bool:
    """Whether a capitalised word opening the claim is a name the evidence writes so, and never
    in lower case ("Hillside handled ..." where a passage says "Hillside clinic"), not a
    sentence's first word."""
    if word.lower() in STOPWORDS or not word[:1].isupper():
        return False
    written = re.compile(rf"\b{re.escape(word)}\b")
    lowered = re.compile(rf"\b{re.escape(word.lower())}\b")
    texts = [p.text for p in passages]
    return any(written.search(t) for t in texts) and not any(lowered.search(t) for t in texts)


def _apart_reversed(
    match: re.Match[str],
    subject: list[str],
    other: list[str],
    direction: int,
    passages: tuple[Passage, ...],
) -> Reversal | None:
    """The comparison when no passage names both things ("Easy Access Saver: 2.6% AER" and
    "Saver Plus: 3.9% AER" in two documents): the first amount after each name, of one kind."""
    located: list[tuple[Passage, numbers.Quantity]] = []
    for words in (subject, other):
        found = None
        for passage in passages:
            at = _find(passage.text.lower(), words)
            if at is None:
                continue
            amounts = [q for q in numbers.extract(passage.text) if _fits(q, None)]
            first = _first_after(passage.text, amounts, at[1])
            if first is not None:
                found = (passage, first)
                break
        if found is None:
            return None
        located.append(found)
    (passage, mine), (_, theirs) = located
    if mine.kind != theirs.kind or mine.value == theirs.value:
        return None
    if (mine.value > theirs.value) == (direction > 0):
        return None
    return Reversal(
        f"'{match.group(0).strip()}' is reversed: {passage.label} gives {mine.text}, "
        f"{located[1][0].label} gives {theirs.text}",
        passage.label,
        mine.text,
    )


def _first_after(text: str, amounts: list[numbers.Quantity], at: int) -> numbers.Quantity | None:
    return next((q for q in amounts if q.start >= at and _same_sentence(text, at, q.start)), None)


_AGAINST = re.compile(
    r"(?:\s+(?:a|an|per|each)\s+\w+)?\s*(?:,|;|\()?\s*(?:against|versus|vs\.?|"
    r"compared (?:with|to)|instead of|rather than|while|whereas)\s+(?:the\s+)?",
    re.IGNORECASE,
)
_SELF_WAY = {**{w: way for w, (way, _) in _COMPARATIVES.items()}, **_THAN_WAY}
_SELF = re.compile(r"\b(" + "|".join(_SELF_WAY) + r")\b", re.IGNORECASE)


def _self_reversed(claim: str) -> Reversal | None:
    """A comparison the claim's own two amounts reverse ("costs more per year: £6,200 against
    £11,400"): the first amount is the compared thing's, the one after "against" the other's."""
    match = _SELF.search(claim)
    if match is None:
        return None
    way = _SELF_WAY[match.group(1).lower()]
    # the claim's own amounts (read once per claim), those after the comparative
    amounts = [q for q in numbers.extract(claim) if q.start >= match.end() and _fits(q, None)]
    for first, second in pairwise(amounts):
        between = claim[first.start + len(first.text) : second.start]
        if not _AGAINST.fullmatch(between):
            continue
        one, two = first.value, second.value
        if first.kind != second.kind:
            if second.kind != "count":
                continue
            one = first.number  # "40 minutes against 65": the unit said once
        if one != two and (one > two) != (way > 0):
            return Reversal(
                f"'{match.group(0).strip()}' is reversed by the claim's own amounts: "
                f"{first.text} against {second.text}",
                "",
                first.text,
            )
    return None
