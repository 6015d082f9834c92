"""A pattern's matches, tried only where one can start.

Python's regex engine tries a pattern at every position of a text, and a pattern that opens
with ``\\b``, an optional sign or an alternation of words costs about as much at a position
where nothing can start as at one where something does: the amount, date and time patterns
spent most of their time failing between the numbers (``numbers._QUANTITY`` about 0.6 us a
character). :class:`Anchored` finds the positions where a match can start in one pass of C
code (the runs of digits and signs, the start of a word that opens an alternative, found by an
Aho-Corasick automaton, and the blank before either when the pattern allows one), and tries the
pattern there only (at each position of a run, until a match covers the rest). The matches
are those of ``pattern.finditer``, in order, with the same groups: every match starts at such
a position, and the loop skips a position inside an earlier match as ``finditer`` does.

A word is found in the text's ``str.lower()``, which is what the engine's ignoring of case
compares, character for character, except for a few characters: "İ" (two characters in lower
case) and the ones the engine adds to a letter's case ("ſ" for "s", "ı" for "i", the Greek
and Cyrillic variants of ``re._casefix``). A text holding one of those is scanned as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from guard.prepare.wordsearch import WordSearch

# the characters whose case the engine reads otherwise than ``str.lower`` (see above)
try:
    from re._casefix import _EXTRA_CASES  # CPython 3.11+: the engine's own table
except ImportError:  # pragma: no cover - another interpreter: every non-ASCII text as before
    _EXTRA_CASES = None
_OTHER_CASES: frozenset[str] | None = (
    frozenset(
        {"\u0130"}
        | {chr(c) for key, others in _EXTRA_CASES.items() for c in (key, *others) if c > 0x7F}
    )
    if _EXTRA_CASES is not None
    else None
)


class Anchored:
    """``pattern.finditer``, the pattern tried only at the positions where a match can start
    (on a text without the characters of ``_OTHER_CASES``; on one with them, ``finditer``).

    ``digits``: whether a match can start with a digit (``\\d``), anywhere; ``chars``: other
    characters a match can start with, anywhere (a currency sign);
    ``words``: words a match can start with, each at a word start (``\\b``), as ignoring
    case reads them (lower case); ``anywhere``: strings a match can start with anywhere
    ("us$"); ``blank``: whether a match can also start at a blank just before one of those (a
    pattern opening with ``\\s?``). The caller states these from the pattern's own
    alternatives; the tests compare with ``finditer`` on texts built from them. The pattern
    never matches the empty string.
    """

    def __init__(
        self,
        pattern: re.Pattern[str],
        *,
        digits: bool = False,
        chars: str = "",
        words: Iterable[str] = (),
        anywhere: Iterable[str] = (),
        blank: bool = False,
    ) -> None:
        self.pattern = pattern
        self.blank = blank
        self._chars = (
            re.compile(
                "["
                + ("\\d" if digits else "")
                + "".join(re.escape(c) for c in sorted(chars))
                + "]+"
            )
            if chars or digits
            else None
        )
        # lead -> whether it opens a match at a word start only. A lead is enough once
        # ("seventeen" starts where "seven" does).
        leads = {w.lower(): True for w in words} | {w.lower(): False for w in anywhere}
        kept = {
            w: bounded
            for w, bounded in leads.items()
            if not any(o != w and w.startswith(o) and (bounded or not b) for o, b in leads.items())
        }
        ordered = sorted(kept.items())
        self._words = WordSearch([word for word, _ in ordered]) if ordered else None
        self._bounded = [bounded for _, bounded in ordered]

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        if not text.isascii() and (_OTHER_CASES is None or not _OTHER_CASES.isdisjoint(text)):
            yield from self.pattern.finditer(text)
            return
        match = self.pattern.match
        end = 0
        for start, stop in self._starts(text):
            at = max(start, end)
            while at < stop:
                found = match(text, at)
                if found is None:
                    at += 1
                    continue
                yield found
                at = end = found.end()

    def _starts(self, text: str) -> list[tuple[int, int]]:
        """Where a match can start, as runs ``(start, stop)``: every position of a run is one
        (a run of digits is one run, not one position a digit), in text order."""
        runs: set[tuple[int, int]] = set()
        if self._chars is not None:
            runs.update(m.span() for m in self._chars.finditer(text))
        if self._words is not None:
            bounded = self._bounded
            for word, at in self._words.find(text.lower()):
                if not bounded[word] or at == 0 or not _word_char(text[at - 1]):
                    runs.add((at, at + 1))
        if self.blank:
            runs.update([(s - 1, s) for s, _ in runs if s and text[s - 1].isspace()])
        return sorted(runs)


def _word_char(char: str) -> bool:
    """Whether ``\\w`` matches ``char`` (the engine's test: alphanumeric, or "_")."""
    return char.isalnum() or char == "_"
