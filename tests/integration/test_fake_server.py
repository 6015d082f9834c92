"""The shipped loopback fake of the OpenAI and Anthropic APIs, driven by the real SDKs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import openai
import pytest

from guard.decide.assessment import BinaryAssessment, Scale5Assessment
from guard.testing import FakeLLMServer, Fault
from guard.testing.fake_server import marker_verdict

USER = [{"role": "user", "content": "Evidence: the sky is blue. Output: the sky is blue."}]
HALLU = [{"role": "user", "content": "Output: HALLUCINATED moon cheese."}]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict) as srv:
        yield srv


@pytest.fixture
async def oai(server: FakeLLMServer) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(
        base_url=server.openai_base_url, api_key="sk-test", max_retries=0, timeout=10
    )
    yield client
    await client.close()


@pytest.fixture
async def ant(server: FakeLLMServer) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(
        base_url=server.anthropic_base_url, api_key="sk-ant-test", max_retries=0, timeout=10
    )
    yield client
    await client.close()


async def test_chat_parse_returns_schema_shaped_json(oai: openai.AsyncOpenAI) -> None:
    """Default script: grounded prompt -> score 5; prompt with the marker -> score 1."""
    ok = await oai.chat.completions.parse(
        model="gpt-4o-mini",
        messages=USER,  # type: ignore[arg-type]
        response_format=Scale5Assessment,
    )
    bad = await oai.chat.completions.parse(
        model="gpt-4o-mini",
        messages=HALLU,  # type: ignore[arg-type]
        response_format=Scale5Assessment,
    )
    assert ok.choices[0].message.parsed is not None
    assert ok.choices[0].message.parsed.score == 5
    assert bad.choices[0].message.parsed is not None
    assert bad.choices[0].message.parsed.score == 1
    assert not bad.choices[0].message.parsed.claims[0].supported


async def test_binary_schema_gets_grounded_field(oai: openai.AsyncOpenAI) -> None:
    """The same script answers a binary schema with ``grounded`` instead of ``score``."""
    res = await oai.responses.parse(
        model="gpt-4o-mini", input="HALLUCINATED", text_format=BinaryAssessment
    )
    assert res.output_parsed is not None
    assert res.output_parsed.grounded is False


async def test_anthropic_forced_tool_and_output_format(ant: anthropic.AsyncAnthropic) -> None:
    """A forced tool gets a tool_use block; ``messages.parse`` gets JSON text."""
    tool = {
        "name": "record",
        "description": "d",
        "strict": True,
        "input_schema": Scale5Assessment.model_json_schema(),
    }
    msg = await ant.messages.create(
        model="claude-haiku-4-5",
        max_tokens=100,
        messages=HALLU,  # type: ignore[arg-type]
        tools=[tool],
        tool_choice={"type": "tool", "name": "record"},
    )  # type: ignore[list-item]
    block = msg.content[0]
    assert block.type == "tool_use"
    assert Scale5Assessment.model_validate(block.input).score == 1
    parsed = await ant.messages.parse(
        model="claude-haiku-4-5",
        max_tokens=100,
        messages=USER,  # type: ignore[arg-type]
        output_format=BinaryAssessment,
    )
    assert parsed.parsed_output is not None
    assert parsed.parsed_output.grounded is True


async def test_usage_and_rate_limit_headers(
    server: FakeLLMServer, oai: openai.AsyncOpenAI, ant: anthropic.AsyncAnthropic
) -> None:
    """Every reply carries usage and the provider's rate-limit headers."""
    server.cached_tokens = 7
    raw = await oai.chat.completions.with_raw_response.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert "x-ratelimit-remaining-requests" in raw.headers
    usage = raw.parse().usage
    assert usage is not None
    assert usage.prompt_tokens > 0
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 7
    araw = await ant.messages.with_raw_response.create(model="m", max_tokens=5, messages=USER)  # type: ignore[arg-type]
    assert "anthropic-ratelimit-requests-remaining" in araw.headers
    assert (await araw.parse()).usage.cache_read_input_tokens == 7


async def test_fault_queue_is_served_in_order(
    server: FakeLLMServer, oai: openai.AsyncOpenAI
) -> None:
    """Queued faults hit the next requests in order, then calls succeed again."""
    server.inject(Fault("rate_limit", retry_after_s=2))
    server.inject(Fault("server_error"))
    with pytest.raises(openai.RateLimitError) as rl:
        await oai.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert rl.value.response.headers["retry-after"] == "2"
    with pytest.raises(openai.InternalServerError):
        await oai.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    await oai.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert server.stats()["faults"] == {"rate_limit": 1, "server_error": 1}


