"""Truncation and windows at sentence boundaries, with a record of what was cut.

:func:`truncate` keeps at most ``limit`` characters. It cuts after the last sentence end
(``.``, ``!``, ``?``, ``…`` or a CJK full stop, optionally followed by closing quotes or
brackets, then a blank) or line break inside the window, so no sentence is kept in part when
a whole one can end the text; only a text whose first sentence is longer than ``limit`` is cut
at the last word boundary (in the second half of the window), and only then hard. The returned
:class:`~guard.models.Cut` records the original and kept lengths.

:func:`windows` cuts a long text into consecutive windows the same way, so a judge can see all
of it, a window at a time, and every sentence that fits in a window is whole in one of them. A
sentence longer than a window is cut at word boundaries into windows that overlap by a quarter
of a window (:data:`OVERLAP_FRACTION`), so any claim inside it of up to about that length is
whole in one window: no claim straddles a window boundary unseen.
"""

from __future__ import annotations

import re

from guard.models import Cut

# A sentence end: ".", "!", "?" or "…" (then closing quotes or brackets) before a blank, a CJK
# full stop, or a line break. Written to start with one character class, so the regex engine
# skips to candidate characters instead of trying the pattern at every position.
SENTENCE_END = re.compile(r"[.!?…。！？\n](?:(?<=[。！？\n])|[\"'”’)\]]*(?=\s))")
OVERLAP_FRACTION = 4  # windows inside one over-long sentence share a quarter of a window
_WORD_END = re.compile(r"\S(?=\s)")
_BLANKS = re.compile(r"\s+")


def _last_end(pattern: re.Pattern[str], window: str, floor: int, limit: int) -> int | None:
    """The end offset of the last match of ``pattern`` in ``window`` within [floor, limit]."""
    ends = [m.end() for m in pattern.finditer(window) if floor <= m.end() <= limit]
    return ends[-1] if ends else None


def _sentence_cut(window: str, limit: int) -> int | None:
    """After the last whole sentence of ``window`` (one character longer than ``limit``, so a
    sentence end exactly at the limit is seen), or None when no sentence ends in it."""
    return _last_end(SENTENCE_END, window, 1, limit)


def _word_cut(window: str, limit: int) -> int:
    """After the last word ending in the second half of ``window``, else hard at ``limit``."""
    end = _last_end(_WORD_END, window, max(1, limit // 2), limit)
    return limit if end is None else end


def cut_point(text: str, limit: int) -> int:
    """Where to cut ``text`` so at most ``limit`` characters remain, preferring sentence ends."""
    if len(text) <= limit:
        return len(text)
    window = text[: limit + 1]  # one extra char: a sentence end may sit exactly at the limit
    cut = _sentence_cut(window, limit)
    return _word_cut(window, limit) if cut is None else cut


def truncate(text: str, limit: int) -> tuple[str, Cut]:
    """Keep at most ``limit`` characters of ``text``, cut at a sentence (or word) boundary."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text, Cut(original_chars=len(text), kept_chars=len(text), truncated=False)
    kept = text[: cut_point(text, limit)].rstrip()
    return kept, Cut(original_chars=len(text), kept_chars=len(kept), truncated=True)


def _next_window(text: str, start: int, limit: int) -> tuple[int, int]:
    """The end of the window of ``text`` that starts at ``start``, and where the next one starts:
    at that end after a whole sentence; inside an over-long sentence, a quarter of a window
    back, at the start of a word. Blanks at ``start`` are skipped first: they are stripped from
    the window anyway, and counted they would push a sentence that fits out of it."""
    blanks = _BLANKS.match(text, start)
    if blanks is not None:
        start = blanks.end()
    if len(text) - start <= limit:
        return len(text), len(text)
    window = text[start : start + limit + 1]
    cut = _sentence_cut(window, limit)
    if cut is not None:
        return start + cut, start + cut
    end = start + _word_cut(window, limit)
    back = end - limit // OVERLAP_FRACTION  # > start: the word cut lies in the second half
    blank = _BLANKS.search(text, back, end)
    return end, back if blank is None else blank.end()


def window_spans(text: str, limit: int, most: int) -> tuple[list[tuple[int, int]], bool]:
    """The (start, end) offsets in ``text`` of at most ``most`` windows of at most ``limit``
    characters each, blanks stripped (blank windows left out), and whether they reach the end
    of ``text``. See the module docstring for where windows are cut."""
    spans: list[tuple[int, int]] = []
    start = reached = 0
    while start < len(text) and len(spans) < most:
        end, following = _next_window(text, start, limit)
        piece = text[start:end]
        first = start + len(piece) - len(piece.lstrip())
        last = end - (len(piece) - len(piece.rstrip()))
        if first < last:
            spans.append((first, last))
        start, reached = following, end
    return spans, not text[reached:].strip()


def windows(text: str, limit: int, most: int) -> tuple[list[str], bool]:
    """The texts of :func:`window_spans`, and whether they reach the end of ``text``."""
    spans, complete = window_spans(text, limit, most)
    return [text[start:end] for start, end in spans], complete


def covered(spans: list[tuple[int, int]]) -> int:
    """How many characters the ordered ``spans`` cover, a character in two of them once."""
    total = reached = 0
    for start, end in spans:
        total += max(0, end - max(start, reached))
        reached = max(reached, end)
    return total
