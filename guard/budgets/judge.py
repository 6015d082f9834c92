"""One budgeted judge from a provider judge and :class:`BudgetSettings`.

The layers, outermost first::

    sampling -> cache -> cost budget -> breaker -> concurrency -> retry -> rate limit -> provider

so an unsampled message or a cache hit costs nothing and waits for nothing; a spent budget is
decided before the breaker or the provider's limits are consulted; an open breaker fails fast
instead of queueing; every provider call, retries included, passes the rate limiter at the
moment it is made (a caller admitted earlier cannot fire into a 429 pause); and a 429 goes
past the retry policy to the rate limiter, which pauses every caller, not just one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from guard.budgets.breaker import BreakerJudge, BreakerSnapshot, BreakerState, CircuitBreaker
from guard.budgets.cache import CachedJudge, CacheSnapshot, VerdictCache
from guard.budgets.clock import Clock, SystemClock
from guard.budgets.concurrency import ConcurrencyLimitedJudge, RetryingJudge
from guard.budgets.cost import CostBudget, CostBudgetJudge, CostSnapshot, PriceFn
from guard.budgets.ratelimit import RateLimitedJudge, RateLimiter, RateSnapshot
from guard.budgets.sampling import SampledJudge
from guard.budgets.settings import BudgetSettings, FleetMode
from guard.budgets.share import ShareHistory
from guard.case import PreparedCase
from guard.providers.base import Judge, JudgeOutcome
from guard.retry import RetryPolicy

if TYPE_CHECKING:  # redis is imported only when the Redis backend is configured
    from guard.budgets.shared import SharedBudget, SharedSnapshot


@dataclass(frozen=True)
class BudgetStats:
    """Everything the budget layers know, in one snapshot for metrics and logs."""

    provider_calls: int  # calls made to the provider judge, retries included
    in_flight: int
    peak_in_flight: int
    max_in_flight: int
    cache: CacheSnapshot | None
    unsampled: int
    budget_paused: int  # waits under the pause policy
    fallbacks: int
    breaker: BreakerSnapshot
    rate: RateSnapshot
    cost: CostSnapshot
    retries: dict[str, int] = field(default_factory=dict)  # retried calls, by error kind
    fleet_share: float = 1.0  # this replica's share of the fleet's rpm, tpm and cost windows
    shared: SharedSnapshot | None = None  # the Redis backend (fleet: redis)

    @property
    def breaker_state(self) -> BreakerState:
        return self.breaker.state

    def fields(self) -> dict[str, float | int | str]:
        """Flat ``name -> value`` pairs for a log line or gauges (``spent_usd.day`` ...)."""
        out: dict[str, float | int | str] = {
            "provider_calls": self.provider_calls,
            "in_flight": self.in_flight,
            "peak_in_flight": self.peak_in_flight,
            "unsampled": self.unsampled,
            "budget_paused": self.budget_paused,
            "fallbacks": self.fallbacks,
            "breaker_state": self.breaker.state.value,
            "breaker_opened": self.breaker.opened,
            "breaker_rejected": self.breaker.rejected,
            "provider_429s": self.rate.provider_429s,
            "rate_waits": self.rate.waits,
            "budget_refusals": self.cost.exhausted,
            "spent_usd": self.cost.total_spent_usd,
            "fallback_spent_usd": self.cost.fallback_spent_usd,
            "fleet_share": self.fleet_share,
        }
        if self.shared is not None:
            out |= {
                "shared_up": int(self.shared.up),
                "shared_outages": self.shared.outages,
                "shared_cache_hits": self.shared.cache_hits,
            }
        if self.cache is not None:
            out |= {
                "cache_hits": self.cache.hits,
                "cache_misses": self.cache.misses,
                "cache_shared": self.cache.shared,
                "cache_size": self.cache.size,
            }
        out |= {f"tokens.{kind}": n for kind, n in sorted(self.cost.tokens.items())}
        out |= {f"calls.{tier}": n for tier, n in sorted(self.cost.tiers.items())}
        for w in self.cost.windows:
            out |= {
                f"spent_usd.{w.window}": w.spent_usd,
                f"left_usd.{w.window}": w.left_usd,
                f"resets_in_s.{w.window}": w.resets_in_s,
            }
        return out


class BudgetedJudge:
    """A :class:`~guard.providers.base.Judge` with every budget layer around ``provider_judge``.

    Raises what the layers raise: :class:`~guard.errors.JudgementSkipped` (``not_sampled``,
    ``budget_exhausted:<window>``), :class:`~guard.errors.CircuitOpen`,
    :class:`~guard.errors.RateLimited` after ``max_rate_wait_s``, and the provider's errors.
    """

    def __init__(
        self,
        provider_judge: Judge,
        fallback: Judge | None,
        settings: BudgetSettings,
        *,
        price: PriceFn,
        retry: RetryPolicy | None,
        clock: Clock,
        screen: Callable[[Judge], Judge] | None = None,
        shared: SharedBudget | None = None,
    ) -> None:
        self.provider, self.model = provider_judge.provider, provider_judge.model
        self.settings = settings
        self._provider_judge, self._fallback = provider_judge, fallback
        self.shared = shared
        semaphore = asyncio.Semaphore(settings.max_in_flight)
        self.share = ShareHistory(clock)  # of the fleet's limits: the rate limits' and cost's
        self.limiter = _rate_limiter(settings, clock, self.share)
        self._limited = RateLimitedJudge(
            provider_judge,
            self.limiter,
            max_attempts=settings.max_rate_limited_attempts,
            shared=shared,
            clock=clock,
        )
        self._retrying = RetryingJudge(self._limited, retry) if retry else None
        inner: Judge = self._retrying or self._limited
        self._slots = ConcurrencyLimitedJudge(inner, semaphore)
        self.breaker = _breaker(settings, clock)
        self._fallback_slots = (
            ConcurrencyLimitedJudge(fallback, semaphore) if fallback is not None else None
        )
        self._cost = CostBudgetJudge(
            BreakerJudge(self._slots, self.breaker),
            CostBudget(settings.cost_limits(), clock, self.share),
            price=price,
            policy=settings.on_budget_exhausted,
            fallback=self._fallback_slots,
            max_pause_s=settings.max_pause_s,
            clock=clock,
            shared=shared,
        )
        # A screen (the cascade's offline judge) decides before any budget is spent: only the
        # cases it hands on reach the cost budget, breaker, concurrency and rate limits.
        self.screen = screen(self._cost) if screen is not None else None
        decider: Judge = self.screen or self._cost
        self._cache = _cached(decider, settings, clock, shared)
        self._sampler = SampledJudge(
            self._cache or decider, rate=settings.sample_rate, key=settings.sample_key
        )
        if self.screen is not None:
            self.provider, self.model = self.screen.provider, self.screen.model
        self._partition_share = 1.0
        if shared is not None:
            shared.on_change = self._take_share

    def rescale(self, share: float) -> None:
        """Limit this replica to ``share`` (0..1) of the configured ``rpm``, ``tpm`` and cost
        windows (the runtime passes its share of the input partitions after every rebalance).
        A smaller share applies at once, a larger one a window later (:class:`ShareHistory`:
        the previous owner's spend is unknown); spend and calls already counted in the current
        windows stay counted. With Redis up, the fleet's limits are checked there and the local
        ones stay whole; the share applies while Redis is unavailable (and for a window after
        it returns, until Redis' count covers the window again)."""
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"a fleet share is between 0 and 1, not {share}")
        self._partition_share = share
        self._take_share()

    def _take_share(self) -> None:
        if self.settings.fleet is FleetMode.PER_REPLICA:
            return
        up = self.shared is not None and self.shared.up
        self.share.set(1.0 if up else self._partition_share)

    @property
    def fleet_share(self) -> float:
        """The share of the fleet's rpm and tpm this replica may take now (cost windows: the
        lowest held since each window began)."""
        return self.share.lowest()

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        return await self._sampler.assess(case)

    async def aclose(self) -> None:
        try:
            await (self.screen or self._provider_judge).aclose()
        finally:
            if self._fallback is not None:
                await self._fallback.aclose()
            if self.shared is not None:
                await self.shared.aclose()

    def stats(self) -> BudgetStats:
        fb = self._fallback_slots
        return BudgetStats(
            provider_calls=self._limited.calls,
            in_flight=self._slots.in_flight + (fb.in_flight if fb else 0),
            peak_in_flight=self._slots.peak_in_flight,
            max_in_flight=self.settings.max_in_flight,
            cache=self._cache.snapshot() if self._cache else None,
            unsampled=self._sampler.unsampled,
            budget_paused=self._cost.paused,
            fallbacks=self._cost.fallbacks,
            breaker=self.breaker.snapshot(),
            rate=self.limiter.snapshot(),
            cost=self._cost.budget.snapshot(),
            retries=dict(self._retrying.retries) if self._retrying else {},
            fleet_share=self.fleet_share,
            shared=self.shared.snapshot() if self.shared is not None else None,
        )


def _rate_limiter(settings: BudgetSettings, clock: Clock, share: ShareHistory) -> RateLimiter:
    return RateLimiter(
        rpm=settings.rpm,
        tpm=settings.tpm,
        max_wait_s=settings.max_rate_wait_s,
        cooldown_s=settings.rate_limit_cooldown_s,
        clock=clock,
        share=share,
    )


def _breaker(settings: BudgetSettings, clock: Clock) -> CircuitBreaker:
    b = settings.breaker
    return CircuitBreaker(
        failure_threshold=b.failure_threshold,
        open_for_s=b.open_for_s,
        half_open_probes=b.half_open_probes,
        clock=clock,
    )


def _cached(
    inner: Judge, settings: BudgetSettings, clock: Clock, shared: SharedBudget | None
) -> CachedJudge | None:
    if settings.cache_size <= 0:
        return None
    cache = VerdictCache(
        max_size=settings.cache_size,
        ttl_s=settings.cache_ttl_s,
        clock=clock,
        max_bytes=settings.cache_max_bytes,
    )
    return CachedJudge(inner, cache, shared)


def build_budgeted_judge(
    judge: Judge,
    budget: BudgetSettings,
    *,
    price: PriceFn,
    fallback: Judge | None = None,
    retry: RetryPolicy | None = None,
    clock: Clock | None = None,
    screen: Callable[[Judge], Judge] | None = None,
    shared: SharedBudget | None = None,
) -> BudgetedJudge:
    """Wrap ``judge`` in every budget layer ``budget`` configures.

    ``price(model, usage)`` gives a call's cost in USD (e.g. ``PriceTable.cost``); ``fallback``
    is required when ``budget.on_budget_exhausted`` is ``fallback``; ``retry`` retries transient
    errors beneath the concurrency bound (leave it None when ``judge`` retries on its own).
    ``screen(budgeted)`` builds a judge that decides first and calls ``budgeted`` (``judge`` in
    its budget layers) only when it must: the cascade. Sampling and the cache stay outermost.
    ``shared`` (Redis) holds the fleet's limits and cache (``fleet: redis``).
    """
    return BudgetedJudge(
        judge,
        fallback,
        budget,
        price=price,
        retry=retry,
        clock=clock or SystemClock(),
        screen=screen,
        shared=shared,
    )
