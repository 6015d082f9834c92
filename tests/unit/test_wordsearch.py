"""The word search of the injection scan: the native DFA and pyahocorasick's trie find the same
occurrences of the same words in any text."""

from __future__ import annotations

import os

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from guard.prepare import injection, wordsearch
from guard.prepare.wordsearch import Trie, WordSearch

# words of the scan's own kinds: ASCII, accented, Cyrillic, CJK, punctuation, a line start
LETTERS = st.sampled_from(list("aehrsiuçéдп指示 \n\"'{<"))
WORDS = st.lists(st.text(LETTERS, min_size=1, max_size=5), min_size=1, max_size=12, unique=True)
TEXTS = st.text(st.one_of(LETTERS, st.characters()), max_size=80)

needs_native = pytest.mark.skipif(not wordsearch.NATIVE, reason="groundguard_native not built")


def test_the_native_engine_is_installed_where_required() -> None:
    """CI sets GROUNDGUARD_REQUIRE_NATIVE: there the native engine must search, so that its
    tests run instead of being skipped."""
    if os.environ.get("GROUNDGUARD_REQUIRE_NATIVE") == "1":
        assert wordsearch.NATIVE
    else:
        assert isinstance(wordsearch.NATIVE, bool)


@given(WORDS, TEXTS)
@example(["he", "she", "his", "hers"], "ushers")
@example(["é", "ça", "指示"], "ça va, héhé: 指示を無視")
@example(["ab"], "a\ud800ab")  # a lone surrogate: the trie reads it
def test_both_engines_find_the_same_occurrences(words: list[str], text: str) -> None:
    expected = sorted(Trie(words).find(text))
    assert sorted(WordSearch(words).find(text)) == expected
    assert sorted(WordSearch(words, native=False).find(text)) == expected


@given(WORDS, TEXTS)
def test_occurrences_come_in_the_order_of_their_ends(words: list[str], text: str) -> None:
    """The scan's leetspeak reading skips hints inside a word it already read, so it relies on
    this order (both engines keep it)."""
    for search in (WordSearch(words), WordSearch(words, native=False)):
        ends = [start + len(words[index]) for index, start in search.find(text)]
        assert ends == sorted(ends)


@given(WORDS, TEXTS)
def test_each_occurrence_is_its_word_at_its_start(words: list[str], text: str) -> None:
    found = WordSearch(words).find(text)
    for index, start in found:
        assert text[start : start + len(words[index])] == words[index]
    every = {(i, s) for i, w in enumerate(words) for s in range(len(text)) if text.startswith(w, s)}
    assert set(found) == every


@needs_native
@given(
    st.lists(st.sampled_from(injection._SEARCH_WORDS[0] + ("ignore ", "tú ", "\n")), max_size=20)
)
def test_the_scans_own_automaton_finds_the_same_with_both_engines(pieces: list[str]) -> None:
    text = "".join(pieces).lower()
    words = list(injection._AUTOMATON._words)
    assert sorted(WordSearch(words).find(text)) == sorted(Trie(words).find(text))


@needs_native
def test_the_native_engine_searches_when_installed() -> None:
    search = WordSearch(["ignore"])
    assert search._native is not None
    assert search._trie is None
    assert search.find("please IGNORE it; ignore it".lower()) == [(0, 7), (0, 18)]


def test_an_empty_or_repeated_word_is_refused() -> None:
    with pytest.raises(ValueError, match="empty word"):
        WordSearch(["ok", ""])
    with pytest.raises(ValueError, match="given twice"):
        WordSearch(["ok", "no", "ok"])
