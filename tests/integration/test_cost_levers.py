"""Prompt caching and the flex tier through the real SDKs over loopback HTTP: the cached prefix,
cache reads and writes, and the flex tier's price reach the verdict's usage and cost."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard.assembly import build_guard, make_judge
from guard.engine import Guard
from guard.errors import ConfigError
from guard.models import JudgeRequest, Label, Usage, Verdict
from guard.offline import quality
from guard.providers.factory import make_pricer
from guard.providers.pricing import PriceTable
from guard.settings import JudgeSettings
from guard.testing import FakeLLMServer, FakePromptCache, Fault
from guard.testing.fake_api import fenced_text, prompt_text
from guard.testing.fake_server import SCRIPTS, marker_verdict

KEY = "sk-test-cost0123456789"
CONTEXT = ["Our return policy allows returns within 30 days of delivery."]
OUTPUTS = [
    "You can return items within 30 days.",
    "Returns are accepted for 30 days after delivery.",
    "You have thirty days from delivery to send it back.",
]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict, prompt_cache=FakePromptCache()) as srv:
        yield srv


def settings(server: FakeLLMServer, provider: str = "openai", **extra: Any) -> JudgeSettings:
    base = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
    values: dict[str, Any] = {
        "provider": provider,
        "base_url": base,
        "timeout_s": 5.0,
        "max_retries": 0,
        **extra,
    }
    return JudgeSettings.model_validate(values)


async def judge_all(s: JudgeSettings, outputs: list[str] = OUTPUTS) -> list[Verdict]:
    guard = Guard(
        make_judge(s, {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}), s, price=make_pricer(s)
    )
    try:
        return [await guard.judge(JudgeRequest(output=o, context=CONTEXT)) for o in outputs]
    finally:
        await guard.aclose()


def list_price(model: str, usage: Usage) -> float:
    """What the call would cost with no cache and no discount."""
    return PriceTable.load().cost(
        model, Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
    )


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_openai_calls_share_a_byte_identical_prefix_and_a_cache_key(
    server: FakeLLMServer, api: str
) -> None:
    """Two different cases: the schema and system prompt (the whole prefix before the user
    message) are the same bytes, and both carry the same prompt_cache_key."""
    await judge_all(settings(server, openai_api=api, prompt_cache={"cache_key": "gg"}), OUTPUTS[:2])
    first, second = server.requests[-2:]
    assert first["prompt_cache_key"] == second["prompt_cache_key"] == "gg"
    if api == "chat":
        assert first["response_format"] == second["response_format"]
        assert first["messages"][0] == second["messages"][0]
        assert first["messages"][1] != second["messages"][1]
    else:
        assert first["text"] == second["text"]
        assert first["instructions"] == second["instructions"]
        assert first["input"] != second["input"]


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_openai_cached_tokens_flow_into_the_verdicts_cost(
    server: FakeLLMServer, api: str
) -> None:
    """The first call misses the cache; later ones report cached tokens (in 128-token steps past
    1,024) and cost that much less, at gpt-4o-mini's cached-input price."""
    cold, warm, _ = await judge_all(settings(server, model="gpt-4o-mini", openai_api=api))
    assert cold.usage.cached_tokens == 0
    assert warm.usage.cached_tokens >= 1024
    assert (warm.usage.cached_tokens - 1024) % 128 == 0
    price = PriceTable.load().require("gpt-4o-mini")
    saved = warm.usage.cached_tokens * (price.input - price.cached_input) / 1e6
    assert warm.cost_usd == pytest.approx(list_price("gpt-4o-mini", warm.usage) - saved)
    assert cold.cost_usd == pytest.approx(list_price("gpt-4o-mini", cold.usage))


