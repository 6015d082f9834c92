"""Publishing the proxy's verdicts (:mod:`consumers.serve.proxy.publish`), in memory: the records
an answer becomes (the verdict schema, the released prefix within ``max_output_bytes``,
quarantine when it blocks), the queue that never waits (drops counted), the bounded flush at
stop, a broker away at start, the settings that switch it on, and the proxy routes handing
every final verdict to a fake publisher."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx2
import orjson
import pytest
from aiokafka.errors import KafkaConnectionError, MessageSizeTooLargeError
from jsonschema import Draft202012Validator
from prometheus_client import CollectorRegistry
from starlette.requests import ClientDisconnect
from structlog.testing import capture_logs

from consumers import schemas
from consumers.config import load_settings
from consumers.errors import SettingsError
from consumers.records import QuarantineRecord, VerdictRecord
from consumers.serve.app import build_app
from consumers.serve.proxy import publish as publish_module
from consumers.serve.proxy.publish import Judged, ProxyPublisher, answer_records, fit_text
from consumers.serve.service import make_api
from consumers.settings import ServiceSettings
from guard.assembly import build_guard
from guard.engine import Guard
from guard.models import JudgeRequest, Label
from guard.settings import JudgeSettings
from guard.stream.release import Release
from guard.testing import FakeJudge
from guard.testing.fake_upstream import anthropic_events, openai_events, tokens_of
from tests.unit.fakekafka import FakeCluster, FakeProducer

EVIDENCE = "The Eiffel Tower is in Paris. It was completed in 1889."
PASSING = "The Eiffel Tower is in Paris. It was completed in 1889."
FAILING = "The Eiffel Tower is in Paris. It was completed in 1925."
BROKER = "127.0.0.1:39999"


async def judged(output: str, *, released: int, stopped: bool) -> Judged:
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    request = JudgeRequest(id="req-1", output=output, context=[EVIDENCE])
    try:
        verdict = await guard.judge(request)
    finally:
        await guard.aclose()
    if stopped:
        verdict = verdict.model_copy(update={"label": Label.FAIL})
    return Judged(
        request=request,
        verdict=verdict,
        route="openai",
        stream=True,
        release=Release.VERIFIED,
        outcome="stopped" if stopped else "finished",
        released=released,
        stopped_at=released if stopped else None,
        stopped_span=1 if stopped else None,
        spans=2,
        blocks=stopped,
    )


def validate(name: str, value: bytes) -> None:
    errors = list(Draft202012Validator(schemas.load(name)).iter_errors(json.loads(value)))
    assert errors == []


def settings_with(**values: Any) -> ServiceSettings:
    base: dict[str, Any] = {
        "bootstrap_servers": BROKER,
        "judge": {"provider": "fake"},
        "serve": {"proxy": {"upstream_url": "http://upstream.invalid/v1"}},
    }
    return ServiceSettings.model_validate(base | values)


class TestRecords:
    async def test_a_stopped_answer_gives_a_verdict_and_a_quarantine_record_keyed_by_its_id(
        self,
    ) -> None:
        """Both records obey the published schemas; the verdict has no input coordinates and
        says what reached the client: the released prefix and where it stopped."""
        answer = await judged(FAILING, released=30, stopped=True)
        records = answer_records(answer, verdicts="v", quarantine="q", limit=1_000_000)
        assert [(out.topic, out.key) for out in records] == [("v", b"req-1"), ("q", b"req-1")]
        validate("verdict", records[0].value)
        validate("quarantine", records[1].value)
        verdict = VerdictRecord.model_validate_json(records[0].value)
        assert verdict.input is None
        assert verdict.proxy is not None
        assert verdict.proxy.released_prefix == FAILING[:30]
        assert verdict.proxy.released_chars == 30
        assert (verdict.proxy.stopped_at, verdict.proxy.stopped_span) == (30, 1)
        assert verdict.proxy.spans_judged == 2
        assert not verdict.proxy.released_prefix_truncated
        held = QuarantineRecord.model_validate_json(records[1].value)
        assert held.payload["output"] == FAILING
        assert held.proxy == verdict.proxy

    async def test_a_passing_answer_goes_to_the_verdicts_topic_only(self) -> None:
        answer = await judged(PASSING, released=len(PASSING), stopped=False)
        records = answer_records(answer, verdicts="v", quarantine="q", limit=1_000_000)
        assert [out.topic for out in records] == ["v"]
        record = VerdictRecord.model_validate_json(records[0].value)
        assert record.proxy is not None
        assert record.proxy.released_prefix == PASSING
        assert record.proxy.stopped_at is None
        assert record.label is Label.PASS

    async def test_the_released_prefix_is_cut_so_the_verdict_record_fits_max_output_bytes(
        self,
    ) -> None:
        long = PASSING + " é" * 5000
        answer = await judged(long, released=len(long), stopped=True)
        limit = 9000
        records = answer_records(answer, verdicts="v", quarantine="q", limit=limit)
        verdict = VerdictRecord.model_validate_json(records[0].value)
        assert verdict.proxy is not None
        assert verdict.proxy.released_prefix_truncated
        assert long.startswith(verdict.proxy.released_prefix)
        assert len(records[0].value) <= limit
        held = QuarantineRecord.model_validate_json(records[1].value)
        assert held.payload is None
        assert held.payload_omitted

    def test_fit_text_cuts_at_a_character_never_inside_an_escape(self) -> None:
        assert fit_text("abc", 5) == ("abc", False)
        cut, truncated = fit_text('a"b"c"d', 6)
        assert truncated
        assert len(orjson.dumps(cut)) <= 6
        assert 'a"b"c"d'.startswith(cut)
        assert fit_text("abc", 1) == ("", True)


class TestPublisher:
    async def test_each_offered_answer_is_published_and_counted(self) -> None:
        cluster = FakeCluster()
        registry = CollectorRegistry()
        publisher = ProxyPublisher(settings_with(), registry, lambda: FakeProducer(cluster))
        publisher.start()
        assert publisher.offer(await judged(FAILING, released=30, stopped=True))
        assert publisher.offer(await judged(PASSING, released=len(PASSING), stopped=False))
        await publisher.aclose()
        topics = [out.topic for out in cluster.outputs]
        assert topics == ["guard.verdicts", "guard.quarantine", "guard.verdicts"]
        sample = registry.get_sample_value
        assert sample("groundguard_proxy_published_total", {"kind": "verdict"}) == 2
        assert sample("groundguard_proxy_published_total", {"kind": "quarantine"}) == 1

    async def test_a_full_queue_drops_at_once_counting_and_logging_the_drop(self) -> None:
        """The offer never waits for the broker: with acknowledgements held, one answer is
        being sent, one waits in the queue (publish_queue 1), the next is dropped."""
        cluster = FakeCluster()
        producer = FakeProducer(cluster)
        producer.hold = True
        registry = CollectorRegistry()
        settings = settings_with(
            serve={
                "proxy": {
                    "upstream_url": "http://upstream.invalid/v1",
                    "publish_queue": 1,
                    "publish_flush_s": 0.2,
                }
            }
        )
        publisher = ProxyPublisher(settings, registry, lambda: producer)
        publisher.start()
        answer = await judged(PASSING, released=len(PASSING), stopped=False)
        assert publisher.offer(answer)
        await asyncio.sleep(0.05)  # the worker takes it and waits for its acknowledgement
        assert publisher.offer(answer)
        with capture_logs() as logs:
            assert not publisher.offer(answer)
        assert [e["reason"] for e in logs if e["event"] == "proxy.publish_dropped"] == [
            "queue_full"
        ]
        dropped = "groundguard_proxy_publish_dropped_total"
        assert registry.get_sample_value(dropped, {"reason": "queue_full"}) == 1
        started = asyncio.get_running_loop().time()
        await publisher.aclose()  # the acknowledgements never come: the flush is bounded
        assert asyncio.get_running_loop().time() - started < 2.0
        assert registry.get_sample_value(dropped, {"reason": "shutdown"}) == 2
        assert producer.closed

    async def test_a_missing_output_topic_is_logged_at_start_with_its_setting_and_fix(
        self,
    ) -> None:
        cluster = FakeCluster()
        producer = FakeProducer(cluster)
        producer.missing_topics = {"guard.quarantine"}
        publisher = ProxyPublisher(settings_with(), CollectorRegistry(), lambda: producer)
        with capture_logs() as logs:
            publisher.start()
            await asyncio.sleep(0.05)
            await publisher.aclose()
        [missing] = [e for e in logs if e["event"] == "proxy.publish_topic_missing"]
        assert missing["field"] == "topics.quarantine"
        assert "create guard.quarantine" in missing["fix"]

    async def test_a_broker_away_at_start_is_tried_again_and_the_queue_waits(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(publish_module, "START_BACKOFF_S", (0.01,))
        cluster = FakeCluster()
        starts: list[int] = []

        class Away(FakeProducer):
            async def start(self) -> None:
                starts.append(1)
                if len(starts) < 3:
                    raise KafkaConnectionError("no broker")

        publisher = ProxyPublisher(settings_with(), CollectorRegistry(), lambda: Away(cluster))
        publisher.start()
        assert publisher.offer(await judged(PASSING, released=len(PASSING), stopped=False))
        await publisher.aclose()
        assert len(starts) == 3
        assert [out.topic for out in cluster.outputs] == ["guard.verdicts"]

    async def test_a_publishing_task_that_dies_is_logged_at_once_and_the_stop_still_ends(
        self,
    ) -> None:
        class Broken(FakeProducer):
            async def send(self, *args: Any, **kwargs: Any) -> Any:
                raise RuntimeError("a bug")

        registry = CollectorRegistry()
        proxy = {"upstream_url": "http://u.invalid/v1", "publish_flush_s": 0.2}
        settings = settings_with(serve={"proxy": proxy})
        publisher = ProxyPublisher(settings, registry, lambda: Broken(FakeCluster()))
        with capture_logs() as logs:
            publisher.start()
            assert publisher.offer(await judged(PASSING, released=len(PASSING), stopped=False))
            await asyncio.sleep(0.05)
            assert "proxy.publish_failed" in [e["event"] for e in logs]
            assert publisher.offer(await judged(PASSING, released=len(PASSING), stopped=False))
            await publisher.aclose()
        dropped = "groundguard_proxy_publish_dropped_total"
        assert registry.get_sample_value(dropped, {"reason": "publish_failed"}) == 1
        assert registry.get_sample_value(dropped, {"reason": "shutdown"}) == 1

    async def test_a_refused_record_is_dropped_counted_and_the_next_answer_still_goes(
        self,
    ) -> None:
        cluster = FakeCluster()
        producer = FakeProducer(cluster)
        refused = {"once": True}

        def refuse(out: Any) -> Exception | None:
            if refused.pop("once", False):
                return MessageSizeTooLargeError("too large")
            return None

        producer.refuse = refuse
        registry = CollectorRegistry()
        publisher = ProxyPublisher(settings_with(), registry, lambda: producer)
        publisher.start()
        answer = await judged(PASSING, released=len(PASSING), stopped=False)
        assert publisher.offer(answer)
        await asyncio.sleep(0.05)
        assert publisher.offer(answer)
        await publisher.aclose()
        dropped = "groundguard_proxy_publish_dropped_total"
        assert registry.get_sample_value(dropped, {"reason": "publish_failed"}) == 1
        assert len(cluster.outputs) == 1


class TestSettings:
    def test_publishing_is_on_with_a_broker_and_a_proxy_and_off_without_a_broker(self) -> None:
        assert settings_with().proxy_publishes
        no_broker = ServiceSettings.model_validate(
            {"serve": {"proxy": {"upstream_url": "http://upstream.invalid/v1"}}}
        )
        assert not no_broker.proxy_publishes
        off = settings_with(
            serve={"proxy": {"upstream_url": "http://u.invalid/v1", "publish": False}}
        )
        assert not off.proxy_publishes
        assert not ServiceSettings.model_validate({"bootstrap_servers": BROKER}).proxy_publishes

    def test_publish_true_without_a_broker_is_refused_at_start_naming_the_field_and_fix(
        self,
    ) -> None:
        env = {
            "GROUNDGUARD_SERVE__PROXY__UPSTREAM_URL": "http://u.invalid/v1",
            "GROUNDGUARD_SERVE__PROXY__PUBLISH": "true",
        }
        with pytest.raises(SettingsError) as caught:
            load_settings(None, env)
        assert caught.value.field == "bootstrap_servers"
        assert "GROUNDGUARD_BOOTSTRAP_SERVERS" in str(caught.value)
        assert load_settings(None, env | {"GROUNDGUARD_BOOTSTRAP_SERVERS": BROKER}).proxy_publishes

    def test_publish_true_without_a_proxy_is_refused(self) -> None:
        env = {"GROUNDGUARD_SERVE__PROXY__PUBLISH": "true"}
        with pytest.raises(SettingsError) as caught:
            load_settings(None, env | {"GROUNDGUARD_BOOTSTRAP_SERVERS": BROKER})
        assert caught.value.field == "serve.proxy.publish"

    def test_a_queue_of_zero_is_refused_naming_the_field(self) -> None:
        env = {"GROUNDGUARD_SERVE__PROXY__PUBLISH_QUEUE": "0"}
        with pytest.raises(SettingsError) as caught:
            load_settings(None, env)
        assert caught.value.field == "serve.proxy.publish_queue"

    def test_a_queue_smaller_than_two_records_is_refused_naming_the_field(self) -> None:
        env = {
            "GROUNDGUARD_BOOTSTRAP_SERVERS": BROKER,
            "GROUNDGUARD_SERVE__PROXY__UPSTREAM_URL": "http://u.invalid/v1",
            "GROUNDGUARD_SERVE__PROXY__PUBLISH_QUEUE_BYTES": "1000000",
        }
        with pytest.raises(SettingsError) as caught:
            load_settings(None, env)
        assert caught.value.field == "serve.proxy.publish_queue_bytes"
        assert "max_output_bytes" in str(caught.value)
        off = env | {"GROUNDGUARD_SERVE__PROXY__PUBLISH": "false"}
        assert not load_settings(None, off).proxy_publishes


class FakePublisher:
    """An in-memory publisher: what the proxy offered."""

    def __init__(self) -> None:
        self.offered: list[Judged] = []
        self.replies: list[bytes] = []  # what the client received
        self.started = self.closed = False

    def start(self) -> None:
        self.started = True

    def offer(self, judged: Judged) -> bool:
        self.offered.append(judged)
        return True

    async def aclose(self) -> None:
        self.closed = True


def upstream(answer: str, *, stream: bool, anthropic: bool = False) -> httpx2.MockTransport:
    """The upstream, in memory: the answer as OpenAI's (or Anthropic's) SSE events, or whole
    (OpenAI's)."""
    if stream:
        events = anthropic_events if anthropic else openai_events
        content = b"".join(event for event, _ in events(tokens_of(answer), "m"))
        kind = "text/event-stream"
    else:
        message = {"role": "assistant", "content": answer}
        whole = {"id": "c", "object": "chat.completion", "model": "m", "choices": []}
        whole["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
        content, kind = orjson.dumps(whole), "application/json"

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=content, headers={"content-type": kind})

    return httpx2.MockTransport(handler)


async def proxied(
    answer: str, *, stream: bool, anthropic: bool = False, fake: FakePublisher | None = None
) -> FakePublisher:
    """One chat completion (or Anthropic message) through the proxy, offline judge; the
    publisher it offered to."""
    proxy = {"upstream_url": "http://upstream.invalid/v1"}
    proxy |= {"upstream_kind": "anthropic"} if anthropic else {}
    settings = settings_with(judge={"provider": "offline"}, serve={"proxy": proxy})
    guard = build_guard(settings.judge, {})
    api, ready = make_api(settings, guard, None)
    assert api.proxy is not None
    assert api.proxy.upstream is not None
    fake = fake or FakePublisher()
    api.proxy.publisher = fake
    transport = upstream(answer, stream=stream, anthropic=anthropic)
    api.proxy.upstream.client = httpx2.AsyncClient(transport=transport)
    api.state.started = True
    body = {
        "model": "m",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "When was it completed?"}],
        "stream": stream,
        "groundguard_context": EVIDENCE,
    }
    route = "/v1/messages" if anthropic else "/v1/chat/completions"
    served = httpx2.ASGITransport(app=build_app(api, ready=ready))
    try:
        async with httpx2.AsyncClient(transport=served, base_url="http://serve") as client:
            reply = await client.post(route, json=body)
            assert reply.status_code == 200
            fake.replies.append(reply.content)
    finally:
        await api.proxy.aclose()
        await guard.aclose()
    return fake


