"""Fleet shares: a replica limited to its share of the fleet's rpm, tpm and cost windows, changed
at every rebalance without losing what the current windows already counted."""

from __future__ import annotations

import asyncio

import pytest

from consumers.runtime.service import GuardService
from consumers.settings import ServiceSettings
from guard.budgets import BudgetSettings, CostBudget, RateLimiter, VirtualClock
from guard.budgets.cost import Reservation
from guard.budgets.judge import build_budgeted_judge
from guard.budgets.share import HANDOVER_S, ShareHistory
from guard.engine import Guard
from guard.settings import JudgeSettings, Provider
from guard.testing import FakeJudge
from tests.unit.budget_helpers import flat_price
from tests.unit.fakekafka import Clock, FakeBroker, FakeCluster, until
from tests.unit.test_delivery import settings as service_settings


async def admitted_in_a_minute(limiter: RateLimiter, clock: VirtualClock) -> int:
    """Calls the limiter admits before the first one leaves its 60 s window."""
    start, calls = clock.now(), 0
    while True:
        await limiter.acquire(10, deadline=start + 120)
        if clock.now() >= start + 60:
            return calls
        calls += 1


async def test_a_rate_limit_share_admits_that_share_of_the_fleets_calls() -> None:
    """rpm 60 over a share of a quarter (lost from the whole: at once): 15 calls in a minute,
    not 60."""
    clock = VirtualClock()
    limiter = RateLimiter(rpm=60, tpm=None, max_wait_s=120, cooldown_s=1, clock=clock)
    limiter.rescale(1.0)
    limiter.rescale(0.25)
    assert await admitted_in_a_minute(limiter, clock) == 15


async def test_calls_already_made_count_against_a_smaller_share() -> None:
    """A replica that made 20 calls, then lost half its share, waits for them to leave the
    window instead of starting afresh."""
    clock = VirtualClock()
    limiter = RateLimiter(rpm=60, tpm=None, max_wait_s=120, cooldown_s=1, clock=clock)
    limiter.rescale(1.0)
    for _ in range(20):
        await limiter.acquire(10)
    started = clock.now()
    limiter.rescale(0.25)  # 15 a minute: the 20 calls of the window must leave first
    await limiter.acquire(10, deadline=started + 120)
    assert clock.now() >= started + 30
    assert limiter.snapshot().rpm == pytest.approx(15)


def test_spend_so_far_stays_counted_when_the_share_changes() -> None:
    """Rescaling keeps the window's spend: $0.60 spent of $1 leaves nothing at a half share,
    and $0.40 again at the whole budget once the gain applies (after the handover)."""
    clock = VirtualClock()
    budget = CostBudget({"hour": 1.0}, clock)
    budget.rescale(1.0)
    grant = budget.try_reserve(0.6)
    assert isinstance(grant, Reservation)
    budget.settle(grant, 0.6)
    budget.rescale(0.5)
    assert not isinstance(budget.try_reserve(0.1), Reservation)
    (window,) = budget.snapshot().windows
    assert (window.limit_usd, window.spent_usd, window.left_usd) == (0.5, 0.6, 0.0)
    budget.rescale(1.0)
    assert not isinstance(budget.try_reserve(0.4), Reservation)  # the gain waits a handover
    clock.advance(HANDOVER_S)
    assert isinstance(budget.try_reserve(0.4), Reservation)


def test_a_gain_applies_one_handover_later_and_a_loss_at_once() -> None:
    """rpm 60: a replica that goes from a quarter to a half makes 15 calls a minute for the
    next 60 s, then 30; going back to a quarter applies at once."""
    clock = VirtualClock()
    share = ShareHistory(clock)
    share.set(1.0)
    share.set(0.25)
    clock.advance(100)
    share.set(0.5)
    assert (share.lowest(), share.held, share.rises_in()) == (0.25, 0.5, HANDOVER_S)
    clock.advance(HANDOVER_S - 1)
    assert (share.lowest(), share.rises_in()) == (0.25, 1.0)
    clock.advance(1)
    assert (share.lowest(), share.rises_in()) == (0.5, None)
    share.set(0.25)
    assert share.lowest() == 0.25


def test_a_cost_window_takes_the_lowest_share_held_since_it_began() -> None:
    """A gain made in the last seconds of a minute window applies when the next one begins
    (the previous owner's spend ends with the window), not a full handover later."""
    clock = VirtualClock(start=600.0)  # a minute boundary
    budget = CostBudget({"minute": 1.0}, clock)
    budget.rescale(1.0)
    budget.rescale(0.25)
    clock.advance(50)
    budget.rescale(1.0)
    (window,) = budget.snapshot().windows
    assert window.limit_usd == 0.25
    clock.advance(10)  # the next minute window: the gain is whole in it
    (window,) = budget.snapshot().windows
    assert window.limit_usd == 1.0
    assert budget.share.lowest() == 0.25  # the sliding rate window still holds the low share