async def test_without_examples_the_prefix_is_cached_only_to_the_minimum(
    server: FakeLLMServer,
) -> None:
    """Without the examples the prefix is past 1,024 tokens by less than one 128-token step
    (and by less than the chars/4 estimate's error: why ``auto`` keeps them)."""
    verdicts = await judge_all(settings(server, prompt_cache={"examples": "off"}))
    assert [v.usage.cached_tokens for v in verdicts] == [0, 1024, 1024]
    assert all(v.label is Label.PASS for v in verdicts)


async def test_anthropic_breakpoint_writes_once_then_reads(server: FakeLLMServer) -> None:
    """With the breakpoint, the first call writes the prefix (1.25x), the next ones read it
    (0.1x); the verdicts' cost prices each part at its own rate."""
    s = settings(
        server,
        "anthropic",
        model="claude-sonnet-4",
        prompt_cache={"anthropic_breakpoint": "always"},
    )
    first, second, _ = await judge_all(s)
    assert server.requests[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first.usage.cache_write_tokens > 1024
    assert first.usage.cached_tokens == 0
    assert second.usage.cached_tokens == first.usage.cache_write_tokens
    price = PriceTable.load().require("claude-sonnet-4")
    extra = first.usage.cache_write_tokens * (price.cache_write - price.input) / 1e6
    assert first.cost_usd == pytest.approx(list_price("claude-sonnet-4", first.usage) + extra)
    saved = second.usage.cached_tokens * (price.input - price.cached_input) / 1e6
    assert second.cost_usd == pytest.approx(list_price("claude-sonnet-4", second.usage) - saved)


async def test_anthropic_auto_marks_once_traffic_makes_it_pay(server: FakeLLMServer) -> None:
    """auto: a lone call is not marked (a write would cost 1.25x for nothing); the next call
    within the TTL is, and the one after reads."""
    s = settings(server, "anthropic", model="claude-sonnet-4")
    verdicts = await judge_all(s)
    marked = ["cache_control" in r["system"][0] for r in server.requests]
    assert marked == [False, True, True]
    assert verdicts[2].usage.cached_tokens > 0


async def test_anthropic_auto_never_marks_below_the_models_cache_minimum(
    server: FakeLLMServer,
) -> None:
    """claude-haiku-4-5 caches prefixes of 4,096 tokens or more: the judge's prefix is shorter,
    so auto never pays a write premium for a cache that would not form."""
    await judge_all(settings(server, "anthropic", model="claude-haiku-4-5"))
    assert not any("cache_control" in r["system"][0] for r in server.requests)
    assert not any("WORKED EXAMPLE" in r["system"][0]["text"] for r in server.requests)


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_flex_sends_the_flex_tier_and_bills_batch_prices(
    server: FakeLLMServer, api: str
) -> None:
    s = settings(
        server,
        model="gpt-5-mini",
        delivery="flex",
        openai_api=api,
        prompt_cache={"examples": "off"},
    )
    verdict, *_ = await judge_all(s, OUTPUTS[:1])
    assert server.requests[-1]["service_tier"] == "flex"
    assert verdict.usage.service_tier == "flex"
    assert verdict.cost_usd == pytest.approx(0.5 * list_price("gpt-5-mini", verdict.usage))


async def test_flex_capacity_refusal_falls_back_to_the_default_tier(
    server: FakeLLMServer,
) -> None:
    server.inject(Fault("flex_unavailable"))
    s = settings(server, model="gpt-5-mini", delivery="flex", prompt_cache={"examples": "off"})
    verdict, *_ = await judge_all(s, OUTPUTS[:1])
    assert verdict.label is Label.PASS
    tiers = [r.get("service_tier") for r in server.requests]
    assert tiers == ["flex", "default"]
    assert verdict.usage.service_tier == "default"
    assert verdict.cost_usd == pytest.approx(list_price("gpt-5-mini", verdict.usage))


async def test_flex_wait_retries_flex_until_capacity_returns(server: FakeLLMServer) -> None:
    server.inject(Fault("flex_unavailable", retry_after_s=0.01), times=2)
    s = settings(
        server, model="gpt-5-mini", delivery="flex", flex={"on_capacity": "wait", "max_wait_s": 5}
    )
    verdict, *_ = await judge_all(s, OUTPUTS[:1])
    assert [r.get("service_tier") for r in server.requests] == ["flex"] * 3
    assert verdict.usage.service_tier == "flex"


async def test_flex_wait_gives_up_after_max_wait_once_through_the_budget_stack(
    server: FakeLLMServer,
) -> None:
    """Through the whole budget stack (which retries transient errors, pauses every caller on a
    429 and opens a breaker on outages): the flex wait happens once, then an error verdict of
    kind flex_unavailable; no retry repeats the wait and the breaker stays closed."""
    server.inject(Fault("flex_unavailable", retry_after_s=0.05), times=None)
    s = settings(
        server,
        model="gpt-5-mini",
        delivery="flex",
        max_retries=2,
        flex={"on_capacity": "wait", "max_wait_s": 0.12},
    )
    guard = build_guard(s, {"OPENAI_API_KEY": KEY})
    try:
        verdict = await guard.judge(JudgeRequest(output=OUTPUTS[0], context=CONTEXT))
        stats = guard.budget_stats()
    finally:
        await guard.aclose()
    assert verdict.label is Label.ERROR
    assert verdict.error is not None
    assert verdict.error.kind == "flex_unavailable"
    assert verdict.cost_usd == 0.0  # refused flex calls are not billed
    assert 2 <= len(server.requests) <= 4  # one wait of 0.12 s at 0.05 s steps
    assert stats is not None
    assert stats.breaker_state.value == "closed"


@pytest.mark.parametrize(
    ("provider", "model", "problem"),
    [("anthropic", "claude-haiku-4-5", "does not offer it"), ("openai", "gpt-4o-mini", "no flex")],
)
def test_flex_on_a_provider_or_model_without_it_fails_at_start(
    server: FakeLLMServer, provider: str, model: str, problem: str
) -> None:
    s = settings(server, provider, model=model, delivery="flex")
    with pytest.raises(ConfigError, match=problem) as err:
        make_judge(s, {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY})
    assert err.value.field == "judge.delivery"


REALISTIC = Path(__file__).parents[2] / "bench" / "data" / "realistic-dev.jsonl"


async def test_examples_do_not_change_what_the_judge_takes_for_the_case() -> None:
    """Dev-set rows through the real SDK and the fake's numbers script (it reads the case only
    from the fence markers): examples on or off, every verdict is the same, and the fenced
    OUTPUT of every request is the row's own answer, never an example's."""
    rows = [r for r in quality.load(REALISTIC) if "context" in r][:24]
    labels = {}
    with FakeLLMServer(verdict=SCRIPTS["numbers"]) as srv:
        for examples in ("off", "on"):
            s = settings(srv, prompt_cache={"examples": examples})
            guard = Guard(make_judge(s, {"OPENAI_API_KEY": KEY}), s)
            try:
                requests = [
                    JudgeRequest.model_validate({**r, "id": str(n)}) for n, r in enumerate(rows)
                ]
                labels[examples] = [(await guard.judge(r)).label for r in requests]
            finally:
                await guard.aclose()
        sent = srv.requests[-len(rows) :]
    assert labels["on"] == labels["off"]
    assert Label.FAIL in labels["on"]
    assert Label.PASS in labels["on"]
    for body in sent:
        assert "WORKED EXAMPLE" in body["messages"][0]["content"]
        output = fenced_text(prompt_text(body), "OUTPUT")
        assert output is not None
        assert output == fenced_text(body["messages"][1]["content"], "OUTPUT")


@pytest.mark.parametrize("provider", ["offline", "fake"])
def test_flex_without_an_llm_judge_fails_at_start(provider: str) -> None:
    s = JudgeSettings.model_validate({"provider": provider, "delivery": "flex"})
    with pytest.raises(ConfigError, match="flex needs an LLM judge") as err:
        build_guard(s, {})
    assert err.value.field == "judge.delivery"
