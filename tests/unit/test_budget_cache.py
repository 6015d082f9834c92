"""Verdict cache: repeats cost nothing, concurrent repeats share one call, errors and expired
entries are not served."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from guard.budgets import BudgetSettings, VerdictCache, VirtualClock, build_budgeted_judge
from guard.budgets.cache import cache_key, outcome_bytes
from guard.budgets.judge import _cached
from guard.decide.assessment import ClaimAssessment, Scale5Assessment
from guard.defaults import DEFAULT_CACHE_MAX_BYTES
from guard.errors import JudgeUnavailable
from guard.models import ScoringMode
from guard.providers.base import JudgeOutcome
from guard.testing import FakeJudge
from tests.unit.budget_helpers import GROUNDED, StampedJudge, case, flat_price

PRICE = flat_price(0.01)


def _budget(**kw: object) -> BudgetSettings:
    return BudgetSettings.model_validate({"cache_size": 1_000, "cache_ttl_s": 600.0} | kw)


async def test_half_duplicates_halve_judge_calls_and_cost() -> None:
    """100 requests, 50 distinct: 50 judge calls, 50 hits marked cached with zero usage, and
    half the spend of judging every request."""
    clock = VirtualClock()
    fake = StampedJudge(clock)
    judge = build_budgeted_judge(fake, _budget(), price=PRICE, clock=clock)
    outcomes = [await judge.assess(case(i % 50)) for i in range(100)]
    assert fake.calls == 50
    hits = [o for o in outcomes if o.cached]
    assert len(hits) == 50
    assert all(o.usage.input_tokens == 0 and o.usage.output_tokens == 0 for o in hits)
    stats = judge.stats()
    assert stats.cache is not None
    assert (stats.cache.hits, stats.cache.misses) == (50, 50)
    assert stats.cost.total_spent_usd == pytest.approx(0.50)


async def test_concurrent_identical_requests_share_one_call() -> None:
    """Ten identical requests in flight at once make a single judge call."""
    fake = FakeJudge([GROUNDED], latency_s=0.005)
    judge = build_budgeted_judge(fake, _budget(), price=PRICE)
    outcomes = await asyncio.gather(*(judge.assess(case("same")) for _ in range(10)))
    assert fake.calls == 1
    assert sum(not o.cached for o in outcomes) == 1
    stats = judge.stats()
    assert stats.cache is not None
    assert stats.cache.shared == 9


async def test_errors_are_not_cached() -> None:
    """A failed judgement is judged again next time."""
    fake = FakeJudge([JudgeUnavailable("down"), GROUNDED])
    judge = build_budgeted_judge(fake, _budget(), price=PRICE)
    with pytest.raises(JudgeUnavailable):
        await judge.assess(case(1))
    assert not (await judge.assess(case(1))).cached
    assert (await judge.assess(case(1))).cached
    assert fake.calls == 2


async def test_entries_expire_after_ttl() -> None:
    """After cache_ttl_s the same request is judged again."""
    clock = VirtualClock()
    fake = StampedJudge(clock)
    judge = build_budgeted_judge(fake, _budget(cache_ttl_s=60.0), price=PRICE, clock=clock)
    await judge.assess(case(1))
    clock.advance(59.0)
    assert (await judge.assess(case(1))).cached
    clock.advance(2.0)
    assert not (await judge.assess(case(1))).cached
    assert fake.calls == 2


def test_lru_evicts_the_least_recently_used_entry() -> None:
    """At max_size the entry used longest ago goes first."""
    clock = VirtualClock()
    cache = VerdictCache(max_size=2, ttl_s=60.0, clock=clock)
    outcome = object()
    cache.put("a", outcome)  # type: ignore[arg-type]
    cache.put("b", outcome)  # type: ignore[arg-type]
    assert cache.get("a") is outcome
    cache.put("c", outcome)  # type: ignore[arg-type]
    assert cache.get("b") is None
    assert cache.get("a") is outcome
    assert cache.get("c") is outcome


def test_key_changes_with_everything_that_decides_the_verdict() -> None:
    """Model, mode, threshold, evidence and output each change the key; the request id not."""
    base = case(1)
    key = cache_key(base, provider="openai", model="gpt-4o-mini")
    assert cache_key(case(1), provider="openai", model="gpt-4o-mini") == key
    assert (
        cache_key(
            dataclasses.replace(base, request_id="other"), provider="openai", model="gpt-4o-mini"
        )
        == key
    )
    variants = [
        cache_key(base, provider="openai", model="gpt-4o"),
        cache_key(base, provider="anthropic", model="gpt-4o-mini"),
        cache_key(base, provider="openai", model="gpt-4o-mini", prompt_version="v2"),
        cache_key(
            dataclasses.replace(base, mode=ScoringMode.BINARY),
            provider="openai",
            model="gpt-4o-mini",
        ),
        cache_key(
            dataclasses.replace(base, threshold=0.75), provider="openai", model="gpt-4o-mini"
        ),
        cache_key(case(1, evidence="[1] Other."), provider="openai", model="gpt-4o-mini"),
        cache_key(case(2), provider="openai", model="gpt-4o-mini"),
    ]
    assert key not in variants
    assert len(set(variants)) == len(variants)


def _outcome(claims: int, text: str) -> JudgeOutcome:
    assessment = Scale5Assessment(
        explanation=text,
        claims=[
            ClaimAssessment(claim=text, reason=text, evidence_quote=text, supported=True)
            for _ in range(claims)
        ],
        score=5,
    )
    return JudgeOutcome(assessment=assessment, provider="fake", model="fake-judge")


def test_the_cache_is_bounded_in_bytes_not_only_in_entries() -> None:
    """Long verdicts (many claims, long quotes) evict the least recently used entries once
    their bytes pass ``max_bytes``; one larger than the whole budget is not stored."""
    long, short = _outcome(claims=10, text="q" * 4_000), _outcome(claims=2, text="short")
    assert outcome_bytes(long) > 120_000 > 2_000 > outcome_bytes(short)
    budget = outcome_bytes(long) + 3 * outcome_bytes(short)
    cache = VerdictCache(max_size=1_000, ttl_s=60.0, clock=VirtualClock(), max_bytes=budget)
    for key in "abcdef":
        cache.put(key, short)
    cache.put("long", long)
    assert cache.bytes <= budget
    assert [cache.get(key) for key in "abcdef"] == [None, None, None, short, short, short]
    assert cache.get("long") is long
    cache.put("huge", _outcome(claims=40, text="é" * 4_000))  # alone above the budget
    assert cache.get("huge") is None
    assert cache.get("long") is long
    cache.put("long", long)  # stored again: counted once
    assert cache.bytes == outcome_bytes(long) + 3 * outcome_bytes(short)


def test_the_byte_bound_is_read_from_the_budget_settings() -> None:
    assert BudgetSettings().cache_max_bytes == DEFAULT_CACHE_MAX_BYTES
    cached = _cached(FakeJudge(), _budget(cache_max_bytes=1_048_576), VirtualClock(), None)
    assert cached is not None
    assert cached.cache.max_bytes == 1_048_576
