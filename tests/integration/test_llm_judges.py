"""The OpenAI and Anthropic judges: the real SDKs over loopback HTTP against FakeLLMServer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from guard.assembly import make_judge
from guard.case import PreparedCase
from guard.decide.assessment import BinaryAssessment, Scale5Assessment
from guard.engine import Guard
from guard.errors import (
    JudgeError,
    JudgeRejected,
    JudgeTimeout,
    MalformedJudgeOutput,
    QuotaExhausted,
)
from guard.models import ErrorInfo, JudgeRequest, Label, ScoringMode
from guard.providers.anthropic import AnthropicJudge
from guard.providers.base import Judge
from guard.providers.factory import make_pricer
from guard.providers.openai import OpenAIJudge
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings, Provider
from guard.testing import FakeLLMServer, Fault
from guard.testing.fake_server import marker_verdict

SECRET = "sk-test-SECRETKEY0123456789abcdef"
CONTEXT = ["Our return policy allows returns within 30 days."]
GOOD = "You can return items within 30 days."
BAD = "You can return items within 90 days. HALLUCINATED"

# kind -> (settings overrides, Judge class)
KINDS: dict[str, tuple[dict[str, Any], type[Any]]] = {
    "openai-chat": ({"provider": "openai"}, OpenAIJudge),
    "openai-responses": ({"provider": "openai", "openai_api": "responses"}, OpenAIJudge),
    "anthropic": ({"provider": "anthropic"}, AnthropicJudge),
}


class RetryLog:
    """Records every retry the policy makes (attempt, error kind, delay)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str, float]] = []

    def __call__(self, attempt: int, error: JudgeError, delay: float) -> None:
        self.calls.append((attempt, error.kind, delay))


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: FakeLLMServer) -> None:
    server.clear_faults()
    server.set_verdict(None)
    server.reset_stats()


def settings_for(server: FakeLLMServer, kind: str, **extra: Any) -> JudgeSettings:
    overrides, _ = KINDS[kind]
    base_url = (
        server.anthropic_base_url
        if overrides["provider"] == "anthropic"
        else server.openai_base_url
    )
    values: dict[str, Any] = {
        "base_url": base_url,
        "timeout_s": 5.0,
        "max_retries": 2,
        **overrides,
        **extra,
    }
    return JudgeSettings(**values)


def fast_retry(
    log: RetryLog | None = None, max_retries: int = 2, cap_s: float = 0.05
) -> RetryPolicy:
    return RetryPolicy(
        max_retries=max_retries,
        base_delay_s=0.001,
        max_delay_s=0.002,
        retry_after_cap_s=cap_s,
        on_retry=log,
    )


def make(server: FakeLLMServer, kind: str, retry: RetryPolicy | None = None, **extra: Any) -> Judge:
    settings = settings_for(server, kind, **extra)
    cls = KINDS[kind][1]
    judge: Judge = cls(settings, SECRET, retry=retry or fast_retry())
    return judge


def case(output: str, mode: ScoringMode = ScoringMode.SCALE5) -> PreparedCase:
    guard = Guard(make_judge(JudgeSettings(provider=Provider.FAKE), {}), JudgeSettings(mode=mode))
    prepared = guard.prepare(JudgeRequest(output=output, context=CONTEXT))
    assert isinstance(prepared, PreparedCase)
    return prepared


