"""Quantities in text, normalised so that equal amounts compare equal.

"30-day" and "30 days", "2.1 million" and "2,100,000", "$5" and "5 dollars", "21st" and
"twenty-first", "two weeks" and "14 days", "half a minute" and "30 seconds", "March 5, 2020",
"5 March 2020", "5 de marzo de 2020" and "5. März 2020" all normalise to the same
:class:`Quantity`. Spanish, German and French number words, units and decimal commas
("2,5 %", "1.200,50 €") are read too. A claim's quantity is supported when the evidence holds
an equal one (within a tolerance when either side hedges with "about", "around" ...), or when
one side is a bare number equal to the other's number as written ("defaults to 30" supports
"30 seconds").

Why one module of this length: one grammar of quantities (amounts, units, durations, dates,
ordinals, hedges) and the equality over it; the parsing and the comparison must agree on every
kind, so they stay side by side.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

from guard.offline.anchored import Anchored
from guard.offline.lexicon import (
    CURRENCY_SIGNS,
    MONTHS,
    ORDINAL_TENS,
    ORDINAL_WORDS,
    SCALES,
    UNITS,
    WORD_NUMBERS,
    alternation,
    european,
)
from guard.offline.notation import VULGAR_FRACTION, Notation, notations

_LOWER_WORD = re.compile(r"[a-zà-ÿ]+")
_NUMBER_WORDS = frozenset(
    {w for key in WORD_NUMBERS for w in key.split()} | set(ORDINAL_WORDS) | set(ORDINAL_TENS)
) - {"a", "an"}
_HEDGES = (
    "about",
    "around",
    "approximately",
    "approx",
    "roughly",
    "nearly",
    "almost",
    "some",
    "over",
    "more than",
    "less than",
    "under",
    "up to",
    "~",
    "circa",
    "c.",
    "estimated",
    "an estimated",
    "close to",
    "unos",
    "unas",
    "aproximadamente",
    "etwa",
    "rund",
    "ca.",
    "environ",
    "près de",
)
_HEDGED = re.compile("(?:" + "|".join(re.escape(h) for h in _HEDGES) + r")\s*$", re.IGNORECASE)
_HEDGE_ENDS = frozenset(h.split()[-1] for h in _HEDGES)
HEDGE_TOLERANCE = 0.1
EXTRACT_CACHE_SIZE = 512  # texts whose quantities are remembered (answers are read twice)
EXACT_TOLERANCE = 0.005
ROUNDED_ABOVE = 100_000  # amounts this large are compared within EXACT_TOLERANCE

_EN_NUM = (
    r"\d{1,3}(?:\.\d{3})+,\d{1,2}(?!\d)|\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)"
    r"|\d+,\d{1,2}(?![\d,])|\d+(?:\.\d+)?"
)
# Spanish / German / French: 1.200,50 or 1 200,50 (thousands) and 2,5 (decimal comma)
_EU_NUM = r"\d{1,3}(?:[. \u00a0\u202f]\d{3})+(?:,\d+)?|\d+(?:,\d+)?"
_WORDNUM = alternation(WORD_NUMBERS)
_TENS = "|".join(ORDINAL_TENS)
_TENS_ALT = alternation(ORDINAL_TENS)
_UNITS_WORDS = "one|two|three|four|five|six|seven|eight|nine"
_UNIT_ALT = alternation(UNITS)
_SCALE_ALT = alternation(SCALES)
_MONTH_ALT = alternation(MONTHS)
_TEENS = "ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
# "two hundred and fifty", "three hundred twenty-five": hundreds with their rest in words
_HUNDREDS = (
    rf"(?:{_UNITS_WORDS})\s+hundred(?:\s+and)?\s+"
    rf"(?:{_TENS_ALT}(?:[- ](?:{_UNITS_WORDS}))?|{_TEENS}|{_UNITS_WORDS})\b"
)
_HUNDRED_SPLIT = re.compile(r"^(\w+)\s+hundred(?:\s+and)?\s+(.+)$")
_ORD_SUFFIX = r"(?:st|nd|rd|th|\.|º|er|e)?"

_DATE = re.compile(
    rf"\b(?P<m1>{_MONTH_ALT})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y1>\d{{4}}))?\b"
    rf"|\b(?P<d2>\d{{1,2}}){_ORD_SUFFIX}\s+(?:of\s+|de\s+)?(?P<m2>{_MONTH_ALT})\b\.?"
    rf"(?:,?\s+(?:de\s+|del\s+)?(?P<y2>\d{{4}}))?\b"
    rf"|\b(?P<y3>\d{{4}})-(?P<m3>\d{{2}})-(?P<d3>\d{{2}})(?:\b|(?=T\d))"
    rf"|\b(?P<d5>\d{{1,2}})\.(?P<m5>\d{{1,2}})\.(?P<y5>\d{{4}})\b"
    rf"|\b(?P<s1>\d{{1,2}})/(?P<s2>\d{{1,2}})/(?P<y6>\d{{4}})\b"
    rf"|\b(?P<m4>{_MONTH_ALT})\b\.?,?\s+(?:de\s+)?(?P<y4>\d{{4}})\b",
    re.IGNORECASE,
)


def _quantity_pattern(number: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?P<sign>US\$|[$€£¥₹])?\s?"
        rf"(?P<num>{number}|\b{_HUNDREDS}|\b{_TENS_ALT}[- ](?:{_UNITS_WORDS})\b|\b{_WORDNUM}\b)"
        rf"(?:\s?(?P<scale>{_SCALE_ALT})\b)?"
        rf"(?:\)?(?:\s|-)?(?P<unit>{_UNIT_ALT})(?:s|es|n|en|e)?\b|\s?(?P<pct>%)|\s?(?P<tsign>[€$£]))?"
        rf"(?:\s?(?P<era>BCE|BC|AD|CE)\b)?",
        re.IGNORECASE,
    )


_QUANTITY = {False: _quantity_pattern(_EN_NUM), True: _quantity_pattern(_EU_NUM)}
_ORDINAL = re.compile(
    rf"\b(?P<n>\d+)(?:st|nd|rd|th)\b|\b(?:(?P<tens>{_TENS})-)?(?P<w>"
    + "|".join(ORDINAL_WORDS)
    + r"|first|second)\b",
    re.IGNORECASE,
)
# every ordinal ends so (the same flags): a text without it holds none, and is not scanned
_ORDINAL_END = re.compile(r"(?:st|nd|rd|th)\b", re.IGNORECASE)
# "14m 03s", "2h 25m": durations as a stopwatch writes them ("14h30" is a time of day)
_STOPWATCH = re.compile(
    r"\b(?:(?P<h>\d{1,3})\s?h\s?)?(?P<m>\d{1,3})\s?m\s?(?P<s>\d{1,2})\s?s\b"
    r"|\b(?P<h2>\d{1,3})\s?h\s?(?P<m2>\d{1,2})\s?m(?:in)?\b"
)  # every stopwatch has an "m": a text without one is not scanned
_FRACTION = re.compile(r"\b(?:a|one|two|three|four)\s+$", re.IGNORECASE)
_OF = re.compile(r"s?\s+of\b", re.IGNORECASE)
_TIMES = re.compile(r"\s+times\b")  # "three times a day": a count
_YEARISH = re.compile(r"1\d{3}|20\d{2}")
_LABEL = re.compile(
    r"(?:§|#|\b(?:No|Nr|Art|Sec|Section|Article|Paragraph|Absatz|Artículo|"
    r"Abschnitt|Kapitel|Chapter|Step|Schritt|Paso|Étape|Level|Tier|Version|"
    r"Reviewer|Model|Option|Plan|Room|Gate|Platform|Line))\.?\s*$",
    re.IGNORECASE,
)
# how often, as the period it repeats over: "quarterly" is every three months
FREQUENCIES = {
    "weekly": 7.0,
    "fortnightly": 14.0,
    "biweekly": 14.0,
    "monthly": 365 / 12,
    "bimonthly": 365 / 6,
    "quarterly": 365 / 4,
    "biannually": 365 / 2,
    "semiannually": 365 / 2,
    "annually": 365.0,
    "yearly": 365.0,
}
_FREQUENCY = re.compile(r"\b(?:" + "|".join(FREQUENCIES) + r")\b", re.IGNORECASE)
# the same patterns, tried only where a match can start (see guard.offline.anchored): a digit
# or a sign, the first word of one of their word alternatives, the blank before either
_UNIT_WORDS = _UNITS_WORDS.split()
_DATES = Anchored(_DATE, digits=True, words=MONTHS)
_STOPWATCHES = Anchored(_STOPWATCH, digits=True)
_FREQUENCIES = Anchored(_FREQUENCY, words=FREQUENCIES)
_ORDINALS = Anchored(
    _ORDINAL, digits=True, words=[*ORDINAL_TENS, *ORDINAL_WORDS, "first", "second"]
)
_QUANTITIES = {
    eu: Anchored(
        pattern,
        digits=True,
        chars="".join(s for s in CURRENCY_SIGNS if len(s) == 1),
        words=[*_UNIT_WORDS, *ORDINAL_TENS, *WORD_NUMBERS],
        anywhere=["us$"],
        blank=True,
    )
    for eu, pattern in _QUANTITY.items()
}
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "mar"})  # English verbs when lower case


@dataclass(frozen=True)
class Quantity:
    """A normalised amount: ``value`` in the base unit of ``kind``; ``number`` as written.

    kinds: ``count`` (a bare number), ``year``, ``date`` (``value`` = yyyymmdd with 00 for an
    unknown part), ``ordinal``, ``percent``, ``duration`` (days), a currency code, ``length``
    (metres), ``mass`` (kg), ``data`` (bytes).
    """

    text: str
    value: float
    kind: str
    hedged: bool = False
    number: float = 0.0
    start: int = 0

    def describe(self) -> str:
        return self.text


def extract(text: str) -> list[Quantity]:
    """Every quantity in ``text``: dates first, then amounts and ordinals outside the dates."""
    return list(_extract(text))


@lru_cache(maxsize=EXTRACT_CACHE_SIZE)
def _extract(text: str) -> tuple[Quantity, ...]:
    if not _may_hold_numbers(text):
        return ()
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    for match in _DATES.finditer(text):
        quantity = _date(match)
        if quantity is not None:
            found.append(quantity)
            taken.append(match.span())
    for match in _STOPWATCHES.finditer(text) if "m" in text else ():
        hours = int(match.group("h") or match.group("h2") or 0)
        minutes = int(match.group("m") or match.group("m2") or 0)
        seconds = int(match.group("s") or 0)
        days = hours / 24 + minutes / 1440 + seconds / 86400
        found.append(Quantity(match.group(0), days, "duration", start=match.start()))
        taken.append(match.span())
    for match in _FREQUENCIES.finditer(text):
        days = FREQUENCIES[match.group(0).lower()]
        found.append(Quantity(match.group(0), days, "duration", number=1.0, start=match.start()))
        taken.append(match.span())
    eu = european(text)
    for written in notations(text):
        if not _overlaps((written.start, written.end), sorted(taken)):
            quantity, end = _notation_quantity(text, written, eu)
            if quantity is not None:
                found.append(quantity)
                taken.append((written.start, end))
    taken.sort()
    for match in _ORDINALS.finditer(text) if _ORDINAL_END.search(text) else ():
        if _FRACTION.search(text, max(0, match.start() - 6), match.start()) and _OF.match(
            text, match.end()
        ):
            taken.append(match.span())
            continue  # "a third of", "two fifths of": a fraction, not an ordinal or an amount
        if not _overlaps(match.span(), taken):
            ordinal = _ordinal(match)
            if ordinal is not None:
                found.append(ordinal)
                taken.append(match.span())
    for match in _QUANTITIES[eu].finditer(text):
        num = match.group("num")
        if not num or (taken and _overlaps(match.span(), taken)):
            continue
        if _follows_a_number(text, match, num):
            value = float(num)  # what _bare gives: no hedge or label ends in a digit
            kind = "year" if len(num) == 4 and _YEARISH.fullmatch(num) else "count"
            found.append(Quantity(num, value, kind, False, value, match.start("num")))
            continue
        quantity = _amount(text, match, eu)
        if quantity is not None:
            found.append(quantity)
    return tuple(_compound_durations(sorted(found, key=_START), text))


_START = attrgetter("start")
_AFTER_CHARS = 40  # of the text after a notation that its unit may take


def _notation_quantity(text: str, written: Notation, eu: bool) -> tuple[Quantity | None, int]:
    """The quantity a notation writes ("9e1 days": 90 days), and where it ends: its value in
    plain digits is read with the words after it, by the ordinary grammar."""
    shown = text[written.start : written.end]
    hedged = _hedged_at(text, written.start)
    value = float(written.plain)
    if written.kind is not None:
        return Quantity(shown, value, written.kind, hedged, value, written.start), written.end
    after = text[written.end : written.end + _AFTER_CHARS]
    match = _QUANTITY[False].match(written.plain + after)
    if match is None or match.start("num") != 0 or match.group("num") != written.plain:
        return Quantity(shown, value, "count", hedged, value, written.start), written.end
    read = _measured(written.plain + after, match, False)
    if read is None:
        return Quantity(shown, value, "count", hedged, value, written.start), written.end
    end = written.end + match.end() - len(written.plain)
    return (
        Quantity(
            text[written.start : end].strip(), read.value, read.kind, hedged, value, written.start
        ),
        end,
    )


def _follows_a_number(text: str, match: re.Match[str], num: str) -> bool:
    """The fast path of a run of numbers ("1 2 1 2 ..."): plain digits with no sign, scale,
    unit or era, one space after another number, and no time of day ("20:00"). Nothing
    glues it to a word, and no hedge or label can end right before it (none ends in a
    digit), so :func:`_amount` would read it as :func:`_bare` does, with no hedge or label."""
    start, end = match.span("num")
    return (
        start >= 2
        and text[start - 1] == " "
        and text[start - 2].isdigit()
        and match.end() == end
        and num.isdigit()
        and num.isascii()
        and not match.group("sign")
        and not (text[end : end + 1] == ":" and text[end + 1 : end + 2].isdigit())
    )


_JOIN = re.compile(r"\s*(?:,|and)?\s*")


def _compound_durations(found: list[Quantity], text: str) -> list[Quantity]:
    """ "2 hours 25 minutes" is one duration of 145 minutes, not two."""
    merged: list[Quantity] = []
    for quantity in found:
        last = merged[-1] if merged else None
        if (
            last is not None
            and last.kind == quantity.kind == "duration"
            and last.value > quantity.value
            and _JOIN.fullmatch(text[last.start + len(last.text) : quantity.start])
        ):
            merged[-1] = Quantity(
                text[last.start : quantity.start + len(quantity.text)],
                last.value + quantity.value,
                "duration",
                last.hedged,
                0.0,
                last.start,
            )
        else:
            merged.append(quantity)
    return merged


def _may_hold_numbers(text: str) -> bool:
    """A cheap pre-check: a digit, or a number word ("two", "third", "dozen")."""
    if any(map(str.isdigit, text)) or _FREQUENCY.search(text) or VULGAR_FRACTION.search(text):
        return True
    return not _NUMBER_WORDS.isdisjoint(_LOWER_WORD.findall(text.lower()))


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    """Whether ``span`` overlaps a taken span (``taken`` is in text order: bisect)."""
    i = bisect_right(taken, (span[0], 1 << 62))
    return any(start < span[1] and span[0] < end for start, end in taken[max(0, i - 1) : i + 1])


def _slashed(groups: dict[str, str | None]) -> None:
    """ "24/06/2026" is day/month, "06/24/2026" month/day; with both parts 12 or less the
    order is unknown and neither is read (in place)."""
    first, second = int(groups["s1"] or 0), int(groups["s2"] or 0)
    if first > 12 >= second:
        groups["d5"], groups["m5"], groups["y5"] = groups["s1"], groups["s2"], groups["y6"]
    elif second > 12 >= first:
        groups["d5"], groups["m5"], groups["y5"] = groups["s2"], groups["s1"], groups["y6"]


def _date(match: re.Match[str]) -> Quantity | None:
    groups = match.groupdict()
    if groups["s1"]:
        _slashed(groups)
        if not groups["m5"]:
            return None
    month_text = next((groups[k] for k in ("m1", "m2", "m3", "m4", "m5") if groups[k]), "")
    month = int(month_text) if month_text.isdigit() else MONTHS.get(month_text.lower(), 0)
    day = int(next((groups[k] for k in ("d1", "d2", "d3", "d5") if groups[k]), 0) or 0)
    year = int(next((groups[k] for k in ("y1", "y2", "y3", "y4", "y5") if groups[k]), 0) or 0)
    if not 1 <= month <= 12 or day > 31:
        return None
    if month_text.lower() in _AMBIGUOUS_MONTHS and not month_text[0].isupper():
        return None  # "may", "march" in lower case are verbs
    if groups["m4"] and month_text.lower() in _AMBIGUOUS_MONTHS and not groups["y4"]:
        return None
    return Quantity(
        match.group(0), float(year * 10000 + month * 100 + day), "date", start=match.start()
    )


def _ordinal(match: re.Match[str]) -> Quantity | None:
    if match.group("n"):
        value = float(match.group("n"))
        return Quantity(match.group(0), value, "ordinal", number=value, start=match.start())
    word = match.group("w").lower()
    tens = ORDINAL_TENS.get((match.group("tens") or "").lower(), 0)
    if word in ("first", "second"):
        if not tens:
            return None  # "first" and "second" are too idiomatic alone ("at first", "a second")
        value = float(tens + (1 if word == "first" else 2))
    else:
        value = float(tens + ORDINAL_WORDS[word])
    return Quantity(match.group(0), value, "ordinal", number=value, start=match.start())


def _amount(text: str, match: re.Match[str], eu: bool) -> Quantity | None:
    start = match.start("num")
    glued = (
        start > 0
        and (
            (text[start - 1].isalpha() and not _unspaced(text[start - 1]))
            or text[start - 1] in "-/.:_,"
        )
        and not (text[start - 1] == "-" and (start < 2 or not text[start - 2].isalpha()))
    )  # -640, 3-5
    if (
        glued
        and not (match.group("sign") and start == match.end("sign"))
        and not _AGE_BAND.search(text, max(0, start - 6), start)  # "under-16s" is an age
    ):
        return None  # part of a word, code or time: "COVID-19", "A4", "v2.1", "8:30"
    end = match.end("num")
    if end < len(text) and text[end] == ":" and end + 1 < len(text) and text[end + 1].isdigit():
        return None  # a time of day ("20:00"), read by guard.offline.times
    num = match.group("num")
    if match.end() == end and num.isascii() and num.isdigit() and not match.group("sign"):
        return _bare(text, match, num)  # the common case, read without the unit grammar
    return _measured(text, match, eu)


def _unspaced(char: str) -> bool:
    """A letter of a script written without spaces (Chinese, Japanese, Thai): a number right
    after it ("交货后30天") is an amount, not part of a word."""
    return (
        "\u0e00" <= char <= "\u0e7f" or "\u3040" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af"
    )


_AGE_BAND = re.compile(r"\b(?:under|over)-$", re.IGNORECASE)  # "under-16s", "over-65s"


def _measured(text: str, match: re.Match[str], eu: bool) -> Quantity | None:
    """An amount with its sign, scale, unit or era, or a number in words (any number: a bare
    one gives what :func:`_bare` gives)."""
    start, end = match.span("num")
    value = number_value(match.group("num"), eu)
    if value is None:
        return None
    word_number = not match.group("num")[0].isdigit()
    if _glued_letter_unit(text, match):  # "2022 he", "5 me": a word, not hours or metres
        kind = "year" if _YEARISH.fullmatch(match.group("num")) else "count"
        begin = match.start("sign") if match.group("sign") else start
        end = match.end("scale") if match.group("scale") else end
        hedged = _hedged_at(text, begin)
        return Quantity(text[begin:end].strip(), value, kind, hedged, value, begin)
    kind, scaled = _kind(match, value)
    if (
        word_number
        and kind == "count"
        and not match.group("scale")
        and not _TIMES.match(text, match.end())
    ):
        begin = match.start("num")
        if _labels(text[max(0, begin - 12) : begin]) and value > 1:  # "level three", "gate two"
            return Quantity(match.group("num"), value, "ordinal", False, value, begin)
        return None  # "one", "a", "ten" alone are too often not amounts; "three times" is
    hedged = _hedged_at(text, match.start())
    begin = match.start("sign") if match.group("sign") else match.start("num")
    if kind == "count" and _labels(text[max(0, begin - 12) : begin]):
        kind = "ordinal"  # "§ 2", "No. 5", "Section 3": a label, not an amount
    written = text[begin : match.end()].strip().replace(")", "", 1)  # "thirty (30) days"
    return Quantity(written, scaled, kind, hedged, value, begin)


def _bare(text: str, match: re.Match[str], num: str) -> Quantity:
    """A number of plain digits with no sign, scale, unit or era (what :func:`_amount` makes
    of it through :func:`number_value` and :func:`_kind`): a year or a count."""
    value = float(num)
    begin = match.start("num")
    kind = "year" if len(num) == 4 and _YEARISH.fullmatch(num) else "count"
    if kind == "year" and _unyearly_key(text, begin):
        kind = "count"  # '"budget_gbp": 1200': a record's amount, not a year
    hedged = _hedged_at(text, match.start())
    if kind == "count" and _may_label(text, begin) and _labels(text[max(0, begin - 12) : begin]):
        kind = "ordinal"  # "§ 2", "No. 5", "Section 3": a label, not an amount
    return Quantity(num, value, kind, hedged, value, begin)


_JSON_KEY = re.compile(r"[\"']([^\"']{1,40})[\"']\s*:\s*$")
_YEAR_KEY = re.compile(r"year|yr|date|since|founded|born|built|established", re.IGNORECASE)


def _unyearly_key(text: str, begin: int) -> bool:
    """Whether the number at ``begin`` is a JSON value under a key that names no year."""
    key = _JSON_KEY.search(text[max(0, begin - 48) : begin])
    return key is not None and _YEAR_KEY.search(key.group(1)) is None


def _may_label(text: str, begin: int) -> bool:
    """The cheap test before :func:`_labels` (same window): the last character before
    ``begin`` that is no space or dot is a letter, "§" or "#"; a run of numbers fails it at
    once."""
    floor = max(0, begin - 12)
    i = begin
    while i > floor and text[i - 1] in " .":
        i -= 1
    return i > floor and (text[i - 1].isalpha() or text[i - 1] in "§#")


def _glued_letter_unit(text: str, match: re.Match[str]) -> bool:
    """Whether a one-letter unit ("h", "m", "g") was read from a longer word by the plural
    endings the pattern allows ("he" is no "h" + "e")."""
    unit = match.group("unit")
    return bool(unit) and len(unit) == 1 and match.end() > match.end("unit")


def _labels(before: str) -> bool:
    end = before.rstrip(" .")
    return bool(end) and (end[-1].isalpha() or end[-1] in "§#") and bool(_LABEL.search(before))


_DECIMAL_COMMA = re.compile(r"\d+,\d{1,2}|\d{1,3}(?:\.\d{3})+,\d+")
_EU_SEPARATORS = re.compile(r"[. \u00a0\u202f]")


def number_value(raw: str, eu: bool = False) -> float | None:
    """The value of a number as written: digits (English or European separators) or words."""
    raw = raw.lower()
    if raw[0].isdigit():
        if eu or _DECIMAL_COMMA.fullmatch(raw):
            digits = _EU_SEPARATORS.sub("", raw).replace(",", ".")
        else:
            digits = raw.replace(",", "")
        try:
            return float(digits)
        except ValueError:
            return None
    hundreds = _HUNDRED_SPLIT.match(raw)
    if hundreds is not None and hundreds.group(1) in WORD_NUMBERS:
        rest = number_value(hundreds.group(2))
        return None if rest is None else WORD_NUMBERS[hundreds.group(1)] * 100 + rest
    parts = re.split(r"[- ]", raw)
    if len(parts) == 2 and parts[0] in ORDINAL_TENS and parts[1] in WORD_NUMBERS:
        return float(ORDINAL_TENS[parts[0]] + WORD_NUMBERS[parts[1]])
    number = WORD_NUMBERS.get(raw)
    return float(number) if number is not None else None


def _kind(match: re.Match[str], value: float) -> tuple[str, float]:
    scale_word = (match.group("scale") or "").lower()
    sign = (match.group("sign") or match.group("tsign") or "").lower()
    unit_word = (match.group("unit") or match.group("pct") or "").lower()
    if scale_word in ("m", "b", "k") and not sign:
        if unit_word and UNITS.get(unit_word, ("", 0.0))[0] in _CURRENCIES:
            kind, factor = UNITS[unit_word]  # "1.5k dollars", "2m euros"
            return kind, value * SCALES[scale_word] * factor
        if unit_word:
            return "count", value
        scale_word = ""
        unit_word = "m" if (match.group("scale") or "") == "m" else ""
    value *= SCALES.get(scale_word, 1.0)
    if sign:
        return CURRENCY_SIGNS.get(sign, "usd"), value
    if unit_word in _FAHRENHEIT:
        return "temperature", (value - 32) * 5 / 9
    if unit_word:
        kind, factor = UNITS[unit_word]
        return kind, value * factor
    era = (match.group("era") or "").upper()
    if era:
        return "year", -value if era.startswith("B") else value
    if not scale_word and _YEARISH.fullmatch(match.group("num")):
        return "year", value
    return "count", value


HEDGE_WINDOW = 24  # characters before an amount read for a hedge


def _hedged_at(text: str, at: int) -> bool:
    """:func:`_hedged` of the window before ``at``, with a cheap test first: no hedge ends
    in a digit, so when the last word before ``at`` does (a run of numbers), none is read."""
    floor = max(0, at - HEDGE_WINDOW)
    i = at
    while i > floor and text[i - 1].isspace():
        i -= 1
    if i == floor or text[i - 1].isdigit():
        return False
    return _hedged(text[floor:at])


def _hedged(before: str) -> bool:
    tail = before[-HEDGE_WINDOW:]
    words = tail.split()
    if not words or words[-1].lower() not in _HEDGE_ENDS:
        return False  # the cheap test first: most amounts follow no hedge
    return _HEDGED.search(tail) is not None


def matches(claim: Quantity, evidence: Quantity) -> bool:
    """Whether ``evidence`` states the amount ``claim`` states."""
    if claim.kind == "date" or evidence.kind == "date":
        return _dates_match(claim, evidence)
    if not _kinds_compatible(claim.kind, evidence.kind):
        return False
    if "count" in (claim.kind, evidence.kind) and claim.kind != evidence.kind:
        return _close(
            claim.number or claim.value,
            evidence.number or evidence.value,
            claim.hedged or evidence.hedged,
        ) or _close(claim.value, evidence.value, claim.hedged or evidence.hedged)
    return _close(claim.value, evidence.value, claim.hedged or evidence.hedged)


def _close(a: float, b: float, hedged: bool) -> bool:
    """Equal amounts; hedged ones within ``HEDGE_TOLERANCE``; large ones ("2.1 million")
    within ``EXACT_TOLERANCE``, since they are usually rounded; small ones exactly."""
    if a == b:
        return True
    if hedged:
        tolerance = HEDGE_TOLERANCE
    elif min(abs(a), abs(b)) >= ROUNDED_ABOVE:
        tolerance = EXACT_TOLERANCE
    else:
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)
    return abs(a - b) <= tolerance * max(abs(b), 1e-9)


def _kinds_compatible(claim: str, evidence: str) -> bool:
    loose = {"count", "year", "ordinal"}
    return (
        claim == evidence
        or (claim in loose and evidence in loose)
        or ("count" in (claim, evidence))
    )


def _date_parts(q: Quantity) -> tuple[int, int, int]:
    v = int(q.value)
    return v // 10000, v // 100 % 100, v % 100


def _dates_match(claim: Quantity, evidence: Quantity) -> bool:
    if claim.kind != "date":  # a bare year or day in the claim, a full date in the evidence
        year, _, day = _date_parts(evidence)
        return claim.value in (year, day) and claim.kind in ("year", "count", "ordinal")
    if evidence.kind != "date":
        year, month, day = _date_parts(claim)
        return not month and not day and evidence.value == year
    return all(
        c == e or not c for c, e in zip(_date_parts(claim), _date_parts(evidence), strict=True)
    )


_CALENDAR_UNITS = re.compile(
    r"\b(?:months?|years?|decades?|quarters?|mes(?:es)?|años?|monate?n?|jahre?n?|mois|années?|"
    r"ans|monthly|quarterly|annually|yearly|biannually|semiannually|bimonthly)\b",
    re.IGNORECASE,
)
_WORKING_UNITS = re.compile(r"\b(?:business|working|work)[ -]days?\b|\bwerktage?n?\b", re.I)
CALENDAR_SLACK = 0.1  # "3 months" is 84 to 92 days: within this share it is not a contradiction
WORKING_WEEK = 7 / 5  # calendar days per business day, at most (weekends)
WORKING_SLACK = 2.0  # days: a span of business days may start before a weekend


def _unit_class(quantity: Quantity) -> str:
    if _WORKING_UNITS.search(quantity.text):
        return "working"
    return "calendar" if _CALENDAR_UNITS.search(quantity.text) else "exact"


_CURRENCIES = frozenset({"usd", "eur", "gbp", "jpy", "inr"})
_FAHRENHEIT = frozenset({"°f", "° f", "degrees fahrenheit"})
ROUNDING = 0.03  # a conversion between units may be rounded by this share ("3 miles", "5 km")
BINARY = 0.05  # "2 GB" may be 2,048 MB (binary prefixes)
DEGREE = 1.0  # "82 °F" is 27.8 °C: "28 °C" restates it
POUND_KG = 0.4536
_POUND_WORD = re.compile(r"\b(?:pounds?|lbs?)\b", re.IGNORECASE)


def _factor(quantity: Quantity) -> float | None:
    """The unit the amount is written in, as its factor to the base unit."""
    return quantity.value / quantity.number if quantity.number else None


def inexact(claim: Quantity, evidence: Quantity) -> bool:
    """Whether two amounts in units that do not convert exactly may be the same: "3 months"
    and "90 days" (a month is 28 to 31 days), "two weeks" and "10 business days" (weekends),
    "3 miles" and "5 km" (a rounded conversion), "2 GB" and "2,048 MB" (binary prefixes),
    "82 °F" and "28 °C", "2.2 pounds" and "1 kg" (pounds of weight, not money). Neither
    proves nor contradicts the other."""
    if _weight_in_pounds(claim, evidence) or _weight_in_pounds(evidence, claim):
        return True
    if claim.kind != evidence.kind or claim.kind in ("count", "date", "year", "ordinal"):
        return False
    gap = abs(claim.value - evidence.value)
    if claim.kind == "temperature":
        return gap <= DEGREE
    if claim.kind == "data" and gap <= BINARY * max(claim.value, evidence.value):
        return True
    if _factor(claim) != _factor(evidence) and gap <= ROUNDING * max(claim.value, evidence.value):
        return True
    return claim.kind == "duration" and _calendar(claim, evidence)


def _weight_in_pounds(claim: Quantity, evidence: Quantity) -> bool:
    """ "2.2 pounds" read as money, against a weight it may be."""
    if claim.kind != "gbp" or evidence.kind != "mass" or not _POUND_WORD.search(claim.text):
        return False
    return abs(claim.number * POUND_KG - evidence.value) <= ROUNDING * evidence.value


def _calendar(claim: Quantity, evidence: Quantity) -> bool:
    units = {_unit_class(claim), _unit_class(evidence)}
    if units == {"exact"} or len(units) == 1:
        return False
    if "working" in units:
        working, other = (claim, evidence) if _unit_class(claim) == "working" else (evidence, claim)
        low = working.value * (1 - CALENDAR_SLACK)
        return low <= other.value <= working.value * WORKING_WEEK + WORKING_SLACK
    return abs(claim.value - evidence.value) <= CALENDAR_SLACK * max(claim.value, evidence.value)


def converted(claim: Quantity, evidence: Quantity) -> str:
    """ "five weeks (35 days)": the claim's amount in the evidence's unit, when both are
    durations written in different units; else the claim as written."""
    if claim.kind != "duration" or evidence.kind != "duration" or not evidence.number:
        return claim.text
    unit = _UNIT_TAIL.sub("", evidence.text).strip()
    factor = evidence.value / evidence.number
    if not unit or not factor or unit.lower() in claim.text.lower():
        return claim.text
    amount = claim.value / factor
    shown = f"{amount:.0f}" if abs(amount - round(amount)) < 1e-6 else f"{amount:.1f}"
    return f"{claim.text} (= {shown} {unit})"


_UNIT_TAIL = re.compile(r"^\D*?[\d.,]+\s*(?:-\s*)?|^\S+\s+")


def supported(claim: Quantity, evidence: list[Quantity]) -> bool:
    return any(matches(claim, e) for e in evidence)


def closest(claim: Quantity, evidence: list[Quantity]) -> Quantity | None:
    """The evidence quantity of the same kind nearest to ``claim``, to say what it says instead."""
    same = [e for e in evidence if e.kind == claim.kind]
    if not same:
        return None
    return min(same, key=lambda e: abs(e.value - claim.value))


_MASKS = tuple(itertools.product((True, False), repeat=3))


@dataclass
class QuantityIndex:
    """The evidence's quantities, sorted by value, so a lookup costs a bisection, not a scan."""

    items: list[Quantity]
    _values: list[float] = field(default_factory=list)
    _sorted: list[Quantity] = field(default_factory=list)
    _date_keys: set[tuple[int | None, ...]] = field(default_factory=set)
    _date_numbers: set[float] = field(default_factory=set)

    def __post_init__(self) -> None:
        # one of each amount as matches() reads it (value, kind, number, hedge): "0, 0, 0, ..."
        # a thousand times is one candidate, not a thousand
        plain: dict[tuple[float, str, float, bool], Quantity] = {}
        for q in self.items:
            if q.kind != "date":
                plain.setdefault((q.value, q.kind, q.number, q.hedged), q)
        keyed = sorted(
            ((v, q) for q in plain.values() for v in {q.value, q.number or q.value}),
            key=lambda vq: vq[0],
        )
        self._values = [v for v, _ in keyed]
        self._sorted = [q for _, q in keyed]
        # a claimed date matches an evidence date on the parts it states (_dates_match): each
        # evidence date is filed under its parts with any of them left open, so a lookup is
        # one set membership; a bare year or day matches an evidence date's year or day
        for q in self.items:
            if q.kind == "date":
                parts = _date_parts(q)
                self._date_keys.update(
                    tuple(p if keep else None for p, keep in zip(parts, mask, strict=True))
                    for mask in _MASKS
                )
                self._date_numbers.update((parts[0], parts[2]))

    def near(self, value: float, tolerance: float) -> list[Quantity]:
        low = bisect_left(self._values, value - abs(value) * tolerance - 1e-9)
        high = bisect_right(self._values, value + abs(value) * tolerance + 1e-9)
        return self._sorted[low:high]

    def supports(self, claim: Quantity) -> bool:
        if claim.kind == "date":
            return tuple(p or None for p in _date_parts(claim)) in self._date_keys
        if claim.kind in ("year", "count", "ordinal") and claim.value in self._date_numbers:
            return True
        tolerance = HEDGE_TOLERANCE + 0.01
        candidates = self.near(claim.value, tolerance) + self.near(claim.number, tolerance)
        return any(matches(claim, e) for e in candidates)
