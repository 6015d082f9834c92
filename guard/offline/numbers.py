"""Quantities in text, normalised so that equal amounts compare equal.

"30-day" and "30 days", "2.1 million" and "2,100,000", "$5" and "5 dollars", "21st" and
"twenty-first", "two weeks" and "14 days", "March 5, 2020" and "5 March 2020" all normalise to
the same :class:`Quantity`. A claim's quantity is supported when the evidence holds an equal one
(within a tolerance when the claim hedges with "about", "around" ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS = {
    # durations, in days
    "second": ("duration", 1 / 86400), "minute": ("duration", 1 / 1440),
    "hour": ("duration", 1 / 24), "day": ("duration", 1.0), "night": ("duration", 1.0),
    "week": ("duration", 7.0), "fortnight": ("duration", 14.0), "month": ("duration", 30.0),
    "year": ("duration", 365.0), "decade": ("duration", 3650.0),
    "business day": ("duration", 1.0), "working day": ("duration", 1.0),
    # money
    "dollar": ("usd", 1.0), "usd": ("usd", 1.0), "buck": ("usd", 1.0), "cent": ("usd", 0.01),
    "euro": ("eur", 1.0), "eur": ("eur", 1.0), "pound": ("gbp", 1.0), "gbp": ("gbp", 1.0),
    "yen": ("jpy", 1.0), "rupee": ("inr", 1.0),
    # percentages
    "percent": ("percent", 1.0), "per cent": ("percent", 1.0), "%": ("percent", 1.0),
    "percentage point": ("percent", 1.0),
    # lengths, weights, data
    "km": ("length", 1000.0), "kilometer": ("length", 1000.0), "kilometre": ("length", 1000.0),
    "meter": ("length", 1.0), "metre": ("length", 1.0), "m": ("length", 1.0),
    "cm": ("length", 0.01), "mm": ("length", 0.001), "mile": ("length", 1609.344),
    "foot": ("length", 0.3048), "feet": ("length", 0.3048), "ft": ("length", 0.3048),
    "inch": ("length", 0.0254), "kg": ("mass", 1.0), "kilogram": ("mass", 1.0),
    "gram": ("mass", 0.001), "g": ("mass", 0.001), "lb": ("mass", 0.4536),
    "ton": ("mass", 1000.0), "tonne": ("mass", 1000.0),
    "gb": ("data", 1e9), "mb": ("data", 1e6), "tb": ("data", 1e12), "kb": ("data", 1e3),
}
_CURRENCY_SIGNS = {"$": "usd", "us$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₹": "inr"}
_SCALES = {"hundred": 1e2, "thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6,
           "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12, "tn": 1e12}
_WORD_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "a dozen": 12, "dozen": 12,
    "a hundred": 100, "a thousand": 1000, "half a": 0.5,
}
_ORDINAL_WORDS = {
    "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
    "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50, "hundredth": 100,
}
_ORDINAL_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
                 "seventy": 70, "eighty": 80, "ninety": 90}
_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"]
)}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_LOWER_WORD = re.compile(r"[a-z]+")
_NUMBER_WORDS = frozenset(
    {w for key in _WORD_NUMBERS for w in key.split()} | set(_ORDINAL_WORDS) | set(_ORDINAL_TENS)
) - {"a", "an"}
_HEDGES = ("about", "around", "approximately", "approx", "roughly", "nearly", "almost", "some",
           "over", "more than", "less than", "under", "up to", "~", "circa", "c.", "estimated",
           "an estimated", "close to")
HEDGE_TOLERANCE = 0.1

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_WORDNUM = "|".join(sorted((re.escape(w) for w in _WORD_NUMBERS), key=len, reverse=True))
_TENS = "|".join(_ORDINAL_TENS)
_UNITS_WORDS = "one|two|three|four|five|six|seven|eight|nine"
_UNIT_ALT = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_SCALE_ALT = "|".join(sorted(_SCALES, key=len, reverse=True))
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))

_DATE = re.compile(
    rf"\b(?P<m1>{_MONTH_ALT})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y1>\d{{4}}))?\b"
    rf"|\b(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH_ALT})\.?(?:,?\s+(?P<y2>\d{{4}}))?\b"
    rf"|\b(?P<y3>\d{{4}})-(?P<m3>\d{{2}})-(?P<d3>\d{{2}})\b"
    rf"|\b(?P<m4>{_MONTH_ALT})\.?,?\s+(?P<y4>\d{{4}})\b",
    re.IGNORECASE,
)
_QUANTITY = re.compile(
    rf"(?P<sign>US\$|[$€£¥₹])?\s?"
    rf"(?P<num>{_NUM}|\b(?:{_TENS})[- ](?:{_UNITS_WORDS})\b|\b(?:{_WORDNUM})\b)"
    rf"(?:\s?(?P<scale>{_SCALE_ALT})\b)?"
    rf"(?:(?:\s|-)?(?P<unit>{_UNIT_ALT})(?:s|es)?\b|\s?(?P<pct>%))?"
    rf"(?:\s?(?P<era>BCE|BC|AD|CE)\b)?",
    re.IGNORECASE,
)
_ORDINAL = re.compile(
    rf"\b(?P<n>\d+)(?:st|nd|rd|th)\b|\b(?:(?P<tens>{_TENS})-)?(?P<w>"
    + "|".join(_ORDINAL_WORDS) + r"|first|second)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    """A normalised amount: ``value`` in the base unit of ``kind``.

    kinds: ``count`` (a bare number), ``year``, ``date`` (``value`` = yyyymmdd with 00 for an
    unknown part), ``ordinal``, ``percent``, ``duration`` (days), a currency code, ``length``
    (metres), ``mass`` (kg), ``data`` (bytes).
    """

    text: str
    value: float
    kind: str
    hedged: bool = False

    def describe(self) -> str:
        return self.text


def extract(text: str) -> list[Quantity]:
    """Every quantity in ``text``: dates first, then amounts and ordinals outside the dates."""
    if not _may_hold_numbers(text):
        return []
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    for match in _DATE.finditer(text):
        quantity = _date(match)
        if quantity is not None:
            found.append(quantity)
            taken.append(match.span())
    for match in _ORDINAL.finditer(text):
        if not _overlaps(match.span(), taken):
            ordinal = _ordinal(match)
            if ordinal is not None:
                found.append(ordinal)
                taken.append(match.span())
    for match in _QUANTITY.finditer(text):
        if match.group("num") and not _overlaps(match.span(), taken):
            quantity = _amount(text, match)
            if quantity is not None:
                found.append(quantity)
    return found


def _may_hold_numbers(text: str) -> bool:
    """A cheap pre-check: a digit, or a number word ("two", "third", "dozen")."""
    if any(c.isdigit() for c in text):
        return True
    return not _NUMBER_WORDS.isdisjoint(_LOWER_WORD.findall(text.lower()))


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def _date(match: re.Match[str]) -> Quantity | None:
    groups = match.groupdict()
    month_text = groups["m1"] or groups["m2"] or groups["m3"] or groups["m4"] or ""
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower(), 0)
    day = int(groups["d1"] or groups["d2"] or groups["d3"] or 0)
    year = int(groups["y1"] or groups["y2"] or groups["y3"] or groups["y4"] or 0)
    if not 1 <= month <= 12 or day > 31:
        return None
    if not month_text.isdigit() and not month_text[0].isupper():
        return None  # "may", "march" in lower case are verbs
    return Quantity(match.group(0), float(year * 10000 + month * 100 + day), "date")


def _ordinal(match: re.Match[str]) -> Quantity | None:
    if match.group("n"):
        return Quantity(match.group(0), float(match.group("n")), "ordinal")
    word = match.group("w").lower()
    tens = _ORDINAL_TENS.get((match.group("tens") or "").lower(), 0)
    if word in ("first", "second"):
        if not tens:
            return None  # "first" and "second" are too idiomatic alone ("at first", "a second")
        return Quantity(match.group(0), float(tens + (1 if word == "first" else 2)), "ordinal")
    return Quantity(match.group(0), float(tens + _ORDINAL_WORDS[word]), "ordinal")


def _amount(text: str, match: re.Match[str]) -> Quantity | None:
    start = match.start("num")
    glued = start > 0 and (text[start - 1].isalpha() or text[start - 1] in "-/.")
    if glued and not (match.group("sign") and start == match.end("sign")):
        return None  # part of a word or code: "COVID-19", "A4", "v2.1"
    value = _number_value(match.group("num"))
    if value is None:
        return None
    word_number = not match.group("num")[0].isdigit()
    kind, value = _kind(match, value)
    if word_number and kind == "count" and not match.group("scale"):
        return None  # "one", "a", "ten" alone are too often not amounts
    hedged = _hedged(text[: match.start()])
    return Quantity(match.group(0).strip(), value, kind, hedged)


def _number_value(raw: str) -> float | None:
    raw = raw.lower()
    if raw[0].isdigit():
        return float(raw.replace(",", ""))
    parts = re.split(r"[- ]", raw)
    if len(parts) == 2 and parts[0] in _ORDINAL_TENS and parts[1] in _WORD_NUMBERS:
        return float(_ORDINAL_TENS[parts[0]] + _WORD_NUMBERS[parts[1]])
    number = _WORD_NUMBERS.get(raw)
    return float(number) if number is not None else None


def _kind(match: re.Match[str], value: float) -> tuple[str, float]:
    scale_word = (match.group("scale") or "").lower()
    sign = (match.group("sign") or "").lower()
    unit_word = (match.group("unit") or match.group("pct") or "").lower()
    if scale_word in ("m", "b", "k") and not sign:
        if unit_word:
            return "count", value
        scale_word = ""
        unit_word = "m" if (match.group("scale") or "") == "m" else ""
    value *= _SCALES.get(scale_word, 1.0)
    if sign:
        return _CURRENCY_SIGNS.get(sign, "usd"), value
    if unit_word:
        kind, factor = _UNITS[unit_word]
        return kind, value * factor
    era = (match.group("era") or "").upper()
    if era:
        return "year", -value if era.startswith("B") else value
    raw = match.group("num")
    if not scale_word and re.fullmatch(r"1\d{3}|20\d{2}", raw):
        return "year", value
    return "count", value


def _hedged(before: str) -> bool:
    tail = before.lower().rstrip()[-24:]
    return any(tail.endswith(h) for h in _HEDGES)


def matches(claim: Quantity, evidence: Quantity) -> bool:
    """Whether ``evidence`` states the amount ``claim`` states."""
    if claim.kind == "date" or evidence.kind == "date":
        return _dates_match(claim, evidence)
    if not _kinds_compatible(claim.kind, evidence.kind):
        return False
    if claim.value == evidence.value:
        return True
    tolerance = HEDGE_TOLERANCE if (claim.hedged or evidence.hedged) else 0.005
    return abs(claim.value - evidence.value) <= tolerance * max(abs(evidence.value), 1e-9)


def _kinds_compatible(claim: str, evidence: str) -> bool:
    loose = {"count", "year", "ordinal"}
    return claim == evidence or (claim in loose and evidence in loose) or (
        "count" in (claim, evidence))


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
    return all(c == e or not c for c, e in zip(_date_parts(claim), _date_parts(evidence),
                                               strict=True))


def supported(claim: Quantity, evidence: list[Quantity]) -> bool:
    return any(matches(claim, e) for e in evidence)


def closest(claim: Quantity, evidence: list[Quantity]) -> Quantity | None:
    """The evidence quantity of the same kind nearest to ``claim``, to say what it says instead."""
    same = [e for e in evidence if e.kind == claim.kind]
    if not same:
        return None
    return min(same, key=lambda e: abs(e.value - claim.value))
