"""The fast paths of the offline checks give exactly what the plain algorithms gave.

Each reference is the step as it was before it was made cheaper (copied verbatim into
``tests/unit/reference_offline.py``); hypothesis draws number-dense texts rich in what the
fast paths decide on (digits, spaces, dots, hedges, labels, units, ordinal endings, clock
marks, abbreviations, separators)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from guard.offline import align, compact, numbers, text, times
from guard.offline.compact import Compact
from tests.unit import reference_offline

_TOKENS = (
    "1", "2", "12", "30", "2020", "1999", "4.5", "1,000", "3,5", "10:30", "8h", "8h30", "14m 03s",
    "9 pm", "7am", "1-2", "20:00", "21st", "3rd", "third", "twenty-first", "§", "#", "No.",
    "Section", "Level", "gate", "Step", "about", "over", "under-", "nearly", "~", "ca.", "some",
    "$5", "€3", "5%", "5 km", "2 million", "three times", "weekly", "May", "March", "June 5,",
    "5 de marzo", "of", "a", "two", "days", "Dr.", "e.g.", "A.", "J.", "Mr", ")", "'", "’",
    "é", "x", "Code", "AB-12", "st", "th", "m", "h", "s", ".", ",", ":", "-",
)  # fmt: skip
_GLUES = st.sampled_from((" ", " ", " ", "", ". ", ", ", "-", "  ", "\n", "\t"))
_DENSE = st.lists(st.tuples(st.sampled_from(_TOKENS), _GLUES), max_size=40).map(
    lambda pairs: "".join(token + glue for token, glue in pairs)
)
_TEXTS = _DENSE | st.text(max_size=80)


@settings(max_examples=500, deadline=None)
@given(_TEXTS)
def test_quantities_equal_the_reference(sample: str) -> None:
    assert numbers._extract.__wrapped__(sample) == reference_offline._extract(sample)


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_times_equal_the_reference(sample: str) -> None:
    assert times._times.__wrapped__(sample) == reference_offline._times(sample)


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_sentences_words_and_stems_equal_the_reference(sample: str) -> None:
    assert text.split_sentences(sample) == reference_offline.split_sentences(sample)
    assert text.words(sample) == reference_offline.words(sample)
    assert text.content_stems(sample) == reference_offline.content_stems(sample)
    long = sample * (text.CACHED_FROM // max(len(sample), 1) + 1)  # read through the cache
    assert text.words(long) == text.words(long) == reference_offline.words(long)
    assert text.content_stems(long) == reference_offline.content_stems(long)


_CODE_CHARS = st.sampled_from(("a", "b", "1", "2", ".", "é", "ß"))
_EVIDENCE_CHARS = st.sampled_from(
    ("a", "b", "1", "2", ".", " ", "  ", "-", "_", ":", "#", "/", "\n")
)


_GAPS = st.sampled_from(("", "", " ", "  ", "-", "_", ":", "#", "/", "\n", " - ", "x", "."))


@st.composite
def _code_and_evidence(draw: st.DrawFn) -> tuple[str, str]:
    """A code, and evidence writing its characters with drawn gaps between (one separator
    or none is written; two, or a letter, are not), after and before drawn text."""
    wanted = "".join(draw(st.lists(_CODE_CHARS, min_size=1, max_size=6)))
    gaps = draw(st.lists(_GAPS, min_size=len(wanted), max_size=len(wanted)))
    written = "".join(ch + gap for ch, gap in zip(wanted, gaps, strict=True))
    around = st.lists(_EVIDENCE_CHARS, max_size=8).map("".join)
    return wanted, draw(around) + written + draw(around)


@settings(max_examples=600, deadline=None)
@given(_code_and_evidence())
def test_written_codes_equal_the_reference(case: tuple[str, str]) -> None:
    wanted, evidence = case
    expected = reference_offline.written(wanted, evidence)
    assert Compact(evidence).writes(wanted) == expected
    assert compact.written_by_pattern(wanted, evidence) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_CODE_CHARS, min_size=1, max_size=6).map("".join),
    st.lists(_EVIDENCE_CHARS, max_size=40).map("".join),
)
def test_codes_in_any_evidence_equal_the_reference(wanted: str, evidence: str) -> None:
    assert Compact(evidence).writes(wanted) == reference_offline.written(wanted, evidence)


def test_a_long_run_of_initials_is_read_once() -> None:
    """ "A. A. A. ..." over a window: each chunk grows, and was copied and split every time."""
    sample = "A. " * 1300
    assert text.split_sentences(sample) == reference_offline.split_sentences(sample)
    wanted = "a." * 1300
    evidence = "a. " * 40 + "a." * 1300 + "x"
    assert Compact(evidence).writes(wanted) == reference_offline.written(wanted, evidence)


_STEMS = st.lists(
    st.sampled_from(
        ("scot", "tish", "land", "ind", "ian", "ians", "an", "ish", "ese", "ic", "i", "a")
    ),
    max_size=5,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_STEMS, _STEMS)
def test_demonyms_equal_the_reference(demonym: str, place: str) -> None:
    assert align._demonym_of(demonym, place) == reference_offline._demonym_of(demonym, place)
