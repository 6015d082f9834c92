"""Cost budgets: each policy when a window is spent mid-run, and the spend snapshot."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from guard.budgets import BudgetSettings, CostBudget, VirtualClock, build_budgeted_judge
from guard.budgets.cost import Reservation
from guard.engine import Guard
from guard.errors import ConfigError
from guard.models import JudgeRequest, Label
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from tests.unit.budget_helpers import EVIDENCE, GROUNDED, StampedJudge, flat_price

PRICE = flat_price(0.01)  # one cent a call: a 5-cent minute budget allows 5 calls a minute


def _settings(**budget: object) -> JudgeSettings:
    base: dict[str, object] = {"cache_size": 0, "cost_per_minute_usd": 0.05}
    return JudgeSettings(budget=BudgetSettings.model_validate(base | budget))


def _request(n: int) -> JudgeRequest:
    return JudgeRequest(id=f"r{n}", output="Returns are allowed within 30 days.", context=EVIDENCE)


async def test_pause_waits_for_the_window_to_roll_over_and_loses_nothing() -> None:
    """12 requests on a 5-calls-a-minute budget: all judged, never more than 5 per minute,
    the rest resumed as each minute rolls over."""
    clock = VirtualClock()
    fake = StampedJudge(clock)
    settings = _settings(on_budget_exhausted="pause")
    judge = build_budgeted_judge(fake, settings.budget, price=PRICE, clock=clock)
    guard = Guard(judge, settings, price=PRICE)
    verdicts = await asyncio.gather(*(guard.judge(_request(i)) for i in range(12)))
    assert [v.label for v in verdicts] == [Label.PASS] * 12
    per_minute = Counter(int(t // 60) for t in fake.stamps)
    assert sorted(per_minute.values()) == [2, 5, 5]
    assert judge.stats().budget_paused > 0
    assert judge.stats().cost.total_spent_usd == pytest.approx(0.12)


async def test_skip_gives_skipped_verdicts_naming_the_window() -> None:
    """Past the budget, requests get `skipped` verdicts with reason budget_exhausted:minute."""
    clock = VirtualClock()
    settings = _settings(on_budget_exhausted="skip")
    judge = build_budgeted_judge(StampedJudge(clock), settings.budget, price=PRICE, clock=clock)
    guard = Guard(judge, settings, price=PRICE)
    verdicts = [await guard.judge(_request(i)) for i in range(8)]
    assert [v.label for v in verdicts] == [Label.PASS] * 5 + [Label.SKIPPED] * 3
    assert {v.reason for v in verdicts[5:]} == {"budget_exhausted:minute"}
    clock.advance(60.0)
    assert (await guard.judge(_request(9))).label is Label.PASS


async def test_fallback_judges_with_the_fallback_and_says_so() -> None:
    """Past the budget, the fallback judge decides and the verdict states the fallback."""
    clock = VirtualClock()
    settings = _settings(on_budget_exhausted="fallback", fallback_model="gpt-4.1-nano")
    cheap = FakeJudge([GROUNDED], model="gpt-4.1-nano")
    judge = build_budgeted_judge(
        StampedJudge(clock), settings.budget, price=PRICE, fallback=cheap, clock=clock
    )
    guard = Guard(judge, settings, price=PRICE)
    verdicts = [await guard.judge(_request(i)) for i in range(8)]
    assert [v.judge.fallback_reason for v in verdicts] == [None] * 5 + [
        "budget_exhausted:minute"
    ] * 3
    assert {v.judge.model for v in verdicts[5:]} == {"gpt-4.1-nano"}
    assert all(v.label is Label.PASS for v in verdicts)
    stats = judge.stats()
    assert (stats.fallbacks, cheap.calls) == (3, 3)
    assert stats.cost.fallback_spent_usd == pytest.approx(0.03)
    await judge.aclose()


def test_fallback_policy_without_a_fallback_is_a_config_error() -> None:
    """Naming no fallback for the fallback policy fails at start-up, not mid-run."""
    with pytest.raises(ValueError, match="fallback_model or fallback_to_offline"):
        BudgetSettings(on_budget_exhausted="fallback")  # type: ignore[arg-type]
    budget = BudgetSettings(
        on_budget_exhausted="fallback",  # type: ignore[arg-type]
        fallback_to_offline=True,
    )
    with pytest.raises(ConfigError):
        build_budgeted_judge(FakeJudge(), budget, price=PRICE)


def test_combined_windows_and_snapshot_show_spend_and_what_is_left() -> None:
    """Minute and hour windows both count; the snapshot reports spend, left and reset time."""
    clock = VirtualClock(start=3_600.0 * 1000)
    budget = CostBudget({"minute": 1.0, "hour": 1.5}, clock)
    for _ in range(2):
        grant = budget.try_reserve(0.5)
        assert isinstance(grant, Reservation)
        budget.settle(grant, 0.5)
    snap = {w.window: w for w in budget.snapshot().windows}
    assert snap["minute"].left_usd == pytest.approx(0.0)
    assert snap["hour"].left_usd == pytest.approx(0.5)
    assert snap["minute"].resets_in_s == pytest.approx(60.0)
    clock.advance(60.0)
    refused = budget.try_reserve(0.6)
    assert not isinstance(refused, Reservation)
    assert refused.window == "hour"
    assert isinstance(budget.try_reserve(0.4), Reservation)


def test_one_call_always_fits_an_untouched_window() -> None:
    """A call estimated above the whole budget still runs when nothing was spent yet."""
    budget = CostBudget({"minute": 0.001}, VirtualClock())
    assert isinstance(budget.try_reserve(0.01), Reservation)
    assert not isinstance(budget.try_reserve(0.01), Reservation)


def test_a_spent_window_is_logged_once_and_its_rollover_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Spend so far and the budget are in the logs when a window is spent, once per window."""
    from guard.budgets.clock import VirtualClock
    from guard.budgets.cost import CostBudget, Reservation

    clock = VirtualClock()
    budget = CostBudget({"minute": 1.0}, clock)
    caplog.set_level("INFO", logger="guard.budgets")
    first = budget.try_reserve(0.9)
    assert isinstance(first, Reservation)
    budget.settle(first, 0.9)
    refused = [budget.try_reserve(0.5) for _ in range(3)]
    clock.advance(61)
    assert isinstance(budget.try_reserve(0.5), Reservation)
    assert not any(isinstance(r, Reservation) for r in refused)
    events = [r.getMessage().split(" ")[0] for r in caplog.records]
    assert events == ["budget.exhausted", "budget.window_rolled"]
    assert "limit_usd=1.0000" in caplog.records[0].getMessage()