@pytest.fixture(params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def judge(server: FakeLLMServer, kind: str) -> AsyncIterator[Judge]:
    j = make(server, kind)
    yield j
    await j.aclose()


async def test_structured_output_is_parsed_into_assessments(judge: Judge) -> None:
    """Grounded output -> score 5 with a quote from the evidence; marker -> score 1."""
    good = await judge.assess(case(GOOD))
    bad = await judge.assess(case(BAD))
    assert isinstance(good.assessment, Scale5Assessment)
    assert good.assessment.score == 5
    assert good.assessment.claims[0].evidence_quote == CONTEXT[0]
    assert isinstance(bad.assessment, Scale5Assessment)
    assert bad.assessment.score == 1
    assert not bad.assessment.claims[0].supported


async def test_binary_mode_asks_for_the_binary_schema(server: FakeLLMServer, kind: str) -> None:
    """In binary mode the judge demands and parses ``grounded``."""
    judge = make(server, kind)
    try:
        outcome = await judge.assess(case(BAD, ScoringMode.BINARY))
    finally:
        await judge.aclose()
    assert isinstance(outcome.assessment, BinaryAssessment)
    assert outcome.assessment.grounded is False


async def test_usage_and_rate_limit_headers_are_captured(
    server: FakeLLMServer, judge: Judge
) -> None:
    """Token usage (with cached tokens) and the provider's rate-limit headers are returned."""
    server.cached_tokens = 3
    try:
        outcome = await judge.assess(case(GOOD))
    finally:
        server.cached_tokens = 0
    assert outcome.usage.input_tokens > 3
    assert outcome.usage.output_tokens > 0
    assert outcome.usage.cached_tokens == 3
    anthropic = judge.provider == "anthropic"
    prefix = "anthropic-ratelimit-" if anthropic else "x-ratelimit-"
    remaining = (
        "anthropic-ratelimit-requests-remaining" if anthropic else "x-ratelimit-remaining-requests"
    )
    assert outcome.rate_limit[remaining].isdigit()
    assert all(name.startswith(prefix) for name in outcome.rate_limit)
    assert len(outcome.rate_limit) >= 4


async def test_request_is_temperature_zero_strict_schema(
    server: FakeLLMServer, judge: Judge
) -> None:
    """OpenAI calls send temperature 0 and a strict json_schema; Anthropic forces a strict
    tool (its 2.x API has no temperature)."""
    await judge.assess(case(GOOD))
    body = server.requests[-1]
    if body["_path"].endswith("/messages"):
        assert body["tool_choice"]["type"] == "tool"
        assert body["tools"][0]["strict"] is True
        assert "temperature" not in body
    else:
        assert body["temperature"] == 0
        fmt = body.get("response_format") or body["text"]["format"]
        assert fmt["type"] == "json_schema"
        assert fmt.get("strict", fmt.get("json_schema", {}).get("strict")) is True


async def test_retries_after_429_with_retry_after_and_500(server: FakeLLMServer, kind: str) -> None:
    """A 429 with Retry-After and a 500 are retried; the 429's delay is the hint."""
    log = RetryLog()
    judge = make(server, kind, retry=fast_retry(log))
    server.inject(Fault("rate_limit", retry_after_s=0.02))
    server.inject(Fault("server_error"))
    try:
        outcome = await judge.assess(case(GOOD))
    finally:
        await judge.aclose()
    assert isinstance(outcome.assessment, Scale5Assessment)
    assert server.stats()["requests_total"] == 3
    assert [(a, k) for a, k, _ in log.calls] == [(1, "rate_limited"), (2, "judge_unavailable")]
    assert log.calls[0][2] == pytest.approx(0.02)


async def test_retry_after_is_capped(server: FakeLLMServer, kind: str) -> None:
    """A Retry-After longer than the cap waits only the cap."""
    log = RetryLog()
    judge = make(server, kind, retry=fast_retry(log, cap_s=0.01))
    server.inject(Fault("rate_limit", retry_after_s=120))
    try:
        await judge.assess(case(GOOD))
    finally:
        await judge.aclose()
    assert log.calls[0][2] == pytest.approx(0.01)


async def test_retries_are_bounded(server: FakeLLMServer, kind: str) -> None:
    """A judge that keeps failing is called 1 + max_retries times, then the error surfaces."""
    judge = make(server, kind, retry=fast_retry(max_retries=2))
    server.inject(Fault("overloaded"), times=None)
    try:
        with pytest.raises(JudgeError) as err:
            await judge.assess(case(GOOD))
    finally:
        await judge.aclose()
    assert err.value.kind == "judge_unavailable"
    assert err.value.status == 529
    assert server.stats()["requests_total"] == 3


@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        ("unauthorized", JudgeRejected, 401),
        ("bad_request", JudgeRejected, 400),
        ("quota", QuotaExhausted, 429),
    ],
)
async def test_no_retry_after_rejection_or_quota(
    server: FakeLLMServer, kind: str, fault: str, error: type[JudgeError], status: int
) -> None:
    """401, 400 and quota-exhausted 429s are never retried."""
    log = RetryLog()
    judge = make(server, kind, retry=fast_retry(log))
    server.inject(Fault(fault), times=None)  # type: ignore[arg-type]
    try:
        with pytest.raises(error) as err:
            await judge.assess(case(GOOD))
    finally:
        await judge.aclose()
    assert err.value.status == status
    assert server.stats()["requests_total"] == 1
    assert log.calls == []
    assert SECRET not in str(err.value)


