"""One concurrency knob: the service's ``concurrency`` bounds judge calls; the judge's
``budget.max_in_flight`` follows it, and setting that in the service settings is a deprecated
alias of ``concurrency``."""

from __future__ import annotations

from pathlib import Path

import pytest

from consumers.config import load_settings
from consumers.settings import ServiceSettings
from guard.budgets.settings import MAX_IN_FLIGHT_LIMIT
from guard.settings import JudgeSettings


def test_the_judge_bound_follows_concurrency_by_default() -> None:
    settings = load_settings(None, {})
    assert settings.judge.budget.max_in_flight == settings.concurrency == 256


def test_concurrency_sets_the_judge_bound(tmp_path: Path) -> None:
    config = tmp_path / "gg.yaml"
    config.write_text("concurrency: 32\njudge: {provider: offline}\n", encoding="utf-8")
    assert load_settings(config, {}).judge.budget.max_in_flight == 32
    from_env = load_settings(None, {"GROUNDGUARD_CONCURRENCY": "12"})
    assert from_env.judge.budget.max_in_flight == 12
    built = ServiceSettings(concurrency=8, judge=JudgeSettings(threshold=0.7))
    assert built.judge.budget.max_in_flight == 8
    assert built.judge.threshold == 0.7


def test_max_in_flight_is_a_deprecated_alias_of_concurrency(tmp_path: Path) -> None:
    config = tmp_path / "gg.yaml"
    config.write_text("judge: {budget: {max_in_flight: 40}}\n", encoding="utf-8")
    with pytest.warns(FutureWarning, match="max_in_flight.*concurrency"):
        settings = load_settings(config, {})
    assert settings.concurrency == 40
    assert settings.judge.budget.max_in_flight == 40


def test_concurrency_wins_over_the_deprecated_alias() -> None:
    judge = JudgeSettings.model_validate({"budget": {"max_in_flight": 40}})
    with pytest.warns(FutureWarning, match="max_in_flight"):
        settings = ServiceSettings(concurrency=16, judge=judge)
    assert settings.concurrency == 16
    assert settings.judge.budget.max_in_flight == 16


def test_a_concurrency_beyond_the_judge_limit_keeps_the_judge_at_its_limit() -> None:
    settings = ServiceSettings(concurrency=MAX_IN_FLIGHT_LIMIT * 2)
    assert settings.judge.budget.max_in_flight == MAX_IN_FLIGHT_LIMIT