async def test_fault_kinds_have_provider_shapes(
    server: FakeLLMServer, oai: openai.AsyncOpenAI, ant: anthropic.AsyncAnthropic
) -> None:
    """quota -> 429 insufficient_quota; unauthorized -> 401; overloaded -> 529 (Anthropic)."""
    server.inject(Fault("quota"))
    with pytest.raises(openai.RateLimitError) as quota:
        await oai.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert quota.value.code == "insufficient_quota"
    server.inject(Fault("unauthorized"))
    with pytest.raises(anthropic.AuthenticationError):
        await ant.messages.create(model="m", max_tokens=5, messages=USER)  # type: ignore[arg-type]
    server.inject(Fault("overloaded"))
    with pytest.raises(anthropic.InternalServerError) as over:
        await ant.messages.create(model="m", max_tokens=5, messages=USER)  # type: ignore[arg-type]
    assert over.value.status_code == 529


async def test_path_scoped_fault_spares_other_paths(
    server: FakeLLMServer, oai: openai.AsyncOpenAI, ant: anthropic.AsyncAnthropic
) -> None:
    """A fault scoped to ``/messages`` does not hit an OpenAI call."""
    server.inject(Fault("server_error", path="/messages"))
    await oai.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    with pytest.raises(anthropic.InternalServerError):
        await ant.messages.create(model="m", max_tokens=5, messages=USER)  # type: ignore[arg-type]


async def test_scripted_verdict_and_refusal(server: FakeLLMServer, oai: openai.AsyncOpenAI) -> None:
    """A script sees the body and prompt text; ``_refusal`` becomes an OpenAI refusal."""
    seen: list[str] = []

    def script(body: dict[str, Any], text: str) -> dict[str, Any]:
        seen.append(text)
        return {"_refusal": "I cannot help with that."}

    server.set_verdict(script)
    res = await oai.chat.completions.parse(
        model="m",
        messages=USER,  # type: ignore[arg-type]
        response_format=Scale5Assessment,
    )
    assert res.choices[0].message.refusal == "I cannot help with that."
    assert res.choices[0].message.parsed is None
    assert "the sky is blue" in seen[0]


async def test_256_concurrent_keepalive_calls_are_all_in_flight(server: FakeLLMServer) -> None:
    """256 concurrent calls overlap on the server (peak in-flight counts them all)."""
    server.latency_s = 0.5
    client = openai.AsyncOpenAI(
        base_url=server.openai_base_url, api_key="k", max_retries=0, timeout=60
    )
    try:

        async def call() -> None:
            await client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]

        await asyncio.gather(*(call() for _ in range(256)))
        server.latency_s = 0.0
        await asyncio.gather(*(call() for _ in range(256)))  # reuses the open connections
    finally:
        await client.close()
    stats = server.stats()
    assert stats["peak_in_flight"] == 256
    assert stats["requests_total"] == 512
    assert stats["connections_total"] < 512  # kept-alive connections were reused


def test_stop_ends_a_hanging_request() -> None:
    """Stopping the server cancels a request hung by a ``hang`` fault (no thread left behind)."""
    srv = FakeLLMServer(verdict=marker_verdict, faults=[Fault("hang", hang_s=3600)])
    srv.start()
    client = openai.OpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0, timeout=0.3)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    client.close()
    srv.stop()
    assert srv.stats()["in_flight"] == 0


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def _post(url: str, payload: Any) -> Any:
    req = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        method="POST",
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def test_runs_as_a_process_with_control_endpoints() -> None:
    """``python -m guard.testing.fake_server`` prints its URL; /_faults and /_stats work."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "guard.testing.fake_server", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("FAKE_LLM_URL=http://127.0.0.1:")
        url = line.split("=", 1)[1]
        _post(f"{url}/_faults", {"faults": [{"kind": "server_error", "times": 1}]})
        _post(f"{url}/_script", {"verdict": {"explanation": "x", "claims": [], "score": 3}})
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0, timeout=10)
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        res = client.chat.completions.parse(
            model="m",
            messages=USER,  # type: ignore[arg-type]
            response_format=Scale5Assessment,
        )
        client.close()
        assert res.choices[0].message.parsed is not None
        assert res.choices[0].message.parsed.score == 3
        stats = _get(f"{url}/_stats")
        assert stats["requests_total"] == 2
        assert stats["by_status"] == {"500": 1, "200": 1}
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        if proc.stdout is not None:
            proc.stdout.close()


def test_restart_on_the_same_port() -> None:
    """A stopped server starts again on the same port (a judge outage and recovery)."""
    srv = FakeLLMServer(verdict=marker_verdict)
    srv.start()
    port = srv.port
    srv.stop()
    srv.start()
    try:
        assert srv.port == port
        client = openai.OpenAI(base_url=srv.openai_base_url, api_key="k", max_retries=0, timeout=10)
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        client.close()
    finally:
        srv.stop()