async def test_hang_longer_than_timeout_is_a_judge_timeout(
    server: FakeLLMServer, kind: str
) -> None:
    """A call that hangs past ``timeout_s`` raises JudgeTimeout (after bounded retries)."""
    # 1 s: long enough for each request to reach the fake on a loaded machine (counted below)
    judge = make(server, kind, retry=fast_retry(max_retries=1), timeout_s=1.0)
    server.inject(Fault("hang", hang_s=30), times=None)
    try:
        with pytest.raises(JudgeTimeout):
            await judge.assess(case(GOOD))
    finally:
        await judge.aclose()
    assert server.stats()["requests_total"] == 2


async def test_timeout_becomes_an_error_verdict(server: FakeLLMServer, kind: str) -> None:
    """Through the Guard, a judge timeout is an ``error`` verdict, not an exception."""
    settings = settings_for(server, kind, timeout_s=0.2, max_retries=0)
    judge = make(server, kind, retry=fast_retry(max_retries=0), timeout_s=0.2)
    error, _ = await judge_error(server, Guard(judge, settings), Fault("hang", hang_s=30))
    assert error.kind == "judge_timeout"


async def judge_error(server: FakeLLMServer, guard: Guard, fault: Fault) -> tuple[ErrorInfo, str]:
    """The error of the ``error`` verdict ``guard`` gives on a good answer while ``server``
    injects ``fault``, and the whole verdict as JSON."""
    server.inject(fault)
    try:
        verdict = await guard.judge(JudgeRequest(output=GOOD, context=CONTEXT))
    finally:
        await guard.aclose()
    assert verdict.label is Label.ERROR
    assert verdict.error is not None
    return verdict.error, verdict.model_dump_json()


@pytest.mark.parametrize(
    "script",
    [
        {"_refusal": "I can't help with that."},
        {"_raw_text": "The answer is grounded, score 5."},
        {"explanation": "x", "claims": [], "score": 9},
    ],
)
async def test_refusal_or_unparseable_output_is_malformed(
    server: FakeLLMServer, kind: str, script: dict[str, Any]
) -> None:
    """Refusals, prose and out-of-schema JSON are MalformedJudgeOutput, never a score."""
    judge = make(server, kind)
    server.set_verdict(lambda _body, _text: dict(script))
    try:
        with pytest.raises(MalformedJudgeOutput):
            await judge.assess(case(GOOD))
    finally:
        await judge.aclose()


async def test_malformed_http_body_is_malformed_output(server: FakeLLMServer, kind: str) -> None:
    """A 200 whose body is not JSON is MalformedJudgeOutput (not retried)."""
    judge = make(server, kind)
    server.inject(Fault("malformed"))
    try:
        with pytest.raises(MalformedJudgeOutput):
            await judge.assess(case(GOOD))
    finally:
        await judge.aclose()
    assert server.stats()["requests_total"] == 1


async def test_openai_compatible_base_url_with_any_path(server: FakeLLMServer) -> None:
    """A base URL with its own path prefix (a vLLM/Ollama proxy) works without a key."""
    settings = JudgeSettings(
        provider=Provider.OPENAI, model="llama3.1:8b", base_url=f"{server.base_url}/ollama/v1"
    )
    judge = make_judge(settings, {})
    try:
        outcome = await judge.assess(case(GOOD))
    finally:
        await judge.aclose()
    assert judge.provider == "openai-compatible"
    assert outcome.model == "llama3.1:8b"
    assert server.stats()["by_path"] == {"/ollama/v1/chat/completions": 1}
    assert make_pricer(settings)("llama3.1:8b", outcome.usage) == 0.0
    assert server.requests[-1]["max_tokens"] == settings.max_tokens


