"""Evidence chunks sized to a detector's window: they cover the text, fit, and say where they
came from; sentences are scored max over chunks, the output min over sentences."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard.decide.quotes import quote_occurs
from guard.detect.chunking import (
    Chunk,
    best_chunk,
    estimate_tokens,
    evidence_chunks,
    grounded_p,
    pieces,
    sentences,
    token_starts,
    tokens_in,
    windows,
)
from guard.testing.tiny_detector import build_tiny_detector

# Words with accents, ligatures, look-alikes (Cyrillic а, Greek ο), CJK, emoji and combining
# marks, so counts and offsets are checked on the characters that move them.
WORDS = st.sampled_from(
    [
        "Zürich",
        "Müller",
        "ﬁne",
        "pаris",  # Cyrillic а
        "ℌello",
        "Ωmega",
        "東京",
        "café",
        "naïve",
        "e\u0301te\u0301",
        "🙂",
        "1889",
        "costs",
        "the",
        "refund",
        "x" * 300,  # a word longer than any budget below
    ]
)
SEPARATORS = st.sampled_from([" ", " ", "  ", "\n", "\n\n", ". ", "! ", "? ", ".\n", ' "', '." '])
TEXTS = st.lists(st.tuples(WORDS, SEPARATORS), max_size=60).map(
    lambda parts: "".join(w + s for w, s in parts)
)
PASSAGES = st.lists(TEXTS, min_size=1, max_size=5)
BUDGETS = st.integers(min_value=1, max_value=120)


@pytest.fixture(scope="module")
def tiny_tokenizer(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A real tokenizer (the tiny detector's word-level one)."""
    from tokenizers import Tokenizer

    tmp = build_tiny_detector(tmp_path_factory.mktemp("tiny"))
    return Tokenizer.from_file(str(tmp / "tokenizer.json"))


