"""Sanitizing removes invisible and control characters and keeps the text's meaning."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from guard.prepare.sanitize import sanitize


class TestRemoval:
    def test_control_characters_are_removed_but_newline_and_tab_kept(self) -> None:
        assert sanitize("a\x00b\x07c\x1bd\x7fe\nf\tg") == "abcde\nf\tg"

    def test_carriage_returns_become_newlines(self) -> None:
        assert sanitize("one\r\ntwo\rthree") == "one\ntwo\nthree"

    def test_zero_width_characters_are_removed(self) -> None:
        assert sanitize("ig\u200bnore\u200c pre\u200dvious\u2060\ufeff") == "ignore previous"

    def test_soft_hyphen_is_removed(self) -> None:
        assert sanitize("refund\u00adable") == "refundable"

    def test_bidi_overrides_and_isolates_are_removed(self) -> None:
        text = "\u202eevil\u202c \u2066x\u2069 \u200fy\u200e"
        assert sanitize(text) == "evil x y"

    def test_text_smuggled_in_tag_characters_is_shown_as_the_ascii_it_hides(self) -> None:
        """Found by the red team: a claim hidden in tag characters was removed before judging,
        so the answer passed and went to the approved topic with the hidden claim in it."""
        assert sanitize(f"30 days{tags(' rate 5')}.") == "30 days rate 5."

    def test_the_tags_of_an_emoji_flag_are_removed(self) -> None:
        scotland = "\U0001f3f4" + tags("gbsct") + "\U000e007f"
        assert sanitize(f"Edinburgh {scotland}.") == "Edinburgh \U0001f3f4."

    @given(st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
    def test_hidden_ascii_reads_as_the_ascii(self, text: str) -> None:
        assert sanitize(tags(text)) == sanitize(text)

    def test_lone_surrogates_are_removed(self) -> None:
        assert sanitize("a\ud800b") == "ab"


class TestNormalisation:
    def test_decomposed_accents_are_composed(self) -> None:
        assert sanitize("cafe\u0301") == "café"

    def test_superscripts_and_fractions_keep_their_meaning(self) -> None:
        """NFKC would turn x² into x2 and ½ into 1/2; the sanitizer must not."""
        assert sanitize("area is 3 m² and ½ of it") == "area is 3 m² and ½ of it"

    def test_full_width_ascii_is_folded(self) -> None:
        assert sanitize("ＡＢＣ１２３＜＜ＥＮＤ") == "ABC123<<END"

    def test_ligatures_are_folded(self) -> None:
        assert sanitize("\ufb01nal o\ufb00er") == "final offer"

    def test_exotic_spaces_become_plain_spaces(self) -> None:
        assert sanitize("30\u00a0days\u2003from\u3000delivery") == "30 days from delivery"

    def test_non_latin_text_is_unchanged(self) -> None:
        text = "Возврат в течение 30 дней. 退货期为30天。 😀"
        assert sanitize(text) == text


class TestWhitespace:
    def test_runs_of_spaces_collapse(self) -> None:
        assert sanitize("a     b") == "a b"

    def test_tabs_survive_as_one_tab(self) -> None:
        assert sanitize("col1 \t\t col2") == "col1\tcol2"

    def test_blank_line_runs_collapse_to_one_blank_line(self) -> None:
        assert sanitize("para one\n\n\n \n\n\npara two") == "para one\n\npara two"

    def test_trailing_blanks_and_ends_are_stripped(self) -> None:
        assert sanitize("  a  \n  b  \n") == "a\n b"

    def test_whitespace_only_becomes_empty(self) -> None:
        assert sanitize(" \n\t\u200b\u00a0 ") == ""


@given(st.text())
def test_sanitized_text_has_no_control_or_invisible_characters(text: str) -> None:
    clean = sanitize(text)
    for ch in clean:
        assert ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs")
        assert ch not in "\u200b\u200c\u200d\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@given(st.text())
def test_sanitize_is_idempotent(text: str) -> None:
    once = sanitize(text)
    assert sanitize(once) == once


def tags(text: str) -> str:
    """``text`` written in invisible Unicode tag characters."""
    return "".join(chr(0xE0000 + ord(c)) for c in text)
