"""guard.offline.text's primitives against the regex forms they replace."""

from __future__ import annotations

import re

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
