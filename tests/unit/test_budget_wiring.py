"""make_budgeted_judge: the settings' judge inside the budget stack, checked at start-up."""

from __future__ import annotations

import pytest

from guard.budgets import BudgetSettings
from guard.budgets.wiring import make_budgeted_judge, make_fallback
from guard.errors import ConfigError
from guard.offline import OfflineJudge
from guard.settings import JudgeSettings

ENV = {"OPENAI_API_KEY": "sk-test-wiring"}


def _settings(**budget: object) -> JudgeSettings:
    return JudgeSettings(provider="openai",  # type: ignore[arg-type]
                         budget=BudgetSettings.model_validate(budget))


async def test_builds_the_provider_judge_inside_the_stack() -> None:
    """The budgeted judge speaks for the settings' provider and model."""
    judge = make_budgeted_judge(_settings(), ENV)
    assert (judge.provider, judge.model) == ("openai", "gpt-4o-mini")
    await judge.aclose()


def test_fallback_to_offline_builds_the_offline_judge() -> None:
    """fallback_to_offline gives the offline judge; no fallback configured gives None."""
    assert isinstance(make_fallback(_settings(fallback_to_offline=True), ENV), OfflineJudge)
    assert make_fallback(_settings(), ENV) is None


def test_a_fallback_model_without_a_price_fails_at_start_up() -> None:
    """An unpriced fallback model is a ConfigError before any message is read."""
    settings = _settings(on_budget_exhausted="fallback", fallback_model="no-such-model")
    with pytest.raises(ConfigError):
        make_budgeted_judge(settings, ENV)


def test_a_fallback_model_needs_an_llm_provider() -> None:
    """The offline judge has no cheaper model to fall back to."""
    settings = JudgeSettings(budget=BudgetSettings(fallback_model="gpt-4.1-nano"))
    with pytest.raises(ConfigError, match="fallback_to_offline"):
        make_fallback(settings, ENV)
