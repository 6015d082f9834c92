"""Judge retries are counted by error kind and exported as a Prometheus counter."""

from __future__ import annotations

from consumers.metrics import Metrics
from guard.budgets import BudgetSettings
from guard.budgets.judge import build_budgeted_judge
from guard.decide.assessment import Scale5Assessment
from guard.engine import Guard
from guard.errors import JudgeTimeout, JudgeUnavailable
from guard.models import JudgeRequest, Label
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings
from guard.testing import FakeJudge


async def test_retries_are_counted_by_kind_and_scraped() -> None:
    ok = Scale5Assessment(explanation="fine", claims=[], score=5)
    judge = FakeJudge([JudgeUnavailable("down", status=503), JudgeTimeout("slow"), ok])

    async def no_sleep(_: float) -> None:
        return None

    budgeted = build_budgeted_judge(
        judge,
        BudgetSettings(),
        price=lambda model, usage: 0.0,
        retry=RetryPolicy(max_retries=3, sleep=no_sleep, on_retry=None),
    )
    guard = Guard(budgeted, JudgeSettings(provider="fake"))
    verdict = await guard.judge(JudgeRequest(output="Paris", context="Paris."))
    scraped = Metrics(judge_stats=guard.budget_stats).render().decode()
    assert verdict.label is Label.PASS
    assert budgeted.stats().retries == {"judge_unavailable": 1, "judge_timeout": 1}
    assert 'groundguard_judge_retries_total{kind="judge_unavailable"} 1.0' in scraped
    assert 'groundguard_judge_retries_total{kind="judge_timeout"} 1.0' in scraped
