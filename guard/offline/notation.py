"""Numbers written in notations the quantity grammar does not read digit by digit.

* scientific notation: ``9e1``, ``2.5E3``, ``5 x 10^4``, ``5×10⁴``, ``5 * 10**4``, ``10^6``;
* vulgar fraction characters: ``½``, ``¼``, ``¾``, ``⅓`` ... (read as a percentage: "¼ off"
  is "25 % off");
* shares written with a slash before "off" or "of": ``1/4 off``, ``3/4 of`` (a percentage);
* dozens: ``a dozen``, ``half a dozen``, ``two dozen``;
* years in words: ``nineteen ninety-two``, ``twenty twenty-four``, ``nineteen oh five`` (a
  century word and two digits in words; "two thousand and eight" may be a count, and is not
  read as a year).

:func:`notations` gives each one's span, its value written in plain digits (``plain``, for the
unit grammar to read what follows it: "9e1 days" is 90 days), and a kind when the notation
fixes it (a year, a percentage). Read before the ordinary amounts, so their pieces ("9", "10",
"4") are never read as amounts of their own: "5 x 10^4 mAh" is one amount, 50,000.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guard.offline.lexicon import ORDINAL_TENS, WORD_NUMBERS

_DIGITS = frozenset("0123456789")
MAX_EXPONENT = 15  # 10^15: larger exponents are not amounts anyone checks
_RAISED = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_RAISED_VALUE = {ch: str(i) for i, ch in enumerate(_RAISED)}
_TIMES = r"\s*[x×✕*·]\s*"
_SCIENTIFIC = re.compile(
    rf"(?<![\w.,/-])(?P<m>\d{{1,6}}(?:\.\d{{1,6}})?)"
    rf"(?:{_TIMES}10\s*(?:\^|\*\*)\s*(?P<p>[-−]?\d{{1,2}})"
    rf"|{_TIMES}10(?P<r>⁻?[{_RAISED}]{{1,2}})"
    r"|[eE](?P<e>[-+]?\d{1,2}))(?![\w.,]?\d)(?![A-Za-z])"
    rf"|(?<![\w.,/-])10(?:\s*(?:\^|\*\*)\s*(?P<p2>\d{{1,2}})|(?P<r2>[{_RAISED}]{{1,2}}))(?![\w.])"
)
_VULGAR = {
    "½": 50.0,
    "⅓": 100 / 3,
    "⅔": 200 / 3,
    "¼": 25.0,
    "¾": 75.0,
    "⅕": 20.0,
    "⅖": 40.0,
    "⅗": 60.0,
    "⅘": 80.0,
    "⅙": 100 / 6,
    "⅚": 500 / 6,
    "⅛": 12.5,
    "⅜": 37.5,
    "⅝": 62.5,
    "⅞": 87.5,
}
VULGAR_FRACTION = re.compile("[" + "".join(_VULGAR) + "]")
# "1/4 off", "3/4 of the staff": a share (a date or a ratio is not followed by these words)
_SLASHED = re.compile(r"(?<![\d/.,])([1-9])/([2-9]|1[0-6])(?![\d/])(?=\s*(?:off|of)\b)")
_DOZEN = re.compile(
    r"\b(?:(?P<half>half a)|(?P<n>a|one|two|three|four|five|six))\s+dozens?\b", re.IGNORECASE
)
_DOZENS = {"a": 12, "one": 12, "two": 24, "three": 36, "four": 48, "five": 60, "six": 72}
_TEEN_WORDS = {w: int(v) for w, v in WORD_NUMBERS.items() if 10 <= v <= 19 and " " not in w}
_UNIT_WORDS = {w: int(v) for w, v in WORD_NUMBERS.items() if 1 <= v <= 9 and " " not in w}
_TENS_WORDS = "|".join(ORDINAL_TENS)
_UNIT_ALT = "|".join(_UNIT_WORDS)
_TWO_DIGITS = (
    rf"(?:(?:{_TENS_WORDS})(?:[- ](?:{_UNIT_ALT}))?|{'|'.join(_TEEN_WORDS)}|oh[- ](?:{_UNIT_ALT}))"
)
# a century word ("thirteen" to "nineteen", "twenty"; "twelve thirty" is a time) and two digits
_CENTURIES = "|".join(w for w in _TEEN_WORDS if w.endswith("teen"))
_YEAR_WORDS = re.compile(rf"\b(?P<c>{_CENTURIES}|twenty)[- ](?P<y>{_TWO_DIGITS})\b", re.IGNORECASE)
# cheap tests first: most texts hold no notation at all
_MAY_BE_SCIENTIFIC = re.compile(r"\d[eE][-+]?\d|10\s*(?:\^|\*\*)|10[⁰¹²³⁴⁵⁶⁷⁸⁹]")


@dataclass(frozen=True)
class Notation:
    start: int
    end: int
    plain: str  # the value in plain digits
    kind: str | None  # "year", "percent", or None: the words after it decide


def notations(text: str) -> list[Notation]:
    """Every number in one of the module's notations, in text order (at most one per span)."""
    found: list[Notation] = []
    if _MAY_BE_SCIENTIFIC.search(text):
        found += _scientific(text)
    if VULGAR_FRACTION.search(text):
        found += _vulgar(text)
    lowered = text.lower()
    if ("teen" in lowered or "twenty" in lowered) and _YEAR_WORDS.search(text):
        found += _years(text)
    if "/" in text:
        found += [
            Notation(m.start(), m.end(), _plain(int(m.group(1)) / int(m.group(2)) * 100), "percent")
            for m in _SLASHED.finditer(text)
            if int(m.group(1)) < int(m.group(2))
        ]
    if "dozen" in lowered:
        found += [
            Notation(
                m.start(),
                m.end(),
                "6" if m.group("half") else str(_DOZENS[m.group("n").lower()]),
                None,
            )
            for m in _DOZEN.finditer(text)
        ]
    return sorted(found, key=lambda n: n.start)


