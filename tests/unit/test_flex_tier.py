"""The flex policy: a capacity refusal falls back to the default tier or waits, bounded."""

from __future__ import annotations

import pytest

from guard.cost_settings import FlexSettings
from guard.errors import FlexUnavailable, RateLimited
from guard.providers.errors import from_status
from guard.providers.flex import FlexTier, Tier

REFUSAL = {
    "error": {"message": "Resource unavailable", "type": "x", "code": "resource_unavailable"}
}


def test_the_flex_capacity_429_is_its_own_error_not_a_rate_limit_to_retry() -> None:
    error = from_status("openai", 429, {"retry-after": "2"}, REFUSAL)
    assert isinstance(error, FlexUnavailable)
    assert not error.retriable
    assert error.retry_after_s == 2.0
    plain = from_status("openai", 429, {}, {"error": {"code": "rate_limit_exceeded"}})
    assert type(plain) is RateLimited


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def refusing(times: int) -> tuple[list[Tier], object]:
    tiers: list[Tier] = []

    async def call(tier: Tier) -> str:
        tiers.append(tier)
        if tier == "flex" and len(tiers) <= times:
            raise FlexUnavailable("no capacity", status=429)
        return tier

    return tiers, call


async def test_realtime_fallback_sends_the_call_again_at_the_default_tier() -> None:
    tiers, call = refusing(1)
    flex = FlexTier(FlexSettings(on_capacity="realtime"))
    assert await flex.run(call) == "default"  # type: ignore[arg-type]
    assert tiers == ["flex", "default"]
    assert (flex.refusals, flex.fallbacks) == (1, 1)


def waiting(clock: Clock, max_wait_s: float, base_s: float, max_s: float) -> FlexTier:
    return FlexTier(
        FlexSettings(on_capacity="wait", max_wait_s=max_wait_s),
        sleep=clock.sleep,
        clock=clock,
        base_delay_s=base_s,
        max_delay_s=max_s,
    )


async def test_wait_backs_off_exponentially_then_gets_flex() -> None:
    clock = Clock()
    tiers, call = refusing(3)
    flex = waiting(clock, max_wait_s=60, base_s=1.0, max_s=3.0)
    assert await flex.run(call) == "flex"  # type: ignore[arg-type]
    assert tiers == ["flex"] * 4
    assert clock.slept == [1.0, 2.0, 3.0]


async def test_wait_is_bounded_by_max_wait() -> None:
    clock = Clock()
    _, call = refusing(1_000)
    flex = waiting(clock, max_wait_s=10, base_s=4.0, max_s=4.0)
    with pytest.raises(FlexUnavailable, match="no flex capacity within 10s"):
        await flex.run(call)  # type: ignore[arg-type]
    assert sum(clock.slept) == pytest.approx(10.0)


def test_a_short_timeout_with_flex_is_warned_about_at_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from guard.providers.flex import warn_short_timeout

    with caplog.at_level("WARNING", logger="guard.flex"):
        warn_short_timeout(30.0)
        warn_short_timeout(900.0)
    assert [r.getMessage().split()[0] for r in caplog.records] == ["judge.flex_short_timeout"]


@pytest.mark.parametrize(
    ("reported", "requested", "served"),
    [
        ("flex", "flex", "flex"),
        (None, "flex", "flex"),
        ("default", "flex", "default"),  # refused flex, served by the default tier
        ("priority", None, "priority"),  # the project's default tier may be priority
        ("scale", None, "default"),
        (None, None, None),
    ],
)
def test_the_tier_that_served_is_the_one_reported(
    reported: str | None, requested: Tier | None, served: str | None
) -> None:
    """Priority processing bills above list price: it is reported as such, not as default."""
    from guard.providers.openai import _served

    assert _served(reported, requested) == served


def test_a_model_without_flex_is_refused_naming_only_priced_flex_models() -> None:
    """The fix offered names models the price table marks flex, and no other (o3 is unpriced)."""
    from guard.errors import ConfigError
    from guard.providers.flex import check_flex
    from guard.providers.pricing import PriceTable

    table = PriceTable.load()
    with pytest.raises(ConfigError) as caught:
        check_flex("openai", "gpt-4o-mini", table.lookup("gpt-4o-mini"))
    named = str(caught.value).split("use a flex model (")[1].split(")")[0].split(", ")
    assert "o3" not in named
    assert named
    assert all(table.require(m).flex for m in named)
