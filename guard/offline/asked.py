"""The kind of thing a question asks for (a year, a date, an age) against what the answer gives.

"In what year was the creator of the current arrangement born?" asks for a year; "Alf
Clausen composed the theme" gives none, while the evidence dates things: the answer gives a
detail of another kind where the evidence's answer is a year (``kind_unanswered``, naming
the evidence's years). "... won the championship at what age?" asks for an age; where the
evidence states ages ("at the age of 15") and the answer's figures are none of them ("The
expert mentor was 12"), the answer's age differs from the evidence's (``kind_mismatch``).
"What city ...?" asks for a city; an answer whose place the evidence writes only as the
region of another place ("Germany", where the evidence says "in Berlin, Germany") gives the
region, not the city (``kind_mismatch``, naming the place the evidence puts in it).

Left alone: questions asking "when" (a weekday, "after the review" or "on delivery" answer
those), "how many" (an answer may say "unlimited" or "all of them") or anything else; a
negated answer or a refusal (they deny or decline, which other checks read); an answer with
any figure, date, month or number word for a year or date question (besides those the
question writes: "WNP-3"); evidence with no year, date or age to answer with; an answer whose
figure is one of the evidence's ages; a place the evidence writes anywhere but after another
place's comma, or an answer naming that other place too.
"""

from __future__ import annotations

import re

from guard.offline import entities, negation, numbers
from guard.offline.align import EvidenceIndex
from guard.offline.details import short
from guard.offline.lexicon import MONTHS, ORDINAL_WORDS, WORD_NUMBERS
from guard.offline.rules import AnswerView, Finding, Placed
from guard.offline.text import content_stems

_YEAR = re.compile(r"\b(?:what|which)\s+(?:year|date)\b|\b(?:birth\s*date|date of birth)\b", re.I)
_AGE = re.compile(r"\b(?:(?:at\s+)?what\s+age|how\s+old)\b", re.IGNORECASE)
# how the evidence states an age: "at the age of 15", "aged 15", "15 years old"
_STATED_AGE = re.compile(
    r"\bage\s+of\s+(?P<a>\d{1,3})\b|\baged\s+(?P<b>\d{1,3})\b|\b(?P<c>\d{1,3})[-\s]years?[-\s]old\b",
    re.IGNORECASE,
)
_SETTLEMENT = re.compile(r"\b(?:what|which)\s+(?:city|town|village)\b", re.IGNORECASE)
# a place the evidence writes as the region of another: "Berlin, Germany"
_REGION_OF = re.compile(r"(?P<place>[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3}),\s*$")
_WORD = re.compile(r"[a-z]+")
# words that place something in time without a figure ("teenage", "a decade later")
_TIMED = frozenset(
    {"teen", "teens", "teenage", "teenager", "decade", "decades", "century", "centuries"}
)
_SPELLED = frozenset(WORD_NUMBERS) | frozenset(ORDINAL_WORDS) | frozenset(MONTHS) | _TIMED


def kind_failure(output: str, question: str, index: EvidenceIndex) -> tuple[str, str] | None:
    """The basis and reason when ``output`` does not give the kind of detail ``question``
    asks for, or gives another value of it than the evidence; else None."""
    if not question or negation.negated(output):
        return None
    if _AGE.search(question):
        return _age_failure(output, index)
    if _YEAR.search(question):
        return _year_failure(output, question, index)
    if _SETTLEMENT.search(question):
        return _region_failure(output, question, index)
    return None


def _region_failure(output: str, question: str, index: EvidenceIndex) -> tuple[str, str] | None:
    """A city asked for, and the answer's place is one the evidence writes only as the
    region of another place ("Berlin, Germany") that the answer does not name."""
    asked = set(content_stems(question))
    evidence = " ".join(s.text for s in index.sentences)
    for name in entities.names(output):
        if not name.parts or set(name.parts) <= asked:
            continue
        regions = _regions(name.text, evidence)
        if regions and not any(r.lower() in output.lower() for r in regions):
            return (
                "kind_mismatch",
                f"the question asks for a city; the answer gives {name.text}, which the "
                f"evidence writes only as the region of {', '.join(sorted(regions))} "
                f'("{_regions_text(regions, name.text)}")',
            )
    return None


def _regions(place: str, evidence: str) -> set[str] | None:
    """The places the evidence writes ``place`` after ("Berlin, Germany"), or None when it
    writes it anywhere else, or nowhere."""
    found: set[str] = set()
    for match in re.finditer(rf"\b{re.escape(place)}\b", evidence):
        before = _REGION_OF.search(evidence[max(0, match.start() - 60) : match.start()])
        if before is None:
            return None
        found.add(before.group("place"))
    return found or None


def _regions_text(regions: set[str], place: str) -> str:
    return f"{sorted(regions)[0]}, {place}"


def _year_failure(output: str, question: str, index: EvidenceIndex) -> tuple[str, str] | None:
    """No figure, date or number word in the answer but those the question writes too
    ("WNP-3 and WNP-5 were built much later")."""
    asked = question.lower()
    figures = [q for q in numbers.extract(output) if q.text.lower() not in asked]
    spelled = _SPELLED & set(_WORD.findall(output.lower())) - set(_WORD.findall(asked))
    if figures or spelled:
        return None
    dated = [q for q in index.quantities if q.kind in ("year", "date")]
    if not dated:
        return None
    shown = ", ".join(dict.fromkeys(q.text for q in dated[:3]))
    return (
        "kind_unanswered",
        f"the question asks for a year or date; the answer gives none (the evidence dates "
        f"it: {shown})",
    )


def _age_failure(output: str, index: EvidenceIndex) -> tuple[str, str] | None:
    given = [q for q in numbers.extract(output) if q.kind == "count"]
    stated = {
        int(next(g for g in m.groups() if g)): m.group()
        for s in index.sentences
        for m in _STATED_AGE.finditer(s.text)
    }
    if not given or not stated or any(q.value in stated for q in given):
        return None
    evidence = "; ".join(f"'{short(text, 40)}'" for text in stated.values())
    return (
        "kind_mismatch",
        f"the question asks for an age; the evidence states {evidence}, the answer "
        f"{', '.join(q.text for q in given)}",
    )


def checked(view: AnswerView) -> list[Placed]:
    """The first undecided or supported claim, failed when the answer does not give what the
    question asks for (see :func:`kind_failure`)."""
    open_ = view.open()
    if not open_ or any(r.status in ("contradicted", "neutral") for r in view.results):
        return []  # nothing open, already failed, or a refusal: nothing more to show
    found = kind_failure(view.output, view.premise.text, view.index)
    if found is None:
        return []
    first = open_[0]
    return [(first, Finding(found[0], found[1], view.results[first].sentence))]
