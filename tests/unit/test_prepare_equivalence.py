"""The fast paths of the preparation steps give exactly what the plain algorithms gave.

Each reference is the step as it was before it was made cheaper (copied verbatim into
``tests/unit/reference_*.py``); hypothesis draws texts rich in the characters each fast path
decides on (blanks, line breaks, controls, tags, marks, look-alikes)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from guard.prepare import sanitize as fast_sanitize
from tests.unit import reference_sanitize

_TRICKY = (
    " \t\n\r\x0b\x0c\x85\u2028\u2029\x00\x1b\x7f\x9f\u00a0\u3000\u200b\u202e\ufeff\ufb01"
    "\uff21\uff10\u0301\u0308\u0327é\U0001f3f4\U000e0041\U000e0067\U000e007f\ud800\udfff"
    "aZ.?!;[]|1"
)
_TEXTS = st.text(alphabet=st.sampled_from(_TRICKY), max_size=120) | st.text(max_size=80)


@settings(max_examples=400)
@given(_TEXTS)
def test_sanitize_equals_the_reference(text: str) -> None:
    assert fast_sanitize.sanitize(text) == reference_sanitize.sanitize(text)


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(" \t\n\r\u3000ab"), max_size=80))
def test_collapse_whitespace_equals_the_reference(text: str) -> None:
    assert fast_sanitize.collapse_whitespace(text) == reference_sanitize.collapse_whitespace(text)
