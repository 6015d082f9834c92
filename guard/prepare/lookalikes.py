"""Folding look-alike characters to the letters and digits they disguise.

A reader sees "⑨⓪ days", "⁹⁰ days", "9️⃣0️⃣ days", "9O days" (a letter O) and "𝐃𝐚𝐥𝐥𝐚𝐬" as
"90 days" and "Dallas"; a rule that compares the answer's numbers and names with the evidence's
must see them so too, and so must the LLM judge (both read the sanitized text). What
:func:`fold_lookalikes` folds, and what it leaves alone:

* **Styled letters and digits**, always: mathematical alphanumerics (bold, italic, script,
  double-struck, monospace ... U+1D400-U+1D7FF), the letter-like symbols that are letters
  ("ℌ", "ℓ"; not "™", "℃" or "№"), enclosed alphanumerics ("⑨", "⑩", "⑴", "⒈", "ⓐ",
  "㉑", "🄁") and the dingbat circled digits ("❾", "❿"), each to the ASCII its
  compatibility decomposition (NFKC) or numeric value gives. Only these blocks: full NFKC is not
  used, because it also turns "x²" into "x2", "½" into "1⁄2" and "™" into "TM", which changes
  what a claim says. (Full-width ASCII and ligatures are folded by :mod:`sanitize` itself.)
* **Keycaps**: "9️⃣" (a digit, ``#`` or ``*``, an optional emoji presentation selector, U+20E3)
  becomes its digit.
* **Superscript and subscript digits that stand alone**: a run of them that does not follow a
  letter or digit is a number in disguise ("⁹⁰ days" -> "90 days"); one that follows a letter,
  digit or bracket is an exponent, an index or a footnote mark and stays ("m²", "H₂O",
  "10⁹", "days¹").
* **A letter O inside a number**: in a token that starts with an ASCII digit and is made only of
  digits, the letters O/o (Latin, Cyrillic or Greek) and the separators "." and ",", not glued
  to a letter, digit, hyphen or underscore on either side, each O is the digit 0 ("9O days",
  "9О days" with a Cyrillic О, "1,5OO" -> "1,500"); a letter l or I between two digits is a 1
  ("1l0" -> "110"). Words keep their letters ("ООО", "O2", "CO2", "GPT-4o", "10l" of water).

Every rule maps a character to at most :data:`MAX_GROWTH` characters, and folding is
idempotent: what it produces is never folded again.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_GROWTH", "fold_lookalikes"]

MAX_GROWTH = 4  # the longest fold of one character ("⒇" -> "(20)")
_ALLOWED_PUNCTUATION = frozenset("()., ")

_STYLED_BLOCKS = (
    range(0x1D400, 0x1D800),  # mathematical alphanumeric symbols
    range(0x2460, 0x2500),  # enclosed alphanumerics
    range(0x3248, 0x3260),  # circled numbers on black squares, circled 21-35
    range(0x32B1, 0x32C0),  # circled 36-50
    range(0x1F100, 0x1F200),  # enclosed alphanumeric supplement
)
_LETTERLIKE = range(0x2100, 0x2150)  # folded only where the symbol is a letter
_DINGBAT_DIGITS = range(0x2776, 0x2794)  # no decomposition: folded by numeric value


def _ascii_fold(char: str) -> str | None:
    """The plain text ``char`` stands for (letters, digits and the punctuation an enclosed
    form carries), or None when it stands for something else or for itself."""
    folded = unicodedata.normalize("NFKC", char)
    if folded == char or len(folded) > MAX_GROWTH:
        return None
    if not all(c.isalnum() or c in _ALLOWED_PUNCTUATION for c in folded):
        return None
    return folded if any(c.isalnum() for c in folded) else None


def _numeric_fold(char: str) -> str | None:
    """The digits of an enclosed number without a decomposition ("❾", "⓿")."""
    value = unicodedata.numeric(char, None)
    if unicodedata.category(char) != "No" or value is None or value != int(value):
        return None
    return str(int(value))


def _styled_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in (c for block in (*_STYLED_BLOCKS, _DINGBAT_DIGITS) for c in block):
        folded = _ascii_fold(chr(code)) or _numeric_fold(chr(code))
        if folded is not None:
            table[code] = folded
    for code in _LETTERLIKE:
        char = chr(code)
        folded = _ascii_fold(char)
        if folded is not None and unicodedata.category(char).startswith("L") and len(folded) == 1:
            table[code] = folded
    return table


_STYLED = _styled_table()


_STYLED_CHAR = re.compile(
    "[\U0001d400-\U0001d7ff\u2100-\u214f\u2460-\u24ff\u2776-\u2793\u3248-\u32bf"
    "\U0001f100-\U0001f1ff]"
)
_KEYCAP = re.compile("([0-9#*])(?:\ufe0f?\u20e3)+")
_RAISED = "⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉"
_RAISED_DIGITS = str.maketrans(_RAISED, "0123456789" * 2)
_LONE_RAISED = re.compile(rf"(?<![\w)\]}}'’])[{_RAISED}]+")
_O_LIKE = "OoОоΟο"  # Latin, Cyrillic, Greek
_ONE_LIKE = "lIІӀ"  # Latin l and I, Cyrillic І and palochka
_NUMBER_WITH_O = re.compile(
    rf"(?<![\w-])[0-9](?:[0-9{_O_LIKE}]|[.,](?=[0-9{_O_LIKE}]))*[{_O_LIKE}]"
    rf"(?:[0-9{_O_LIKE}]|[.,](?=[0-9{_O_LIKE}]))*(?![\w\u0300-\u036f\ufe0f\u20e3-])"
)
_ONE_BETWEEN_DIGITS = re.compile(rf"(?<=[0-9])[{_ONE_LIKE}](?=[0-9])")
_ZEROS = str.maketrans(_O_LIKE, "0" * len(_O_LIKE))
# one pass of the regex engine finds whether any rule can apply (most texts: none)
_ANY = re.compile(
    rf"{_STYLED_CHAR.pattern}|\u20e3|[{_RAISED}]|[0-9][.,]?[{_O_LIKE}]|[0-9][{_ONE_LIKE}]"
)


def fold_lookalikes(text: str) -> str:
    """``text`` with look-alike letters and digits folded to what they show (module docstring)."""
    if _ANY.search(text) is None:
        return text
    if _STYLED_CHAR.search(text) is not None:
        text = text.translate(_STYLED)
    text = _LONE_RAISED.sub(lambda m: m.group().translate(_RAISED_DIGITS), text)
    if "\u20e3" in text:  # after the raised digits: "⁰⃣" is a keycap once folded
        text = _KEYCAP.sub(r"\1", text)
    text = _ONE_BETWEEN_DIGITS.sub("1", text)  # first: a 1 it makes may start a number with O
    return _NUMBER_WITH_O.sub(lambda m: m.group().translate(_ZEROS), text)
