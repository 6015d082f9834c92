"""Sanitizing judged text: remove what is invisible or dangerous, keep what it means.

What :func:`sanitize` does, in order:

1. Line endings: ``\\r\\n``, lone ``\\r``, NEL (U+0085), vertical tab, form feed and the
   line separator (U+2028) become ``\\n``; the paragraph separator (U+2029) becomes a blank
   line. A judge reads them all as line breaks, so the rest of the pipeline must see them as
   such (a block header forged after U+2028 starts a line for the judge).
2. Shows text hidden in Unicode tag characters (U+E0020-U+E007E, invisible copies of ASCII
   used to smuggle text past human readers; models read them) as the ASCII it hides, so the
   judge judges and the injection scan sees what a machine reader downstream would read. Tag
   characters of an emoji flag sequence (after U+1F3F4) and the others are removed.
   Removes control characters (Unicode ``Cc``) except ``\\n`` and ``\\t``, lone surrogates
   (they cannot be encoded for an API call), zero-width characters (ZWSP, ZWNJ, ZWJ, word
   joiner, BOM, soft hyphen, Mongolian vowel separator), bidirectional controls (LRE/RLE/PDF/
   LRO/RLO, LRI/RLI/FSI/PDI, LRM/RLM/ALM).
3. Keeps at most 30 combining marks in a row (the "stream-safe" limit of Unicode UAX #15; no
   real text needs more, and NFC sorts a run of marks in quadratic time) and normalises to
   **NFC**, not NFKC. NFC only composes canonically equivalent sequences ("e" + combining
   acute -> "é") and never changes meaning. NFKC would also turn "x²" into
   "x2", "½" into "1/2" and "ℌ" into "H", which changes what a claim says, so it is not used.
   Only compatibility forms that are pure presentation are folded: full-width ASCII
   ("ＡＢＣ１２３" -> "ABC123", also used to disguise fence markers), typographic ligatures
   ("ﬁ" -> "fi") and exotic spaces (no-break, en/em, ideographic ...) -> " ".
   Before NFC, look-alike letters and digits are folded to what a reader sees
   (:mod:`guard.prepare.lookalikes`: "⑨⓪", "⁹⁰", "9️⃣0️⃣", "9O" -> "90"; "𝐃𝐚𝐥𝐥𝐚𝐬" ->
   "Dallas"), so the offline checks and the LLM judge compare the numbers and names a reader
   reads. Removing the bidi controls leaves the stored (logical) order, which is what a judge
   reads; where a control makes a reader see another order ("\u202esyad 09 nihtiw" shows as
   "within 90 days"), :func:`guard.prepare.bidi.reorders_display` says so, and the engine flags
   the output (:attr:`guard.case.PreparedCase.display_reordered`): the offline judge fails it
   (with confidence 0, so a cascade asks its LLM) and the LLM judge is told.
4. Collapses pathological whitespace: runs of spaces become one space, runs of blanks holding
   a tab become one tab (tables keep their columns), trailing spaces on a
   line are dropped, three or more line breaks become two, and the whole text is stripped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from itertools import compress

from guard.prepare.lookalikes import fold_lookalikes

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


def class_pattern(codes: Iterable[int]) -> str:
    """A regex character class of ``codes``, written as ranges (a class listing single
    characters makes the regex engine test each one in turn)."""
    ranges: list[list[int]] = []
    for code in sorted(set(codes)):
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    parts = (re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in ranges)
    return "[" + "".join(parts) + "]"


def _combining_class(start: int = 0x300, stop: int = 0x20000) -> str:
    """A regex character class of every code point in ``start``..``stop`` with a non-zero
    canonical combining class (the only ones NFC reorders; none lie outside U+0300..U+1FFFF)."""
    codes = range(start, stop)
    return class_pattern(compress(codes, map(unicodedata.combining, map(chr, codes))))


_MARK = _combining_class()
COMBINING_MARK = re.compile(_MARK)
# The regex engine tests a character against a class's BMP part in one bitmap lookup, but
# against each of its astral ranges in turn (about a hundred for the marks): removing marks with
# COMBINING_MARK costs about 200 ns a character. Astral marks (rare scripts) get their own pass,
# run only on a text holding an astral character.
_BMP_MARK = re.compile(_combining_class(0x300, 0x10000))
_ASTRAL_MARK = re.compile(_combining_class(0x10000, 0x20000))
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def drop_combining_marks(text: str) -> str:
    """``text`` without its combining marks (what ``COMBINING_MARK.sub("", text)`` gives)."""
    text = _BMP_MARK.sub("", text)
    return _ASTRAL_MARK.sub("", text) if _ASTRAL.search(text) is not None else text


# NFC sorts each run of combining marks with an insertion sort: quadratic in the run's length
_LONG_MARK_RUN = re.compile(f"({_MARK}{{{MAX_COMBINING_RUN}}}){_MARK}+")
_RUN_OF_SPACES = re.compile(r" {2,}")
_TAB_AND_BLANKS = re.compile(r"\t[ \t]+")
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


# Cost: ``str.translate`` with a dict table looks every character of a non-ASCII text up in
# the dict (about 0.2 us each), so a non-ASCII text is first searched, in one pass of the regex
# engine, for a character any per-character rule touches; most texts hold none and skip them.
_LINE_BREAK_CHARS = re.compile(class_pattern(_LINE_BREAKS))
_TOUCHED_CHARS = re.compile(class_pattern([*_TABLE, *range(0xD800, 0xE000)]))


def _reveal_tags(text: str) -> str:
    """``text`` with each run of tag characters outside a flag sequence shown as its ASCII."""
    return _HIDDEN_TAGS.sub(lambda m: m.group().translate(_UNTAG), text)


# An ASCII text's line breaks and controls, done by ``bytes.translate`` (a table lookup per
# byte, about ten times cheaper than ``str.translate``'s ASCII path): the line breaks become
# ``\n``, then the other controls (every one ``_TABLE`` drops) are deleted.
_ASCII_LINE_BREAKS = bytes.maketrans(b"\r\x0b\x0c", b"\n\n\n")
_ASCII_DROPPED = bytes(
    code for code in range(0x80) if code not in b"\r\x0b\x0c" and _TABLE.get(code, "") is None
)


def _clean_ascii(text: str) -> str:
    """What the line-break and character rules make of the ASCII ``text``."""
    return text.encode("ascii").translate(_ASCII_LINE_BREAKS, _ASCII_DROPPED).decode("ascii")


def _clean_chars(text: str) -> str:
    if _TOUCHED_CHARS.search(text) is None:
        return text
    return _SURROGATES.sub("", _reveal_tags(text).translate(_TABLE))


def collapse_whitespace(text: str) -> str:
    """Collapse runs of blanks, trailing blanks and blank-line runs; strip the ends.

    Each step runs only when the text holds what it changes (a substring test is far cheaper
    than a regex pass); after the runs of spaces became one space, a run of blanks holding a
    tab is at most one space before each tab, so two literal replacements collapse it."""
    if "  " in text:
        text = _RUN_OF_SPACES.sub(" ", text)
    if "\t" in text:
        text = _TAB_AND_BLANKS.sub("\t", text.replace(" \t", "\t"))
    if " \n" in text or "\t\n" in text:  # a single blank after the runs were collapsed
        text = text.replace(" \n", "\n").replace("\t\n", "\n")
    if "\n\n\n" in text:
        text = _MANY_NEWLINES.sub("\n\n", text)
    return text.strip()


def sanitize(text: str) -> str:
    """Return ``text`` without invisible or control characters, look-alikes folded,
    NFC-normalised, tidy blanks."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if text.isascii():
        text = _clean_ascii(text)
    else:
        if _LINE_BREAK_CHARS.search(text) is not None:
            text = text.translate(_LINE_BREAKS)
        text = _clean_chars(text)
    text = fold_lookalikes(text)
    if not unicodedata.is_normalized("NFC", text):  # a linear check; true for most text
        text = unicodedata.normalize("NFC", _LONG_MARK_RUN.sub(r"\1", text))
    return collapse_whitespace(text)
