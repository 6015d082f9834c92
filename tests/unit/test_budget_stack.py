"""The composed budget stack: concurrency bound, 429 storms, outages, stats."""

from __future__ import annotations

import asyncio

import pytest

from guard.budgets import BreakerState, BudgetSettings, VirtualClock, build_budgeted_judge
from guard.engine import Guard
from guard.errors import JudgeError, JudgeUnavailable, RateLimited
from guard.models import JudgeRequest, Label
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from tests.unit.budget_helpers import EVIDENCE, GROUNDED, StampedJudge, case, flat_price

PRICE = flat_price(0.001)


async def test_concurrency_is_never_exceeded_and_is_reached() -> None:
    """200 requests, max_in_flight=8: the judge never sees more than 8 calls at once, and
    does see 8."""
    fake = FakeJudge([GROUNDED], latency_s=0.002)
    judge = build_budgeted_judge(fake, BudgetSettings(max_in_flight=8, cache_size=0), price=PRICE)
    await asyncio.gather(*(judge.assess(case(i)) for i in range(200)))
    assert fake.calls == 200
    assert fake.peak_in_flight == 8
    assert judge.stats().peak_in_flight == 8


async def test_429_storm_is_ridden_out_without_a_retry_storm() -> None:
    """A 10 s storm of 429s with Retry-After 2 s: every one of 100 requests is judged, and the
    judge sees about one probe per Retry-After instead of every caller retrying."""
    clock = VirtualClock()
    storm_ends = clock.now() + 10.0

    def storm(now: float) -> JudgeError | None:
        return RateLimited("429", status=429, retry_after_s=2.0) if now < storm_ends else None

    fake = StampedJudge(clock, storm)
    retry = RetryPolicy(max_retries=3, sleep=clock.sleep, on_retry=None)
    judge = build_budgeted_judge(
        fake, BudgetSettings(max_in_flight=10, cache_size=0), price=PRICE, retry=retry, clock=clock
    )
    outcomes = await asyncio.gather(*(judge.assess(case(i)) for i in range(100)))
    assert len(outcomes) == 100
    failed_calls = sum(t < storm_ends for t in fake.stamps)
    assert failed_calls <= 10 / 2.0 + 1
    assert fake.calls <= 100 + failed_calls
    assert judge.stats().rate.provider_429s == failed_calls


async def test_outage_trips_the_breaker_and_every_request_gets_a_verdict() -> None:
    """A 30 s outage: each of 240 requests (one every 0.25 s) gets a verdict, `error` while
    the judge is down or the breaker open, `pass` once a probe finds it back; the breaker keeps
    the calls made during the outage few."""
    clock = VirtualClock()
    start = clock.now()
    outage = (start + 10.0, start + 40.0)

    def down(now: float) -> JudgeError | None:
        return JudgeUnavailable("500", status=500) if outage[0] <= now < outage[1] else None

    fake = StampedJudge(clock, down)
    budget = BudgetSettings(cache_size=0, breaker={"failure_threshold": 5, "open_for_s": 5.0})
    settings = JudgeSettings(budget=budget)
    judge = build_budgeted_judge(fake, budget, price=PRICE, clock=clock)
    guard = Guard(judge, settings, price=PRICE)
    verdicts = []
    for i in range(240):
        clock.advance(max(0.0, start + i * 0.25 - clock.now()))
        at = clock.now()
        verdicts.append(
            (at, await guard.judge(JudgeRequest(id=f"r{i}", output="Hi.", context=EVIDENCE)))
        )
    assert len(verdicts) == 240
    assert all(v.label is Label.PASS for t, v in verdicts if not outage[0] <= t < outage[1] + 5)
    during = [v for t, v in verdicts if outage[0] <= t < outage[1]]
    assert {v.label for v in during} == {Label.ERROR}
    assert {v.reason for v in during} == {"judge_unavailable", "circuit_open"}
    calls_in_outage = sum(outage[0] <= t < outage[1] for t in fake.stamps)
    assert calls_in_outage <= 5 + 30 / 5.0 + 1
    assert judge.breaker.state is BreakerState.CLOSED


async def test_a_cancelled_leader_does_not_strand_its_followers() -> None:
    """When the call a follower waits on is cancelled, the follower makes the call itself."""
    fake = FakeJudge([GROUNDED], latency_s=0.3)  # the leader is cancelled long before it ends
    judge = build_budgeted_judge(fake, BudgetSettings(), price=PRICE)
    leader = asyncio.create_task(judge.assess(case("same")))
    for _ in range(100):  # until the leader's call is in flight (no timing: a busy machine)
        if fake.calls:
            break
        await asyncio.sleep(0)
    follower = asyncio.create_task(judge.assess(case("same")))
    for _ in range(10):  # the follower reaches its wait on the leader's call
        await asyncio.sleep(0)
    assert fake.calls == 1
    leader.cancel()
    outcome = await follower
    assert leader.cancelled()
    assert not outcome.cached
    assert fake.calls == 2


async def test_stats_report_calls_cache_breaker_and_spend() -> None:
    """One snapshot holds what the metrics need."""
    judge = build_budgeted_judge(
        FakeJudge([GROUNDED]), BudgetSettings(cost_per_day_usd=10.0), price=PRICE
    )
    for n in (1, 1, 2):
        await judge.assess(case(n))
    stats = judge.stats()
    assert stats.provider_calls == 2
    assert stats.cache is not None
    assert stats.cache.hits == 1
    assert stats.breaker_state is BreakerState.CLOSED
    (day,) = stats.cost.windows
    assert (day.window, round(day.spent_usd, 6), round(day.left_usd, 6)) == ("day", 0.002, 9.998)
    await judge.aclose()


async def test_stats_fields_flatten_for_logs_and_gauges() -> None:
    """fields() names the spend and budget left per window, and the breaker state."""
    judge = build_budgeted_judge(
        FakeJudge([GROUNDED]), BudgetSettings(cost_per_hour_usd=1.0), price=PRICE
    )
    await judge.assess(case(1))
    fields = judge.stats().fields()
    assert fields["spent_usd.hour"] == fields["spent_usd"] == pytest.approx(0.001)
    assert fields["left_usd.hour"] == pytest.approx(0.999)
    assert fields["breaker_state"] == "closed"
    assert fields["cache_misses"] == 1