class Raising(FakePublisher):
    def offer(self, judged: Judged) -> bool:
        raise RuntimeError("a bug in the publisher")


class TestProxyHandsVerdictsToThePublisher:
    async def test_a_publisher_that_raises_never_breaks_the_clients_stream(self) -> None:
        with capture_logs() as logs:
            fake = await proxied(PASSING, stream=True, fake=Raising())
        [reply] = fake.replies
        assert reply.endswith(b"data: [DONE]\n\n")
        assert "proxy.publish_internal_error" in [e["event"] for e in logs]

    async def test_a_streamed_failing_answer_is_offered_with_what_was_released(self) -> None:
        fake = await proxied(FAILING, stream=True)
        [answer] = fake.offered
        assert answer.verdict.label is Label.FAIL
        assert answer.blocks
        assert answer.stream
        assert answer.outcome == "stopped"
        assert answer.stopped_span == 1
        assert answer.request.output == FAILING
        assert answer.verdict.request_id == answer.request.id  # the answer's, not its span's
        assert answer.released == answer.stopped_at == len("The Eiffel Tower is in Paris. ")
        assert fake.closed

    async def test_a_streamed_passing_answer_is_offered_released_whole(self) -> None:
        fake = await proxied(PASSING, stream=True)
        [answer] = fake.offered
        assert answer.verdict.label is Label.PASS
        assert not answer.blocks
        assert answer.outcome == "finished"
        assert answer.released == len(PASSING)

    async def test_an_anthropic_stream_stopped_is_offered_on_its_route(self) -> None:
        fake = await proxied(FAILING, stream=True, anthropic=True)
        [answer] = fake.offered
        assert answer.route == "anthropic"
        assert answer.blocks
        assert answer.released == len("The Eiffel Tower is in Paris. ")

    async def test_a_whole_answer_is_offered_once_judged(self) -> None:
        fake = await proxied(FAILING, stream=False)
        [answer] = fake.offered
        assert not answer.stream
        assert answer.blocks
        assert answer.released == 0

    def test_no_broker_means_no_publisher(self) -> None:
        settings = ServiceSettings.model_validate(
            {
                "judge": {"provider": "fake"},
                "serve": {"proxy": {"upstream_url": "http://upstream.invalid/v1"}},
            }
        )
        api, _ = make_api(settings, Guard(FakeJudge(), settings.judge), None)
        assert api.proxy is not None
        assert api.proxy.publisher is None


