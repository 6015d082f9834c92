"""The parts of :mod:`guard.offline` that were made cheaper, as they were before (commit
6c8760e): the reference the equivalence tests compare the modules against."""

from __future__ import annotations

import re

from guard.offline.align import _DEMONYM_SUFFIXES, _common_prefix
from guard.offline.notation import notations
from guard.offline.numbers import (
    _AGE_BAND,
    _DATE,
    _FRACTION,
    _FREQUENCY,
    _OF,
    _ORDINAL,
    _QUANTITY,
    _STOPWATCH,
    _TIMES,
    _YEARISH,
    FREQUENCIES,
    HEDGE_WINDOW,
    Quantity,
    _compound_durations,
    _date,
    _glued_letter_unit,
    _hedged,
    _kind,
    _labels,
    _may_hold_numbers,
    _notation_quantity,
    _ordinal,
    _overlaps,
    _unspaced,
    european,
    number_value,
)
from guard.offline.text import (
    _ABBREVIATIONS,
    _SENTENCE_END,
    _WORD,
    Span,
    _append_stripped,
    is_content,
    stem,
)
from guard.offline.times import (
    _HEDGE,
    _TIME,
    _TWENTY_FOUR,
    _WORD_TIMES,
    TimeOfDay,
    _day_parts,
    _end_text,
    _marked,
    _minutes,
)

_SEPARATORS = re.compile(r"[\s_:#/-]")


def written(wanted: str, normalized: str) -> bool:
    """``EvidenceIndex.writes`` once its cheap test passed (guard.offline.align)."""
    spaced = (_SEPARATORS.pattern + "?").join(re.escape(ch) for ch in wanted)
    return re.search(rf"(?<![\d.]){spaced}(?!\d)", normalized) is not None


def _extract(text: str) -> tuple[Quantity, ...]:
    if not _may_hold_numbers(text):
        return ()
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    for match in _DATE.finditer(text):
        quantity = _date(match)
        if quantity is not None:
            found.append(quantity)
            taken.append(match.span())
    for match in _STOPWATCH.finditer(text):
        hours = int(match.group("h") or match.group("h2") or 0)
        minutes = int(match.group("m") or match.group("m2") or 0)
        seconds = int(match.group("s") or 0)
        days = hours / 24 + minutes / 1440 + seconds / 86400
        found.append(Quantity(match.group(0), days, "duration", start=match.start()))
        taken.append(match.span())
    for match in _FREQUENCY.finditer(text):
        days = FREQUENCIES[match.group(0).lower()]
        found.append(Quantity(match.group(0), days, "duration", number=1.0, start=match.start()))
        taken.append(match.span())
    eu = european(text)
    for written in notations(text):  # issue 29: a semantic step, not a fast path
        if not _overlaps((written.start, written.end), sorted(taken)):
            quantity, end = _notation_quantity(text, written, eu)
            if quantity is not None:
                found.append(quantity)
                taken.append((written.start, end))
    taken.sort()
    for match in _ORDINAL.finditer(text):
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
    for match in _QUANTITY[eu].finditer(text):
        if match.group("num") and not _overlaps(match.span(), taken):
            quantity = _amount(text, match, eu)
            if quantity is not None:
                found.append(quantity)
    return tuple(_compound_durations(sorted(found, key=lambda q: q.start), text))


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
        hedged = _hedged(text[max(0, begin - HEDGE_WINDOW) : begin])
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
    hedged = _hedged(text[max(0, match.start() - HEDGE_WINDOW) : match.start()])
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
    kind = "year" if _YEARISH.fullmatch(num) else "count"
    hedged = _hedged(text[max(0, match.start() - HEDGE_WINDOW) : match.start()])
    if kind == "count" and _labels(text[max(0, begin - 12) : begin]):
        kind = "ordinal"  # "§ 2", "No. 5", "Section 3": a label, not an amount
    return Quantity(num, value, kind, hedged, value, begin)


def _times(text: str) -> tuple[TimeOfDay, ...]:
    """:func:`times`, read once per text (a one-claim answer is read as answer and claim)."""
    found = _day_parts(text)
    said = [t.span for t in found]
    clock24 = _TWENTY_FOUR.search(text) is not None
    for match in _TIME.finditer(text):
        if any(a < match.end() and match.start() < b for a, b in said):
            continue  # "9 Uhr abends" was read with its part of the day
        if match.group("word"):
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


def split_sentences(text: str) -> list[Span]:
    """Sentences of ``text``, each with its exact offsets, so a quote is a real span."""
    spans: list[Span] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if _ends_with_abbreviation(text[start : match.start()]):
            continue
        _append_stripped(spans, text, start, match.start())
        start = match.end()
    _append_stripped(spans, text, start, len(text))
    return spans


def _ends_with_abbreviation(chunk: str) -> bool:
    tail = chunk.rstrip("\"'”’)] ")
    if not tail.endswith("."):
        return False
    last = tail[:-1].rsplit(None, 1)[-1].lower() if tail[:-1].split() else ""
    return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())


def words(text: str) -> list[str]:
    """The words and numbers of ``text``, in order, as written."""
    return [w.strip("'’-") for w in _WORD.findall(text) if w.strip("'’-")]


def content_stems(text: str) -> list[str]:
    """The stems of the content words of ``text``, in order, without repeats."""
    seen: dict[str, None] = {}
    for word in words(text):
        for part in word.split("-") if "-" in word and word[0].isalpha() else [word]:
            if is_content(part):
                seen.setdefault(stem(part), None)
    return list(seen)


def _demonym_of(demonym: str, place: str) -> bool:
    """ "scottish" / "scotland", "indian" / "india", "english" / "england"."""
    for suffix in _DEMONYM_SUFFIXES:
        if demonym.endswith(suffix) and len(demonym) - len(suffix) >= 4:
            root = demonym[: len(demonym) - len(suffix)]
            shared = _common_prefix(root, place)
            return shared >= 4 and shared >= len(root) - 1
    return False
