"""The kind of thing a question asks for (a year, a date, an age) against what the answer gives.

"In what year was the creator of the current arrangement born?" asks for a year; "Alf
Clausen composed the theme" gives none, while the evidence dates things: the answer gives a
detail of another kind where the evidence's answer is a year (``kind_unanswered``, naming
the evidence's years). "... won the championship at what age?" asks for an age; where the
evidence states ages ("at the age of 15") and the answer's figures are none of them ("The
expert mentor was 12"), the answer's age differs from the evidence's (``kind_mismatch``).

Left alone: questions asking "when" (a weekday, "after the review" or "on delivery" answer
those), "how many" (an answer may say "unlimited" or "all of them") or anything else; a
negated answer or a refusal (they deny or decline, which other checks read); an answer with
any figure, date, month or number word for a year or date question; evidence with no year,
date or age to answer with; an answer whose figure is one of the evidence's ages.
"""

from __future__ import annotations

import re
from dataclasses import replace

from guard.offline import negation, numbers
from guard.offline.align import EvidenceIndex
from guard.offline.checks import ClaimResult
from guard.offline.details import short
from guard.offline.lexicon import MONTHS, ORDINAL_WORDS, WORD_NUMBERS

_YEAR = re.compile(r"\b(?:what|which)\s+(?:year|date)\b|\b(?:birth\s*date|date of birth)\b", re.I)
_AGE = re.compile(r"\b(?:(?:at\s+)?what\s+age|how\s+old)\b", re.IGNORECASE)
# how the evidence states an age: "at the age of 15", "aged 15", "15 years old"
_STATED_AGE = re.compile(
    r"\bage\s+of\s+(?P<a>\d{1,3})\b|\baged\s+(?P<b>\d{1,3})\b|\b(?P<c>\d{1,3})[-\s]years?[-\s]old\b",
    re.IGNORECASE,
)
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
    return None


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


def checked(
    results: list[ClaimResult], output: str, question: str, index: EvidenceIndex
) -> list[ClaimResult]:
    """``results`` with the first undecided or supported claim failed when the answer does
    not give what the question asks for (see :func:`kind_failure`)."""
    if not any(r.status in ("undecided", "supported") for r in results):
        return results
    if any(r.status in ("contradicted", "neutral") for r in results):
        return results  # already failed, or a refusal: nothing more to show
    found = kind_failure(output, question, index)
    if found is None:
        return results
    first = next(i for i, r in enumerate(results) if r.status in ("undecided", "supported"))
    failed = replace(results[first], status="contradicted", basis=found[0], reason=found[1])
    return [*results[:first], failed, *results[first + 1 :]]