def test_a_first_assignment_is_a_gain_from_nothing_unless_it_is_every_partition() -> None:
    """A replica joining a fleet does not know what the partitions' previous owners spent: its
    first share applies after a handover. One taking every partition (the fleet restarted
    whole) starts afresh at once."""
    clock = VirtualClock()
    joining, alone = ShareHistory(clock), ShareHistory(clock)
    assert joining.lowest() == 1.0  # no assignment yet (serve, tests): the whole limits
    joining.set(0.5)
    alone.set(1.0)
    assert (joining.lowest(), alone.lowest()) == (0.0, 1.0)
    clock.advance(HANDOVER_S)
    assert joining.lowest() == 0.5


def test_no_share_spends_nothing_not_even_the_first_call() -> None:
    """A replica without partitions has no budget; the one-call-fits rule does not apply."""
    budget = CostBudget({"minute": 1.0}, VirtualClock())
    budget.rescale(0.0)
    assert not isinstance(budget.try_reserve(0.01), Reservation)


def test_per_replica_mode_ignores_the_share() -> None:
    """fleet: per_replica keeps the old behaviour: every replica takes the whole limits."""
    settings = BudgetSettings(rpm=60, cost_per_hour_usd=1.0, fleet="per_replica")  # type: ignore[arg-type]
    judge = build_budgeted_judge(FakeJudge(), settings, price=flat_price(0.01))
    judge.rescale(0.25)
    stats = judge.stats()
    assert (stats.fleet_share, stats.rate.rpm, stats.cost.windows[0].limit_usd) == (1.0, 60, 1.0)


def test_a_share_outside_zero_to_one_is_refused() -> None:
    judge = build_budgeted_judge(FakeJudge(), BudgetSettings(rpm=60), price=flat_price(0.01))
    with pytest.raises(ValueError, match="between 0 and 1"):
        judge.rescale(1.5)


async def test_every_rebalance_gives_the_judge_the_share_of_its_partitions() -> None:
    """The runtime computes owned input partitions over the topic's partitions at every
    assignment and passes it to the guard: 2 of 4, then 1 of 4, then all 4 (held at once;
    what applies: nothing until the first share's handover, then the lowest of the last
    handover)."""
    cluster = FakeCluster(partitions=4)
    broker = FakeBroker(cluster)
    s = service_settings(judge=JudgeSettings(provider=Provider.FAKE, budget={"rpm": 400}))
    clock = VirtualClock()
    budget = build_budgeted_judge(FakeJudge(), s.judge.budget, price=flat_price(0.0), clock=clock)
    stop = asyncio.Event()
    service = GuardService(s, Guard(budget, s.judge), stop=stop, broker=broker, clock=Clock())
    task = asyncio.create_task(service.run())
    await until(lambda: bool(broker.consumers) and broker.consumers[-1].started, "start")
    shares = []
    for partitions in ([0, 1], [3], [0, 1, 2, 3]):
        await broker.consumers[-1].rebalance(partitions)
        stats = budget.stats()
        shares.append((budget.share.held, stats.fleet_share, stats.rate.rpm))
        clock.advance(HANDOVER_S)
    stop.set()
    await task
    assert shares == [(0.5, 0.0, 0), (0.25, 0.25, 100), (1.0, 0.25, 100)]
    assert budget.stats().rate.rpm == 400


def test_redis_mode_without_a_url_names_the_field_and_the_fix() -> None:
    with pytest.raises(ValueError, match=r"fleet=redis needs redis_url.*REDIS_URL"):
        BudgetSettings(fleet="redis")  # type: ignore[arg-type]


def test_a_redis_url_that_would_be_ignored_is_refused() -> None:
    with pytest.raises(ValueError, match=r"set judge\.budget\.fleet=redis, or remove redis_url"):
        BudgetSettings(redis_url="redis://127.0.0.1:6379/0")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url",
    [
        "http://:pw-s3cret@127.0.0.1:6379/0",  # not a Redis scheme
        "redis://:pw-s3cret@127.0.0.1:notaport/0",  # a port that is no number
        "redis://:pw-s3cret@127.0.0.1:6379/notadb",  # redis-py would use db 0 silently
        "redis://:pw-s3cret@:6379/0",  # no host
    ],
)
def test_a_redis_url_redis_cannot_use_is_refused_at_start_without_quoting_it(url: str) -> None:
    with pytest.raises(ValueError, match=r"judge\.budget\.redis_url") as err:
        BudgetSettings(fleet="redis", redis_url=url)  # type: ignore[arg-type]
    assert "s3cret" not in str(err.value)
    with pytest.raises(ValueError, match=r"judge\.budget\.redis_url") as err:
        ServiceSettings.model_validate({"judge": {"budget": {"fleet": "redis", "redis_url": url}}})
    assert "s3cret" not in str(err.value)


def test_redis_urls_redis_can_use_are_taken() -> None:
    for url in ("redis://h:6379/0", "rediss://:pw@h", "redis://h", "unix:///run/redis.sock"):
        assert BudgetSettings(fleet="redis", redis_url=url).redis_url is not None  # type: ignore[arg-type]