# --------------------------------------------------------------------------- unfinished answers


def streaming(answer: str, *, delay_s: float = 0.0, drop_after: int | None = None) -> Any:
    """An upstream streaming ``answer`` token by token (``delay_s`` apart), breaking the
    connection (``httpx2.ReadError``) after ``drop_after`` tokens."""
    events = openai_events(tokens_of(answer), "m")

    async def body() -> Any:
        sent = 0
        for event, is_token in events:
            if is_token:
                if drop_after is not None and sent >= drop_after:
                    raise httpx2.ReadError("the upstream broke off")
                await asyncio.sleep(delay_s)
                sent += 1
            yield event

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body(), headers={"content-type": "text/event-stream"})

    return httpx2.MockTransport(handler)


def fixed(content: bytes, kind: str = "text/event-stream") -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=content, headers={"content-type": kind})

    return httpx2.MockTransport(handler)


CHAT = {
    "model": "m",
    "messages": [{"role": "user", "content": "When was it completed?"}],
    "stream": True,
    "groundguard_context": EVIDENCE,
}


class Served:
    """``serve``'s app in memory over an upstream ``transport``, a fake publisher, and an
    ASGI client that can leave mid-stream."""

    def __init__(self, transport: httpx2.MockTransport, **proxy: Any) -> None:
        proxy = {"upstream_url": "http://upstream.invalid/v1", **proxy}
        self.settings = settings_with(judge={"provider": "offline"}, serve={"proxy": proxy})
        self.guard = build_guard(self.settings.judge, {})
        self.api, ready = make_api(self.settings, self.guard, None)
        assert self.api.proxy is not None
        assert self.api.proxy.upstream is not None
        self.fake = FakePublisher()
        self.api.proxy.publisher = self.fake
        self.api.proxy.upstream.client = httpx2.AsyncClient(transport=transport)
        self.api.state.started = True
        self.app = build_app(self.api, ready=ready)

    async def post(self, body: dict[str, Any]) -> httpx2.Response:
        served = httpx2.ASGITransport(app=self.app)
        async with httpx2.AsyncClient(transport=served, base_url="http://serve") as client:
            return await client.post("/v1/chat/completions", json=body)

    async def leave_after(
        self, chunks: int, body: dict[str, Any] = CHAT, *, spec: str = "2.3"
    ) -> list[bytes]:
        """Stream ``body``, and disconnect once ``chunks`` body chunks arrived (0: before the
        first); the chunks received. Under ASGI ``spec`` 2.4 the server says so as uvicorn
        does: ``send`` raises ``OSError``."""
        got: list[bytes] = []
        left = asyncio.Event()
        if chunks == 0:
            left.set()
        asked = False

        async def receive() -> dict[str, Any]:
            nonlocal asked
            if not asked:
                asked = True
                return {"type": "http.request", "body": orjson.dumps(body), "more_body": False}
            await left.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if spec == "2.4" and left.is_set():
                raise OSError("the client is gone")
            if message["type"] == "http.response.body" and message.get("body"):
                got.append(message["body"])
                if len(got) >= chunks:
                    left.set()

        headers = [(b"content-type", b"application/json"), (b"host", b"serve")]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": spec},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/v1/chat/completions",
            "raw_path": b"/v1/chat/completions",
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 5000),
            "server": ("serve", 80),
        }
        with contextlib.suppress(ClientDisconnect):
            await self.app(scope, receive, send)
        return got

    async def aclose(self) -> None:
        assert self.api.proxy is not None
        await self.api.proxy.aclose()
        await self.guard.aclose()

    def one(self) -> Judged:
        """The one answer offered, its records checked against the published schemas."""
        [answer] = self.fake.offered
        for out in answer_records(answer, verdicts="v", quarantine="q", limit=1_000_000):
            validate("verdict" if out.topic == "v" else "quarantine", out.value)
        return answer


