"""guard.offline.anchored: a pattern tried only where a match can start finds exactly what
``finditer`` finds, on realistic text, on hostile text and on text built from the patterns'
own words in every case, with the characters whose case the engine reads its own way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard.offline import numbers, times
from guard.offline.anchored import Anchored
from guard.offline.lexicon import MONTHS, WEEKDAY_GROUPS, WEEKDAYS, WORD_NUMBERS

ROOT = Path(__file__).resolve().parents[2]
ANCHORED = {
    "dates": numbers._DATES,
    "stopwatches": numbers._STOPWATCHES,
    "frequencies": numbers._FREQUENCIES,
    "ordinals": numbers._ORDINALS,
    "quantities": numbers._QUANTITIES[False],
    "quantities (eu)": numbers._QUANTITIES[True],
    "times": times._TIMES,
    "weekdays": times._WEEKDAYS,
    "day parts": times._DAY_PARTS,
}


def found(anchored: Anchored, text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in anchored.finditer(text)]


def expected(anchored: Anchored, text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in anchored.pattern.finditer(text)]


def realistic_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted((ROOT / "bench" / "data").glob("realistic*.jsonl")):
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            texts.append(str(row.get("output", "")))
            context = row.get("context", "")
            for item in context if isinstance(context, list) else [context]:
                texts.append(item.get("text", "") if isinstance(item, dict) else str(item))
    return [t for t in texts if t]


def test_realistic_texts_give_the_matches_of_finditer() -> None:
    texts = realistic_texts()
    assert len(texts) > 500
    compared = 0
    for name, anchored in ANCHORED.items():
        for text in texts:
            assert found(anchored, text) == expected(anchored, text), (name, text[:120])
            compared += bool(expected(anchored, text))
    assert compared > 300  # the texts do hold amounts, dates and times


# the pieces of the generated texts: the patterns' own words in any case, numbers written
# every way, signs, every kind of blank, and the letters whose case the engine reads its own
# way ("ſ" is an "s" to it, "K" (Kelvin) a "k", "İ" lower-cases to two characters)
LEADS = sorted(
    {*WORD_NUMBERS, *MONTHS, *WEEKDAYS, *WEEKDAY_GROUPS, *numbers.FREQUENCIES}
    | {*times._WORD_TIMES, *times._HOUR_WORDS, "hundred", "and", "first", "third", "twenty"}
    | {"de la noche", "du soir", "abends", "heures", "uhr", "pm", "a.m.", "h", "km", "kg"}
    | {"percent", "%", "million", "BC", "AD", "of", "st", "th", "to", "until", "-", "–"}
)
PIECES = st.one_of(
    st.sampled_from(LEADS).map(str),
    st.sampled_from(LEADS).map(str.upper),
    st.sampled_from(LEADS).map(str.title),
    st.integers(0, 99999).map(str),
    st.sampled_from(["1,234.5", "1.234,50", "2,5", "12:30", "8.30", "2026-06-08", "3/4/2026"]),
    st.sampled_from(["$", "US$", "us$", "€", "£", "¥", "₹", "٣", "²"]),
    st.sampled_from([" ", " ", " ", "\t", "\n", "\x1c", "\u00a0", "\u202f", ""]),
    st.sampled_from([".", ",", ";", "(", ")", "/", ":", "'", "_", "T", "a", "x"]),
    st.sampled_from(["ſ", "ı", "İ", "\u212a", "µ", "é", "ß", "ü", "Ñ", "ς", "Σ"]),
    st.text(alphabet="aeimnostuvwy", min_size=1, max_size=5),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_built_texts_give_the_matches_of_finditer(text: str) -> None:
    for name, anchored in ANCHORED.items():
        assert found(anchored, text) == expected(anchored, text), name


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_gives_the_matches_of_finditer(text: str) -> None:
    for name, anchored in ANCHORED.items():
        assert found(anchored, text) == expected(anchored, text), name


@pytest.mark.parametrize(
    "text",
    [
        "ſeven days",  # the engine reads "ſ" as "s": the pattern finds "seven"
        "S\u212aIP TWO",  # Kelvin sign
        "İ paid fıve dollars",
        "Monday, ſunday and TUESDAY",
    ],
)
def test_characters_with_their_own_case_rules_are_found_as_before(text: str) -> None:
    for anchored in ANCHORED.values():
        assert found(anchored, text) == expected(anchored, text)
    assert found(numbers._QUANTITIES[False], "ſeven days") != []


def test_a_match_starts_where_it_is_allowed_to() -> None:
    pattern = re.compile(r"\s?(?:\d+|\bten\b)", re.IGNORECASE)
    anchored = Anchored(pattern, digits=True, words=["ten"], blank=True)
    text = "often ten, TEN and 10 in x10"
    assert found(anchored, text) == expected(anchored, text)
    assert [m.group(0) for m in anchored.finditer(text)] == [" ten", " TEN", " 10", "10"]
    # a word that only ends another is not a start: "often" holds "ten"
    assert Anchored(pattern, words=["ten"])._starts("often") == []
