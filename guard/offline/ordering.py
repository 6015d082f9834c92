"""Orderings in time an answer states between two things the evidence dates.

"The salary review comes before the performance review" against "Performance reviews are
completed in March. Salary reviews take place in May"; "Pablo Trapero was born first" (asked
"Pablo Trapero or Aleksander Ford?") against "Pablo Trapero (born 4 October 1971) ...
Aleksander Ford (born 24 November 1908 ...)". Each side is dated by the first date, year or
month after its mention in a sentence that mentions it and not the other; an ordering the
dates reverse is reported with both sentences. Anything less clear (a side undated, both in
one sentence, dates of different precision, equal dates) is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guard.offline import numbers
from guard.offline.align import EvidenceIndex, EvidenceSentence
from guard.offline.lexicon import MONTHS
from guard.offline.text import GENERIC_STEMS, content_stems

_BEFORE = r"before|earlier than|prior to|ahead of|older than|sooner than"
_AFTER = r"after|later than|younger than|newer than"
# the verb between a side and its ordering word: "comes", "was born", "were founded", "is done"
_FILLER = (
    r"(?:(?:was|were|is|are|has been|had been|came|comes|come|happens|happened|took place|"
    r"takes place|the|one|to be|also|actually)\s+|\w+ed\s+|born\s+|\w+en\s+|done\s+)"
)
# "A comes before B", "A was founded earlier than B"
_BETWEEN = re.compile(
    rf"^(?P<a>.{{3,80}}?)\s+{_FILLER}{{0,4}}(?P<way>{_BEFORE}|{_AFTER})\s+(?P<b>.{{3,80}}?)\W*$",
    re.IGNORECASE,
)
# "A was born first", "A came first", "A was the first band founded", "A is the older one"
_FIRST = re.compile(
    r"^(?P<a>.{3,80})\s+(?P<way>first|earlier|older|the oldest|last|later|"
    r"younger|the youngest)\b(?:\s+[\w-]+){0,3}\W*$",
    re.IGNORECASE,
)
# words of a side that say what happened, not who: "was actually born", "was founded"
_HAPPENED = re.compile(
    r"\b(?:born|actually|also|really|one|the|started|founded|formed|released|established|"
    r"created|opened|built|published|launched|made|began|begun|came|comes|come|is|was|were|are|"
    r"[a-z]{3,}ed)\b",
    re.IGNORECASE,
)
# the question's alternatives: "..., A or B?", "Who is older A or B?"
_OR = re.compile(r"^(?P<head>.*?),?\s+or\s+(?P<b>[^,?]{2,80})\?\s*$", re.DOTALL)
_ASKS = re.compile(r"\b(?:first|earlier|older|younger|later|last|before|after)\b", re.IGNORECASE)
_MONTH = re.compile(
    r"\b("
    + "|".join(sorted((m for m in MONTHS if len(m) > 3 or m == "may"), key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)
_LATE = frozenset({"after", "later than", "younger than", "newer than", "last", "later"})
_LATE_FIRST = frozenset({"last", "later", "younger", "the youngest"})
MAX_SENTENCES = 200  # sentences searched for each side's date
MAX_CLAIM = 200  # characters of a claim read for an ordering
_CUE = re.compile(
    r"\b(?:before|after|earlier|later|prior|ahead|older|younger|newer|sooner|first|last|"
    r"oldest|youngest)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Dated:
    """One side of an ordering, its date (comparable within its precision) and the sentence."""

    stems: frozenset[str]
    when: tuple[int, float]  # (precision: 0 full date, 1 year, 2 month of an unknown year)
    shown: str
    sentence: EvidenceSentence


def reversed_order(
    claim: str, question: str, index: EvidenceIndex
) -> tuple[str, EvidenceSentence] | None:
    """Why the ordering in ``claim`` is reversed by the evidence's dates, or None."""
    text = claim.strip()
    if len(text) > MAX_CLAIM or not _CUE.search(text):
        return None  # the cheap test first: most claims order nothing
    match = _BETWEEN.match(text)
    if match is not None:
        late = match.group("way").lower() in _LATE
        return _judge(match.group("a"), match.group("b"), late, index)
    match = _FIRST.match(text)
    options = _options(question) if match is not None and question else None
    if match is None or options is None:
        return None
    a = _unapposed(match.group("a"))
    before, after = options
    other = after if not _side(after) & _side(a) else before
    if not _side(other) or _side(other) & _side(a):
        return None
    late = match.group("way").lower() in _LATE_FIRST
    return _judge(a, other, late, index)


