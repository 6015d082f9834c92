"""Excerpts keep the parts of a long text that matter to the output, whole, within the budget."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from guard.prepare.excerpt import GAP, excerpt, words

QUERY = "Electronics can be returned within 15 days."
SENTENCES = " ".join(f"Filler sentence number {i} about shipping." for i in range(40))


def test_text_within_the_budget_is_unchanged() -> None:
    assert excerpt("Short. Text.", 100, QUERY) == "Short. Text."


def test_the_relevant_sentence_at_the_end_is_kept() -> None:
    text = f"{SENTENCES} Electronics may be returned within 15 days of delivery."
    kept = excerpt(text, 120, QUERY)
    assert len(kept) <= 120
    assert kept.endswith("Electronics may be returned within 15 days of delivery.")
    assert kept.startswith(GAP)


def test_relevant_paragraphs_are_kept_whole_in_order_with_gaps_marked() -> None:
    paragraphs = [f"Paragraph {i} is about shipping logistics and packaging." for i in range(10)]
    paragraphs[3] = "Electronics policy: items may be returned."
    paragraphs[8] = "The window for electronics is 15 days."
    kept = excerpt("\n\n".join(paragraphs), 150, QUERY)
    assert kept == (
        f"{GAP}\n\nElectronics policy: items may be returned.\n\n{GAP}\n\n"
        "The window for electronics is 15 days."
    )


def test_without_related_units_the_opening_is_kept() -> None:
    kept = excerpt(SENTENCES, 100, "Completely unrelated query words")
    assert SENTENCES.startswith(kept)
    assert kept.endswith("shipping.")


def test_stopwords_do_not_count_as_related() -> None:
    assert words("The policy and the window for you") == {"policy", "window"}


@given(
    st.text(alphabet=st.sampled_from("ab .\n1"), max_size=400),
    st.integers(min_value=0, max_value=200),
    st.text(alphabet="ab 1", max_size=20),
)
def test_an_excerpt_never_exceeds_its_budget(text: str, budget: int, query: str) -> None:
    assert len(excerpt(text, budget, query)) <= budget
