"""Budgets through the real OpenAI SDK over loopback HTTP against FakeLLMServer: the concurrency
bound seen by the server, a 429 storm, and an outage of 500s and hangs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from guard.assembly import make_budgeted_judge
from guard.budgets import BreakerState, BudgetedJudge, BudgetSettings
from guard.engine import Guard
from guard.models import JudgeRequest, Label, Verdict
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings
from guard.testing import FakeLLMServer, Fault
from guard.testing.fake_server import marker_verdict

ENV = {"OPENAI_API_KEY": "sk-test-budgets", "ANTHROPIC_API_KEY": "sk-ant-test-budgets"}
CONTEXT = ["Our return policy allows returns within 30 days."]
FAST_RETRY = RetryPolicy(
    max_retries=1, base_delay_s=0.001, max_delay_s=0.002, retry_after_cap_s=0.05, on_retry=None
)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict, latency_s=0.01) as srv:
        yield srv


def _guard(
    server: FakeLLMServer, timeout_s: float = 5.0, provider: str = "openai", **budget: object
) -> tuple[Guard, BudgetedJudge]:
    base_url = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
    settings = JudgeSettings(
        provider=provider,
        base_url=base_url,  # type: ignore[arg-type]
        timeout_s=timeout_s,
        budget=BudgetSettings.model_validate({"cache_size": 0} | budget),
    )
    judge = make_budgeted_judge(settings, ENV, retry=FAST_RETRY)
    return Guard(judge, settings), judge


async def _judge_all(guard: Guard, n: int, spacing_s: float = 0.0) -> list[Verdict]:
    async def one(i: int) -> Verdict:
        await asyncio.sleep(i * spacing_s)
        return await guard.judge(
            JudgeRequest(id=f"r{i}", output=f"Returns: 30 days ({i}).", context=CONTEXT)
        )

    return await asyncio.gather(*(one(i) for i in range(n)))


async def test_server_never_sees_more_than_max_in_flight(server: FakeLLMServer) -> None:
    """100 requests at max_in_flight=6: the server's peak in-flight count is exactly 6."""
    guard, _ = _guard(server, max_in_flight=6)
    try:
        verdicts = await _judge_all(guard, 100)
    finally:
        await guard.aclose()
    assert {v.label for v in verdicts} == {Label.PASS}
    assert server.stats()["peak_in_flight"] == 6


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_429_storm_every_request_judged_without_retry_storm(
    server: FakeLLMServer, provider: str
) -> None:
    """Every call 429s (Retry-After 0.2 s) for 0.6 s: all 60 requests are judged, and the
    server sees the first wave plus about one probe per Retry-After, not one retry per caller."""
    server.inject(Fault("rate_limit", retry_after_s=0.2), times=None)
    guard, judge = _guard(server, provider=provider, max_in_flight=8)

    async def storm_passes() -> None:
        await asyncio.sleep(0.6)
        server.clear_faults()

    try:
        verdicts, _ = await asyncio.gather(_judge_all(guard, 60), storm_passes())
    finally:
        await guard.aclose()
    assert {v.label for v in verdicts} == {Label.PASS}
    stats = server.stats()
    rate_limited = stats["by_status"].get("429", 0)
    assert rate_limited <= 8 + 0.6 / 0.2 + 2
    assert stats["requests_total"] == 60 + rate_limited
    assert judge.stats().rate.provider_429s == rate_limited


async def test_outage_of_hangs_and_500s_every_request_gets_a_verdict(server: FakeLLMServer) -> None:
    """A compressed outage (hangs, then 500s) trips the breaker: each of 80 requests gets a
    verdict (`error` while down, `pass` after), the breaker closes again, and the guard never
    has more than max_in_flight calls open (the server may hold more: a call the client gave up
    on at its timeout still hangs there)."""
    server.inject(Fault("hang", hang_s=0.8), times=6)
    server.inject(Fault("server_error"), times=None)
    guard, judge = _guard(
        server, timeout_s=0.4, max_in_flight=4, breaker={"failure_threshold": 3, "open_for_s": 0.2}
    )

    async def outage_ends() -> None:
        await asyncio.sleep(1.0)
        server.clear_faults()

    try:
        verdicts, _ = await asyncio.gather(_judge_all(guard, 80, spacing_s=0.03), outage_ends())
    finally:
        await guard.aclose()
    assert len(verdicts) == 80
    labels = [v.label for v in verdicts]
    assert set(labels) == {Label.ERROR, Label.PASS}
    assert labels[-10:] == [Label.PASS] * 10
    reasons = {v.reason for v in verdicts if v.label is Label.ERROR}
    assert "circuit_open" in reasons
    assert reasons <= {"circuit_open", "judge_timeout", "judge_unavailable"}
    assert judge.stats().breaker.opened >= 1
    assert judge.breaker.state is BreakerState.CLOSED
    assert judge.stats().peak_in_flight <= 4
