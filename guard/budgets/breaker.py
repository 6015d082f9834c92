"""Circuit breaker: stop calling a judge that is down, and probe before trusting it again.

States::

    closed ──(failure_threshold consecutive outage failures)──> open
    open ──(open_for_s passed)──> half_open          (while open: CircuitOpen, no call made)
    half_open ──(a probe succeeds)──> closed
    half_open ──(a probe fails)──> open              (at most half_open_probes probes at once)

Only outage failures count: timeouts and unavailability (retriable errors other than
:class:`~guard.errors.RateLimited`, which the rate limiter owns). A judge that answers, even
with a rejected request or malformed output, is up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from guard.budgets.clock import Clock
from guard.budgets.layer import JudgeLayer
from guard.case import PreparedCase
from guard.errors import CircuitOpen, JudgeError, RateLimited
from guard.providers.base import Judge, JudgeOutcome

_log = logging.getLogger("guard.budgets")


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says the judge is down (as opposed to busy, or answering badly)."""
    return isinstance(exc, JudgeError) and exc.retriable and not isinstance(exc, RateLimited)


@dataclass(frozen=True)
class BreakerSnapshot:
    state: BreakerState
    consecutive_failures: int
    opened: int  # times the breaker has opened
    rejected: int  # calls refused while open
    reopens_in_s: float


class CircuitBreaker:
    def __init__(
        self, *, failure_threshold: int, open_for_s: float, half_open_probes: int, clock: Clock
    ) -> None:
        self._threshold = failure_threshold
        self._open_for_s = open_for_s
        self._max_probes = half_open_probes
        self._clock = clock
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probes = 0
        self.opened = 0
        self.rejected = 0

    @property
    def state(self) -> BreakerState:
        if self._state is BreakerState.OPEN and self._open_left() <= 0:
            self._state, self._probes = BreakerState.HALF_OPEN, 0
        return self._state

    def before_call(self) -> bool:
        """Admit a call or raise :class:`CircuitOpen`. Returns whether the call is a probe."""
        state = self.state
        if state is BreakerState.CLOSED:
            return False
        if state is BreakerState.HALF_OPEN and self._probes < self._max_probes:
            self._probes += 1
            return True
        self.rejected += 1
        raise CircuitOpen(
            f"circuit open after {self._failures} consecutive judge failures",
            retry_after_s=max(self._open_left(), 0.0),
        )

    def after_call(self, probe: bool, exc: BaseException | None) -> None:
        """Record how an admitted call ended (``exc`` None: it succeeded)."""
        if probe:
            self._probes -= 1
        if exc is not None and is_outage(exc):
            self._failures += 1
            closed = self._state is BreakerState.CLOSED
            if probe or (closed and self._failures >= self._threshold):
                self._open()
        elif exc is None or isinstance(exc, JudgeError):
            self._failures = 0
            if probe and self._state is not BreakerState.CLOSED:
                _log.info("breaker.closed: a probe call succeeded")
                self._state = BreakerState.CLOSED

    def snapshot(self) -> BreakerSnapshot:
        state = self.state
        return BreakerSnapshot(
            state,
            self._failures,
            self.opened,
            self.rejected,
            max(self._open_left(), 0.0) if state is BreakerState.OPEN else 0.0,
        )

    def _open(self) -> None:
        _log.warning(
            "breaker.opened failures=%d open_for_s=%.1f: judge calls fail fast",
            self._failures,
            self._open_for_s,
        )
        self.opened += 1
        self._state, self._opened_at, self._probes = BreakerState.OPEN, self._clock.now(), 0

    def _open_left(self) -> float:
        return self._opened_at + self._open_for_s - self._clock.now()


class BreakerJudge(JudgeLayer):
    """Fails fast with :class:`CircuitOpen` while ``breaker`` is open."""

    def __init__(self, inner: Judge, breaker: CircuitBreaker) -> None:
        super().__init__(inner)
        self.breaker = breaker

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        probe = self.breaker.before_call()
        try:
            outcome = await self.inner.assess(case)
        except BaseException as exc:
            self.breaker.after_call(probe, exc)
            raise
        self.breaker.after_call(probe, None)
        return outcome
