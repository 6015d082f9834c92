"""When prompt caching pays, computed from the price table.

Every judge call starts with the same static prefix (the response schema and the system prompt,
:mod:`guard.providers.prompts`). Providers bill a cached prefix below list price:

* OpenAI caches automatically once the common prefix reaches ``cache_min_tokens`` (1,024), in
  steps of 128 tokens, with no write premium. A prefix below the minimum is never cached, so a
  longer prefix (the worked examples) can cost less per call than a shorter one:
  :func:`padding_pays` says at which cache hit rate.
* Anthropic caches only a block marked with a ``cache_control`` breakpoint, and bills the write
  (``cache_write``, 1.25x input for the 5-minute cache). One write pays off only if enough reads
  follow within the TTL: :func:`breakpoint_pays`. :class:`CallRate` counts the judge's own recent
  calls, the estimate of how many will follow (steady traffic), so ``auto`` marks the prefix
  exactly when the observed traffic makes it cheaper.

Hit rates follow a Poisson model: a call finds the prefix cached when another call came within
the TTL before it, ``1 - exp(-rate * ttl)``.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

from guard import defaults
from guard.providers.pricing import ModelPrice

_PER = 1_000_000


def cached_prefix_tokens(
    prefix_tokens: int, min_tokens: int, step: int = defaults.CACHE_STEP_TOKENS
) -> int:
    """Tokens of a ``prefix_tokens``-long common prefix that OpenAI bills as cached on a hit:
    none below ``min_tokens``, else ``min_tokens`` plus whole ``step`` s."""
    if prefix_tokens < min_tokens:
        return 0
    return min_tokens + (prefix_tokens - min_tokens) // step * step


def hit_rate(calls_per_min: float, ttl_s: float = defaults.CACHE_TTL_S) -> float:
    """Share of calls that find the prefix still cached at a steady ``calls_per_min``."""
    return 1.0 - math.exp(-max(calls_per_min, 0.0) * ttl_s / 60.0)


def prefix_usd(price: ModelPrice, prefix_tokens: int, hits: float) -> float:
    """Expected USD per call for the static prefix at OpenAI's automatic caching, with a share
    ``hits`` of calls finding it cached."""
    cached = cached_prefix_tokens(prefix_tokens, price.cache_min_tokens)
    per_hit = cached * price.cached_input + (prefix_tokens - cached) * price.input
    return (hits * per_hit + (1 - hits) * prefix_tokens * price.input) / _PER


def padding_pays(price: ModelPrice, short_tokens: int, padded_tokens: int, hits: float) -> bool:
    """Whether a ``padded_tokens`` prefix costs less per call than a ``short_tokens`` one."""
    return prefix_usd(price, padded_tokens, hits) < prefix_usd(price, short_tokens, hits)


def break_even_hit_rate(price: ModelPrice, short_tokens: int, padded_tokens: int) -> float | None:
    """The hit rate above which padding pays (None: it never does)."""
    cold = prefix_usd(price, padded_tokens, 0.0) - prefix_usd(price, short_tokens, 0.0)
    warm = prefix_usd(price, padded_tokens, 1.0) - prefix_usd(price, short_tokens, 1.0)
    if warm >= 0:
        return None
    return max(0.0, cold / (cold - warm))


def breakpoint_pays(price: ModelPrice, calls_per_ttl: float) -> bool:
    """Whether marking the prefix for Anthropic's cache costs less than not marking it, when
    ``calls_per_ttl`` calls share it within one TTL: one write and reads for the rest, against
    list price for all."""
    if calls_per_ttl <= 1:
        return False
    marked = price.cache_write + (calls_per_ttl - 1) * price.cached_input
    return marked < calls_per_ttl * price.input


def use_examples(
    setting: str, price: ModelPrice | None, short_prefix_tokens: int, padded_prefix_tokens: int
) -> bool:
    """Whether the prompt carries the worked examples: as set, or (``auto``) when they are what
    makes the prefix cached for certain: with them (``padded_prefix_tokens``) it reaches the
    model's cache minimum, without them (``short_prefix_tokens``) it is not past it by the
    error of the chars/4 estimate (``CACHE_ESTIMATE_MARGIN``), so it may well not be cached at
    all. Past that margin the examples would only add tokens. Unpriced (self-hosted) models get
    the shorter prompt."""
    if setting != "auto":
        return setting == "on"
    if price is None or padded_prefix_tokens < price.cache_min_tokens:
        return False
    return short_prefix_tokens < price.cache_min_tokens * defaults.CACHE_ESTIMATE_MARGIN


class CallRate:
    """The judge's calls in the last ``ttl_s`` seconds (bounded: older ones are dropped)."""

    def __init__(
        self,
        ttl_s: float = defaults.CACHE_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        max_kept: int = 10_000,
    ) -> None:
        self._ttl_s, self._clock = ttl_s, clock
        self._calls: deque[float] = deque(maxlen=max_kept)

    def record(self) -> int:
        """Count one call now; the calls within the TTL, this one included."""
        now = self._clock()
        self._calls.append(now)
        while self._calls and self._calls[0] <= now - self._ttl_s:
            self._calls.popleft()
        return len(self._calls)
