"""A short answer's amount read from the wrong clause: the evidence states it, but beside
fewer of the question's words than a rival amount of the same kind.

Asked "What rate does the Fixed Saver pay?" against "Easy Saver: 3.1% AER variable. Fixed
Saver 1 Year: 4.2% AER fixed", the answer "3.1% AER" is an amount of the evidence, stated
beside "saver" only; the rival 4.2% is stated beside "fixed" and "saver", every question word
the answer's clause has and more. The answer fills the question's slot with a value the
evidence gives another one: a failure the judge can show (the clause that answers).

Clauses are the parts of an evidence sentence between commas and semicolons ("Check-in from
15:00, check-out by 11:00"). The rival must be of the answer's kind (an amount of the same
kind, a time of day, a date) and beside a strict superset of the question's words found beside
the answer; a tie or a partial overlap ("meal allowance" beside one amount, "international"
beside the other) is left to the other checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guard.offline import numbers, times
from guard.offline.align import EvidenceIndex, EvidenceSentence, related
from guard.offline.details import short
from guard.offline.text import GENERIC_STEMS, content_stems

_CLAUSE_BREAK = re.compile(r"[;,]\s+")


@dataclass(frozen=True)
class _Clause:
    text: str
    sentence: EvidenceSentence
    asked: frozenset[str]  # the question's stems this clause has
    quantities: tuple[numbers.Quantity, ...]
    clock: tuple[times.TimeOfDay, ...]


@dataclass(frozen=True)
class Misplaced:
    """A rival clause the question fits better than the answer's. ``shown`` when the two are
    parallel: the answer's clause shares some of the question's words, or both are clauses of
    one sentence ("1.5% on Classic, 0% on Gold"); the answer's is the lesser, a failure. Else
    the answer's amount stands, in a sentence of its own, beside none of the question's words,
    which proves nothing either way (a year in a biography, asked about by its subject's
    description)."""

    reason: str
    sentence: EvidenceSentence
    shown: bool


def misplaced(claim: str, index: EvidenceIndex, question: str) -> Misplaced | None:
    """The rival clause when the short answer ``claim`` takes its amount or time from a
    clause the question fits less well; None when it does not."""
    quantities = numbers.extract(claim)
    clock = times.times(claim)
    if not (quantities or clock) or not question:
        return None
    asked = frozenset(content_stems(question)) - set(content_stems(claim)) - GENERIC_STEMS
    if not asked:
        return None
    given = numbers.extract(question)  # the question's own amounts are its premise, not rivals
    clauses = [c for s in index.sentences for c in _clauses(s, asked)]
    holding = [c for c in clauses if _holds(c, quantities, clock)]
    if not holding:
        return None
    best = max(holding, key=lambda c: len(c.asked))
    for rival in clauses:
        if rival.asked > best.asked and _rivals(rival, quantities, clock, given):
            return Misplaced(
                f'the answer\'s amount is stated in "{short(best.text)}", but the question '
                f'asks about "{short(rival.text)}" ({rival.sentence.passage})',
                rival.sentence,
                shown=bool(best.asked) or rival.sentence is best.sentence,
            )
    return None


def _clauses(sentence: EvidenceSentence, asked: frozenset[str]) -> list[_Clause]:
    if not (sentence.quantities or sentence.clock):
        return []
    found = []
    for text in _CLAUSE_BREAK.split(sentence.text):
        clock = tuple(times.times(text))
        quantities = tuple(numbers.extract(text))
        if quantities or clock:
            stems = content_stems(text)
            mine = frozenset(a for a in asked if any(related(a, s) for s in stems))
            found.append(_Clause(text, sentence, mine, quantities, clock))
    return found


def _holds(
    clause: _Clause, quantities: list[numbers.Quantity], clock: list[times.TimeOfDay]
) -> bool:
    return any(numbers.matches(q, e) for q in quantities for e in clause.quantities) or any(
        t.agrees(e) for t in clock for e in clause.clock
    )


def _rivals(
    clause: _Clause,
    quantities: list[numbers.Quantity],
    clock: list[times.TimeOfDay],
    given: list[numbers.Quantity],
) -> bool:
    """Whether ``clause`` states another amount of an answer amount's kind, or another time."""
    if _holds(clause, quantities, clock):
        return False
    kinds = {q.kind for q in quantities}
    return bool(clock and clause.clock) or any(
        e.kind in kinds and not any(numbers.matches(g, e) for g in given) for e in clause.quantities
    )
