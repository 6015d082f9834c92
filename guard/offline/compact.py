"""A text without its separators, to find a code written with other separators in linear time.

"AB-1234" is written in evidence reading "ab 1234" or "ab1234": the letters and digits of
the code in a row, at most one separator between two of them, no digit (or ".") before and no
digit after. A regular expression of the code's characters joined by optional separators says
so (:func:`written_by_pattern`), but compiling it costs time in the length of the code (85 ms
for a 3,900-character one): :class:`Compact` finds the same spans by a substring search in the
text stripped of its separators, then checks the separators it stepped over.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

SEPARATORS = re.compile(r"[\s_:#/-]")  # separators a code may be written with or without
_RUNS = re.compile(SEPARATORS.pattern + "+")
_BEFORE = re.compile(r"[\d.]")  # what may not precede a written code
_AFTER = re.compile(r"\d")  # what may not follow it


@dataclass
class Compact:
    """``text`` without separators, and where its runs of separators were."""

    text: str
    compact: str = ""
    _at: list[int] = field(default_factory=list)  # compact index each run was before
    _removed: list[int] = field(default_factory=list)  # separators removed up to each run
    _long: list[int] = field(default_factory=list)  # compact index of each run of 2 or more

    def __post_init__(self) -> None:
        removed = 0
        for run in _RUNS.finditer(self.text):
            at = run.start() - removed
            removed += run.end() - run.start()
            self._at.append(at)
            self._removed.append(removed)
            if run.end() - run.start() > 1:
                self._long.append(at)
        self.compact = SEPARATORS.sub("", self.text)

    def _offset(self, index: int) -> int:
        """The position in ``text`` of the compact character at ``index``."""
        runs = bisect_right(self._at, index)
        return index + (self._removed[runs - 1] if runs else 0)

    def writes(self, wanted: str) -> bool:
        """Whether ``text`` has the characters of ``wanted`` (not empty, no separator) in a
        row, at most one separator between two of them, after no digit or "." and before no
        digit: ``re.search(rf"(?<![\\d.]){'[\\s_:#/-]?'.join(map(re.escape, wanted))}(?!\\d)",
        text)``."""
        start = self.compact.find(wanted)
        while start >= 0:
            last = start + len(wanted) - 1
            # a run of two separators or more inside the span breaks it
            inside = bisect_right(self._long, last) - bisect_left(self._long, start + 1)
            if not inside:
                begin, end = self._offset(start), self._offset(last) + 1
                if not (begin and _BEFORE.match(self.text, begin - 1, begin)) and not (
                    _AFTER.match(self.text, end, end + 1)
                ):
                    return True
            start = self.compact.find(wanted, start + 1)
        return False


def written_by_pattern(wanted: str, text: str) -> bool:
    """:meth:`Compact.writes` by a regular expression: cheaper for a short code (no pass
    over ``text`` to build), costly to compile for a long one."""
    spaced = (SEPARATORS.pattern + "?").join(re.escape(ch) for ch in wanted)
    return re.search(rf"(?<![\d.]){spaced}(?!\d)", text) is not None
