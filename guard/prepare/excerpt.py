"""Excerpting: the parts of a long text that matter to the claims, within a character budget.

When a piece of evidence is too long for the judge, its opening is not always the part that
matters: the sentence that supports (or refutes) the output may sit at the end. :func:`excerpt`
splits the text into paragraphs (or, for a single paragraph, sentences), ranks them by how many
words they share with the output and question (earlier first on ties), keeps the best ones that
fit, and shows them in their original order with ``[…]`` where something was left out. Every
unit is whole, so cuts fall on sentence boundaries. A text with a single unit, or none related
to the query, is truncated (its opening kept). A text of more than :data:`MAX_UNITS` units
(pathological: tens of thousands of tiny sentences) is ranked in groups of consecutive units.
"""

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


# ASCII text: every character that is not a word character (``\\w``: letters, digits, "_")
# made a blank, so ``str.split`` finds the words (translate's ASCII fast path and split cost a
# quarter of the regex's search)
_ASCII_NON_WORD = str.maketrans(
    {chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}
)


def _blanked(lowered: str) -> str | None:
    """``lowered`` with every non-word character a blank when it is ASCII, else None."""
    return lowered.translate(_ASCII_NON_WORD) if lowered.isascii() else None


def _words_in(lowered: str) -> list[str]:
    """Every word (``\\w+`` run) of the lowercased ``lowered``, in order."""
    blanked = _blanked(lowered)
    return _WORD.findall(lowered) if blanked is None else blanked.split()


def words(text: str) -> set[str]:
    """The distinct content words (3+ characters, or numbers) of ``text``, lowercased."""
    found = set(_words_in(text.lower()))
    found -= _STOPWORDS
    return {w for w in found if len(w) >= 3 or w.isdigit()}


def _spans(text: str, boundary: re.Pattern[str]) -> list[tuple[int, int]]:
    """(start, end) of the stripped units of ``text`` separated after each ``boundary``; at
    most about :data:`MAX_UNITS` of them (beyond, consecutive units are merged evenly)."""
    ends = list(map(re.Match.end, boundary.finditer(text)))
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
def _units(text: str) -> tuple[tuple[int, int], ...]:
    """:func:`units`, computed once per text: the windows of a long output excerpt the same
    evidence several times."""
    return tuple(units(text))


@lru_cache(maxsize=ANALYSED_TEXTS)
def _unit_words(text: str) -> tuple[frozenset[str], ...]:
    """The lowercased words of each of the units of ``text``, computed once per text. Not
    filtered down to content words: they are only intersected with a query's content words,
    which drops the others anyway."""
    spans = _units(text)
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter lowercases to two ("İ"): offsets would differ
        return tuple(frozenset(_words_in(text[start:end].lower())) for start, end in spans)
    # One lowercasing of the whole text, read in place: units meet at blanks or sentence
    # ends, never inside a word, so a unit's words are the same as in its own copy. Units
    # repeated word for word (boilerplate, lists) are analysed once.
    blanked = _blanked(lowered)
    source = lowered if blanked is None else blanked
    split = _WORD.findall if blanked is None else str.split
    known: dict[str, frozenset[str]] = {}
    found = []
    for start, end in spans:
        piece = source[start:end]
        unit_words = known.get(piece)
        if unit_words is None:
            unit_words = known[piece] = frozenset(split(piece))
        found.append(unit_words)
    return tuple(found)


def excerpt(text: str, budget: int, query: str) -> str:
    """At most ``budget`` characters of ``text``: its units most related to ``query``."""
    if len(text) <= budget:
        return text
    spans = _units(text)
    wanted = words(query) if len(spans) > 1 else set()
    overlaps = list(map(len, map(wanted.intersection, _unit_words(text)))) if wanted else []
    if any(overlaps):
        # most overlap first, earlier first on ties (a reversed sort keeps ties in order)
        order = sorted(range(len(spans)), key=overlaps.__getitem__, reverse=True)
        chosen: list[int] = []
        used = 0
        for i in order:
            cost = spans[i][1] - spans[i][0] + _GAP_COST
            if used + cost <= budget:
                chosen.append(i)
                used += cost
                if used + _GAP_COST >= budget:  # no unit (one character at least) fits
                    break
        if chosen:
            joined = _join(text, spans, sorted(chosen))
            if len(joined) <= budget:
                return joined
    return truncate(text, budget)[0]
