"""Truncation at sentence boundaries, with a record of what was cut.

:func:`truncate` keeps at most ``limit`` characters. It cuts after the last sentence end
(``.``, ``!``, ``?``, ``…`` or a CJK full stop, optionally followed by closing quotes or
brackets, then a blank) or line break inside the window; when no sentence end lies in the last
half of the window it falls back to the last word boundary, and only then to a hard cut. The
returned :class:`~guard.models.Cut` records the original and kept lengths.

:func:`windows` cuts a long text into consecutive windows the same way, so a judge can see all
of it, a window at a time.
"""

from __future__ import annotations

import re

from guard.models import Cut

# A sentence end: ".", "!", "?" or "…" (then closing quotes or brackets) before a blank, a CJK
# full stop, or a line break. Written to start with one character class, so the regex engine
# skips to candidate characters instead of trying the pattern at every position.
SENTENCE_END = re.compile(r"[.!?…。！？\n](?:(?<=[。！？\n])|[\"'”’)\]]*(?=\s))")
_WORD_END = re.compile(r"\S(?=\s)")


def _last_end(pattern: re.Pattern[str], window: str, floor: int) -> int | None:
    """The end offset of the last match of ``pattern`` in ``window`` at or beyond ``floor``."""
    ends = [m.end() for m in pattern.finditer(window) if m.end() >= floor]
    return ends[-1] if ends else None


def cut_point(text: str, limit: int) -> int:
    """Where to cut ``text`` so at most ``limit`` characters remain, preferring sentence ends."""
    if len(text) <= limit:
        return len(text)
    window = text[: limit + 1]  # one extra char: a sentence end may sit exactly at the limit
    floor = max(1, limit // 2)
    for pattern in (SENTENCE_END, _WORD_END):
        end = _last_end(pattern, window, floor)
        if end is not None and end <= limit:
            return end
    return limit


def truncate(text: str, limit: int) -> tuple[str, Cut]:
    """Keep at most ``limit`` characters of ``text``, cut at a sentence (or word) boundary."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text, Cut(original_chars=len(text), kept_chars=len(text), truncated=False)
    kept = text[: cut_point(text, limit)].rstrip()
    return kept, Cut(original_chars=len(text), kept_chars=len(kept), truncated=True)


def windows(text: str, limit: int, most: int) -> tuple[list[str], bool]:
    """At most ``most`` consecutive pieces of ``text`` of at most ``limit`` characters each, cut
    at sentence (or word) boundaries, and whether they reach the end of ``text``."""
    pieces: list[str] = []
    start = 0
    while start < len(text) and len(pieces) < most:
        rest = text[start : start + limit + 1]  # cut_point looks one character beyond the limit
        end = cut_point(rest, limit)
        piece = rest[:end].strip()
        if piece:
            pieces.append(piece)
        start += end
    return pieces, not text[start:].strip()