# "Hole, the rock band that Courtney Love fronted, was founded": the side is "Hole"
_APPOSED = re.compile(r"^\W*(?P<name>[^,]{2,60}?),\s+(?:the|a|an)\s[^,]+,", re.IGNORECASE)


def _unapposed(side: str) -> str:
    """A side without the description set off after its name by commas."""
    match = _APPOSED.match(side)
    return match.group("name") if match is not None else side


def _options(question: str) -> tuple[str, str] | None:
    """The two things a question asks to order: "Who was born first, A or B?"."""
    match = _OR.match(question.strip())
    if match is None:
        return None
    head = match.group("head")
    cut = max([head.rfind(","), head.rfind(":"), *(m.end() for m in _ASKS.finditer(head))])
    return head[cut + 1 :].strip(), match.group("b").strip()


def _side(text: str) -> frozenset[str]:
    return frozenset(content_stems(_HAPPENED.sub(" ", text))) - GENERIC_STEMS


def _judge(a: str, b: str, late: bool, index: EvidenceIndex) -> tuple[str, EvidenceSentence] | None:
    first, second = _dated(_side(a), _side(b), index), _dated(_side(b), _side(a), index)
    if first is None or second is None:
        return None
    mine, theirs = _comparable(first.when, second.when)
    if mine is None or theirs is None or mine == theirs:
        return None
    holds = mine > theirs if late else mine < theirs
    if holds:
        return None
    word = "after" if late else "before"
    return (
        f"the claim puts '{a.strip()}' {word} '{b.strip()}', but {first.sentence.passage} "
        f"dates it {first.shown} and {second.sentence.passage} dates the other {second.shown}",
        first.sentence,
    )


def _comparable(
    a: tuple[int, float], b: tuple[int, float]
) -> tuple[float, float] | tuple[None, None]:
    """Two dates at one precision: a full date against a bare year compares by year; a
    month of an unknown year compares only with another."""
    if a[0] == b[0]:
        return a[1], b[1]
    if 2 in (a[0], b[0]):
        return None, None
    return _year(a), _year(b)


def _year(when: tuple[int, float]) -> float:
    return float(int(when[1]) // 10000) if when[0] == 0 else when[1]


def _dated(stems: frozenset[str], other: frozenset[str], index: EvidenceIndex) -> Dated | None:
    """The date of the first sentence that mentions the words telling ``stems`` from
    ``other``: the first date, year or month after that mention, unless the other side is
    mentioned first in between."""
    own = stems - other
    if not own:
        return None
    for sentence in index.sentences[:MAX_SENTENCES]:
        if not stems <= sentence.stems:
            continue
        at = _position(sentence.text, own)
        if at is None:
            continue
        when = _first_date(sentence.text[at:])
        if when is None:
            continue
        between = sentence.text[at : at + when[2]]
        if (other - stems) and _position(between, other - stems) is not None:
            continue  # "A ... B in 1985": the date is B's
        return Dated(stems, when[0], when[1], sentence)
    return None


_WORD = re.compile(r"[\w'’-]+")


def _position(text: str, stems: frozenset[str]) -> int | None:
    """Where the last of ``stems`` to appear first appears in ``text`` (all must)."""
    seen: dict[str, int] = {}
    for match in _WORD.finditer(text):
        for s in content_stems(match.group()):
            if s in stems:
                seen.setdefault(s, match.end())
    return max(seen.values()) if len(seen) == len(stems) else None


def _first_date(text: str) -> tuple[tuple[int, float], str, int] | None:
    """The first date, year or capitalised month of ``text``: its comparable value, as
    written, and its offset."""
    dates = [q for q in numbers.extract(text) if q.kind in ("date", "year")]
    month = _MONTH.search(text)
    if month is not None and not month.group(1)[0].isupper():
        month = None  # "may" in lower case is a verb
    if dates and (month is None or dates[0].start <= month.start()):
        q = dates[0]
        if q.kind == "year":
            return (1, q.value), q.text, q.start
        year, month_number, day = (
            int(q.value) // 10000,
            int(q.value) // 100 % 100,
            int(q.value) % 100,
        )
        if year and month_number and day:
            return (0, q.value), q.text, q.start
        return ((1, float(year)), q.text, q.start) if year else None
    if month is None:
        return None
    return (2, float(MONTHS[month.group(1).lower()])), month.group(1), month.start()
