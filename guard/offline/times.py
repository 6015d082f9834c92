"""Times of day and weekdays, with their ranges, in English, Spanish, German and French.

"8am", "8 a.m.", "8:00 PM", "20:00", "20 Uhr", "20h30", "20 h 30", "noon" are times of day; a time
written without am/pm below 13:00 may be either half of the day, so a :class:`TimeOfDay` holds
every minute it can mean. "Monday to Friday", "Mon-Fri", "de lunes a viernes", "weekdays" are
sets of weekdays. Ranges ("8am-6pm", "9 to 5") give both ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from guard.offline.anchored import Anchored
from guard.offline.lexicon import WEEKDAY_GROUPS, WEEKDAYS, alternation
from guard.offline.numbers import EXTRACT_CACHE_SIZE


def _clock(n: str) -> str:
    """One clock time; its groups end in ``n`` (a range has two)."""
    return (
        rf"(?P<h{n}>[01]?\d|2[0-3])"
        rf"(?:(?:\s(?=h\s?[0-5]\d))?(?P<sep{n}>[:.h])(?:(?<=h)\s)?(?P<m{n}>[0-5]\d))?"
        rf"(?:\s?(?P<ap{n}>a\.?\s?m\b\.?|p\.?\s?m\b\.?)|\s?(?P<uhr{n}>uhr|h)\b)?"
    )


_TIME = re.compile(
    r"(?:(?<![\w$€£.,:/-])|(?<=\dT))(?:"  # "2026-06-08T10:30" is a time too
    + _clock("1")
    + r"(?:\s?(?:-|–|—|to|until|till|through|a|bis|à|al|hasta)\s?"
    + _clock("2")
    + r")?"
    + r")(?![\w%$€£:/,.]\d|\w)"
    + r"|\b(?P<word>noon|midday|midnight|mediodía|medianoche|mittag|mitternacht|midi|minuit)\b",
    re.IGNORECASE,
)
_WORD_TIMES = {
    "noon": 720,
    "midday": 720,
    "mediodía": 720,
    "mittag": 720,
    "midi": 720,
    "midnight": 0,
    "medianoche": 0,
    "mitternacht": 0,
    "minuit": 0,
}
_TIMES = Anchored(_TIME, digits=True, words=_WORD_TIMES)  # see guard.offline.anchored
_DAY_ALT = alternation(WEEKDAYS)
_GROUP_ALT = alternation(WEEKDAY_GROUPS)
_WEEKDAY = re.compile(
    rf"\b(?P<first>{_DAY_ALT})s?\.?\b(?:\s?(?:-|–|—|to|until|till|through|thru|a|al|bis|à|au)"
    rf"\s?(?P<last>{_DAY_ALT})s?\.?\b)?|\b(?P<group>{_GROUP_ALT})\b",
    re.IGNORECASE,
)
_WEEKDAYS = Anchored(_WEEKDAY, words=[*WEEKDAYS, *WEEKDAY_GROUPS])
_MOVED = re.compile(
    r"\b(?:mov|chang|switch|postpon|reschedul|push|shift|brought|verschob|verlegt|cambi|pas[oó]|"
    r"déplac|report)\w*\s+(?:\w+\s+){0,3}?(?:from|von|de|del|du)\s+(?:\w+\s+)?$",
    re.IGNORECASE,
)
_SHORT_DAY_NAMES = frozenset(
    {"mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun"}
)


HEDGE_MINUTES = 30
_HEDGE = re.compile(
    alternation(
        [
            "about",
            "around",
            "approximately",
            "roughly",
            "shortly after",
            "just after",
            "just before",
            "shortly before",
            "kurz nach",
            "kurz vor",
            "gegen",
            "etwa",
            "vers",
            "environ",
            "hacia",
            "sobre",
            "alrededor de",
            "poco después de",
            "c.",
            "~",
        ]
    )
    + r"\s*(?:at\s*|um\s*|à\s*)?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TimeOfDay:
    """A time of day as written, and every minute after midnight it can mean."""

    text: str
    minutes: frozenset[int]
    span: tuple[int, int] = (0, 0)
    hedged: bool = False  # "around 8", "kurz nach 1 Uhr": within HEDGE_MINUTES

    def agrees(self, other: TimeOfDay) -> bool:
        if self.minutes & other.minutes:
            return True
        if not (self.hedged or other.hedged):
            return False
        return any(
            abs(a - b) % 1440 <= HEDGE_MINUTES or abs(a - b) % 1440 >= 1440 - HEDGE_MINUTES
            for a in self.minutes
            for b in other.minutes
        )


@dataclass(frozen=True)
class Weekdays:
    """Weekdays as written ("Monday to Friday") and the days they name (0 = Monday)."""

    text: str
    days: frozenset[int]
    start: int = 0


# an ISO 8601 date-time: its time follows a glued "T", and its UTC offset is no time of day
_ISO_STAMP = re.compile(
    r"(?<=\d{4}-\d{2}-\d{2})T(?P<time>\d{2}:\d{2})(?P<rest>(?::\d{2}(?:\.\d+)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?)"
)


def _iso_spaced(match: re.Match[str]) -> str:
    """The date-time with a space for its "T" and blanks for its seconds and offset, so every
    other time keeps its place in the text."""
    return f" {match.group('time')}" + " " * len(match.group("rest"))


def times(text: str) -> list[TimeOfDay]:
    """Every time of day in ``text``; each end of a range is one time."""
    return list(_times(text))


@lru_cache(maxsize=EXTRACT_CACHE_SIZE)
def _times(text: str) -> tuple[TimeOfDay, ...]:
    """:func:`times`, read once per text (a one-claim answer is read as answer and claim)."""
    text = _ISO_STAMP.sub(_iso_spaced, text)  # "2026-08-14T09:35:00+01:00": 09:35
    found = _day_parts(text)
    said = [t.span for t in found]
    clock24 = _TWENTY_FOUR.search(text) is not None
    for match in _TIMES.finditer(text):
        if said and any(a < match.end() and match.start() < b for a, b in said):
            continue  # "9 Uhr abends" was read with its part of the day
        word, h2, ap1, uhr1, sep1 = match.group("word", "h2", "ap1", "uhr1", "sep1")
        if not (word or h2 or ap1 or uhr1 or sep1 in (":", "h")):
            continue  # the common case first: one end, unmarked ("10 people"): a number
        if word:
            found.append(
                TimeOfDay(
                    match.group(0),
                    frozenset({_WORD_TIMES[match.group("word").lower()]}),
                    match.span(),
                )
            )
            continue
        ends = ["1", "2"] if match.group("h2") else ["1"]
        if not any(_marked(match, n) for n in ends):
            continue  # "1-2 days", "pages 10-12": numbers, not times
        hedged = bool(_HEDGE.search(text[max(0, match.start() - 24) : match.start()]))
        for n in ends:
            minutes = _minutes(match, n, clock24)
            if minutes is None:
                break
            found.append(TimeOfDay(_end_text(match, n), minutes, match.span(), hedged))
    return tuple(found)


# an hour with the part of the day it falls in, in Spanish, French and German: "nueve de la
# noche" is 21:00, "4 heures de l'après-midi" 16:00, "neun Uhr abends" 21:00
def _one_to_twelve(words: str) -> dict[str, int]:
    """The words for one to twelve, in order, with their values."""
    return {w: n for n, w in enumerate(words.split(), 1)}


_HOUR_WORDS = {
    **_one_to_twelve("una dos tres cuatro cinco seis siete ocho nueve diez once doce"),
    **_one_to_twelve("une deux trois quatre cinq six sept huit neuf dix onze douze"),
    **_one_to_twelve("eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf"),
    "ein": 1,
}
_PARTS = {
    "de la mañana": 0,
    "de la madrugada": 0,
    "de la tarde": 12,
    "de la noche": 12,
    "du matin": 0,
    "de l'après-midi": 12,
    "de l’après-midi": 12,
    "du soir": 12,
    "morgens": 0,
    "früh": 0,
    "vormittags": 0,
    "nachmittags": 12,
    "abends": 12,
}
_NIGHT = frozenset({"de la noche", "de la madrugada", "du soir", "abends"})
# minutes past or to the hour: "nueve y media", "diez menos diez", "neuf heures moins le quart"
_MINUTE_WORDS = {
    "cinco": 5, "diez": 10, "cuarto": 15, "veinte": 20, "veinticinco": 25, "media": 30,
    "cinq": 5, "dix": 10, "quart": 15, "le quart": 15, "vingt": 20, "vingt-cinq": 25,
    "demie": 30,
}  # fmt: skip
_DAY_PART = re.compile(
    rf"\b(?P<h>\d{{1,2}}|{alternation(_HOUR_WORDS)})(?:\s+heures?)?"
    rf"(?:\s+(?P<sign>y|menos|et|moins)\s+(?P<min>{alternation(_MINUTE_WORDS)}))?"
    rf"(?:\s+(?:heures?|h|uhr))?\s+(?P<part>{alternation(_PARTS)})\b",
    re.IGNORECASE,
)

_DAY_PARTS = Anchored(_DAY_PART, digits=True, words=_HOUR_WORDS)


def _day_parts(text: str) -> list[TimeOfDay]:
    """The hours of ``text`` said with their part of the day (see ``_DAY_PART``)."""
    found: list[TimeOfDay] = []
    for match in _DAY_PARTS.finditer(text):
        raw = match.group("h").lower()
        hour = int(raw) if raw.isdigit() else _HOUR_WORDS[raw]
        if not 1 <= hour <= 12:
            continue
        part = match.group("part").lower()
        if hour == 12:  # "doce de la noche" is midnight, "doce de la mañana" noon
            hour = 0 if part in _NIGHT else 12
        else:
            hour += _PARTS[part]
        minute = _MINUTE_WORDS[match.group("min").lower()] if match.group("min") else 0
        if (match.group("sign") or "").lower() in ("menos", "moins"):
            minute = -minute  # "diez menos diez de la noche": ten to ten, 21:50
        found.append(
            TimeOfDay(match.group(0), frozenset({(hour * 60 + minute) % 1440}), match.span())
        )
    return found


def _marked(match: re.Match[str], n: str) -> bool:
    sep = match.group(f"sep{n}")
    return bool(match.group(f"ap{n}") or match.group(f"uhr{n}") or sep in (":", "h"))


def _end_text(match: re.Match[str], n: str) -> str:
    groups = [g for g in (f"h{n}", f"sep{n}", f"m{n}", f"ap{n}", f"uhr{n}") if match.group(g)]
    start = match.start(f"h{n}")
    text = match.string[start : max(match.end(g) for g in groups)].strip()
    return text[:-1] if text.endswith(".") and text.count(".") == 1 else text  # "8pm."


# a text that writes 13:00-23:59 or a leading zero uses the 24-hour clock: its "10:00" is
# morning ("10:00-18:00"), not maybe 22:00
_TWENTY_FOUR = re.compile(
    r"(?<![\d:.])(?:1[3-9]|2[0-3]|0\d)(?::|\s?h\s?)[0-5]\d(?!\s?[ap]\.?m)", re.IGNORECASE
)


def _minutes(match: re.Match[str], n: str, clock24: bool = False) -> frozenset[int] | None:
    hour, minute = int(match.group(f"h{n}")), int(match.group(f"m{n}") or 0)
    if match.group(f"sep{n}") == "." and not match.group(f"ap{n}"):
        return None  # "5.50" is an amount; "8.30pm" is a time
    meridiem = (match.group(f"ap{n}") or "").lower()
    if meridiem:
        if hour > 12:
            return None
        base = hour % 12 + (12 if meridiem.startswith("p") else 0)
        return frozenset({base * 60 + minute})
    if (
        hour == 0
        or hour > 12
        or match.group(f"uhr{n}")
        or (clock24 and match.group(f"sep{n}") in (":", "h"))
    ):
        return frozenset({hour * 60 + minute})
    return frozenset({hour * 60 + minute, (hour % 12 + 12) * 60 + minute})


def weekdays(text: str) -> list[Weekdays]:
    """Every weekday or weekday range in ``text`` ("Mon-Fri" gives Monday to Friday)."""
    found: list[Weekdays] = []
    for match in _WEEKDAYS.finditer(text):
        if match.group("group"):
            found.append(
                Weekdays(
                    match.group(0), WEEKDAY_GROUPS[match.group("group").lower()], match.start()
                )
            )
            continue
        first_text = match.group("first")
        if first_text.lower() in _SHORT_DAY_NAMES and not first_text[0].isupper():
            continue  # "sat", "sun", "wed" in lower case are words
        first = WEEKDAYS[first_text.lower()]
        last_text = match.group("last")
        if last_text is None:
            found.append(Weekdays(match.group(0), frozenset({first}), match.start()))
            continue
        last = WEEKDAYS[last_text.lower()]
        if _MOVED.search(text, max(0, match.start() - 40), match.start()):
            found.append(Weekdays(match.group(0), frozenset({first, last}), match.start()))
            continue  # "moved from Tuesday to Thursday": two days, not the days between
        span = (last - first) % 7
        found.append(
            Weekdays(
                match.group(0), frozenset((first + i) % 7 for i in range(span + 1)), match.start()
            )
        )
    return found
