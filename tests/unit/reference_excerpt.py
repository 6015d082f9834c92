"""The parts of :mod:`guard.prepare.excerpt` that were made cheaper, as they were before
(commit 06efd61): the reference the equivalence tests compare the module against."""

from __future__ import annotations

from guard.prepare.excerpt import _GAP_COST, _STOPWORDS, _WORD, _join, units
from guard.prepare.truncate import truncate


def words(text: str) -> set[str]:
    found = set(_WORD.findall(text.lower()))
    return {w for w in found if len(w) >= 3 or w.isdigit()} - _STOPWORDS


def excerpt(text: str, budget: int, query: str) -> str:
    if len(text) <= budget:
        return text
    spans = units(text)
    unit_words = [frozenset(words(text[start:end])) for start, end in spans]
    wanted = words(query)
    overlaps = [len(found & wanted) for found in unit_words] if wanted else [0] * len(spans)
    if len(spans) > 1 and any(overlaps):
        order = sorted(range(len(spans)), key=lambda i: (-overlaps[i], i))
        chosen: list[int] = []
        used = 0
        for i in order:
            cost = spans[i][1] - spans[i][0] + _GAP_COST
            if used + cost <= budget:
                chosen.append(i)
                used += cost
        if chosen:
            joined = _join(text, spans, sorted(chosen))
            if len(joined) <= budget:
                return joined
    return truncate(text, budget)[0]
