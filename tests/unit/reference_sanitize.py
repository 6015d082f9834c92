"""The sanitizer as it was before its fast paths (commit 06efd61): the reference the
equivalence tests compare :mod:`guard.prepare.sanitize` against."""

from __future__ import annotations

import re
import unicodedata
from itertools import compress

_INVISIBLE = frozenset(
    "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"  # zero-width
    "\u200e\u200f\u061c"  # directional marks
    "\u202a\u202b\u202c\u202d\u202e"  # embeddings and overrides
    "\u2066\u2067\u2068\u2069"  # isolates
)
_SPACES = frozenset(
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u202f\u205f\u3000"
)
_LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
}
_FULLWIDTH_START, _FULLWIDTH_END, _FULLWIDTH_OFFSET = 0xFF01, 0xFF5E, 0xFEE0

_LINE_BREAKS = str.maketrans(
    {"\r": "\n", "\x85": "\n", "\x0b": "\n", "\x0c": "\n", "\u2028": "\n", "\u2029": "\n\n"}
)
MAX_COMBINING_RUN = 30  # UAX #15 stream-safe text format


def _combining_class() -> str:
    """A regex character class of every code point with a non-zero canonical combining class
    (the only ones NFC reorders; none lie outside U+0300..U+1FFFF)."""
    codes = range(0x300, 0x20000)
    marks = compress(codes, map(unicodedata.combining, map(chr, codes)))
    return "[" + "".join(re.escape(chr(c)) for c in marks) + "]"


_MARK = _combining_class()
# NFC sorts each run of combining marks with an insertion sort: quadratic in the run's length
_LONG_MARK_RUN = re.compile(f"({_MARK}{{{MAX_COMBINING_RUN}}}){_MARK}+")
_RUN_OF_SPACES = re.compile(r" {2,}")
_RUN_WITH_TAB = re.compile(r"[ \t]*\t[ \t]*")
_TRAILING_BLANKS = re.compile(r"[ \t]+\n")
_MANY_NEWLINES = re.compile(r"\n{3,}")


def _translation_table() -> dict[int, str | None]:
    """One ``str.translate`` table for every per-character rule (runs in C, not a Python loop)."""
    table: dict[int, str | None] = dict.fromkeys(set(range(0x20)) - {ord("\n"), ord("\t")})
    table.update(dict.fromkeys(range(0x7F, 0xA0)))  # DEL and the C1 controls
    table.update(dict.fromkeys(map(ord, _INVISIBLE)))
    table.update(dict.fromkeys(range(0xE0000, 0xE0080)))  # tag characters
    table.update({ord(ch): " " for ch in _SPACES})
    table.update({ord(ch): folded for ch, folded in _LIGATURES.items()})
    table.update(
        {
            code: chr(code - _FULLWIDTH_OFFSET)
            for code in range(_FULLWIDTH_START, _FULLWIDTH_END + 1)
        }
    )
    return table


_TABLE = _translation_table()
_SURROGATES = re.compile("[\ud800-\udfff]")


_TAG_OFFSET = 0xE0000
# a run of tag characters that is not part of an emoji flag sequence (black flag, then tags)
_HIDDEN_TAGS = re.compile("(?<![\U0001f3f4\U000e0020-\U000e007e])[\U000e0020-\U000e007e]+")
_UNTAG = {code: chr(code - _TAG_OFFSET) for code in range(0xE0020, 0xE007F)}


def _reveal_tags(text: str) -> str:
    """``text`` with each run of tag characters outside a flag sequence shown as its ASCII."""
    if not text or max(text) < "\U000e0000":
        return text
    return _HIDDEN_TAGS.sub(lambda m: m.group().translate(_UNTAG), text)


def _clean_chars(text: str) -> str:
    return _SURROGATES.sub("", _reveal_tags(text).translate(_TABLE))


def collapse_whitespace(text: str) -> str:
    """Collapse runs of blanks, trailing blanks and blank-line runs; strip the ends."""
    text = _RUN_WITH_TAB.sub("\t", _RUN_OF_SPACES.sub(" ", text))
    text = _TRAILING_BLANKS.sub("\n", text)
    text = _MANY_NEWLINES.sub("\n\n", text)
    return text.strip()


def sanitize(text: str) -> str:
    """Return ``text`` without invisible or control characters, NFC-normalised, tidy blanks."""
    text = text.replace("\r\n", "\n").translate(_LINE_BREAKS)
    text = _clean_chars(text)
    if not unicodedata.is_normalized("NFC", text):  # a linear check; true for most text
        text = unicodedata.normalize("NFC", _LONG_MARK_RUN.sub(r"\1", text))
    return collapse_whitespace(text)
