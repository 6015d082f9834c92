"""Cached, cache-write and flex tokens are priced at their own rates everywhere spend is counted:
the verdict, the cost budget and its progress fields, and the Prometheus metrics."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from structlog.testing import capture_logs

from consumers.cli.commands.run import log_progress
from consumers.metrics import Metrics
from consumers.runtime.stats import ServiceStats
from guard.budgets import BudgetSettings, build_budgeted_judge
from guard.engine import Guard
from guard.models import JudgeRequest, Usage
from guard.providers.pricing import PriceTable
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

USAGE = Usage(
    input_tokens=2_000,
    cached_tokens=1_024,
    cache_write_tokens=0,
    output_tokens=200,
    service_tier="flex",
)
MODEL = "gpt-5-mini"


async def judge_once(usage: Usage) -> tuple[Guard, object]:
    table = PriceTable.load()
    budget = BudgetSettings(cache_size=0, cost_per_day_usd=10.0)
    settings = JudgeSettings(provider="fake", model=MODEL, budget=budget)  # type: ignore[arg-type]
    judge = build_budgeted_judge(FakeJudge(model=MODEL, usage=usage), budget, price=table.cost)
    guard = Guard(judge, settings, price=table.cost)
    verdict = await guard.judge(JudgeRequest(output="Paris.", context="Paris is in France."))
    await guard.aclose()
    return guard, verdict


def expected_usd(usage: Usage) -> float:
    """gpt-5-mini: 0.25 in, 0.025 cached, 2.00 out per million; flex at half price."""
    uncached = usage.input_tokens - usage.cached_tokens
    listed = uncached * 0.25 + usage.cached_tokens * 0.025 + usage.output_tokens * 2.00
    return listed / 1e6 * (0.5 if usage.service_tier == "flex" else 1.0)


async def test_verdict_and_budget_price_cached_flex_tokens_alike() -> None:
    guard, verdict = await judge_once(USAGE)
    assert verdict.cost_usd == pytest.approx(expected_usd(USAGE))  # type: ignore[attr-defined]
    stats = guard.budget_stats()
    assert stats is not None
    fields = stats.fields()
    assert fields["spent_usd"] == pytest.approx(expected_usd(USAGE))
    assert fields["spent_usd.day"] == pytest.approx(expected_usd(USAGE))
    assert fields["tokens.cached"] == 1_024
    assert fields["tokens.input"] == 2_000
    assert fields["calls.flex"] == 1


async def test_metrics_count_cache_writes_and_the_serving_tier() -> None:
    usage = Usage(
        input_tokens=1500, cache_write_tokens=1300, output_tokens=90, service_tier="batch"
    )
    _, verdict = await judge_once(usage)
    metrics = Metrics()
    metrics.observe_verdict(verdict)  # type: ignore[arg-type]
    text = metrics.render().decode()
    assert f'groundguard_judge_tokens_total{{kind="cache_write",model="{MODEL}"}} 1300.0' in text
    tier = f'groundguard_judge_service_tier_calls_total{{model="{MODEL}",service_tier="batch"}}'
    assert f"{tier} 1.0" in text


async def test_the_progress_line_carries_billed_spend_and_its_tokens() -> None:
    """service.progress: spend as billed (cached at the cached price, flex at half), and the
    tokens by kind and calls by tier behind it."""
    guard, _ = await judge_once(USAGE)
    with capture_logs() as logs:
        task = asyncio.create_task(log_progress(ServiceStats(), guard, 0.01))  # type: ignore[arg-type]
        for _ in range(100):
            await asyncio.sleep(0.01)
            if logs:
                break
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    line = logs[0]
    assert line["event"] == "service.progress"
    assert line["spent_usd"] == pytest.approx(expected_usd(USAGE))
    assert (line["tokens_cached"], line["tokens_input"], line["calls_flex"]) == (1_024, 2_000, 1)
