"""The circuit breaker: opens on consecutive outage failures, fails fast, probes, closes."""

from __future__ import annotations

import pytest

from guard.budgets import BreakerState, CircuitBreaker, VirtualClock
from guard.errors import (
    CircuitOpen,
    JudgeRejected,
    JudgeTimeout,
    JudgeUnavailable,
    MalformedJudgeOutput,
    RateLimited,
)


def _breaker(clock: VirtualClock, probes: int = 1) -> CircuitBreaker:
    return CircuitBreaker(
        failure_threshold=3, open_for_s=10.0, half_open_probes=probes, clock=clock
    )


def _fail(breaker: CircuitBreaker, times: int, exc: Exception | None = None) -> None:
    for _ in range(times):
        probe = breaker.before_call()
        breaker.after_call(probe, exc or JudgeUnavailable("down", status=500))


def test_opens_after_threshold_consecutive_outage_failures() -> None:
    """Two failures leave it closed; the third opens it and the next call fails fast."""
    breaker = _breaker(VirtualClock())
    _fail(breaker, 2)
    assert breaker.state is BreakerState.CLOSED
    _fail(breaker, 1, JudgeTimeout("slow"))
    assert breaker.state is BreakerState.OPEN
    with pytest.raises(CircuitOpen) as info:
        breaker.before_call()
    assert info.value.retry_after_s == pytest.approx(10.0)
    assert breaker.snapshot().rejected == 1


def test_a_success_resets_the_consecutive_count() -> None:
    """Failures separated by a success do not add up."""
    breaker = _breaker(VirtualClock())
    _fail(breaker, 2)
    breaker.after_call(breaker.before_call(), None)
    _fail(breaker, 2)
    assert breaker.state is BreakerState.CLOSED


@pytest.mark.parametrize(
    "exc",
    [
        RateLimited("429", retry_after_s=1.0),
        JudgeRejected("bad", status=400),
        MalformedJudgeOutput("not json"),
    ],
)
def test_only_outages_count(exc: Exception) -> None:
    """429s (the rate limiter's business) and answers that are wrong do not open it."""
    breaker = _breaker(VirtualClock())
    _fail(breaker, 5, exc)
    assert breaker.state is BreakerState.CLOSED


def test_half_open_lets_one_probe_through_and_closes_on_success() -> None:
    """After open_for_s one probe is admitted, a second concurrent call is refused, and the
    probe's success closes the breaker."""
    clock = VirtualClock()
    breaker = _breaker(clock)
    _fail(breaker, 3)
    clock.advance(10.0)
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.before_call() is True
    with pytest.raises(CircuitOpen):
        breaker.before_call()
    breaker.after_call(True, None)
    assert breaker.state is BreakerState.CLOSED
    assert breaker.before_call() is False


def test_a_failed_probe_reopens_for_another_period() -> None:
    """A probe that fails opens the breaker again for open_for_s."""
    clock = VirtualClock()
    breaker = _breaker(clock, probes=2)
    _fail(breaker, 3)
    clock.advance(10.0)
    breaker.after_call(breaker.before_call(), JudgeUnavailable("still down"))
    assert breaker.state is BreakerState.OPEN
    clock.advance(9.0)
    assert breaker.state is BreakerState.OPEN
    clock.advance(1.0)
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.snapshot().opened == 2


def test_opening_and_closing_are_logged_once_each(caplog: pytest.LogCaptureFixture) -> None:
    """Operators see the breaker's transitions in the logs, not one line per rejected call."""
    clock = VirtualClock()
    breaker = CircuitBreaker(failure_threshold=2, open_for_s=5, half_open_probes=1, clock=clock)
    caplog.set_level("INFO", logger="guard.budgets")
    for _ in range(2):
        breaker.after_call(breaker.before_call(), JudgeUnavailable("down"))
    for _ in range(3):
        with pytest.raises(CircuitOpen):
            breaker.before_call()
    clock.advance(6)
    breaker.after_call(breaker.before_call(), None)
    messages = [r.getMessage().split(" ")[0].rstrip(":") for r in caplog.records]
    assert messages == ["breaker.opened", "breaker.closed"]
