"""The streaming proxy with the real ``openai`` and ``anthropic`` SDKs, pointed at an in-process
``serve`` (only the base URL changed), in front of a loopback upstream that streams token by
token with delays (:class:`~guard.testing.fake_upstream.FakeUpstream`): the three release modes,
a failing span in each wire format, whole answers, a dropped upstream, a client that leaves
mid-stream, and what is forwarded upstream."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from structlog.testing import capture_logs

from consumers.asgi import AsgiServer
from consumers.serve.app import CheckApi, build_app
from consumers.serve.proxy.publish import Judged
from consumers.serve.service import make_api
from consumers.settings import ServiceSettings
from guard.assembly import build_guard
from guard.boundary import GuardCore
from guard.engine import Guard
from guard.errors import JudgeUnavailable
from guard.settings import JudgeSettings
from guard.stream.release import Release
from guard.testing import FakeJudge
from guard.testing.fake_upstream import FakeUpstream
from tests.integration.serveproc import ServeProcess

EVIDENCE = (
    "Returns are accepted within 30 days of delivery. The Premium plan costs $12,000 a month. "
    "Support at the café is run by Maria Lopez."
)
PASSING = (
    "Returns are accepted within 30 days. The Premium plan costs $12,000 a month. "
    "Support at the café is run by Maria Lopez."
)
FIRST = "Returns are accepted within 30 days. "
FAILING = (
    FIRST + "The Premium plan costs $15,000 a month. Support at the café is run by Maria Lopez."
)
NOTICE = "[withheld]"
QUESTION = [{"role": "user", "content": "How long do I have, and what does Premium cost?"}]
DELAY_S = 0.01


class Offered:
    """A publisher that keeps what the proxy offered it."""

    def __init__(self) -> None:
        self.offered: list[Judged] = []

    def start(self) -> None:
        pass

    def offer(self, judged: Judged) -> bool:
        self.offered.append(judged)
        return True

    async def aclose(self) -> None:
        pass


@asynccontextmanager
async def proxy(
    upstream: FakeUpstream, kind: str, guard: GuardCore | None = None, **settings: Any
) -> AsyncIterator[tuple[str, CheckApi]]:
    """``serve`` in this event loop in front of ``upstream``; yields its base URL."""
    url = upstream.openai_base_url if kind == "openai" else upstream.anthropic_base_url
    serve = {"api_keys_file": settings.pop("api_keys_file")} if "api_keys_file" in settings else {}
    proxy_settings = {"upstream_url": url, "upstream_kind": kind, "notice": NOTICE, **settings}
    service = ServiceSettings.model_validate(
        {"judge": {"provider": "offline"}, "serve": {**serve, "proxy": proxy_settings}}
    )
    judge = guard or build_guard(service.judge, os.environ)
    api, ready = make_api(service, judge, None)
    api.state.started = True
    server = AsgiServer(build_app(api, ready=ready), host="127.0.0.1", port=0)
    await server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", api
    finally:
        await server.close()
        assert api.proxy is not None
        await api.proxy.aclose()
        await judge.aclose()


def openai_client(base: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="sk-caller", max_retries=0)


def anthropic_client(base: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=base, api_key="sk-caller", max_retries=0)


async def openai_stream(base: str, **extra: Any) -> tuple[list[Any], list[float]]:
    """The chunks, and when each arrived (perf_counter)."""
    async with openai_client(base) as client:
        stream = await client.chat.completions.create(
            model="m",
            messages=QUESTION,
            stream=True,
            extra_body={"groundguard_context": EVIDENCE},
            **extra,
        )
        chunks, times = [], []
        async for chunk in stream:
            chunks.append(chunk)
            times.append(time.perf_counter())
        return chunks, times


def openai_text(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


async def anthropic_stream(base: str) -> tuple[list[str], anthropic.types.Message]:
    async with (
        anthropic_client(base) as client,
        client.messages.stream(
            model="m",
            max_tokens=200,
            messages=QUESTION,
            extra_body={"groundguard_context": EVIDENCE},
        ) as stream,
    ):
        texts = [text async for text in stream.text_stream]
        return texts, await stream.get_final_message()


def summary_of(chunks: list[Any]) -> dict[str, Any]:
    last = [c for c in chunks if c.choices][-1]
    assert last.model_extra is not None
    return dict(last.model_extra["groundguard"])


# --------------------------------------------------------------------------- verified


class TestVerified:
    async def test_openai_streams_a_grounded_answer_whole_releasing_sentences_as_judged(
        self,
    ) -> None:
        with FakeUpstream(answer=PASSING, token_delay_s=DELAY_S) as upstream:
            async with proxy(upstream, "openai") as (base, _):
                chunks, times = await openai_stream(base)
        assert openai_text(chunks) == PASSING
        texts = [
            t
            for c, t in zip(chunks, times, strict=True)
            if c.choices and c.choices[0].delta.content
        ]
        assert len(texts) >= 3  # one release per sentence, not one at the end
        assert texts[-1] - texts[0] > 4 * DELAY_S  # the first left while the answer was generated
        finish = [c.choices[0].finish_reason for c in chunks if c.choices]
        assert finish[-1] == "stop"
        about = summary_of(chunks)
        assert about["label"] == "pass"
        assert about["release"] == "verified"
        assert about["released_chars"] == len(PASSING)
        assert chunks[-1].usage is not None  # the upstream's usage chunk comes after

    async def test_anthropic_streams_a_grounded_answer_whole(self) -> None:
        with FakeUpstream(answer=PASSING, token_delay_s=DELAY_S) as upstream:
            async with proxy(upstream, "anthropic") as (base, _):
                texts, message = await anthropic_stream(base)
        assert "".join(texts) == PASSING
        assert len(texts) >= 3
        assert message.stop_reason == "end_turn"
        assert message.content[0].type == "text"
        assert message.content[0].text == PASSING

    async def test_openai_a_failing_span_ends_the_stream_with_content_filter_and_the_notice(
        self,
    ) -> None:
        with FakeUpstream(answer=FAILING, token_delay_s=DELAY_S) as upstream:
            async with proxy(upstream, "openai") as (base, api):
                with capture_logs() as logs:
                    chunks, _ = await openai_stream(base)
                assert api.admission.in_flight == 0
            stats = upstream.wait_settled()
        assert openai_text(chunks) == FIRST + NOTICE
        assert chunks[-1].choices[0].finish_reason == "content_filter"
        about = summary_of(chunks)
        assert about["label"] == "fail"
        assert about["stopped_at"] == len(FIRST)
        assert "claims" not in about
        assert stats.streams_cancelled == 1  # generation of the rest was cancelled
        verdicts = [e for e in logs if e["event"] == "proxy.verdict"]
        assert verdicts[0]["outcome"] == "stopped"
        assert verdicts[0]["released_chars"] == len(FIRST)

    async def test_anthropic_a_failing_span_ends_the_stream_with_a_refusal_stop(self) -> None:
        with FakeUpstream(answer=FAILING, token_delay_s=DELAY_S) as upstream:
            async with proxy(upstream, "anthropic") as (base, _):
                texts, message = await anthropic_stream(base)
        assert "".join(texts) == FIRST + NOTICE
        assert message.stop_reason == "refusal"
        assert message.content[0].type == "text"
        assert message.content[0].text == FIRST + NOTICE

    async def test_a_request_without_evidence_follows_the_no_evidence_policy(self) -> None:
        with FakeUpstream(answer=PASSING, token_delay_s=0) as upstream:
            async with proxy(upstream, "openai") as (base, _), openai_client(base) as client:
                stream = await client.chat.completions.create(
                    model="m", messages=QUESTION, stream=True
                )
                chunks = [c async for c in stream]
        assert openai_text(chunks) == NOTICE
        assert summary_of(chunks)["label"] == "fail"


# --------------------------------------------------------------------------- release modes


class TestReleaseModes:
    async def test_final_holds_every_character_until_the_whole_answer_is_judged(self) -> None:
        with FakeUpstream(answer=PASSING, token_delay_s=DELAY_S) as upstream:
            async with proxy(upstream, "openai", release="final") as (base, _):
                seen: list[int] = []
                async with openai_client(base) as client:
                    stream = await client.chat.completions.create(
                        model="m",
                        messages=QUESTION,
                        stream=True,
                        extra_body={"groundguard_context": EVIDENCE},
                    )
                    chunks = []
                    async for chunk in stream:
                        if chunk.choices and chunk.choices[0].delta.content:
                            seen.append(upstream.stats.streams_finished)
                        chunks.append(chunk)
        assert openai_text(chunks) == PASSING
        assert seen
        assert all(finished == 1 for finished in seen)
        assert summary_of(chunks)["release"] == "final"

    async def test_immediate_streams_a_failing_answer_and_logs_its_verdict_as_monitoring(
        self,
    ) -> None:
        with FakeUpstream(answer=FAILING, token_delay_s=DELAY_S) as upstream:
            async with proxy(upstream, "anthropic", release="immediate") as (base, api):
                with capture_logs() as logs:
                    texts, message = await anthropic_stream(base)
                    assert api.proxy is not None
                    await api.proxy.aclose()  # waits for the monitoring verdicts
        assert "".join(texts) == FAILING
        assert message.stop_reason == "end_turn"
        verdict = next(e for e in logs if e["event"] == "proxy.verdict")
        assert verdict["monitoring_only"] is True
        assert verdict["release"] == "immediate"
        assert verdict["label"] == "fail"


# --------------------------------------------------------------------------- whole answers


class TestWhole:
    async def test_openai_whole_answers_are_judged_before_they_are_returned(self) -> None:
        with FakeUpstream(answer=FAILING) as upstream:
            async with proxy(upstream, "openai") as (base, _), openai_client(base) as client:
                reply = await client.chat.completions.create(
                    model="m", messages=QUESTION, extra_body={"groundguard_context": EVIDENCE}
                )
        assert reply.choices[0].message.content == NOTICE
        assert reply.choices[0].finish_reason == "content_filter"
        assert reply.model_extra is not None
        assert reply.model_extra["groundguard"]["label"] == "fail"

    async def test_anthropic_whole_answers_pass_unchanged_when_grounded(self) -> None:
        with FakeUpstream(answer=PASSING) as upstream:
            async with proxy(upstream, "anthropic") as (base, _), anthropic_client(base) as client:
                reply = await client.messages.create(
                    model="m",
                    max_tokens=100,
                    messages=QUESTION,
                    extra_body={"groundguard_context": EVIDENCE},
                )
        assert reply.content[0].type == "text"
        assert reply.content[0].text == PASSING
        assert reply.stop_reason == "end_turn"


# --------------------------------------------------------------------------- failures


class TestFailures:
    async def test_a_dropped_upstream_raises_in_the_openai_sdk_after_only_verified_text(
        self,
    ) -> None:
        """And its one record is an error verdict, upstream_failed, with the verified text."""
        published = Offered()
        with FakeUpstream(answer=PASSING, token_delay_s=DELAY_S, drop_after=9) as upstream:
            async with proxy(upstream, "openai") as (base, api), openai_client(base) as client:
                assert api.proxy is not None
                api.proxy.publisher = published
                stream = await client.chat.completions.create(
                    model="m",
                    messages=QUESTION,
                    stream=True,
                    extra_body={"groundguard_context": EVIDENCE},
                )
                got: list[str] = []
                with pytest.raises(openai.APIError, match="broke off"):
                    got.extend(
                        [c.choices[0].delta.content or "" async for c in stream if c.choices]
                    )
                assert api.admission.in_flight == 0
        assert "".join(got) in ("", FIRST)
        [answer] = published.offered
        assert (answer.verdict.label.value, answer.verdict.reason) == ("error", "upstream_failed")
        assert answer.outcome == "upstream_dropped"
        assert answer.request.output[: answer.released] in ("", FIRST)  # as the SDK was sent
        assert answer.stopped_at == answer.released
        assert not answer.blocks

    async def test_a_dropped_upstream_raises_in_the_anthropic_sdk(self) -> None:
        with FakeUpstream(answer=PASSING, token_delay_s=DELAY_S, drop_after=9) as upstream:
            async with proxy(upstream, "anthropic") as (base, _):
                with pytest.raises(anthropic.APIError):
                    await anthropic_stream(base)

    async def test_a_client_that_leaves_cancels_the_upstream_and_the_judgements(self) -> None:
        """And its one record is an error verdict, client_disconnected, with what it got."""
        published = Offered()
        judge = FakeJudge(latency_s=0.3)
        guard = Guard(judge, JudgeSettings(provider="fake"))
        long_answer = " ".join(["Returns are accepted within 30 days."] * 30)
        with FakeUpstream(answer=long_answer, token_delay_s=DELAY_S) as upstream:
            async with proxy(upstream, "openai", guard, release="immediate") as (base, api):
                assert api.proxy is not None
                api.proxy.publisher = published
                received = ""
                async with openai_client(base) as client:
                    stream = await client.chat.completions.create(
                        model="m",
                        messages=QUESTION,
                        stream=True,
                        extra_body={"groundguard_context": EVIDENCE},
                    )
                    async for chunk in stream:
                        if chunk.choices and chunk.choices[0].delta.content:
                            received = chunk.choices[0].delta.content
                            break
                    await asyncio.sleep(0.2)  # spans are being judged
                    await stream.close()
                stats = await asyncio.to_thread(upstream.wait_settled)
                for _ in range(100):
                    if api.admission.in_flight == 0 and judge.in_flight == 0:
                        break
                    await asyncio.sleep(0.02)
                assert api.admission.in_flight == 0
                assert judge.in_flight == 0
        assert stats.streams_cancelled == 1
        assert stats.open_streams == 0
        [answer] = published.offered
        assert answer.verdict.reason == "client_disconnected"
        assert answer.outcome == "client_left"
        assert answer.release is Release.IMMEDIATE
        assert answer.request.output[: answer.released].startswith(received)
        assert answer.released >= len(received)  # written to the socket, some not yet read
        assert not answer.blocks


# --------------------------------------------------------------------------- forwarding


class TestForwarding:
    async def test_unknown_fields_go_upstream_untouched_and_the_extension_does_not(self) -> None:
        with FakeUpstream(answer=PASSING) as upstream:
            async with proxy(upstream, "openai") as (base, _), openai_client(base) as client:
                await client.chat.completions.create(
                    model="m",
                    messages=QUESTION,
                    temperature=0.2,
                    extra_body={"groundguard_context": EVIDENCE, "vendor_knob": {"a": [1, 2]}},
                )
        seen = upstream.requests[-1]
        assert seen["vendor_knob"] == {"a": [1, 2]}
        assert seen["temperature"] == 0.2
        assert "groundguard_context" not in seen
        assert seen["_headers"]["authorization"] == "Bearer sk-caller"

    async def test_a_configured_key_replaces_the_callers_credentials(self) -> None:
        with FakeUpstream(answer=PASSING) as upstream:
            async with (
                proxy(upstream, "anthropic", upstream_api_key="sk-configured") as (base, _),
                anthropic_client(base) as client,
            ):
                await client.messages.create(
                    model="m",
                    max_tokens=10,
                    messages=QUESTION,
                    extra_body={"groundguard_context": EVIDENCE},
                )
        headers = upstream.requests[-1]["_headers"]
        assert headers["x-api-key"] == "sk-configured"
        assert "anthropic-version" in headers

    @pytest.mark.parametrize(("as_evidence", "label"), [(False, "fail"), (True, "pass")])
    async def test_the_system_message_is_evidence_only_when_configured(
        self, as_evidence: bool, label: str
    ) -> None:
        with FakeUpstream(answer=PASSING) as upstream:
            async with (
                proxy(upstream, "openai", system_as_evidence=as_evidence) as (base, _),
                openai_client(base) as client,
            ):
                reply = await client.chat.completions.create(
                    model="m", messages=[{"role": "system", "content": EVIDENCE}, *QUESTION]
                )
        assert reply.model_extra is not None
        assert reply.model_extra["groundguard"]["label"] == label


# --------------------------------------------------------------------------- keys and judge errors


class TestKeysAndUndecided:
    async def test_with_api_keys_the_anthropic_sdks_key_is_groundguards_and_not_forwarded(
        self, tmp_path: Path
    ) -> None:
        key = "gg-key-0123456789abcdef"
        keys = tmp_path / "keys"
        keys.write_text(f"{key}\n", encoding="utf-8")
        with FakeUpstream(answer=PASSING) as upstream:
            async with (
                proxy(
                    upstream, "anthropic", upstream_api_key="sk-configured", api_keys_file=str(keys)
                ) as (base, _),
                anthropic.AsyncAnthropic(base_url=base, api_key=key, max_retries=0) as client,
            ):
                reply = await client.messages.create(
                    model="m",
                    max_tokens=10,
                    messages=QUESTION,
                    extra_body={"groundguard_context": EVIDENCE},
                )
                with pytest.raises(anthropic.AuthenticationError):
                    await client.with_options(api_key="wrong-key-0123456789").messages.create(
                        model="m", max_tokens=10, messages=QUESTION
                    )
        assert reply.content[0].type == "text"
        headers = upstream.requests[-1]["_headers"]
        assert headers["x-api-key"] == "sk-configured"
        assert len(upstream.requests) == 1  # the refused call never went upstream

    @pytest.mark.parametrize(("undecided", "released"), [("block", ""), ("release", PASSING)])
    async def test_a_span_the_judge_could_not_decide_blocks_unless_told(
        self, undecided: str, released: str
    ) -> None:
        guard = Guard(FakeJudge([JudgeUnavailable("down")]), JudgeSettings(provider="fake"))
        with FakeUpstream(answer=PASSING) as upstream:
            async with proxy(upstream, "openai", guard, undecided=undecided) as (base, _):
                chunks, _ = await openai_stream(base)
        text = openai_text(chunks)
        assert text == (released or NOTICE)
        assert summary_of(chunks)["label"] == "error"


class TestUpstreamRefusals:
    async def test_an_upstream_error_status_reaches_the_sdk_unjudged(self) -> None:
        with FakeUpstream(status=401) as upstream:
            async with proxy(upstream, "openai") as (base, api):
                with pytest.raises(openai.AuthenticationError, match="fake upstream error"):
                    await openai_stream(base)
                assert api.admission.in_flight == 0

    async def test_an_unreachable_upstream_is_a_502(self) -> None:
        upstream = FakeUpstream()
        upstream.port = 9  # the discard port: nothing listens on loopback
        async with proxy(upstream, "anthropic") as (base, _):
            with pytest.raises(anthropic.InternalServerError) as caught:
                await anthropic_stream(base)
        assert caught.value.status_code == 502


def test_serve_as_a_process_proxies_a_stream(tmp_path: Path) -> None:
    """``groundguard serve`` with the proxy set in its environment, the OpenAI SDK streaming."""
    with FakeUpstream(answer=FAILING, token_delay_s=DELAY_S) as upstream:
        env = {
            "GROUNDGUARD_JUDGE__PROVIDER": "offline",
            "GROUNDGUARD_SERVE__PROXY__UPSTREAM_URL": upstream.openai_base_url,
            "GROUNDGUARD_SERVE__PROXY__NOTICE": NOTICE,
        }
        server = ServeProcess(tmp_path / "serve.log", env)
        try:
            with openai.OpenAI(
                base_url=f"{server.url}/v1", api_key="sk-c", max_retries=0
            ) as client:
                stream = client.chat.completions.create(
                    model="m",
                    messages=QUESTION,
                    stream=True,
                    extra_body={"groundguard_context": EVIDENCE},
                )
                chunks = list(stream)
            server.terminate()
            assert server.wait() == 0
            events = [e for e in server.events() if e.get("event") == "proxy.verdict"]
        finally:
            server.stop()
        assert openai_text(chunks) == FIRST + NOTICE
        assert chunks[-1].choices[0].finish_reason == "content_filter"
        assert events[0]["outcome"] == "stopped"
