"""``judge.budget.fleet: redis`` against a real redis-server: replicas (here, budgeted judges
that share nothing but Redis) share one rate limit, one cost budget and one verdict cache; an
outage of Redis degrades to the partition share and never stops judging."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from redis.asyncio import Redis

from consumers.metrics import Metrics
from guard.assembly import make_shared
from guard.budgets import BudgetSettings, SystemClock
from guard.budgets.judge import BudgetedJudge, build_budgeted_judge
from guard.budgets.shared import SharedReservation, decode_outcome, encode_outcome
from guard.errors import JudgementSkipped, RateLimited
from guard.providers.base import JudgeOutcome
from guard.testing import FakeJudge
from tests.redisserver import RedisServer
from tests.unit.budget_helpers import GROUNDED, case, flat_price
from tests.unit.test_health import samples

pytestmark = pytest.mark.timeout(60)


def replica(url: str, prefix: str, judge: FakeJudge, **budget: Any) -> BudgetedJudge:
    settings = BudgetSettings.model_validate(
        {"fleet": "redis", "redis_url": url, "redis_prefix": prefix, "cache_size": 0} | budget
    )
    clock = SystemClock()
    shared = make_shared(settings, clock)
    return build_budgeted_judge(judge, settings, price=flat_price(0.01), clock=clock, shared=shared)


def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


async def outcomes(judge: BudgetedJudge, names: range) -> list[JudgeOutcome | BaseException]:
    return await asyncio.gather(*(judge.assess(case(n)) for n in names), return_exceptions=True)


async def test_two_replicas_share_one_rate_limit_exactly(redis_server: RedisServer) -> None:
    """rpm 6 for the fleet: 20 calls over two replicas make exactly 6 provider calls; the rest
    are refused by the fleet's limit, not let through by a per-replica one."""
    keys = prefix()
    a_calls, b_calls = FakeJudge(), FakeJudge()
    a = replica(redis_server.url, keys, a_calls, rpm=6, max_rate_wait_s=8)
    b = replica(redis_server.url, keys, b_calls, rpm=6, max_rate_wait_s=8)
    both = await asyncio.gather(outcomes(a, range(10)), outcomes(b, range(10, 20)))
    results = both[0] + both[1]
    assert a_calls.calls + b_calls.calls == 6
    refused = [r for r in results if isinstance(r, BaseException)]
    assert len(refused) == 14
    assert all(isinstance(r, RateLimited) for r in refused)
    await a.aclose()
    await b.aclose()


async def test_two_replicas_share_one_cost_window(redis_server: RedisServer) -> None:
    """$0.03 a minute for the fleet at $0.01 a call: three calls over both replicas, then every
    call is skipped as budget_exhausted:minute."""
    keys = prefix()
    a_calls, b_calls = FakeJudge(), FakeJudge()
    policy = {"cost_per_minute_usd": 0.03, "on_budget_exhausted": "skip"}
    a = replica(redis_server.url, keys, a_calls, **policy)
    b = replica(redis_server.url, keys, b_calls, **policy)
    results = []
    for n in range(5):
        results += await outcomes(a, range(n, n + 1)) + await outcomes(b, range(n + 5, n + 6))
    assert a_calls.calls + b_calls.calls == 3
    skipped = [r for r in results if isinstance(r, JudgementSkipped)]
    assert len(skipped) == 7
    assert {str(r) for r in skipped} == {"budget_exhausted:minute"}
    assert b.stats().cost.exhausted + a.stats().cost.exhausted == 7
    await a.aclose()
    await b.aclose()


async def test_a_caller_paused_by_the_fleet_window_resumes_when_estimates_settle_lower(
    redis_server: RedisServer,
) -> None:
    """$0.03 a day for the fleet; a call is estimated at $0.02 and costs $0.001. While B's call
    is in flight the fleet's window refuses A's (0.02 + 0.02 > 0.03); once B settles at $0.001
    there is room, and A goes on within about a second, not at the day's end."""
    keys = prefix()

    def price(model: str, usage: Any) -> float:
        return 0.02 if usage.input_tokens > 1000 else 0.001  # the estimate, the actual cost

    policy = {"cost_per_day_usd": 0.03, "on_budget_exhausted": "pause", "max_pause_s": 600}
    judges = []
    for judge in (FakeJudge(), FakeJudge(latency_s=1.0)):
        settings = BudgetSettings.model_validate(
            {"fleet": "redis", "redis_url": redis_server.url, "redis_prefix": keys} | policy
        )
        clock = SystemClock()
        shared = make_shared(settings, clock)
        judges.append(
            build_budgeted_judge(judge, settings, price=price, clock=clock, shared=shared)
        )
    a, b = judges
    in_flight = asyncio.create_task(b.assess(case(0)))
    await asyncio.sleep(0.3)  # B's estimate is reserved in Redis
    outcome = await asyncio.wait_for(a.assess(case(1)), timeout=8)
    assert not outcome.cached
    assert a.stats().cost.exhausted >= 1  # it was refused by the fleet first
    await in_flight
    await a.aclose()
    await b.aclose()


