"""``judge.delivery: flex``: OpenAI's flex service tier, and what a capacity refusal does.

A flex call costs batch prices but may be refused with 429 "resource unavailable" (not billed)
when OpenAI lacks capacity. :class:`FlexTier` then, per ``judge.flex.on_capacity``:

* ``realtime``: sends the same call again at the default tier (list price), at once;
* ``wait``: retries flex with exponential backoff (or the server's ``retry-after``) until
  ``judge.flex.max_wait_s`` has passed, then fails the call as :class:`FlexUnavailable` (an
  ``error`` verdict of kind ``flex_unavailable``, routed by the failure policy; the budget
  stack neither retries it nor counts it as an outage or a rate limit).

Which tier served is what the provider reports (``Usage.service_tier``), so verdicts, cost and
metrics say it. Only models the price table marks ``flex: true`` may use it (checked at start).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

from guard import defaults
from guard.cost_settings import FlexSettings
from guard.errors import ConfigError, FlexUnavailable
from guard.providers.pricing import ModelPrice, PriceTable

T = TypeVar("T")
Tier = Literal["flex", "default"]
_log = logging.getLogger("guard.flex")
FLEX_MIN_TIMEOUT_S = 120.0  # below this, a start-up warning: flex calls are slow


def check_flex_has_a_judge(delivery: str, llm_model: str | None) -> None:
    """:class:`ConfigError` when ``delivery`` is flex but no LLM is called (offline, fake)."""
    if delivery == "flex" and llm_model is None:
        raise ConfigError(
            "judge.delivery",
            "flex needs an LLM judge; this provider calls none",
            "use provider openai (or cascade with an OpenAI LLM), or delivery=realtime",
        )


def check_flex(provider: str, model: str, price: ModelPrice | None) -> None:
    """:class:`ConfigError` unless ``model`` of ``provider`` offers the flex tier."""
    if provider != "openai":
        raise ConfigError(
            "judge.delivery",
            f"flex is an OpenAI service tier; {provider} does not offer it",
            "use delivery=batch (Anthropic Message Batches, 50% off) or realtime",
        )
    if price is None or not price.flex:
        bundled = PriceTable.load().prices.items()
        flex_models = ", ".join(sorted(name for name, entry in bundled if entry.flex))
        raise ConfigError(
            "judge.delivery",
            f"model {model!r} has no flex tier in the price table",
            f"use a flex model ({flex_models}), mark the model "
            '"flex": true in judge.price_file, or use delivery=batch',
        )


def warn_short_timeout(timeout_s: float) -> None:
    """Flex calls queue for capacity: OpenAI advises a timeout of up to 15 minutes."""
    if timeout_s < FLEX_MIN_TIMEOUT_S:
        _log.warning(
            "judge.flex_short_timeout timeout_s=%g: flex calls are slower; raise "
            "judge.timeout_s (OpenAI advises up to 900 s) or calls will time out",
            timeout_s,
        )


class FlexTier:
    """Runs a call at the flex tier and handles capacity refusals per ``settings``."""

    def __init__(
        self,
        settings: FlexSettings,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        base_delay_s: float = defaults.FLEX_RETRY_BASE_S,
        max_delay_s: float = defaults.FLEX_RETRY_MAX_S,
    ) -> None:
        self.settings = settings
        self._sleep, self._clock = sleep, clock
        self._base_s, self._max_s = base_delay_s, max_delay_s
        self.refusals = 0  # capacity refusals seen
        self.fallbacks = 0  # calls sent again at the default tier

    async def run(self, call: Callable[[Tier], Awaitable[T]]) -> T:
        """``call("flex")``; on a capacity refusal, ``call("default")`` or wait and retry."""
        deadline = self._clock() + self.settings.max_wait_s
        delay = self._base_s
        while True:
            try:
                return await call("flex")
            except FlexUnavailable as refusal:
                self.refusals += 1
                if self.settings.on_capacity == "realtime":
                    self.fallbacks += 1
                    _log.info("judge.flex_fallback tier=default reason=flex_unavailable")
                    return await call("default")
                left = deadline - self._clock()
                if left <= 0:
                    raise FlexUnavailable(
                        f"no flex capacity within {self.settings.max_wait_s:g}s: {refusal}",
                        status=refusal.status,
                    ) from refusal
                wait = min(refusal.retry_after_s or delay, left)
                _log.info("judge.flex_wait delay_s=%.3f left_s=%.1f", wait, left)
                await self._sleep(wait)
                delay = min(delay * 2, self._max_s)
