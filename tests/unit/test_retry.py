"""RetryPolicy: only retriable judge errors, bounded, Retry-After honoured and capped."""

from __future__ import annotations

import random

import pytest

from guard.errors import (
    ConfigError,
    JudgeError,
    JudgeRejected,
    JudgeTimeout,
    JudgeUnavailable,
    MalformedJudgeOutput,
    QuotaExhausted,
    RateLimited,
)
from guard.retry import RetryPolicy


class Recorder:
    def __init__(self) -> None:
        self.sleeps: list[float] = []
        self.retries: list[tuple[int, str, float]] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def on_retry(self, attempt: int, error: JudgeError, delay: float) -> None:
        self.retries.append((attempt, error.kind, delay))


def policy(rec: Recorder, **kw: float) -> RetryPolicy:
    values: dict[str, float] = {
        "max_retries": 3,
        "base_delay_s": 0.5,
        "max_delay_s": 8.0,
        "retry_after_cap_s": 60.0,
        **kw,
    }
    return RetryPolicy(
        max_retries=int(values["max_retries"]),
        base_delay_s=values["base_delay_s"],
        max_delay_s=values["max_delay_s"],
        retry_after_cap_s=values["retry_after_cap_s"],
        sleep=rec.sleep,
        on_retry=rec.on_retry,
        rng=random.Random(1),
    )


def failing(errors: list[BaseException], result: str = "ok"):  # type: ignore[no-untyped-def]
    calls = {"n": 0}

    async def fn() -> str:
        calls["n"] += 1
        if errors:
            raise errors.pop(0)
        return result

    return fn, calls


@pytest.mark.parametrize(
    "error",
    [
        JudgeTimeout("t"),
        JudgeUnavailable("u", status=503),
        RateLimited("r", status=429),
    ],
)
async def test_transient_errors_are_retried_until_success(error: JudgeError) -> None:
    rec = Recorder()
    fn, calls = failing([error, error])
    assert await policy(rec).run(fn) == "ok"
    assert calls["n"] == 3
    assert [r[0] for r in rec.retries] == [1, 2]


@pytest.mark.parametrize(
    "error",
    [
        JudgeRejected("bad", status=400),
        JudgeRejected("key", status=401),
        JudgeRejected("forbidden", status=403),
        QuotaExhausted("quota", status=429),
        MalformedJudgeOutput("prose"),
        ConfigError("f", "p", "x"),
        ValueError("bug"),
    ],
)
async def test_non_transient_errors_are_never_retried(error: Exception) -> None:
    rec = Recorder()
    fn, calls = failing([error])
    with pytest.raises(type(error)):
        await policy(rec).run(fn)
    assert calls["n"] == 1
    assert rec.sleeps == []


async def test_retries_are_bounded_and_the_last_error_surfaces() -> None:
    rec = Recorder()
    errors: list[BaseException] = [JudgeUnavailable(f"#{i}", status=500) for i in range(10)]
    fn, calls = failing(errors)
    with pytest.raises(JudgeUnavailable, match="#3"):
        await policy(rec, max_retries=3).run(fn)
    assert calls["n"] == 4
    assert len(rec.sleeps) == 3


async def test_zero_retries_means_one_attempt() -> None:
    rec = Recorder()
    fn, calls = failing([JudgeTimeout("t")])
    with pytest.raises(JudgeTimeout):
        await policy(rec, max_retries=0).run(fn)
    assert calls["n"] == 1


async def test_retry_after_is_honoured() -> None:
    rec = Recorder()
    fn, _ = failing([RateLimited("r", status=429, retry_after_s=7.0)])
    await policy(rec).run(fn)
    assert rec.sleeps == [7.0]
    assert rec.retries == [(1, "rate_limited", 7.0)]


async def test_retry_after_is_capped() -> None:
    rec = Recorder()
    fn, _ = failing([RateLimited("r", status=429, retry_after_s=3600.0)])
    await policy(rec, retry_after_cap_s=30.0).run(fn)
    assert rec.sleeps == [30.0]


async def test_backoff_is_exponential_with_full_jitter_and_capped() -> None:
    """Each delay lies in [0, min(max, base * 2**(n-1))]."""
    rec = Recorder()
    errors: list[BaseException] = [JudgeUnavailable("u") for _ in range(8)]
    fn, _ = failing(errors)
    await policy(rec, max_retries=8, base_delay_s=0.5, max_delay_s=4.0).run(fn)
    for n, delay in enumerate(rec.sleeps, start=1):
        assert 0.0 <= delay <= min(4.0, 0.5 * 2 ** (n - 1))
    assert len(set(rec.sleeps)) > 1  # jittered, not constant


def test_negative_bounds_are_rejected() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        RetryPolicy(max_retries=-1)


async def test_default_hook_logs_each_retry(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="guard.retry")
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    fn, _ = failing([JudgeUnavailable("u", status=502)])
    await RetryPolicy(max_retries=1, sleep=sleep).run(fn)
    assert [r.getMessage().split()[0] for r in caplog.records] == ["judge.retry"]
    assert "status=502" in caplog.records[0].getMessage()
