"""The bundled demo traffic: well formed, varied, and judged as expected by the offline judge."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from guard import Guard, JudgeSettings
from guard.errors import InvalidRequest
from guard.models import ContextField
from guard.offline import OfflineJudge

SAMPLE = Path(__file__).resolve().parents[2] / "consumers" / "cli" / "data" / "sample_traffic.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines()]


def payload(row: dict[str, Any]) -> str:
    return str(row["raw"]) if "raw" in row else json.dumps(row["value"])


def guard_for(row: dict[str, Any]) -> Guard:
    """Conversation-only requests take their evidence from the messages."""
    value = row.get("value")
    conversation = isinstance(value, dict) and "messages" in value and "context" not in value
    settings = JudgeSettings(
        context_field=ContextField.MESSAGES if conversation else ContextField.CONTEXT
    )
    return Guard(OfflineJudge(settings), settings)


def test_the_sample_is_varied_and_every_line_says_what_to_expect() -> None:
    assert len(ROWS) >= 40
    assert all(row["expected"] in ("pass", "fail", "dead_letter") for row in ROWS)
    assert all(("value" in row) != ("raw" in row) for row in ROWS)
    counts = Counter(row["expected"] for row in ROWS)
    assert counts["pass"] >= 10
    assert counts["fail"] >= 10
    assert counts["dead_letter"] >= 5
    assert len({row["key"] for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row["key"] for row in ROWS])
async def test_the_offline_judge_decides_each_line_as_expected(row: dict[str, Any]) -> None:
    try:
        verdict = await guard_for(row).judge_payload(payload(row))
    except InvalidRequest:
        outcome = "dead_letter"
    else:
        outcome = verdict.label.value
        assert verdict.judge.tier in ("offline", "none")
    assert outcome == row["expected"]
