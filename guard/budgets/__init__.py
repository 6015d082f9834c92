"""Budgets and resilience around a judge: sampling, verdict cache, cost budget, circuit breaker,
rate limits and a concurrency bound, each a judge that wraps a judge.

Build them all with :func:`build_budgeted_judge`; read them with :meth:`BudgetedJudge.stats`.
"""

from guard.budgets.breaker import BreakerSnapshot, BreakerState, CircuitBreaker
from guard.budgets.cache import CacheSnapshot, VerdictCache, cache_key
from guard.budgets.clock import Clock, SystemClock, VirtualClock
from guard.budgets.cost import CostBudget, CostSnapshot, PriceFn, WindowSnapshot
from guard.budgets.judge import BudgetedJudge, BudgetStats, build_budgeted_judge
from guard.budgets.ratelimit import RateLimiter, RateSnapshot
from guard.budgets.sampling import is_sampled, sample_point
from guard.budgets.settings import BreakerSettings, BudgetPolicy, BudgetSettings, SampleKey

__all__ = [
    "BreakerSettings",
    "BreakerSnapshot",
    "BreakerState",
    "BudgetPolicy",
    "BudgetSettings",
    "BudgetStats",
    "BudgetedJudge",
    "CacheSnapshot",
    "CircuitBreaker",
    "Clock",
    "CostBudget",
    "CostSnapshot",
    "PriceFn",
    "RateLimiter",
    "RateSnapshot",
    "SampleKey",
    "SystemClock",
    "VerdictCache",
    "VirtualClock",
    "WindowSnapshot",
    "build_budgeted_judge",
    "cache_key",
    "is_sampled",
    "sample_point",
]