async def test_factory_judge_through_guard_prices_the_call(server: FakeLLMServer) -> None:
    """make_judge + make_pricer + Guard: a pass verdict with a cost from the price table."""
    settings = JudgeSettings(provider=Provider.ANTHROPIC, base_url=server.anthropic_base_url)
    judge = make_judge(settings, {"ANTHROPIC_API_KEY": SECRET})
    guard = Guard(judge, settings, price=make_pricer(settings))
    try:
        ok = await guard.judge(JudgeRequest(output=GOOD, context=CONTEXT))
        bad = await guard.judge(JudgeRequest(output=BAD, context=CONTEXT))
    finally:
        await guard.aclose()
    assert ok.label is Label.PASS
    assert ok.judge.model == "claude-haiku-4-5"
    assert ok.cost_usd > 0
    assert ok.quote_check.trusted
    assert bad.label is Label.FAIL
    assert bad.hallucinated is True


async def test_api_key_never_logged_or_shown(
    server: FakeLLMServer, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """With every logger at DEBUG, the key is in no log record, repr or error message."""
    caplog.set_level(logging.DEBUG)
    settings = settings_for(server, kind, api_key=SECRET)
    judge = make_judge(settings, {}, retry=fast_retry(max_retries=1))
    server.inject(Fault("rate_limit", retry_after_s=0.001))
    server.inject(Fault("unauthorized"))
    try:
        with pytest.raises(JudgeRejected) as err:
            await judge.assess(case(GOOD))
    finally:
        await judge.aclose()
    assert caplog.records
    for record in caplog.records:
        assert SECRET not in record.getMessage()
        assert SECRET not in repr(record.args)
    assert SECRET not in repr(settings)
    assert SECRET not in str(settings.model_dump())
    assert SECRET not in repr(judge)
    assert SECRET not in str(err.value)


async def test_busy_judge_keeps_its_connections_alive(server: FakeLLMServer) -> None:
    """With budget.max_in_flight=256, two waves of 256 concurrent calls reuse the connections
    of the first wave. The SDK's default pool keeps only 100 idle connections, so it would open
    at least 256 + 156 = 412; idle connections still expire after 5 s, so a loaded machine may
    open a few more than 256."""
    judge = make(server, "openai-chat", budget={"max_in_flight": 256}, timeout_s=60.0)
    server.latency_s = 0.5
    try:
        await asyncio.gather(*(judge.assess(case(GOOD)) for _ in range(256)))
        server.latency_s = 0.0
        await asyncio.gather(*(judge.assess(case(GOOD)) for _ in range(256)))
    finally:
        server.latency_s = 0.0
        await judge.aclose()
    stats = server.stats()
    assert stats["requests_total"] == 512
    assert stats["connections_total"] < 412


async def test_a_key_echoed_in_a_provider_error_never_reaches_the_verdict(
    server: FakeLLMServer, kind: str
) -> None:
    """A gateway that repeats the presented key in its 401 message: the key (not shaped like
    sk-..., shorter than 32 characters) is redacted from error.message and the explanation."""
    key = "corp-7f3a9c2e"
    settings = settings_for(server, kind, api_key=key, max_retries=0)
    error, verdict = await judge_error(
        server, Guard(make_judge(settings, {}), settings), Fault("unauthorized_echo")
    )
    assert error.kind == "judge_rejected"
    assert "Invalid credentials presented" in error.message
    assert key not in verdict


async def test_a_hallucination_after_the_output_window_fails_through_the_sdk(
    server: FakeLLMServer, kind: str
) -> None:
    """The fake model fails a prompt holding the HALLUCINATED marker: placed after 4,000
    characters of grounded text, it is judged in the second window."""
    settings = settings_for(server, kind)
    guard = Guard(
        make_judge(settings, {"OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET}), settings
    )
    long_output = GOOD + " " + "Returns are allowed within 30 days. " * 120 + BAD
    try:
        verdict = await guard.judge(JudgeRequest(output=long_output, context=CONTEXT))
    finally:
        await guard.aclose()
    assert verdict.label is Label.FAIL
    assert verdict.coverage is not None
    assert (verdict.coverage.chunks, verdict.coverage.complete) == (2, True)
    assert sum(server.stats()["by_path"].values()) == 2
