"""A loopback fake of a model API that streams its answer token by token: the upstream for
tests and benches of ``serve``'s proxy (:mod:`consumers.serve.proxy`).

It answers ``POST .../chat/completions`` (OpenAI chat completion chunks, ``data: [DONE]``) and
``POST .../messages`` (Anthropic's message events), streamed when the body says ``stream:
true``, whole otherwise. The answer is ``answer`` (a string, or a function of the request
body), cut into tokens (words with their trailing whitespace, unless ``answer`` gives a list of
chunks), each sent after ``token_delay_s``. ``drop_after`` breaks the connection after that many
tokens (no end of the stream: a crashed upstream). Counters say how many streams started,
finished and were cancelled by the client, and how many are open, so a test proves that a
client who left cancels the upstream call; :attr:`requests` keeps the bodies and headers seen.

Like :class:`guard.testing.FakeLLMServer`, it runs uvicorn in a thread of its own with its own
event loop (:class:`guard.testing.loopback.LoopbackServer`), and sets ``TCP_NODELAY`` on every
accepted connection (without it each small event waits for the client's delayed ACK, ~40 ms on
loopback)::

    with FakeUpstream(answer="Refunds take 30 days.", token_delay_s=0.01) as upstream:
        client = AsyncOpenAI(base_url=upstream.openai_base_url, api_key="test")
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from guard.testing.loopback import LoopbackServer

Answer = str | list[str] | Callable[[Mapping[str, Any]], str | list[str]]
_TOKEN = re.compile(r"\s*\S+\s*|\s+")
_KEPT_REQUESTS = 256


class UpstreamDropped(Exception):
    """Raised inside the fake's stream to break its connection (``drop_after``)."""


@dataclass
class UpstreamStats:
    streams_started: int = 0
    streams_finished: int = 0
    streams_cancelled: int = 0
    streams_dropped: int = 0
    open_streams: int = 0
    whole_answers: int = 0
    connections_total: int = 0


def tokens_of(answer: str | list[str]) -> list[str]:
    """The chunks an answer is streamed in: a list as given, a string word by word."""
    return list(answer) if isinstance(answer, list) else _TOKEN.findall(answer)


class FakeUpstream(LoopbackServer):
    """A streaming fake of the OpenAI and Anthropic chat APIs on loopback."""

    _thread_name = "fake-upstream"

    def __init__(
        self,
        *,
        answer: Answer = "Returns are accepted within 30 days.",
        token_delay_s: float = 0.0,
        first_token_delay_s: float = 0.0,
        drop_after: int | None = None,
        status: int = 200,
        model: str = "fake-upstream",
        host: str = "127.0.0.1",
    ) -> None:
        super().__init__(host=host, port=0)
        self.answer = answer
        self.token_delay_s = token_delay_s
        self.first_token_delay_s = first_token_delay_s
        self.drop_after = drop_after
        self.status = status
        self.model = model
        self.stats = UpstreamStats()
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    # ------------------------------------------------------------------ lifecycle
    # start(), stop() and the context managers come from LoopbackServer.

    def wait_settled(self, timeout_s: float = 5.0) -> UpstreamStats:
        """The counters once no stream is open (or after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while self.stats.open_streams and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.stats

    def _app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self._endpoint, methods=["POST"])])

    def _connection_made(self, transport: asyncio.Transport) -> None:
        super()._connection_made(transport)
        with self._lock:
            self.stats.connections_total += 1

    # ------------------------------------------------------------------ HTTP

    async def _endpoint(self, request: Request) -> Response:
        body = orjson.loads(await request.body())
        with self._lock:
            self.requests.append({**body, "_headers": dict(request.headers)})
            del self.requests[:-_KEPT_REQUESTS]
        answer = self.answer(body) if callable(self.answer) else self.answer
        anthropic = request.url.path.endswith("/messages")
        if self.status != 200:
            return Response(
                _error(self.status, anthropic), self.status, media_type="application/json"
            )
        if body.get("stream") is not True:
            with self._lock:
                self.stats.whole_answers += 1
            text = "".join(tokens_of(answer))
            whole = (
                _anthropic_whole(text, self.model) if anthropic else _openai_whole(text, self.model)
            )
            return Response(orjson.dumps(whole), media_type="application/json")
        events = anthropic_events if anthropic else openai_events
        return StreamingResponse(
            self._streamed(events(tokens_of(answer), self.model)), media_type="text/event-stream"
        )

    async def _streamed(self, events: list[tuple[bytes, bool]]) -> AsyncIterator[bytes]:
        """The events, a delay before each token; the counters kept whatever ends it."""
        with self._lock:
            self.stats.streams_started += 1
            self.stats.open_streams += 1
        ended = "cancelled"
        sent = 0
        try:
            if self.first_token_delay_s:
                await asyncio.sleep(self.first_token_delay_s)
            for data, is_token in events:
                if is_token:
                    if self.drop_after is not None and sent >= self.drop_after:
                        ended = "dropped"
                        raise UpstreamDropped("the fake upstream breaks the connection")
                    if self.token_delay_s and sent:
                        await asyncio.sleep(self.token_delay_s)
                    sent += 1
                yield data
            ended = "finished"
        finally:
            with self._lock:
                self.stats.open_streams -= 1
                if ended == "finished":
                    self.stats.streams_finished += 1
                elif ended == "dropped":
                    self.stats.streams_dropped += 1
                else:
                    self.stats.streams_cancelled += 1


def _error(status: int, anthropic: bool) -> bytes:
    message = f"fake upstream error {status}"
    if anthropic:
        return orjson.dumps({"type": "error", "error": {"type": "api_error", "message": message}})
    return orjson.dumps({"error": {"message": message, "type": "api_error", "code": status}})


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"


def openai_events(tokens: list[str], model: str) -> list[tuple[bytes, bool]]:
    envelope = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**envelope, "choices": [choice]}

    events = [(_sse(chunk({"role": "assistant", "content": ""})), False)]
    events += [(_sse(chunk({"content": token})), True) for token in tokens]
    events.append((_sse(chunk({}, "stop")), False))
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": len(tokens),
        "total_tokens": 10 + len(tokens),
    }
    events.append((_sse({**envelope, "choices": [], "usage": usage}), False))
    events.append((b"data: [DONE]\n\n", False))
    return events


def anthropic_events(tokens: list[str], model: str) -> list[tuple[bytes, bool]]:
    message: dict[str, Any] = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events = [
        (_sse({"type": "message_start", "message": message}, "message_start"), False),
        (
            _sse(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            ),
            False,
        ),
        (_sse({"type": "ping"}, "ping"), False),
    ]
    for token in tokens:
        delta = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": token},
        }
        events.append((_sse(delta, "content_block_delta"), True))
    events.append((_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"), False))
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": len(tokens)},
    }
    events.append((_sse(end, "message_delta"), False))
    events.append((_sse({"type": "message_stop"}, "message_stop"), False))
    return events


def _openai_whole(text: str, model: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text, "refusal": None}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _anthropic_whole(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": model,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