async def test_a_verdict_judged_by_one_replica_is_a_cache_hit_on_another(
    redis_server: RedisServer,
) -> None:
    keys = prefix()
    a_calls, b_calls = FakeJudge(), FakeJudge()
    a = replica(redis_server.url, keys, a_calls, cache_size=100)
    b = replica(redis_server.url, keys, b_calls, cache_size=100)
    first = await a.assess(case(1))
    again = await b.assess(case(1))
    assert (a_calls.calls, b_calls.calls) == (1, 0)
    assert again.cached
    assert not first.cached
    assert again.assessment == first.assessment
    stats = b.stats()
    assert stats.cache is not None
    assert stats.cache.hits == 1
    assert stats.shared is not None
    assert stats.shared.cache_hits == 1
    await a.aclose()
    await b.aclose()


async def test_a_redis_outage_degrades_to_the_partition_share_and_recovers(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis stops: judging goes on under the partition share (one log line, one outage
    counted); Redis returns: the fleet's limits apply again, and the partition share stays
    for a handover (Redis did not count the calls made during the outage)."""
    caplog.set_level("INFO", logger="guard.budgets")
    judge = FakeJudge()
    budgeted = replica(own_redis.url, prefix(), judge, rpm=600, redis_retry_s=0.2)
    budgeted.rescale(0.25)
    await budgeted.assess(case(1))
    assert (budgeted.fleet_share, budgeted.stats().rate.rpm) == (1.0, 600)
    own_redis.stop()
    for n in range(2, 5):
        await budgeted.assess(case(n))
    down = budgeted.stats()
    assert judge.calls == 4
    assert down.shared is not None
    assert (down.shared.up, down.shared.outages) == (False, 1)
    assert (down.fleet_share, down.rate.rpm) == (0.25, 150)
    scraped = samples(Metrics(judge_stats=budgeted.stats).render().decode())
    assert scraped[("groundguard_budget_shared_up", ())] == 0
    assert scraped[("groundguard_budget_shared_outages_total", ())] == 1
    assert scraped[("groundguard_budget_fleet_share", ())] == 0.25
    own_redis.start()
    await asyncio.sleep(0.3)
    await budgeted.assess(case(5))
    up = budgeted.stats()
    assert up.shared is not None
    assert up.shared.up
    assert (up.fleet_share, budgeted.share.held) == (0.25, 1.0)
    events = [r.getMessage().split(":")[0].split(" ")[0] for r in caplog.records]
    assert events.count("budget.shared_unavailable") == 1
    assert events.count("budget.shared_recovered") == 1
    await budgeted.aclose()


def test_cached_verdicts_round_trip_and_anything_else_is_a_miss() -> None:
    outcome = JudgeOutcome(assessment=GROUNDED, provider="openai", model="gpt-4o-mini")
    again = decode_outcome(encode_outcome(outcome).decode())
    assert again is not None
    assert again.assessment == GROUNDED
    assert again.model == "gpt-4o-mini"
    for junk in ("", "{}", '{"kind": "scale5", "assessment": {"score": 9}}', "[1]"):
        assert decode_outcome(junk) is None


async def test_a_settlement_after_its_window_expired_leaves_no_key_without_a_ttl(
    redis_server: RedisServer,
) -> None:
    """A call that outlives its cost window's key (expired in Redis) settles into nothing: the
    correction must not create the key again without a TTL (a key that would never expire)."""
    keys = prefix()
    shared = make_shared(
        BudgetSettings(fleet="redis", redis_url=redis_server.url, redis_prefix=keys),  # type: ignore[arg-type]
        SystemClock(),
    )
    assert shared is not None
    live = await shared.reserve(0.02, {"minute": (60.0, 1.0)})
    gone = await shared.reserve(0.02, {"hour": (3600.0, 1.0)})
    assert isinstance(live, SharedReservation)
    assert isinstance(gone, SharedReservation)
    client = Redis.from_url(redis_server.url)
    (expired,) = gone.keys
    await client.delete(expired)  # what its TTL does when the call outlives the window's key
    await shared.settle(live, 0.005)
    await shared.settle(gone, 0.005)
    assert await client.exists(expired) == 0
    (kept,) = live.keys
    assert float(await client.get(kept)) == pytest.approx(0.005)
    assert 0 < await client.ttl(kept) <= 120  # the correction kept the window's TTL
    await client.aclose()
    await shared.aclose()


async def test_redis_logs_a_call_when_it_starts_not_before_the_local_smoothing_held_it(
    redis_server: RedisServer,
) -> None:
    """rpm 120: the replica's per-second smoothing starts 2 calls a second, so 6 calls made at
    once start over about 2 s, and the fleet's log in Redis has them at those moments (a log
    written before the smoothing would have all 6 at once: a later window could then take more
    than rpm)."""
    keys = prefix()
    judge = replica(redis_server.url, keys, FakeJudge(), rpm=120, max_rate_wait_s=10)
    await outcomes(judge, range(6))
    client = Redis.from_url(redis_server.url)
    logged = await client.zrange(f"{keys}:rate:fake:fake-judge", 0, -1, withscores=True)
    starts = sorted(score for _, score in logged)
    assert len(starts) == 6
    assert starts[-1] - starts[0] >= 1.5
    await client.aclose()
    await judge.aclose()
