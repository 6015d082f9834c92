"""The fleet bound of ``fleet: partition_share``, on a simulated fleet: replicas that share
nothing but a clock, each with its own rate limiter and cost budget, spend greedily while they
join, leave and die and the partitions move between them (every rebalance gives each live
replica at least one partition, as Kafka's assignors do). Whatever the churn, the fleet's calls
in any 60 s stay within ``rpm`` and its spend in any minute window within the cost limit."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from guard.budgets import CostBudget, RateLimiter, VirtualClock
from guard.budgets.cost import Reservation
from guard.budgets.share import ShareHistory
from guard.errors import RateLimited

PARTITIONS = 6
RPM = 24
CALL_USD = 0.01
STEP_S = 0.5
RUN_S = 300.0
START = 6_000.0  # a minute boundary


@dataclass
class Replica:
    limiter: RateLimiter
    cost: CostBudget
    calls: list[float] = field(default_factory=list)

    @classmethod
    def fresh(cls, clock: VirtualClock, per_minute_usd: float) -> Replica:
        share = ShareHistory(clock)
        limiter = RateLimiter(
            rpm=RPM, tpm=None, max_wait_s=1, cooldown_s=1, clock=clock, share=share
        )
        return cls(limiter, CostBudget({"minute": per_minute_usd}, clock, share))

    async def spend(self, now: float) -> None:
        """Make every call the budgets admit now."""
        while isinstance(grant := self.cost.try_reserve(CALL_USD), Reservation):
            try:
                await self.limiter.acquire(1, deadline=now)
            except RateLimited:
                self.cost.settle(grant, None)
                return
            self.calls.append(now)
            self.cost.settle(grant, CALL_USD)


def rebalance(live: list[Replica], rng: random.Random) -> None:
    """Every partition to one live replica, each live replica at least one (at one moment)."""
    order = rng.sample(range(PARTITIONS), PARTITIONS)
    owned = [order[i :: len(live)] for i in range(len(live))]
    for replica, parts in zip(live, owned, strict=True):
        replica.cost.rescale(len(parts) / PARTITIONS)


async def simulate(
    start: int, events: list[tuple[float, str]], seed: int, per_minute_usd: float
) -> list[float]:
    clock, rng = VirtualClock(START), random.Random(seed)
    live = [Replica.fresh(clock, per_minute_usd) for _ in range(start)]
    everyone = list(live)
    rebalance(live, rng)
    pending = sorted(events)
    while clock.now() < START + RUN_S:
        while pending and pending[0][0] <= clock.now() - START:
            _, kind = pending.pop(0)
            if kind == "join" and len(live) < PARTITIONS:
                live.append(Replica.fresh(clock, per_minute_usd))
                everyone.append(live[-1])
            elif kind == "leave" and len(live) > 1:
                live.pop(rng.randrange(len(live)))  # left or SIGKILLed: its count is gone
            rebalance(live, rng)
        for replica in live:
            await replica.spend(clock.now())
        clock.advance(STEP_S)
    return sorted(t for r in everyone for t in r.calls)


churn = st.lists(
    st.tuples(st.floats(0, RUN_S), st.sampled_from(["join", "leave", "rebalance"])),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(
    start=st.integers(1, 4),
    events=churn,
    seed=st.integers(0, 2**16),
    per_minute_usd=st.sampled_from([0.12, 0.30]),  # the cost window binds first, or rpm does
)
def test_the_fleet_never_exceeds_its_limits_whatever_the_churn(
    start: int, events: list[tuple[float, str]], seed: int, per_minute_usd: float
) -> None:
    calls = asyncio.run(simulate(start, events, seed, per_minute_usd))
    for i, t in enumerate(calls):
        in_minute = sum(1 for u in calls[i:] if u < t + 60)
        assert in_minute <= RPM, (t, in_minute)
    per_window: dict[int, int] = {}
    for t in calls:
        per_window[int(t // 60)] = per_window.get(int(t // 60), 0) + 1
    assert max(per_window.values(), default=0) * CALL_USD <= per_minute_usd + 1e-9, per_window


def test_the_simulated_fleet_does_spend() -> None:
    """The bound is not met by a fleet that hardly judges: steady, it spends each window."""
    calls = asyncio.run(simulate(3, [], seed=1, per_minute_usd=0.30))
    windows = {int(t // 60) for t in calls}
    assert len(windows) >= 4
    assert len(calls) >= 3 * RPM