def _plain(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.6g}"


def _exponent(groups: dict[str, str | None]) -> int | None:
    for name in ("p", "e", "p2"):
        if groups[name]:
            return int(str(groups[name]).replace("−", "-"))
    for name in ("r", "r2"):
        raised = groups[name]
        if raised:
            digits = "".join(_RAISED_VALUE.get(ch, "") for ch in raised)
            return -int(digits) if raised.startswith("⁻") else int(digits)
    return None


def _scientific(text: str) -> list[Notation]:
    found: list[Notation] = []
    for match in _SCIENTIFIC.finditer(text):
        groups = match.groupdict()
        exponent = _exponent(groups)
        if exponent is None or abs(exponent) > MAX_EXPONENT:
            continue
        if groups["e"] is not None and not _reads_as_exponent(text, match):
            continue
        mantissa = float(groups["m"]) if groups["m"] else 1.0
        found.append(Notation(match.start(), match.end(), _plain(mantissa * 10**exponent), None))
    return found


def _reads_as_exponent(text: str, match: re.Match[str]) -> bool:
    """ "9e1 days" is 90 days; "3e5a" or "0x1e3" are codes (the pattern's look-arounds), and a
    version or hash such as "v2e3" is glued to a letter: refused by the look-behind."""
    end = match.end()
    return end >= len(text) or not text[end].isalnum()


def _vulgar(text: str) -> list[Notation]:
    found: list[Notation] = []
    for match in VULGAR_FRACTION.finditer(text):
        whole_start = match.start()
        while whole_start > 0 and text[whole_start - 1] in _DIGITS:
            whole_start -= 1  # "2½" is 2.5: not a share
        if whole_start < match.start():
            whole = float(text[whole_start : match.start()]) + _VULGAR[match.group()] / 100
            found.append(Notation(whole_start, match.end(), _plain(whole), None))
        else:
            found.append(
                Notation(match.start(), match.end(), _plain(_VULGAR[match.group()]), "percent")
            )
    return found


def _two_digits(words: str) -> int | None:
    words = words.lower().replace("-", " ")
    parts = words.split()
    if parts[0] == "oh" and len(parts) == 2:
        return _UNIT_WORDS.get(parts[1])
    if len(parts) == 1:
        return _TEEN_WORDS.get(parts[0], ORDINAL_TENS.get(parts[0], _UNIT_WORDS.get(parts[0])))
    if len(parts) == 2 and parts[0] in ORDINAL_TENS and parts[1] in _UNIT_WORDS:
        return ORDINAL_TENS[parts[0]] + _UNIT_WORDS[parts[1]]
    return None


def _years(text: str) -> list[Notation]:
    found: list[Notation] = []
    for match in _YEAR_WORDS.finditer(text):
        century = match.group("c").lower()
        high = _TEEN_WORDS.get(century, 20 if century == "twenty" else 0)
        low = _two_digits(match.group("y"))
        if low is None or not 10 <= high <= 20:
            continue
        year = high * 100 + low
        if 1000 <= year <= 2100:
            found.append(Notation(match.start(), match.end(), str(year), "year"))
    return found