@pytest.fixture(scope="module")
def word_count(tiny_tokenizer):  # type: ignore[no-untyped-def]
    return lambda text: len(tiny_tokenizer.encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
def word_offsets(tiny_tokenizer):  # type: ignore[no-untyped-def]
    def offsets(texts):  # type: ignore[no-untyped-def]
        return [
            e.offsets for e in tiny_tokenizer.encode_batch(list(texts), add_special_tokens=False)
        ]

    return offsets


def covered(passages: list[str], chunks: list[Chunk]) -> list[set[int]]:
    seen: list[set[int]] = [set() for _ in passages]
    for chunk in chunks:
        for run in chunk.runs:
            seen[run.passage].update(range(run.start, run.end))
    return seen


def check_chunks(passages: list[str], budget: int, count, starts=None) -> None:  # type: ignore[no-untyped-def]
    chunks = evidence_chunks(passages, budget, count, starts)
    limit = max(budget, 8)
    for chunk in chunks:
        assert count(chunk.text) <= limit or len(chunk.text) == 1, chunk
        texts = [passages[r.passage][r.start : r.end] for r in chunk.runs]
        assert chunk.text == "\n".join(texts)
        assert chunk.quote == " … ".join(texts)
        assert all(t and t == t.strip() for t in texts)
    for text, seen in zip(passages, covered(passages, chunks), strict=True):
        missing = {i for i, ch in enumerate(text) if not ch.isspace()} - seen
        assert not missing, f"not covered: {[text[i] for i in sorted(missing)]}"
    runs = [(r.passage, r.start, r.end) for c in chunks for r in c.runs]
    assert runs == sorted(runs)  # in order
    assert all(a[2] <= b[1] for a, b in pairwise(runs) if a[0] == b[0])  # disjoint


@settings(max_examples=300, deadline=None)
@given(passages=PASSAGES, budget=BUDGETS)
def test_chunks_cover_fit_and_point_back_by_estimate(passages: list[str], budget: int) -> None:
    check_chunks(passages, budget, estimate_tokens)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(passages=PASSAGES, budget=BUDGETS)
def test_chunks_cover_fit_and_point_back_by_tokenizer(
    passages: list[str],
    budget: int,
    word_count,  # type: ignore[no-untyped-def]
) -> None:
    check_chunks(passages, budget, word_count)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(passages=PASSAGES, budget=BUDGETS)
def test_chunks_counted_from_one_tokenizer_call_fit_too(
    passages: list[str],
    budget: int,
    word_count,
    word_offsets,  # type: ignore[no-untyped-def]
) -> None:
    check_chunks(passages, budget, word_count, token_starts(word_offsets, passages))


def test_tokens_are_counted_from_their_starts() -> None:
    assert tokens_in([0, 4, 9, 15], 4, 15) == 2
    assert tokens_in([0, 4, 9, 15], 0, 100) == 4


@settings(max_examples=200, deadline=None)
@given(text=TEXTS)
def test_sentences_cover_every_character_but_whitespace(text: str) -> None:
    found = sentences(text)
    assert all(text[s.start : s.end] == s.text and s.text == s.text.strip() for s in found)
    seen = {i for s in found for i in range(s.start, s.end)}
    assert {i for i, ch in enumerate(text) if not ch.isspace()} <= seen


@settings(max_examples=200, deadline=None)
@given(text=TEXTS, budget=BUDGETS)
def test_answer_windows_are_consecutive_slices_within_the_budget(text: str, budget: int) -> None:
    found = windows(text, budget, estimate_tokens)
    for w in found:
        assert text[w.start : w.end] == w.text
        assert estimate_tokens(w.text) <= max(budget, 8) or len(w.text) == 1
    assert [w.start for w in found] == sorted(w.start for w in found)
    assert all(a.end <= b.start for a, b in pairwise(found))


def test_a_closing_quote_the_splitter_skips_stays_in_its_sentence() -> None:
    text = 'He said "stop." Then he left.'
    assert [s.text for s in sentences(text)] == ['He said "stop."', "Then he left."]


def test_whole_sentences_are_kept_together_while_they_fit() -> None:
    text = "One two three. Four five six. Seven eight nine."
    chunks = evidence_chunks([text], 8, estimate_tokens)
    assert [c.text for c in chunks] == ["One two three. Four five six.", "Seven eight nine."]


def test_a_sentence_over_the_budget_is_cut_at_words() -> None:
    parts = pieces("alpha beta gamma delta epsilon zeta", 8, estimate_tokens)
    assert [p.text for p in parts] == ["alpha beta gamma delta epsilon", "zeta"]  # 30 chars: 8


def test_a_word_over_the_budget_is_cut_inside_it() -> None:
    parts = pieces("y" * 70, 8, estimate_tokens)
    assert [len(p.text) for p in parts] == [32, 32, 6]


def test_a_chunk_of_two_passages_quotes_both_in_order_as_the_quote_check_reads_them() -> None:
    passages = ["The tower opened in 1889.", "It is 330 metres tall."]
    (chunk,) = evidence_chunks(passages, 100, estimate_tokens)
    evidence = "[1] The tower opened in 1889.\n\n[2] It is 330 metres tall."
    assert chunk.text == "The tower opened in 1889.\nIt is 330 metres tall."
    assert quote_occurs(chunk.quote, evidence)


def test_a_sentence_scores_its_best_chunk_and_the_output_its_worst_sentence() -> None:
    rows = [[0.2, 0.9, 0.4], [0.1, 0.3, 0.05], [0.7, 0.6, 0.8]]
    assert best_chunk(rows[0]).chunk == 1
    assert best_chunk(rows[0]).p == 0.9
    assert grounded_p(rows) == 0.3  # the second sentence: no chunk supports it better


def test_one_supporting_chunk_is_enough_and_one_unsupported_sentence_is_enough() -> None:
    assert grounded_p([[0.0, 0.0, 0.99]]) == 0.99
    assert grounded_p([[0.99], [0.99], [0.01]]) == 0.01
