"""Whether bidirectional controls make a reader see a text in another order than it is stored.

"\u202esyad 09 nihtiw" is stored (and shown to a judge, which reads the logical order) as
"syad 09 nihtiw", but a reader sees "within 90 days": the right-to-left override (RLO) reverses
its characters on screen. :func:`~guard.prepare.sanitize.sanitize` removes every bidi control,
so the judge then reads the stored order; this module tells when that differs from what a reader
sees, so the answer is flagged instead of judged on a text nobody reads
(:attr:`guard.case.PreparedCase.display_reordered`).

Rendering the visual order (the Unicode Bidirectional Algorithm, UAX #9) is not attempted; the
test is conservative and cheap. A control is counted only when its scope (up to its matching
PDF or PDI, or the end of the line) holds text it can reorder:

* an override: LRO (U+202D) over right-to-left letters or Arabic digits, RLO (U+202E) over
  left-to-right letters or any digits;
* an embedding or isolate: RLE/RLI (U+202B, U+2067) over left-to-right letters, or over digits
  with no right-to-left letter (an RTL embedding of "30 60" shows "60 30"); LRE/LRI (U+202A,
  U+2066) and FSI (U+2068) over a mix of left-to-right and right-to-left letters;
* a right-to-left mark (RLM U+200F, ALM U+061C) on a line with no right-to-left letter (it
  has no use there, and between two numbers it swaps them on screen: "90\u200f 30" shows
  "30 90").

So normal Arabic or Hebrew text (its letters are right-to-left by themselves), and an isolate
wrapping a single-direction name or phrase as localisation libraries insert, are not flagged.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["reorders_display"]

_ANY_CONTROL = re.compile("[\u202a\u202b\u202d\u202e\u2066-\u2068\u200f\u061c]")
_CLOSER = {
    "\u202a": "\u202c",  # LRE
    "\u202b": "\u202c",  # RLE
    "\u202d": "\u202c",  # LRO
    "\u202e": "\u202c",  # RLO
    "\u2066": "\u2069",  # LRI
    "\u2067": "\u2069",  # RLI
    "\u2068": "\u2069",  # FSI
}
_RTL_MARKS = frozenset("\u200f\u061c")
_WITHOUT_MARKS = dict.fromkeys(map(ord, _RTL_MARKS))
MAX_CONTROLS = 64  # controls examined; a text with more is taken as reordered (bounded work)


def _classes(text: str) -> set[str]:
    """The bidi classes of ``text`` that matter here: L, R (R and AL), EN and AN."""
    found = set()
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("L", "EN", "AN"):
            found.add(kind)
        elif kind in ("R", "AL"):
            found.add("R")
    return found


def _reorders(opener: str, scope: str) -> bool:
    """Whether the control ``opener`` reorders the text ``scope`` on screen."""
    kinds = _classes(scope)
    digits = bool(kinds & {"EN", "AN"})
    if opener == "\u202d":  # LRO
        return bool(kinds & {"R", "AN"})
    if opener == "\u202e":  # RLO
        return bool(kinds & {"L", "EN", "AN"})
    if opener in "\u202b\u2067":  # RLE, RLI
        return "L" in kinds or (digits and "R" not in kinds)
    return {"L", "R"} <= kinds  # LRE, LRI, FSI


def _scope(text: str, start: int, closer: str) -> str:
    """The text a control at ``start`` governs: to its closer or the end of the line."""
    ends = [i for i in (text.find(closer, start), text.find("\n", start)) if i != -1]
    return text[start : min(ends)] if ends else text[start:]


def _line_of(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end != -1 else len(text)]


def reorders_display(text: str) -> bool:
    """Whether a bidi control in ``text`` makes a reader see it in another order (module
    docstring): one regex pass when it has no control, and a scan of at most a line for
    each of its first :data:`MAX_CONTROLS` controls (a text with more counts as reordered)."""
    for number, match in enumerate(_ANY_CONTROL.finditer(text)):
        if number == MAX_CONTROLS:
            return True
        char = match.group()
        if char in _RTL_MARKS:
            if "R" not in _classes(_line_of(text, match.start()).translate(_WITHOUT_MARKS)):
                return True
        elif _reorders(char, _scope(text, match.end(), _CLOSER[char])):
            return True
    return False