def released_text(chunks: list[bytes]) -> str:
    text = ""
    for line in b"".join(chunks).decode().splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices", []):
                text += choice.get("delta", {}).get("content") or ""
    return text


class TestEveryProxiedAnswerPublishesOneRecord:
    """An answer that ends without a final verdict is published as an ``error`` verdict with
    the reason and what reached the client (:mod:`consumers.serve.proxy.unfinished`)."""

    @pytest.mark.parametrize("spec", ["2.3", "2.4"])
    async def test_a_client_that_disconnects_mid_stream_gives_client_disconnected(
        self, spec: str
    ) -> None:
        served = Served(streaming(PASSING * 4, delay_s=0.01))
        try:
            got = await served.leave_after(2, spec=spec)
            await asyncio.sleep(0.05)  # nothing more is offered after the stream's end
        finally:
            await served.aclose()
        assert served.api.admission.in_flight == 0
        left = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        assert left == []  # the pump and the span judgements: cancelled and awaited
        answer = served.one()
        assert answer.verdict.label is Label.ERROR
        assert answer.verdict.reason == "client_disconnected"
        assert answer.verdict.error is not None
        assert answer.verdict.error.kind == "client_disconnected"
        assert answer.verdict.request_id == answer.request.id
        assert answer.outcome == "client_left"
        assert not answer.blocks  # under undecided: block too: the judge was not undecided
        assert answer.request.output[: answer.released] == released_text(got)
        assert answer.released > 0
        assert (answer.stopped_at, answer.stopped_span) == (answer.released, None)
        [record] = answer_records(answer, verdicts="v", quarantine="q", limit=1_000_000)
        value = VerdictRecord.model_validate_json(record.value)
        assert value.proxy is not None
        assert value.proxy.released_prefix == released_text(got)
        assert value.proxy.outcome == "client_left"

    @pytest.mark.parametrize("spec", ["2.3", "2.4"])
    async def test_a_client_that_leaves_before_the_first_byte_still_gets_one_record(
        self, spec: str
    ) -> None:
        """Under 2.4 the response's start fails: the stream's body never runs."""
        served = Served(streaming(PASSING, delay_s=0.01))
        try:
            await served.leave_after(0, spec=spec)
        finally:
            await served.aclose()
        answer = served.one()
        assert answer.verdict.reason == "client_disconnected"
        assert answer.released == 0
        assert answer.stopped_at == 0

    async def test_an_upstream_that_drops_gives_upstream_failed_with_what_was_released(
        self,
    ) -> None:
        served = Served(streaming(PASSING, drop_after=9))
        try:
            reply = await served.post(CHAT)
        finally:
            await served.aclose()
        answer = served.one()
        assert answer.verdict.label is Label.ERROR
        assert answer.verdict.reason == "upstream_failed"
        assert answer.outcome == "upstream_dropped"
        assert answer.verdict.error is not None
        assert answer.verdict.error.retriable
        assert not answer.blocks
        first = "The Eiffel Tower is in Paris. "
        assert answer.released == len(first) == answer.stopped_at
        assert released_text([reply.content]) == first
        assert answer.spans == 1

    @pytest.mark.parametrize(
        ("cut", "outcome"),
        [
            (lambda events: events[:-3], "upstream_ended_early"),
            (lambda events: [*events[:4], b"data: {not json\n\n"], "upstream_malformed"),
        ],
    )
    async def test_an_upstream_that_ends_early_or_garbled_gives_upstream_failed(
        self, cut: Any, outcome: str
    ) -> None:
        events = [event for event, _ in openai_events(tokens_of(PASSING), "m")]
        served = Served(fixed(b"".join(cut(events))))
        try:
            await served.post(CHAT)
        finally:
            await served.aclose()
        answer = served.one()
        assert (answer.verdict.reason, answer.outcome) == ("upstream_failed", outcome)

    @pytest.mark.parametrize(("undecided", "blocks"), [("block", True), ("release", False)])
    async def test_a_judge_that_raises_gives_judge_error_quarantined_as_undecided_says(
        self, undecided: str, blocks: bool
    ) -> None:
        served = Served(streaming(PASSING), undecided=undecided)
        assert served.api.proxy is not None

        async def raising(*args: Any) -> Any:
            raise RuntimeError("a judge that breaks its contract")

        served.api.proxy._judge = raising  # type: ignore[method-assign]
        try:
            await served.post(CHAT)
        finally:
            await served.aclose()
        answer = served.one()
        assert answer.verdict.reason == "judge_error"
        assert answer.outcome == "judge_raised"
        assert answer.blocks is blocks
        records = answer_records(answer, verdicts="v", quarantine="q", limit=1_000_000)
        assert [out.topic for out in records] == ["v", "q"] if blocks else ["v"]

    async def test_an_answer_past_max_answer_chars_gives_answer_too_long(self) -> None:
        served = Served(streaming(PASSING * 40), max_answer_chars=1000)
        try:
            await served.post(CHAT)
        finally:
            await served.aclose()
        answer = served.one()
        assert (answer.verdict.reason, answer.outcome) == ("answer_too_long", "answer_too_long")
        assert not answer.blocks
        assert 0 < answer.released == answer.stopped_at <= 1000

    async def test_an_answer_with_no_text_gives_empty_output_never_quarantined(self) -> None:
        served = Served(streaming(""))
        try:
            await served.post(CHAT)
        finally:
            await served.aclose()
        answer = served.one()
        assert answer.verdict.reason == "empty_output"
        assert answer.outcome == "finished"
        assert not answer.blocks
        assert answer.stopped_at is None

    async def test_a_whole_answer_whose_body_is_garbled_is_a_502_and_one_record(self) -> None:
        served = Served(fixed(b"not json", "application/json"))
        try:
            reply = await served.post({**CHAT, "stream": False})
        finally:
            await served.aclose()
        assert reply.status_code == 502
        answer = served.one()
        assert not answer.stream
        assert (answer.verdict.reason, answer.outcome) == ("upstream_failed", "upstream_malformed")
        assert (answer.released, answer.stopped_at) == (0, 0)

    async def test_an_upstream_refusal_is_no_answer_and_publishes_nothing(self) -> None:
        def handler(request: httpx2.Request) -> httpx2.Response:
            return httpx2.Response(401, json={"error": {"message": "no"}})

        served = Served(httpx2.MockTransport(handler))
        try:
            reply = await served.post(CHAT)
        finally:
            await served.aclose()
        assert reply.status_code == 401
        assert served.fake.offered == []

    async def test_a_publisher_that_raises_never_breaks_a_dropped_stream(self) -> None:
        served = Served(streaming(PASSING, drop_after=9))
        served.api.proxy.publisher = Raising()  # type: ignore[union-attr]
        with capture_logs() as logs:
            try:
                reply = await served.post(CHAT)
            finally:
                await served.aclose()
        assert b"broke off" in reply.content
        assert "proxy.publish_internal_error" in [e["event"] for e in logs]
