"""When prompt caching pays: OpenAI prefix padding and the Anthropic breakpoint rule, from the
price table."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard.providers.caching import (
    CallRate,
    break_even_hit_rate,
    breakpoint_pays,
    cached_prefix_tokens,
    hit_rate,
    padding_pays,
    prefix_usd,
    use_examples,
)
from guard.providers.pricing import PriceTable

MINI = PriceTable.load().require("gpt-4o-mini")
SONNET = PriceTable.load().require("claude-sonnet-4")


@pytest.mark.parametrize(
    ("prefix", "cached"), [(900, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152)]
)
def test_openai_caches_from_1024_tokens_in_128_token_steps(prefix: int, cached: int) -> None:
    assert cached_prefix_tokens(prefix, 1024) == cached


@given(st.integers(min_value=0, max_value=100_000))
def test_the_cached_part_never_exceeds_the_prefix(prefix: int) -> None:
    cached = cached_prefix_tokens(prefix, 1024)
    assert 0 <= cached <= prefix
    assert cached == 0 or (cached - 1024) % 128 == 0


def test_a_prefix_below_the_minimum_costs_list_price_whatever_the_traffic() -> None:
    assert prefix_usd(MINI, 983, 1.0) == pytest.approx(983 * 0.15 / 1e6)


def test_padding_past_the_minimum_pays_at_steady_traffic_not_at_a_trickle() -> None:
    """983 tokens are never cached; 1,359 are (1,280 of them at half price) when calls hit."""
    assert padding_pays(MINI, 983, 1359, hits=0.95)
    assert not padding_pays(MINI, 983, 1359, hits=0.1)
    even = break_even_hit_rate(MINI, 983, 1359)
    assert even is not None
    assert padding_pays(MINI, 983, 1359, even + 0.01)
    assert not padding_pays(MINI, 983, 1359, even - 0.01)


def test_padding_that_stays_below_the_minimum_never_pays() -> None:
    assert break_even_hit_rate(MINI, 500, 1000) is None


def test_hit_rate_grows_with_traffic_within_the_ttl() -> None:
    assert hit_rate(0.0) == 0.0
    assert hit_rate(0.1) < 0.5 < hit_rate(1.0) < hit_rate(60.0)
    assert hit_rate(60.0) == pytest.approx(1.0)


@pytest.mark.parametrize(("calls", "pays"), [(0, False), (1, False), (2, True), (50, True)])
def test_anthropic_breakpoint_pays_from_two_calls_per_ttl(calls: int, pays: bool) -> None:
    """One write (1.25x) + one read (0.1x) = 1.35x < 2x list price."""
    assert breakpoint_pays(SONNET, calls) is pays


def test_call_rate_counts_only_calls_within_the_ttl() -> None:
    now = [0.0]
    rate = CallRate(ttl_s=300.0, clock=lambda: now[0])
    assert rate.record() == 1
    now[0] = 100.0
    assert rate.record() == 2
    now[0] = 350.0  # the first call is older than the TTL
    assert rate.record() == 2
    now[0] = 1000.0
    assert rate.record() == 1


HAIKU = PriceTable.load().require("claude-haiku-4-5")


@pytest.mark.parametrize(
    ("setting", "price", "expected"),
    [
        ("auto", MINI, True),  # caches from 1,024 tokens: the examples get the prefix there
        ("auto", SONNET, True),
        ("auto", HAIKU, False),  # caches from 4,096: the examples would only cost more
        ("auto", None, False),  # unpriced (self-hosted): no cache discount to win
        ("on", HAIKU, True),
        ("off", MINI, False),
    ],
)
def test_examples_are_sent_when_they_make_the_prefix_cacheable(
    setting: str, price: object, expected: bool
) -> None:
    """1,092 tokens without the examples: past 1,024 by less than the estimate's error."""
    assert use_examples(setting, price, 1092, 1468) is expected  # type: ignore[arg-type]


def test_auto_drops_the_examples_when_the_prefix_is_cached_for_certain_without_them() -> None:
    """Past the minimum by more than the chars/4 estimate's error the examples only add tokens."""
    assert use_examples("auto", MINI, 1200, 1576) is False
    assert use_examples("auto", MINI, 1120, 1496) is True