async def test_failed_calls_the_provider_may_bill_count_their_estimate() -> None:
    """Malformed answers and timed-out calls reached the provider: their estimated cost is
    spent from the budget; calls refused before sending (circuit open) cost nothing."""
    from guard.budgets.clock import VirtualClock
    from guard.budgets.cost import CostBudget, CostBudgetJudge
    from guard.budgets.settings import BudgetPolicy
    from guard.errors import CircuitOpen, JudgeTimeout, MalformedJudgeOutput
    from guard.testing import FakeJudge
    from tests.unit.test_engine import guard_with

    clock = VirtualClock()
    budget = CostBudget({"hour": 100.0}, clock)
    failures = FakeJudge(
        [MalformedJudgeOutput("cut at max_tokens"), JudgeTimeout("slow"), CircuitOpen("open")]
    )
    layer = CostBudgetJudge(
        failures,
        budget,
        price=lambda model, usage: 1.0,
        policy=BudgetPolicy.SKIP,
        fallback=None,
        max_pause_s=1.0,
        clock=clock,
    )
    case = guard_with().prepare(guard_with().parse({"output": "x y", "context": "x y"}))
    for _ in range(3):
        with pytest.raises((MalformedJudgeOutput, JudgeTimeout, CircuitOpen)):
            await layer.assess(case)  # type: ignore[arg-type]
    assert budget.snapshot().total_spent_usd == 2.0


async def test_a_caller_refused_only_by_reservations_in_flight_does_not_sleep_the_window() -> None:
    """Under pause, a call refused because others' estimates are still reserved looks again
    soon: when those calls settle below their estimate, it runs long before the window ends."""
    import asyncio

    from guard.budgets.clock import VirtualClock
    from guard.budgets.cost import CostBudget, CostBudgetJudge, Reservation
    from guard.budgets.settings import BudgetPolicy
    from guard.testing import FakeJudge
    from tests.unit.test_engine import guard_with

    clock = VirtualClock(start=3600.0 * 1000)  # the start of an hour window
    budget = CostBudget({"hour": 1.5}, clock)
    held = budget.try_reserve(1.0)  # another caller's estimate, still in flight
    assert isinstance(held, Reservation)
    layer = CostBudgetJudge(
        FakeJudge(),
        budget,
        price=lambda model, usage: 1.0,
        policy=BudgetPolicy.PAUSE,
        fallback=None,
        max_pause_s=7200.0,
        clock=clock,
    )
    case = guard_with().prepare(guard_with().parse({"output": "x y", "context": "x y"}))
    task = asyncio.create_task(layer.assess(case))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    budget.settle(held, 0.2)  # it cost far less than estimated
    clock.advance(1.0)
    outcome = await asyncio.wait_for(task, timeout=5)
    assert outcome.provider == "fake"
    assert clock.now() - 3600.0 * 1000 < 60  # not at the end of the hour window
