"""The RPM/TPM limiter: sliding-window limits hold, provider signals stop every caller."""

from __future__ import annotations

import asyncio

import pytest

from guard.budgets import BudgetSettings, VirtualClock, build_budgeted_judge
from guard.budgets.ratelimit import RateLimiter, exhausted_until, parse_reset
from guard.errors import RateLimited
from guard.models import Usage
from tests.unit.budget_helpers import StampedJudge, case, flat_price, max_in_any_window


def _budget(**kw: object) -> BudgetSettings:
    base: dict[str, object] = {"cache_size": 0, "max_rate_wait_s": 10_000.0}
    return BudgetSettings.model_validate(base | kw)


async def test_rpm_never_exceeded_in_any_60s_window() -> None:
    """300 concurrent requests at rpm=50: at most 50 calls start in any 60 s, all are judged."""
    clock = VirtualClock()
    fake = StampedJudge(clock)
    judge = build_budgeted_judge(fake, _budget(rpm=50), price=flat_price(0.001), clock=clock)
    outcomes = await asyncio.gather(*(judge.assess(case(i)) for i in range(300)))
    assert len(outcomes) == 300
    assert fake.calls == 300
    assert max_in_any_window(fake.stamps, 60.0) == 50
    assert clock.now() - fake.stamps[0] >= 5 * 60.0 - 60.0  # 300 calls need 5 windows


async def test_tpm_holds_within_tolerance_after_usage_correction() -> None:
    """Reported usage replaces the estimate: tokens per 60 s stay within tpm plus one call."""
    clock = VirtualClock()
    usage = Usage(input_tokens=700, output_tokens=300)  # 1,000 tokens a call
    fake = StampedJudge(clock, usage=usage)
    judge = build_budgeted_judge(fake, _budget(tpm=10_000), price=flat_price(0.001), clock=clock)
    await asyncio.gather(*(judge.assess(case(i)) for i in range(60)))
    assert fake.calls == 60
    per_window = max_in_any_window(fake.stamps, 60.0, [1_000] * len(fake.stamps))
    assert 9_000 <= per_window <= 10_000 + 1_000


async def test_a_minutes_allowance_is_not_spent_in_one_burst() -> None:
    """rpm=120 admits at most 2 calls in any second (1/60 of the limit), not 120 at once."""
    clock = VirtualClock()
    fake = StampedJudge(clock)
    judge = build_budgeted_judge(fake, _budget(rpm=120), price=flat_price(0.001), clock=clock)
    await asyncio.gather(*(judge.assess(case(i)) for i in range(40)))
    assert fake.calls == 40
    assert max_in_any_window(fake.stamps, 1.0) == 2


async def test_waiting_past_max_wait_raises_rate_limited() -> None:
    """A caller that cannot be admitted within max_rate_wait_s fails as rate_limited."""
    clock = VirtualClock()
    limiter = RateLimiter(rpm=1, tpm=None, max_wait_s=5.0, cooldown_s=1.0, clock=clock)
    await limiter.acquire(10)
    with pytest.raises(RateLimited):
        await limiter.acquire(10)
    assert clock.now() - 1_000_000_000.0 == pytest.approx(5.0)


async def test_a_429_stops_every_caller_until_retry_after() -> None:
    """After a 429 with Retry-After 3 s no caller is admitted for 3 s, then one probe goes."""
    clock = VirtualClock()
    limiter = RateLimiter(rpm=None, tpm=None, max_wait_s=60.0, cooldown_s=1.0, clock=clock)
    first = await limiter.acquire(10)
    limiter.rate_limited(first, 3.0)
    start = clock.now()
    probe = await limiter.acquire(10)
    assert clock.now() - start == pytest.approx(3.0)
    assert probe.probe
    follower = asyncio.create_task(limiter.acquire(10))
    await clock.sleep(0.2)
    assert not follower.done()  # waits for the probe's result
    limiter.succeeded(probe, 10, {})
    assert not (await follower).probe


async def test_remaining_zero_header_blocks_until_reset() -> None:
    """x-ratelimit-remaining-requests: 0 with reset 2s holds the next call for 2 s."""
    clock = VirtualClock()
    limiter = RateLimiter(rpm=None, tpm=None, max_wait_s=60.0, cooldown_s=1.0, clock=clock)
    permit = await limiter.acquire(10)
    limiter.succeeded(
        permit, 10, {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "2s"}
    )
    start = clock.now()
    await limiter.acquire(10)
    assert clock.now() - start == pytest.approx(2.0)


def test_reset_values_in_every_provider_format_are_read() -> None:
    """OpenAI durations, plain seconds and Anthropic RFC 3339 timestamps all parse."""
    assert parse_reset("6m0s", 0.0) == pytest.approx(360.0)
    assert parse_reset("20ms", 0.0) == pytest.approx(0.02)
    assert parse_reset("1h2m3.5s", 0.0) == pytest.approx(3723.5)
    assert parse_reset("1.5", 0.0) == pytest.approx(1.5)
    assert parse_reset("2026-01-01T00:00:10Z", 1767225600.0) == pytest.approx(10.0)
    assert parse_reset("soon", 0.0) is None


def test_anthropic_remaining_zero_is_obeyed_and_nonzero_ignored() -> None:
    """Only a remaining count of zero blocks; the wait is capped."""
    headers = {
        "anthropic-ratelimit-tokens-remaining": "0",
        "anthropic-ratelimit-tokens-reset": "2026-01-01T00:01:00Z",
    }
    assert exhausted_until(headers, 1767225600.0, 30.0) == pytest.approx(1767225630.0)
    assert (
        exhausted_until(
            {"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "1s"}, 0.0, 30.0
        )
        is None
    )
