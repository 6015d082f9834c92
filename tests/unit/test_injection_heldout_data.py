"""The held-out injection set (bench/data/injections-heldout.jsonl): its shape, and that none
of its texts is in the injection tests, so the detector is not tuned on it.

This test never runs the detector on the set: recall is a figure that
bench/injection_recall.py prints, not something a test pins.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "bench" / "data" / "injections-heldout.jsonl"
INJECTION_CLASSES = frozenset(
    {
        "encoded",
        "split",
        "markup",
        "verdict_payload",
        "language",
        "addressed",
        "english_override",
        "leniency",
    }
)
BENIGN_CLASSES = frozenset(
    {"product_json", "tech_prose", "code", "review_prose", "multilingual_prose"}
)
FIELDS = frozenset({"id", "label", "class", "where", "text"})
MIN_PER_CLASS = 5
# a line of a held-out text this long or longer must not occur in an injection test
MIN_FRAGMENT = 24


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    lines = HELDOUT.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_every_row_has_the_fields_and_a_known_label_class_and_place(
    rows: list[dict[str, str]],
) -> None:
    for row in rows:
        assert set(row) == FIELDS, row.get("id")
        assert row["text"].strip(), row["id"]
        assert row["where"] in {"output", "context"}, row["id"]
        classes = INJECTION_CLASSES if row["label"] == "injection" else BENIGN_CLASSES
        assert row["label"] in {"injection", "benign"}, row["id"]
        assert row["class"] in classes, row["id"]


def test_ids_and_texts_are_unique(rows: list[dict[str, str]]) -> None:
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["text"] for r in rows}) == len(rows)


def test_every_class_has_rows_and_both_labels_and_places_are_used(
    rows: list[dict[str, str]],
) -> None:
    counts = Counter(r["class"] for r in rows)
    short = {c: counts[c] for c in INJECTION_CLASSES | BENIGN_CLASSES if counts[c] < MIN_PER_CLASS}
    assert not short, f"classes under {MIN_PER_CLASS} rows: {short}"
    for label in ("injection", "benign"):
        assert {r["where"] for r in rows if r["label"] == label} == {"output", "context"}


def fragments(text: str) -> set[str]:
    """The text's lines and sentences long enough to be a phrasing of their own."""
    pieces = re.split(r"(?<=[.!?。])\s*|\n", text)
    return {p.strip() for p in [text, *pieces] if len(p.strip()) >= MIN_FRAGMENT}


def test_no_held_out_text_is_in_the_injection_tests(rows: list[dict[str, str]]) -> None:
    tests = [
        p for p in Path(__file__).parent.glob("test_injection*.py") if p.name != Path(__file__).name
    ]
    assert tests
    sources = "\n".join(p.read_text(encoding="utf-8") for p in tests).casefold()
    found = {
        r["id"]: fragment
        for r in rows
        for fragment in fragments(r["text"])
        if fragment.casefold() in sources
    }
    assert not found, f"held-out phrasings in the injection tests: {found}"
