"""guard.prepare.excerpt as it was before its fast paths (commit 06efd61): the reference the
equivalence tests compare it against."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

from guard.prepare.truncate import SENTENCE_END, truncate

GAP = "[…]"
MAX_UNITS = 5_000  # units ranked per text: bounds the work on pathological texts
ANALYSED_TEXTS = 8  # long texts whose units are remembered (a request's windows share them)
_GAP_COST = len(GAP) + 4  # the marker and the blanks around it, at most "\n\n[…]\n\n"
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_WORD = re.compile(r"\w+")
_STOPWORDS = frozenset(
    {
        "the",
        "and",
        "for",
        "are",
        "was",
        "were",
        "with",
        "that",
        "this",
        "from",
        "you",
        "your",
        "our",
        "can",
        "has",
        "have",
        "had",
        "not",
        "but",
        "all",
        "any",
        "its",
        "into",
        "will",
        "may",
        "also",
        "than",
        "then",
        "there",
        "their",
        "they",
        "them",
        "these",
        "those",
        "which",
        "what",
        "when",
        "where",
        "who",
        "how",
        "been",
        "being",
        "does",
        "did",
        "just",
        "only",
        "more",
        "most",
        "some",
        "such",
        "about",
        "over",
    }
)


def words(text: str) -> set[str]:
    """The distinct content words (3+ characters, or numbers) of ``text``, lowercased."""
    found = set(_WORD.findall(text.lower()))
    return {w for w in found if len(w) >= 3 or w.isdigit()} - _STOPWORDS


def _spans(text: str, boundary: re.Pattern[str]) -> list[tuple[int, int]]:
    """(start, end) of the stripped units of ``text`` separated after each ``boundary``; at
    most about :data:`MAX_UNITS` of them (beyond, consecutive units are merged evenly)."""
    ends = [m.end() for m in boundary.finditer(text)]
    if len(ends) > MAX_UNITS:
        step = -(-len(ends) // MAX_UNITS)
        ends = ends[step - 1 :: step]
    cuts = [0, *ends, len(text)]
    spans = []
    for start, end in pairwise(cuts):
        piece = text[start:end].lstrip()
        if piece:
            first = end - len(piece)
            spans.append((first, first + len(piece.rstrip())))
    return spans


def units(text: str) -> list[tuple[int, int]]:
    """Paragraph spans of ``text``; sentence spans when it is a single paragraph."""
    paragraphs = _spans(text, _PARAGRAPH_BREAK)
    return paragraphs if len(paragraphs) > 1 else _spans(text, SENTENCE_END)


def _join(text: str, spans: Sequence[tuple[int, int]], chosen: Sequence[int]) -> str:
    blank = "\n\n" if "\n\n" in text else " "
    pieces = [f"{GAP}{blank}"] if chosen[0] > 0 else []
    for previous, current in zip([None, *chosen], chosen, strict=False):
        if previous is not None:
            adjacent = current == previous + 1
            between = text[spans[previous][1] : spans[current][0]]
            pieces.append(between if adjacent else f"{blank}{GAP}{blank}")
        pieces.append(text[spans[current][0] : spans[current][1]])
    return "".join(pieces)


@lru_cache(maxsize=ANALYSED_TEXTS)
def _analysed(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[frozenset[str], ...]]:
    """The units of ``text`` and the content words of each, computed once per text: the windows
    of a long output excerpt the same evidence several times."""
    spans = tuple(units(text))
    return spans, tuple(frozenset(words(text[start:end])) for start, end in spans)


def excerpt(text: str, budget: int, query: str) -> str:
    """At most ``budget`` characters of ``text``: its units most related to ``query``."""
    if len(text) <= budget:
        return text
    spans, unit_words = _analysed(text)
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
