"""Where the spans of a growing answer end: sentences, lines, or a bounded run of text.

A span ends after a sentence terminator (``.``, ``!``, ``?``, ``…``, ``。``, ``！``, ``？``,
with any closing quotes or brackets after it) **followed by whitespace**, or at a line break.
The whitespace after the end belongs to the span. Requiring the following character means a
span never ends inside a number or a word still arriving: ``$1`` + ``2.5`` is not cut at the
point, and ``3.`` at the end of what has arrived is not an end until a space follows. A point
after a single letter (``J. Smith``, ``U.S.``) or a common abbreviation (``e.g.``, ``Dr.``,
``No.``) is not an end either. The text after the last end is the open tail; at the end of the
stream it is the last span. A run longer than ``max_chars`` without an end is cut at its last
whitespace (else at ``max_chars``), so no span is held without bound.
"""

from __future__ import annotations

import re

_END = re.compile(r"[.!?…。！？]+[\"'”’)\]»]*(?=\s)\s*|\n\s*")
_OPEN_END = ".!?…。！？\"'”’)]»"  # a tail ending in these may yet end a span
_ABBREVIATIONS = frozenset(
    [
        "eg",
        "ie",
        "dr",
        "mr",
        "mrs",
        "ms",
        "st",
        "vs",
        "etc",
        "no",
        "inc",
        "ltd",
        "jr",
        "sr",
        "prof",
        "approx",
        "fig",
        "cf",
        "al",
    ]
)
_WORD_BEFORE = re.compile(r"([A-Za-z.]+)\.$")
DEFAULT_MAX_SPAN_CHARS = 1200


def _abbreviation(text: str, stop: int) -> bool:
    """Whether the point at ``stop`` closes an abbreviation or an initial, not a sentence."""
    if text[stop] != ".":
        return False
    found = _WORD_BEFORE.search(text, 0, stop + 1)
    if found is None:
        return False
    word = found.group(1)
    bare = word.replace(".", "").lower()
    return len(bare) == 1 or "." in word or bare in _ABBREVIATIONS


class SpanSplitter:
    """Cuts a stream of deltas into spans; :meth:`feed` returns the spans each delta completes,
    :attr:`tail` is the text not yet in a span."""

    def __init__(self, max_chars: int = DEFAULT_MAX_SPAN_CHARS) -> None:
        self.max_chars = max_chars
        self.tail = ""
        self._scanned = 0  # no end of the tail starts before this offset

    def feed(self, delta: str) -> list[str]:
        """The spans completed by ``delta``, in order (their concatenation, then the tail, is
        everything fed)."""
        self.tail += delta
        spans: list[str] = []
        while (end := self._next_end()) is not None:
            spans.append(self.tail[:end])
            self.tail, self._scanned = self.tail[end:], 0
        return spans

    def _next_end(self) -> int | None:
        tail = self.tail
        for match in _END.finditer(tail, self._scanned):
            if match.end() == len(tail):  # the whitespace may go on: wait for what follows
                break
            if "\n" not in match.group() and _abbreviation(tail, match.start()):
                continue
            return match.end() if match.end() <= self.max_chars else self._forced()
        self._scanned = len(tail.rstrip(_OPEN_END + " \t\r\n\f\v"))
        return self._forced() if len(tail) > self.max_chars else None

    def _forced(self) -> int:
        window = self.tail[: self.max_chars]
        space = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
        return space + 1 if space > 0 else self.max_chars
