"""guard.offline.text's primitives against the regex forms they replace."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from guard.offline import text

BLANKS = st.sampled_from(
    [
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x85",
        "\u00a0",
        "\u2003",
        "\u2028",
        "\u3000",
        "\u200b",
        "\ufeff",
    ]
)
PIECES = st.one_of(BLANKS, st.text(max_size=6), st.sampled_from(["’", "“", "”", "‘", "É", "ß"]))


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=20).map("".join))
def test_normalize_collapses_blanks_as_the_regex_did(value: str) -> None:
    folded = text.fold(value.lower())
    folded = folded.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    assert text.normalize(value) == re.sub(r"\s+", " ", folded).strip()


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.one_of(PIECES, st.sampled_from(["'", "-", "’", "well-known", "x2", "_"])), max_size=20
    ).map("".join)
)
def test_words_need_no_stripping(value: str) -> None:
    found = text._WORD.findall(value)
    assert text.words(value) == [w.strip("'’-") for w in found if w.strip("'’-")]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FFFF), max_size=30))
def test_fold_drops_exactly_the_combining_marks(value: str) -> None:
    decomposed = unicodedata.normalize("NFKD", value.replace("ß", "ss"))
    kept = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    assert text.fold(value) == (value if value.isascii() else kept)


def test_fold_folds_accents_of_every_latin_letter() -> None:
    letters = "".join(chr(c) for c in range(0xC0, 0x250) if chr(c).isalpha())
    decomposed = unicodedata.normalize("NFKD", letters.replace("ß", "ss"))
    assert text.fold(letters) == "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    assert text.fold("María González, Köln, Straße") == "Maria Gonzalez, Koln, Strasse"
