"""The realistic labelled sets in bench/data: every row is a valid, judgeable request, labels
agree with categories, and the dev and held-out sets stay apart.

This test only checks the files' shape; it never judges them, so it reads the held-out sets
without tuning anything on it.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.models import ContextField
from guard.offline import OfflineJudge

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
GROUNDED = frozenset(
    {
        "paraphrase",
        "unit_restatement",
        "multi_document",
        "summary",
        "refusal",
        "hedged",
        "list",
        "computed",
        "tool_grounded",
        "non_english",
    }
)
ERRORS = frozenset(
    {
        "wrong_number",
        "wrong_time",
        "wrong_day",
        "wrong_date",
        "wrong_name",
        "entity_swap",
        "unsupported_addition",
        "negation",
        "quantifier_shift",
        "dropped_condition",
        "reversed_comparison",
        "wrong_attribution",
        "outside_knowledge",
        "numeric_error",
        "assistant_only",
        "non_english_error",
    }
)
# short factual answers (a name, an amount, a yes or no with its reason): the dev set's
# dev-sqa-* rows only, so no minimum per set
SHORT_ANSWERS = frozenset({"short_answer"})
SHORT_ANSWER_ERRORS = frozenset({"short_answer_error"})
DOMAINS = frozenset(
    {
        "support",
        "hr",
        "medical",
        "finance",
        "api_docs",
        "travel",
        "legal",
        "ecommerce",
        "education",
        "tool_results",
    }
)
LANGS = frozenset({"en", "es", "de", "fr", "it", "pt"})
CONVERSATIONS = frozenset({"tool_grounded", "assistant_only"})
NON_ENGLISH = frozenset({"non_english", "non_english_error"})
# file name -> (minimum rows, minimum rows per category)
SETS = {
    "realistic-dev.jsonl": (180, 6),
    "realistic-holdout.jsonl": (90, 3),
    "realistic-holdout-2.jsonl": (110, 4),
}
PREFIXES = {
    "realistic-dev.jsonl": "dev-",
    "realistic-holdout.jsonl": "ho-",
    "realistic-holdout-2.jsonl": "h2-",
}


def load(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def guard() -> Guard:
    settings = JudgeSettings()
    return Guard(OfflineJudge(settings), settings)


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_row_is_a_judgeable_request(name: str, guard: Guard) -> None:
    for row in load(name):
        request = guard.parse(row)
        case = guard.prepare(request)
        assert isinstance(case, PreparedCase), f"{row['id']}: no evidence to judge"
        assert request.id == row["id"]
        assert request.output.strip()
        if row["category"] in CONVERSATIONS:
            assert guard.source_of(request) is ContextField.MESSAGES, row["id"]
            assert "context" not in row, row["id"]
            assert any(m.role == "tool" for m in request.messages or []), row["id"]
        else:
            assert request.context, row["id"]
            assert request.question, row["id"]


@pytest.mark.parametrize("name", sorted(SETS))
def test_labels_fields_and_categories(name: str) -> None:
    rows = load(name)
    for row in rows:
        assert isinstance(row["hallucinated"], bool), row["id"]
        assert row["category"] in GROUNDED | ERRORS | SHORT_ANSWERS | SHORT_ANSWER_ERRORS
        assert row["hallucinated"] is (row["category"] in ERRORS | SHORT_ANSWER_ERRORS)
        assert row["domain"] in DOMAINS, row["id"]
        assert row["lang"] in LANGS, row["id"]
        assert (row["lang"] != "en") is (row["category"] in NON_ENGLISH), row["id"]
        assert isinstance(row["note"], str), row["id"]
        assert row["note"].strip(), row["id"]
    share = sum(r["hallucinated"] for r in rows) / len(rows)
    assert 0.4 <= share <= 0.6


@pytest.mark.parametrize("name", sorted(SETS))
def test_sizes_and_unique_ids(name: str) -> None:
    rows = load(name)
    minimum, per_category = SETS[name]
    assert len(rows) >= minimum
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith(PREFIXES[name]) for i in ids)
    counts = Counter(r["category"] for r in rows)
    short = {c: counts[c] for c in GROUNDED | ERRORS if counts[c] < per_category}
    assert not short, f"categories under {per_category} rows: {short}"
    assert len({r["domain"] for r in rows}) == len(DOMAINS)


@pytest.mark.parametrize(("first", "second"), list(combinations(sorted(SETS), 2)))
def test_sets_share_no_id_and_no_output(first: str, second: str) -> None:
    one, other = load(first), load(second)
    assert not {r["id"] for r in one} & {r["id"] for r in other}
    assert not {r["output"] for r in one} & {r["output"] for r in other}
