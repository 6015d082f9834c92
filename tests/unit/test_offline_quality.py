"""Quality floor: the offline judge over the whole labelled dev sets (a few seconds), so a
judging regression fails CI instead of hiding behind hand-picked cases.

The floors sit a little below the figures ``bench/offline_quality.py`` prints (README, "Judges
and scoring"); raise them when the judge improves.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from guard.offline import quality
from guard.settings import JudgeSettings

ROOT = Path(__file__).resolve().parents[2]
REALISTIC = ROOT / "bench" / "data" / "realistic-dev.jsonl"
CASCADE_FLOOR = 0.95


HALUEVAL = ROOT / "bench" / "data" / "halueval-qa-dev.jsonl"  # in the repository: never skipped


def rows(name: str) -> list[dict[str, Any]]:
    return quality.load(REALISTIC if name == "realistic" else HALUEVAL)


@cache
def _judged(name: str) -> list[quality.Judged]:
    return quality.judge_rows(rows(name))


def judged(name: str) -> list[quality.Judged]:
    rows(name)  # skips when the set is missing
    return _judged(name)


# realistic: 0.85 since the 81 short-answer rows (dev-sqa-*, harder); halueval measured 0.926,
# 0.918 since only rules the labelled data vouches for decide (issue 28: 7 rows of rules seen
# 4 times or fewer now pass unflagged)
@pytest.mark.parametrize(("name", "floor"), [("realistic", 0.85), ("halueval", 0.91)])
def test_the_offline_judge_alone_stays_above_its_floor(name: str, floor: float) -> None:
    assert quality.offline_accuracy(judged(name)) >= floor


@pytest.mark.parametrize("name", ["realistic", "halueval"])
def test_the_cascade_with_a_right_llm_is_at_least_095(name: str) -> None:
    result = quality.cascade(rows(name), JudgeSettings().cascade_confidence)
    assert result.balanced_accuracy >= CASCADE_FLOOR


@pytest.mark.parametrize("threshold", [0.6, 0.7, JudgeSettings().cascade_confidence])
def test_confident_offline_decisions_are_right_as_often_as_they_claim(
    threshold: float, record_property: Callable[[str, object], None]
) -> None:
    """Above each cascade threshold, observed accuracy is at least the threshold, and the
    cascade at that threshold leaves to its LLM exactly the rows not decided that confidently:
    the decided rate is the one the calibration claims. At a threshold no rule earns (0.8
    today: none decided) this still checks that every row goes to the LLM (issue 29: it
    asserted nothing then)."""
    for name in ("realistic", "halueval"):
        all_rows = judged(name)
        sure = [
            j
            for j in all_rows
            if j.decision.confidence >= threshold and j.decision.label != "undecided"
        ]
        record_property(f"{name}_decided", len(sure))
        assert sum(j.right for j in sure) >= threshold * len(sure), (name, len(sure))
        result = quality.cascade(rows(name), threshold)
        assert result.sent_to_llm == len(all_rows) - len(sure), (name, len(sure))


def test_the_offline_tier_decides_a_share_of_halueval_at_a_lower_threshold() -> None:
    """No rule earns 0.8 on every data source yet (the realistic sets are small: a rule needs
    about 18 right of 18 there), so at the default threshold the LLM decides everything; at
    ``cascade_confidence`` 0.6 the offline tier decides most of HaluEval (0.74 measured)."""
    all_rows = judged("halueval")
    decided = [j for j in all_rows if j.decision.confidence >= 0.6]
    assert len(decided) / len(all_rows) >= 0.65
    assert sum(j.right for j in decided) / len(decided) >= 0.95


def test_no_realistic_category_is_below_half_right() -> None:
    """But unsupported_addition: its only rule, 10 of 14 right, is bounded below a coin flip,
    so it annotates and the category's answers pass unflagged (issue 28)."""
    per = quality.by_category(judged("realistic"))
    assert all(right > 0 for right, _ in per.values()), per
    below = {name for name, (right, total) in per.items() if right * 2 < total}
    assert below <= {"unsupported_addition"}, per


@cache
def _cross() -> dict[str, list[quality.Judged]]:
    sets = {name: quality.check_rows(rows(name)) for name in ("realistic", "halueval")}
    return quality.cross_validated(sets)[0]


def test_out_of_fold_confident_decisions_are_right_as_often_as_they_claim() -> None:
    """Each row decided by a calibration fitted without its fold (its category, or a tenth
    of HaluEval): confident decisions stay right at least as often as the threshold, and the
    cascade stays at 0.95."""
    rows("halueval")  # skips when the set is missing
    threshold = JudgeSettings().cascade_confidence
    for name, judged_rows in _cross().items():
        sure = [
            j
            for j in judged_rows
            if j.decision.confidence >= threshold and j.decision.label != "undecided"
        ]
        assert sum(j.right for j in sure) >= threshold * len(sure), name
        assert quality.cascade_with_oracle(judged_rows, threshold).balanced_accuracy >= (
            CASCADE_FLOOR
        ), name


def test_calibrate_offline_help_prints_usage_and_writes_nothing() -> None:
    # "--help" was read as a data path: a FileNotFoundError traceback
    table = ROOT / "guard" / "data" / "offline_calibration.json"
    before = table.read_bytes()
    script = ROOT / "bench" / "calibrate_offline.py"
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
    assert table.read_bytes() == before


def test_a_reason_says_one_sentence_holds_every_word_only_when_it_does() -> None:
    """It said "every word and detail found in one sentence" of claims that sentence held
    only part of (issue 28): on real prose, the claim is made exactly when the claim's local
    support is whole, and the share is named otherwise."""
    said = 0
    for name in ("realistic", "halueval"):
        for checked in quality.check_rows(rows(name)):
            for r in checked.results:
                if "matched to one sentence" in r.reason:
                    said += 1
                    assert r.local >= 0.999, r
                if "of them in one sentence" in r.reason:
                    assert r.local < 0.999, r
    assert said > 0
