"""Truncation keeps at most the limit, cuts at sentence or word boundaries, says what it cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from guard.prepare.truncate import SENTENCE_END, truncate


def test_text_within_the_limit_is_kept_whole_and_not_marked_truncated() -> None:
    kept, cut = truncate("Short text.", 100)
    assert kept == "Short text."
    assert (cut.original_chars, cut.kept_chars, cut.truncated) == (11, 11, False)


def test_cut_falls_after_the_last_whole_sentence() -> None:
    text = "Refunds take 30 days. Electronics take 15 days. Gift cards cannot be returned."
    kept, cut = truncate(text, 60)
    assert kept == "Refunds take 30 days. Electronics take 15 days."
    assert cut.truncated
    assert cut.original_chars == len(text)
    assert cut.kept_chars == len(kept)


def test_sentence_ending_exactly_at_the_limit_is_kept() -> None:
    text = "Alpha beta. Gamma delta."
    kept, _ = truncate(text, len("Alpha beta. Gamma delta") + 0)
    assert kept == "Alpha beta."
    kept, _ = truncate(text + " Tail", len(text))
    assert kept == text


def test_question_and_exclamation_marks_and_closing_quotes_end_sentences() -> None:
    text = 'Is it 30 days?" she asked. Yes! It is thirty days from delivery for every item.'
    kept, _ = truncate(text, 40)
    assert kept == 'Is it 30 days?" she asked. Yes!'


def test_line_breaks_count_as_boundaries() -> None:
    text = "Heading without stop\nSecond line that is rather long and goes on"
    kept, _ = truncate(text, 30)
    assert kept == "Heading without stop"


def test_without_a_sentence_end_the_cut_falls_at_a_word_boundary() -> None:
    kept, cut = truncate("alpha beta gamma delta epsilon zeta", 20)
    assert kept == "alpha beta gamma"
    assert cut.kept_chars == 16


def test_decimal_points_do_not_end_sentences() -> None:
    kept, _ = truncate("The fee is 2.50 dollars per item and more words follow here", 22)
    assert kept == "The fee is 2.50"


def test_a_single_long_word_is_cut_hard_at_the_limit() -> None:
    kept, cut = truncate("x" * 50, 10)
    assert kept == "x" * 10
    assert (cut.original_chars, cut.kept_chars, cut.truncated) == (50, 10, True)


@given(st.text(), st.integers(min_value=0, max_value=300))
def test_kept_text_is_a_prefix_within_the_limit(text: str, limit: int) -> None:
    kept, cut = truncate(text, limit)
    assert len(kept) <= limit
    assert text.startswith(kept)
    assert cut.original_chars == len(text)
    assert cut.kept_chars == len(kept)
    assert cut.truncated == (len(text) > limit)


def test_a_sentence_is_dropped_rather_than_kept_in_part() -> None:
    """Evidence cut in the middle of a sentence can say the opposite of the whole sentence."""
    text = "Short. Returns are accepted within 30 days for members only, never otherwise."
    kept, cut = truncate(text, 40)
    assert kept == "Short."
    assert cut.truncated


_TEXT = st.lists(st.sampled_from(["ab", "cd efg", " ", ". ", "! ", "\n", "。", ", "])).map("".join)


@given(_TEXT, st.integers(min_value=1, max_value=200))
def test_kept_text_ends_with_a_whole_sentence_when_one_fits(text: str, limit: int) -> None:
    """Only a first sentence longer than the limit is kept in part."""
    kept, cut = truncate(text, limit)
    ends = [m.end() for m in SENTENCE_END.finditer(text[: limit + 1]) if m.end() <= limit]
    if cut.truncated and ends:
        assert kept == text[: ends[-1]].rstrip()
