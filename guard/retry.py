"""A bounded retry policy for transient judge errors.

Only errors whose class says ``retriable = True`` (:class:`~guard.errors.JudgeTimeout`,
:class:`~guard.errors.JudgeUnavailable`, :class:`~guard.errors.RateLimited`) are retried; every
other exception propagates at once. Delays grow exponentially with full jitter, a server's
``retry_after_s`` hint is honoured up to a cap, and the number of retries is bounded.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from guard import defaults
from guard.errors import JudgeError

T = TypeVar("T")
OnRetry = Callable[[int, JudgeError, float], None]
"""``(attempt, error, delay_s)``: called before each retry's sleep; ``attempt`` starts at 1."""

log = logging.getLogger("guard.retry")


def _log_retry(attempt: int, error: JudgeError, delay_s: float) -> None:
    log.warning(
        "judge.retry attempt=%d kind=%s status=%s delay_s=%.3f",
        attempt,
        error.kind,
        error.status,
        delay_s,
    )


@dataclass(frozen=True)
class RetryPolicy:
    """Retry transient judge errors at most ``max_retries`` times.

    The delay before retry *n* (1-based) is uniform in ``[0, min(max_delay_s,
    base_delay_s * 2**(n-1))]`` (full jitter); when the error carries ``retry_after_s`` the delay
    is that hint instead, capped at ``retry_after_cap_s``.
    """

    max_retries: int = defaults.DEFAULT_MAX_RETRIES
    base_delay_s: float = defaults.RETRY_BASE_DELAY_S
    max_delay_s: float = defaults.RETRY_MAX_DELAY_S
    retry_after_cap_s: float = defaults.RETRY_AFTER_CAP_S
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    on_retry: OnRetry | None = _log_retry
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("retry bounds must be non-negative")

    def delay_for(self, attempt: int, error: JudgeError) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based) after ``error``."""
        if error.retry_after_s is not None and error.retry_after_s > 0:
            return min(error.retry_after_s, self.retry_after_cap_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return self.rng.uniform(0.0, ceiling)

    async def run(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Call ``fn`` until it returns, retrying only retriable :class:`JudgeError` s."""
        attempt = 0
        while True:
            try:
                return await fn()
            except JudgeError as error:
                if not error.retriable or attempt >= self.max_retries:
                    raise
                attempt += 1
                delay = self.delay_for(attempt, error)
                if self.on_retry is not None:
                    self.on_retry(attempt, error, delay)
                await self.sleep(delay)
