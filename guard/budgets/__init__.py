"""Budgets and resilience around a judge: sampling, verdict cache, cost budget, circuit breaker,
rate limits and a concurrency bound, each a judge that wraps a judge.

Build them all with :func:`build_budgeted_judge`; read them with :meth:`BudgetedJudge.stats`.
:class:`SharedBudget` (Redis) shares the limits and the cache across a fleet of replicas.

The names below load on first use (PEP 562), so :mod:`guard.settings`, which imports
:mod:`guard.budgets.settings`, loads no budget layer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guard.budgets.breaker import BreakerSnapshot, BreakerState, CircuitBreaker
    from guard.budgets.cache import CacheSnapshot, VerdictCache, cache_key
    from guard.budgets.clock import Clock, SystemClock, VirtualClock
    from guard.budgets.cost import CostBudget, CostSnapshot, PriceFn, WindowSnapshot
    from guard.budgets.judge import BudgetedJudge, BudgetStats, build_budgeted_judge
    from guard.budgets.ratelimit import RateLimiter, RateSnapshot
    from guard.budgets.sampling import is_sampled, sample_point
    from guard.budgets.settings import (
        BreakerSettings,
        BudgetPolicy,
        BudgetSettings,
        FleetMode,
        SampleKey,
    )
    from guard.budgets.shared import SharedBudget

_HOMES = {
    "BreakerSettings": "guard.budgets.settings",
    "BreakerSnapshot": "guard.budgets.breaker",
    "BreakerState": "guard.budgets.breaker",
    "BudgetPolicy": "guard.budgets.settings",
    "BudgetSettings": "guard.budgets.settings",
    "BudgetStats": "guard.budgets.judge",
    "BudgetedJudge": "guard.budgets.judge",
    "CacheSnapshot": "guard.budgets.cache",
    "CircuitBreaker": "guard.budgets.breaker",
    "Clock": "guard.budgets.clock",
    "CostBudget": "guard.budgets.cost",
    "CostSnapshot": "guard.budgets.cost",
    "FleetMode": "guard.budgets.settings",
    "PriceFn": "guard.budgets.cost",
    "RateLimiter": "guard.budgets.ratelimit",
    "RateSnapshot": "guard.budgets.ratelimit",
    "SampleKey": "guard.budgets.settings",
    "SharedBudget": "guard.budgets.shared",
    "SystemClock": "guard.budgets.clock",
    "VerdictCache": "guard.budgets.cache",
    "VirtualClock": "guard.budgets.clock",
    "WindowSnapshot": "guard.budgets.cost",
    "build_budgeted_judge": "guard.budgets.judge",
    "cache_key": "guard.budgets.cache",
    "is_sampled": "guard.budgets.sampling",
    "sample_point": "guard.budgets.sampling",
}

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
    "FleetMode",
    "PriceFn",
    "RateLimiter",
    "RateSnapshot",
    "SampleKey",
    "SharedBudget",
    "SystemClock",
    "VerdictCache",
    "VirtualClock",
    "WindowSnapshot",
    "build_budgeted_judge",
    "cache_key",
    "is_sampled",
    "sample_point",
]


def __getattr__(name: str) -> Any:
    """Load the budget layer that defines ``name`` when it is first asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
