"""The judge concurrency bound, and retries of transient errors beneath it (the rate limiter
sits beneath both, so each attempt is admitted at the moment it is made)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter

from guard import tracing
from guard.budgets.layer import JudgeLayer
from guard.case import PreparedCase
from guard.errors import JudgeError, RateLimited
from guard.providers.base import Judge, JudgeOutcome
from guard.retry import RetryPolicy


class ConcurrencyLimitedJudge(JudgeLayer):
    """At most ``semaphore``'s count of calls to ``inner`` at once (the semaphore may be shared
    with a fallback judge so the bound covers both)."""

    def __init__(self, inner: Judge, semaphore: asyncio.Semaphore) -> None:
        super().__init__(inner)
        self._semaphore = semaphore
        self.in_flight = self.peak_in_flight = self.calls = 0

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        with tracing.waiting("concurrency"):
            await self._semaphore.acquire()
        try:
            self.calls += 1
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                return await self.inner.assess(case)
            finally:
                self.in_flight -= 1
        finally:
            self._semaphore.release()


class _RateLimitSignal(Exception):
    """Carries a 429 past the retry policy: the rate limiter above handles it for everyone."""

    def __init__(self, error: RateLimited) -> None:
        super().__init__(str(error))
        self.error = error


class RetryingJudge(JudgeLayer):
    """Retries transient errors (timeouts, unavailable) with ``policy``; 429s go up unretried to
    the rate limiter, so one 429 pauses every caller instead of each retrying on its own."""

    def __init__(self, inner: Judge, policy: RetryPolicy) -> None:
        super().__init__(inner)
        self.retries: Counter[str] = Counter()  # retried calls, by error kind
        self._on_retry = policy.on_retry
        self._policy = dataclasses.replace(policy, on_retry=self._count_retry)

    def _count_retry(self, attempt: int, error: JudgeError, delay_s: float) -> None:
        self.retries[error.kind] += 1
        if self._on_retry is not None:
            self._on_retry(attempt, error, delay_s)

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        async def attempt() -> JudgeOutcome:
            try:
                return await self.inner.assess(case)
            except RateLimited as exc:
                raise _RateLimitSignal(exc) from exc

        try:
            return await self._policy.run(attempt)
        except _RateLimitSignal as signal:
            raise signal.error from signal.error.__cause__
