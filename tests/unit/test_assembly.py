"""guard.assembly: the settings' judge inside the budget stack, checked at start-up, and the
Guard every entry point builds around it (the runtime's typed boundary, GuardCore)."""

from __future__ import annotations

import pytest

from guard.assembly import build_guard, make_budgeted_judge, make_fallback
from guard.boundary import GuardCore
from guard.budgets import BudgetSettings
from guard.engine import Guard
from guard.errors import ConfigError
from guard.models import JudgeRequest
from guard.offline import OfflineJudge
from guard.settings import JudgeSettings
from guard.tiers.cascade import CascadeJudge

ENV = {"OPENAI_API_KEY": "sk-test-wiring"}


def _settings(**budget: object) -> JudgeSettings:
    return JudgeSettings(
        provider="openai",  # type: ignore[arg-type]
        budget=BudgetSettings.model_validate(budget),
    )


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


async def test_build_guard_gives_the_budgeted_judge_behind_the_boundary() -> None:
    """build_guard's Guard is what the runtime holds: it judges, and reports budget counters."""
    guard: GuardCore = build_guard(JudgeSettings(provider="fake"), {})  # type: ignore[arg-type]
    verdict = await guard.judge(JudgeRequest(output="Paris", context="Paris."), message_key="k")
    stats = guard.budget_stats()
    await guard.aclose()
    assert verdict.judge.provider == "fake"
    assert stats is not None
    assert stats.provider_calls == 1
    assert guard.intake_stop_reason is None


def test_a_guard_without_budget_layers_reports_no_budget_stats() -> None:
    """A Guard around a bare judge (tests, benches) has no budget counters to report."""
    assert Guard(OfflineJudge(), JudgeSettings()).budget_stats() is None


async def test_the_cascade_screens_before_the_budget_layers() -> None:
    """provider: cascade is assembled with the offline screen outside the budgeted LLM."""
    settings = JudgeSettings(provider="cascade", cascade_provider="openai")  # type: ignore[arg-type]
    judge = make_budgeted_judge(settings, ENV)
    assert isinstance(judge.screen, CascadeJudge)
    assert judge.provider == "cascade"
    await judge.aclose()
