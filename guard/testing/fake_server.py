"""A loopback fake of the OpenAI and Anthropic HTTP APIs, for tests and benches.

It speaks just enough of three endpoints for the real ``openai`` and ``anthropic`` SDKs,
including their structured-output ``parse`` helpers:

* ``POST .../chat/completions`` (OpenAI chat; ``response_format`` json_schema or a forced tool),
* ``POST .../responses`` (OpenAI Responses API; ``text.format`` json_schema),
* ``POST .../messages`` (Anthropic; a forced ``tool_use`` block, or JSON text for
  ``output_config.format``).

Routing is by path suffix, so any base path works (``/v1``, ``/openai/v1`` ...). Every response
carries rate-limit headers and usage numbers. Latency, verdicts and faults are configurable; the
counters (requests by path, current and peak in-flight) let tests prove concurrency limits.

In a test::

    with FakeLLMServer(latency_s=0.01) as srv:
        client = AsyncOpenAI(base_url=srv.openai_base_url, api_key="test")
        srv.inject(Fault("rate_limit", retry_after_s=0.01))
        ...
        assert srv.stats()["peak_in_flight"] <= 8

As a process (for benches and fault tests in other processes)::

    python -m guard.testing.fake_server --port 0 --latency-ms 20

prints ``FAKE_LLM_URL=http://127.0.0.1:PORT`` and serves ``GET /_stats``, ``POST /_faults``,
``POST /_script`` and ``POST /_reset`` until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import re
import signal
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

VerdictScript = Callable[[dict[str, Any], str], dict[str, Any]]
"""``(request body, text of all messages) -> assessment dict``.

The dict may hold ``score`` (1-5) or ``grounded`` (bool) or both; the missing one is derived so
that it fits the schema the client asked for. Two special keys change the reply itself:
``_refusal`` (a refusal text) and ``_raw_text`` (sent verbatim as the model's text).
"""

FaultKind = Literal[
    "rate_limit", "quota", "unauthorized", "bad_request", "server_error", "overloaded",
    "hang", "malformed",
]
FAULT_KINDS: tuple[str, ...] = (
    "rate_limit", "quota", "unauthorized", "bad_request", "server_error", "overloaded",
    "hang", "malformed",
)
HALLUCINATION_MARKER = "HALLUCINATED"
_MAX_BODY = 16 * 1024 * 1024
_RATE_LIMIT_REQUESTS = 10_000
_RATE_LIMIT_TOKENS = 2_000_000


@dataclass(frozen=True)
class Fault:
    """One injected failure.

    ``rate_limit``: 429 with ``Retry-After`` (and ``retry-after-ms``) of ``retry_after_s``
    (omitted when None). ``quota``: 429 ``insufficient_quota`` (OpenAI) or a spend-limit 429
    (Anthropic). ``unauthorized``: 401. ``bad_request``: 400. ``server_error``: 500.
    ``overloaded``: 529. ``hang``: wait ``hang_s`` seconds, then answer normally.
    ``malformed``: 200 with a body that is not JSON. ``path`` limits the fault to requests whose
    path ends with it (e.g. ``"/messages"``).
    """

    kind: FaultKind
    retry_after_s: float | None = 1.0
    hang_s: float = 3600.0
    path: str | None = None

    def applies_to(self, path: str) -> bool:
        return self.path is None or path.endswith(self.path)


@dataclass
class _Rule:
    fault: Fault
    remaining: int | None  # None: forever


@dataclass
class _Stats:
    requests_total: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    connections_total: int = 0
    connections_open: int = 0
    by_path: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)


# --------------------------------------------------------------------------- verdicts


def default_verdict(body: Mapping[str, Any], text: str) -> dict[str, Any]:
    """Score 1 (not grounded) when the marker ``HALLUCINATED`` occurs anywhere in the prompt
    text, else score 5 with one supported claim that quotes the evidence verbatim."""
    del body
    output = fenced_text(text, "OUTPUT") or text
    if HALLUCINATION_MARKER in text:
        claim = {"claim": _sentence_with(output, HALLUCINATION_MARKER),
                 "reason": "The evidence does not say this.", "evidence_quote": None,
                 "supported": False}
        return {"explanation": "The output makes a claim the evidence does not support.",
                "claims": [claim], "score": 1, "grounded": False}
    quote = _first_sentence(_strip_label(fenced_text(text, "EVIDENCE") or "")) or None
    claim = {"claim": _first_sentence(output) or "The output.",
             "reason": "The evidence states it.", "evidence_quote": quote, "supported": True}
    return {"explanation": "Every claim of the output is supported by the evidence.",
            "claims": [claim], "score": 5, "grounded": True}


def numbers_verdict(body: Mapping[str, Any], text: str) -> dict[str, Any]:
    """A stricter script: like :func:`default_verdict`, and also not grounded when the output
    holds a number that the evidence does not (``90 days`` against ``30 days``)."""
    output, evidence = fenced_text(text, "OUTPUT"), fenced_text(text, "EVIDENCE")
    if output is not None and evidence is not None:
        missing = [n for n in _NUMBER.findall(output) if n not in _NUMBER.findall(evidence)]
        if missing:
            claim = {"claim": _sentence_with(output, missing[0]),
                     "reason": f"The evidence does not mention {missing[0]}.",
                     "evidence_quote": None, "supported": False}
            return {"explanation": f"The output states {missing[0]}, which the evidence does "
                    "not support.", "claims": [claim], "score": 1, "grounded": False}
    return default_verdict(body, text)


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_FENCED = "<<BEGIN_{label}_([0-9A-Za-z]+)>>\n(.*?)\n<<END_{label}_\\1>>"
_LABEL_PREFIX = re.compile(r"^(\[[^\]]*\]\s*(\([^)]*\)\s*)?)?([A-Z][A-Z ]*(\([^)]*\))?:\s*)?")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def fenced_text(text: str, label: str) -> str | None:
    """The text inside this project's fence markers for ``label`` (``EVIDENCE``, ``OUTPUT``)."""
    match = re.search(_FENCED.format(label=label), text, re.DOTALL)
    return match.group(2) if match else None


def _strip_label(evidence: str) -> str:
    """The first evidence line with a letter, without its ``[1]``/``[turn 1] USER:`` label."""
    for line in evidence.splitlines():
        body = _LABEL_PREFIX.sub("", line.strip(), count=1)
        if any(ch.isalpha() for ch in body):
            return body
    return ""


def _first_sentence(text: str) -> str:
    match = _SENTENCE.search(text.strip())
    return match.group(0).strip() if match else ""


def _sentence_with(text: str, needle: str) -> str:
    for match in _SENTENCE.finditer(text):
        if needle in match.group(0):
            return match.group(0).strip()
    return " ".join(text.split())[:200]


def fit_to_schema(verdict: dict[str, Any], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """Derive ``score``/``grounded`` from each other and keep only the schema's properties."""
    out = dict(verdict)
    if "score" in out and "grounded" not in out:
        out["grounded"] = int(out["score"]) >= 4
    if "grounded" in out and "score" not in out:
        out["score"] = 5 if out["grounded"] else 1
    props = (schema or {}).get("properties")
    if isinstance(props, Mapping) and props:
        out = {k: v for k, v in out.items() if k in props or k.startswith("_")}
    return out


# --------------------------------------------------------------------------- request parsing


def _text_of(content: Any) -> str:
    """Text of a message content: a string, or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part.get("text", part.get("content", "")))
                         for part in content if isinstance(part, Mapping))
    return ""


def prompt_text(body: Mapping[str, Any]) -> str:
    """All prompt text of a chat, responses or messages request, joined by newlines."""
    parts = [_text_of(body.get("system")), _text_of(body.get("instructions"))]
    items = body.get("messages") or body.get("input") or []
    if isinstance(items, str):
        parts.append(items)
    else:
        parts.extend(_text_of(m.get("content")) for m in items if isinstance(m, Mapping))
    return "\n".join(p for p in parts if p)


def _chat_schema(body: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(schema, forced tool name) of a chat completions request."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt.get("json_schema", {}).get("schema"), None
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        name = choice["function"]["name"]
        for tool in body.get("tools") or []:
            if tool.get("function", {}).get("name") == name:
                return tool["function"].get("parameters"), name
    return None, None


def _responses_schema(body: Mapping[str, Any]) -> dict[str, Any] | None:
    fmt = (body.get("text") or {}).get("format") or {}
    return fmt.get("schema") if fmt.get("type") == "json_schema" else None


def _anthropic_schema(body: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(schema, forced tool name) of an Anthropic messages request."""
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") == "tool":
        for tool in body.get("tools") or []:
            if tool.get("name") == choice.get("name"):
                return tool.get("input_schema"), tool["name"]
    fmt = (body.get("output_config") or {}).get("format") or body.get("output_format") or {}
    return (fmt.get("schema") if fmt.get("type") == "json_schema" else None), None


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class _Reply:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


def _json_reply(status: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()) -> _Reply:
    return _Reply(status, orjson.dumps(payload), headers)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _chat_reply(body: Mapping[str, Any], verdict: dict[str, Any], usage: dict[str, int]
                ) -> dict[str, Any]:
    schema, tool = _chat_schema(body)
    fitted = fit_to_schema(verdict, schema)
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    finish = "stop"
    if "_refusal" in fitted:
        message["refusal"] = str(fitted["_refusal"])
    elif "_raw_text" in fitted:
        message["content"] = str(fitted["_raw_text"])
    elif tool is not None:
        message["tool_calls"] = [{"id": _new_id("call_"), "type": "function",
                                  "function": {"name": tool,
                                               "arguments": orjson.dumps(fitted).decode()}}]
        finish = "tool_calls"
    else:
        message["content"] = orjson.dumps(fitted).decode()
    return {
        "id": _new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "fake"), "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish,
                     "logprobs": None}],
        "usage": {"prompt_tokens": usage["input"], "completion_tokens": usage["output"],
                  "total_tokens": usage["input"] + usage["output"],
                  "prompt_tokens_details": {"cached_tokens": usage["cached"]},
                  "completion_tokens_details": {"reasoning_tokens": 0}},
    }


def _responses_reply(body: Mapping[str, Any], verdict: dict[str, Any], usage: dict[str, int]
                     ) -> dict[str, Any]:
    fitted = fit_to_schema(verdict, _responses_schema(body))
    if "_refusal" in fitted:
        part: dict[str, Any] = {"type": "refusal", "refusal": str(fitted["_refusal"])}
    else:
        text = fitted.get("_raw_text")
        part = {"type": "output_text", "annotations": [], "logprobs": [],
                "text": str(text) if text is not None else orjson.dumps(fitted).decode()}
    return {
        "id": _new_id("resp_"), "object": "response", "created_at": time.time(),
        "status": "completed", "model": body.get("model", "fake"), "error": None,
        "incomplete_details": None, "instructions": body.get("instructions"),
        "output": [{"type": "message", "id": _new_id("msg_"), "status": "completed",
                    "role": "assistant", "content": [part]}],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "temperature": body.get("temperature"), "text": body.get("text"),
        "usage": {"input_tokens": usage["input"], "output_tokens": usage["output"],
                  "total_tokens": usage["input"] + usage["output"],
                  "input_tokens_details": {"cached_tokens": usage["cached"]},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


def _anthropic_reply(body: Mapping[str, Any], verdict: dict[str, Any], usage: dict[str, int]
                     ) -> dict[str, Any]:
    schema, tool = _anthropic_schema(body)
    fitted = fit_to_schema(verdict, schema)
    stop = "end_turn"
    if "_refusal" in fitted:
        content: list[dict[str, Any]] = [{"type": "text", "text": str(fitted["_refusal"])}]
        stop = "refusal"
    elif "_raw_text" in fitted:
        content = [{"type": "text", "text": str(fitted["_raw_text"])}]
    elif tool is not None:
        content = [{"type": "tool_use", "id": _new_id("toolu_"), "name": tool, "input": fitted}]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": orjson.dumps(fitted).decode()}]
    return {
        "id": _new_id("msg_"), "type": "message", "role": "assistant",
        "model": body.get("model", "fake"), "content": content, "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": usage["input"], "output_tokens": usage["output"],
                  "cache_read_input_tokens": usage["cached"],
                  "cache_creation_input_tokens": 0},
    }


_BUILDERS: dict[str, Callable[[Mapping[str, Any], dict[str, Any], dict[str, int]],
                              dict[str, Any]]] = {
    "chat": _chat_reply, "responses": _responses_reply, "messages": _anthropic_reply,
}


def _route(path: str) -> str | None:
    for suffix, name in (("/chat/completions", "chat"), ("/responses", "responses"),
                         ("/messages", "messages")):
        if path.endswith(suffix):
            return name
    return None


def _fault_reply(fault: Fault, api: str) -> _Reply:
    """The HTTP reply for a fault, shaped like the provider's own error bodies."""
    anthropic = api == "messages"
    if fault.kind == "malformed":
        return _Reply(200, b'{"id": "broken", "choices": [', ())
    headers: tuple[tuple[str, str], ...] = ()
    if fault.kind == "rate_limit" and fault.retry_after_s is not None:
        headers = (("retry-after", f"{fault.retry_after_s:g}"),
                   ("retry-after-ms", f"{fault.retry_after_s * 1000:g}"))
    status, etype, code, message = _FAULT_BODIES[fault.kind][int(anthropic)]
    if anthropic:
        payload: dict[str, Any] = {"type": "error", "error": {"type": etype, "message": message}}
    else:
        payload = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return _json_reply(status, payload, headers)


# kind -> (openai (status, type, code, message), anthropic (status, type, code, message))
_FAULT_BODIES: dict[str, tuple[tuple[int, str, str | None, str], ...]] = {
    "rate_limit": (
        (429, "requests", "rate_limit_exceeded", "Rate limit reached for requests."),
        (429, "rate_limit_error", None, "Number of request tokens has exceeded your rate limit."),
    ),
    "quota": (
        (429, "insufficient_quota", "insufficient_quota",
         "You exceeded your current quota, please check your plan and billing details."),
        (429, "rate_limit_error", None,
         "You have reached your specified API usage limits. You will regain access on "
         "2099-01-01 at 00:00 UTC."),
    ),
    "unauthorized": (
        (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
        (401, "authentication_error", None, "invalid x-api-key"),
    ),
    "bad_request": (
        (400, "invalid_request_error", None, "Invalid request."),
        (400, "invalid_request_error", None, "Invalid request."),
    ),
    "server_error": (
        (500, "server_error", None, "The server had an error while processing your request."),
        (500, "api_error", None, "Internal server error"),
    ),
    "overloaded": (
        (529, "server_error", None, "The engine is currently overloaded."),
        (529, "overloaded_error", None, "Overloaded"),
    ),
    "hang": (
        (500, "server_error", None, "unreachable"),
        (500, "api_error", None, "unreachable"),
    ),
}


# --------------------------------------------------------------------------- the server


Latency = float | Callable[[Mapping[str, Any]], float]


class FakeLLMServer:
    """A loopback HTTP/1.1 fake of the OpenAI and Anthropic APIs.

    ``latency_s``: seconds per model call, or a function of the request body.
    ``verdict``: a :data:`VerdictScript` (default :func:`default_verdict`).
    ``faults``: faults served first, one per matching request, in order.
    ``fail_rate``/``fail_kind``: after the queue, each model call fails with this probability.
    ``cached_tokens``: reported as cached input tokens on every call.

    Use it as a context manager (sync or async): it runs in a background thread with its own
    event loop. :meth:`serve_forever` runs it in the calling thread instead.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, latency_s: Latency = 0.0,
                 verdict: VerdictScript | None = None, faults: list[Fault] | None = None,
                 fail_rate: float = 0.0, fail_kind: FaultKind = "server_error",
                 cached_tokens: int = 0, seed: int | None = 0) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("FakeLLMServer only listens on loopback")
        self.host = host
        self.port = port
        self.latency_s: Latency = latency_s
        self.verdict: VerdictScript = verdict or default_verdict
        self.fail_rate = fail_rate
        self.fail_kind: FaultKind = fail_kind
        self.cached_tokens = cached_tokens
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._rules: deque[_Rule] = deque(_Rule(f, 1) for f in faults or [])
        self._stats = _Stats()
        self._requests_seen: list[dict[str, Any]] = []
        self.keep_requests = 64
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped: asyncio.Event | None = None
        self._conn_tasks: set[asyncio.Task[None]] = set()
        self._startup_error: BaseException | None = None

    # ------------------------------------------------------------------ configuration

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    def inject(self, fault: Fault, times: int | None = 1) -> None:
        """Queue ``fault`` for the next ``times`` matching requests (None: every request)."""
        with self._lock:
            self._rules.append(_Rule(fault, times))

    def clear_faults(self) -> None:
        with self._lock:
            self._rules.clear()
            self.fail_rate = 0.0

    def set_verdict(self, verdict: VerdictScript | None) -> None:
        self.verdict = verdict or default_verdict

    def stats(self) -> dict[str, Any]:
        """Counters: requests (total, by path, by status), in-flight (now, peak), faults."""
        with self._lock:
            s = self._stats
            return {"requests_total": s.requests_total, "in_flight": s.in_flight,
                    "peak_in_flight": s.peak_in_flight,
                    "connections_total": s.connections_total,
                    "connections_open": s.connections_open,
                    "by_path": dict(s.by_path), "by_status": {str(k): v for k, v in
                                                              s.by_status.items()},
                    "faults": dict(s.faults)}

    def reset_stats(self) -> None:
        with self._lock:
            open_now, in_flight = self._stats.connections_open, self._stats.in_flight
            self._stats = _Stats(connections_open=open_now, in_flight=in_flight,
                                 peak_in_flight=in_flight)
            self._requests_seen.clear()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The last ``keep_requests`` model-call bodies (with ``_path`` and ``_headers``)."""
        with self._lock:
            return list(self._requests_seen)

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> FakeLLMServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeLLMServer:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    def start(self, timeout_s: float = 10.0) -> None:
        """Start serving in a background thread; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("FakeLLMServer already started")
        self._thread = threading.Thread(target=self._thread_main, name="fake-llm-server",
                                        daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise RuntimeError("FakeLLMServer did not start in time")
        if self._startup_error is not None:
            raise RuntimeError("FakeLLMServer failed to start") from self._startup_error

    def request_stop(self) -> None:
        """Ask a server running in the current loop (:meth:`serve_forever`) to stop."""
        if self._stopped is not None:
            self._stopped.set()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop serving, cancel open connections (hung requests too) and join the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self._stopped is not None:
            loop.call_soon_threadsafe(self._stopped.set)
        thread.join(timeout_s)
        self._thread = None

    def _thread_main(self) -> None:
        asyncio.run(self.serve_forever())

    async def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve in the running loop until :meth:`stop` (or the loop's task is cancelled)."""
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        try:
            self._server = await asyncio.start_server(
                self._handle_connection, self.host, self.port, backlog=1024, limit=_MAX_BODY)
        except OSError as exc:
            self._startup_error = exc
            self._ready.set()
            return
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        if on_ready is not None:
            on_ready()
        try:
            await self._stopped.wait()
        finally:
            await self._shutdown()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._conn_tasks):
            task.cancel()
        if self._conn_tasks:
            await asyncio.gather(*self._conn_tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5.0)

    # ------------------------------------------------------------------ HTTP

    async def _handle_connection(self, reader: asyncio.StreamReader,
                                 writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conn_tasks.add(task)
        with self._lock:
            self._stats.connections_total += 1
            self._stats.connections_open += 1
        try:
            while await self._serve_one(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError,
                ValueError):
            pass  # the client went away, or sent something that is not HTTP
        except asyncio.CancelledError:
            pass  # shutdown; asyncio's stream callback would report a cancelled task
        finally:
            with self._lock:
                self._stats.connections_open -= 1
            self._conn_tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> bool:
        """Read one request and answer it. False when the connection should close."""
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, _version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await self._read_body(reader, headers)
        reply = await self._dispatch(method, target.split("?", 1)[0], headers, body)
        keep_alive = headers.get("connection", "").lower() != "close"
        writer.write(self._encode(reply, keep_alive))
        await writer.drain()
        return keep_alive

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, headers: Mapping[str, str]) -> bytes:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                data = await reader.readexactly(size + 2)
                if size == 0:
                    return b"".join(chunks)
                chunks.append(data[:-2])
        length = int(headers.get("content-length", "0"))
        if length > _MAX_BODY:
            raise ConnectionError("request body too large")
        return await reader.readexactly(length) if length else b""

    @staticmethod
    def _encode(reply: _Reply, keep_alive: bool) -> bytes:
        reason = _REASONS.get(reply.status, "Status")
        lines = [f"HTTP/1.1 {reply.status} {reason}",
                 "content-type: application/json",
                 f"content-length: {len(reply.body)}",
                 f"connection: {'keep-alive' if keep_alive else 'close'}",
                 *(f"{k}: {v}" for k, v in reply.headers)]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + reply.body

    async def _dispatch(self, method: str, path: str, headers: Mapping[str, str],
                        raw: bytes) -> _Reply:
        if path.startswith("/_"):
            return self._control(method, path, raw)
        api = _route(path)
        if method != "POST" or api is None:
            return _json_reply(404, {"error": {"message": f"no route {method} {path}"}})
        self._enter(path)
        try:
            reply = await self._model_call(api, path, headers, raw)
        finally:
            self._leave()
        with self._lock:
            self._stats.by_status[reply.status] += 1
        return reply

    def _enter(self, path: str) -> None:
        with self._lock:
            s = self._stats
            s.requests_total += 1
            s.by_path[path] += 1
            s.in_flight += 1
            s.peak_in_flight = max(s.peak_in_flight, s.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._stats.in_flight -= 1

    async def _model_call(self, api: str, path: str, headers: Mapping[str, str],
                          raw: bytes) -> _Reply:
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _json_reply(400, {"error": {"message": "body is not JSON"}})
        self._remember(path, headers, body)
        fault = self._next_fault(path)
        if fault is not None and fault.kind == "hang":
            await asyncio.sleep(fault.hang_s)
            fault = None
        await self._sleep_latency(body)
        if fault is not None:
            return self._with_rate_headers(_fault_reply(fault, api), api, 0)
        text = prompt_text(body)
        verdict = self.verdict(body, text)
        usage = {"input": _estimate_tokens(text) + 12, "cached": self.cached_tokens,
                 "output": _estimate_tokens(orjson.dumps(verdict).decode())}
        payload = _BUILDERS[api](body, verdict, usage)
        return self._with_rate_headers(_json_reply(200, payload), api, usage["input"])

    def _remember(self, path: str, headers: Mapping[str, str], body: Any) -> None:
        if not isinstance(body, dict) or self.keep_requests <= 0:
            return
        safe_headers = {k: v for k, v in headers.items()
                        if k not in ("authorization", "x-api-key")}
        with self._lock:
            self._requests_seen.append({**body, "_path": path, "_headers": safe_headers})
            del self._requests_seen[:-self.keep_requests]

    async def _sleep_latency(self, body: Mapping[str, Any]) -> None:
        delay = self.latency_s(body) if callable(self.latency_s) else self.latency_s
        if delay > 0:
            await asyncio.sleep(delay)

    def _next_fault(self, path: str) -> Fault | None:
        with self._lock:
            for rule in self._rules:
                if rule.fault.applies_to(path):
                    if rule.remaining is not None:
                        rule.remaining -= 1
                        if rule.remaining <= 0:
                            self._rules.remove(rule)
                    self._stats.faults[rule.fault.kind] += 1
                    return rule.fault
            if self.fail_rate > 0 and self._rng.random() < self.fail_rate:
                self._stats.faults[self.fail_kind] += 1
                return Fault(self.fail_kind, retry_after_s=0.05, hang_s=1.0)
        return None

    def _with_rate_headers(self, reply: _Reply, api: str, tokens: int) -> _Reply:
        with self._lock:
            n = self._stats.requests_total
        remaining_req = str(max(0, _RATE_LIMIT_REQUESTS - n % _RATE_LIMIT_REQUESTS))
        remaining_tok = str(max(0, _RATE_LIMIT_TOKENS - tokens))
        if api == "messages":
            extra = (("anthropic-ratelimit-requests-limit", str(_RATE_LIMIT_REQUESTS)),
                     ("anthropic-ratelimit-requests-remaining", remaining_req),
                     ("anthropic-ratelimit-requests-reset", "2099-01-01T00:00:00Z"),
                     ("anthropic-ratelimit-tokens-limit", str(_RATE_LIMIT_TOKENS)),
                     ("anthropic-ratelimit-tokens-remaining", remaining_tok),
                     ("anthropic-ratelimit-tokens-reset", "2099-01-01T00:00:00Z"),
                     ("request-id", _new_id("req_")))
        else:
            extra = (("x-ratelimit-limit-requests", str(_RATE_LIMIT_REQUESTS)),
                     ("x-ratelimit-remaining-requests", remaining_req),
                     ("x-ratelimit-reset-requests", "6ms"),
                     ("x-ratelimit-limit-tokens", str(_RATE_LIMIT_TOKENS)),
                     ("x-ratelimit-remaining-tokens", remaining_tok),
                     ("x-ratelimit-reset-tokens", "1ms"),
                     ("x-request-id", _new_id("req_")))
        return _Reply(reply.status, reply.body, reply.headers + extra)

    # ------------------------------------------------------------------ control endpoints

    def _control(self, method: str, path: str, raw: bytes) -> _Reply:
        """``GET /_stats``; ``POST /_faults``, ``/_script``, ``/_reset`` (see module doc)."""
        try:
            if method == "GET" and path == "/_stats":
                return _json_reply(200, self.stats())
            if method == "POST" and path == "/_reset":
                self.clear_faults()
                self.reset_stats()
                return _json_reply(200, {"ok": True})
            if method == "POST" and path == "/_faults":
                self._apply_faults(orjson.loads(raw or b"{}"))
                return _json_reply(200, {"ok": True})
            if method == "POST" and path == "/_script":
                self._apply_script(orjson.loads(raw or b"{}"))
                return _json_reply(200, {"ok": True})
        except (ValueError, TypeError, KeyError) as exc:
            return _json_reply(400, {"error": {"message": str(exc)}})
        return _json_reply(404, {"error": {"message": f"no route {method} {path}"}})

    def _apply_faults(self, spec: Mapping[str, Any]) -> None:
        """``{"faults": [{"kind": ..., "retry_after_s": ..., "hang_s": ..., "path": ...,
        "times": n|null}], "fail_rate": r, "fail_kind": k, "latency_ms": l, "clear": bool}``"""
        if spec.get("clear"):
            self.clear_faults()
        for item in spec.get("faults", []):
            kind = item["kind"]
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r}")
            self.inject(Fault(kind, retry_after_s=item.get("retry_after_s", 1.0),
                              hang_s=float(item.get("hang_s", 3600.0)), path=item.get("path")),
                        times=item.get("times", 1))
        if "fail_rate" in spec:
            self.fail_rate = float(spec["fail_rate"])
        if "fail_kind" in spec:
            if spec["fail_kind"] not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {spec['fail_kind']!r}")
            self.fail_kind = spec["fail_kind"]
        if "latency_ms" in spec:
            self.latency_s = float(spec["latency_ms"]) / 1000

    def _apply_script(self, spec: Mapping[str, Any]) -> None:
        """``{"verdict": {...} | null}``: answer every call with this assessment (null: the
        default script)."""
        fixed = spec.get("verdict")
        if fixed is None:
            self.set_verdict(None)
            return
        if not isinstance(fixed, dict):
            raise TypeError("verdict must be an object or null")
        self.set_verdict(lambda _body, _text: dict(fixed))


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
            404: "Not Found", 408: "Request Timeout", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable", 529: "Overloaded"}


# --------------------------------------------------------------------------- process entry


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m guard.testing.fake_server",
                                     description="Loopback fake of the OpenAI/Anthropic APIs.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--fail-rate", type=float, default=0.0)
    parser.add_argument("--fail-kind", choices=FAULT_KINDS, default="server_error")
    parser.add_argument("--cached-tokens", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run the fake in the foreground; print its URL; stop on SIGINT/SIGTERM."""
    args = _parse_args(argv)
    server = FakeLLMServer(host=args.host, port=args.port, latency_s=args.latency_ms / 1000,
                           fail_rate=args.fail_rate, fail_kind=args.fail_kind,
                           cached_tokens=args.cached_tokens, seed=args.seed)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, server.request_stop)
        await server.serve_forever(
            on_ready=lambda: print(f"FAKE_LLM_URL={server.base_url}", flush=True))

    asyncio.run(run())


__all__ = [
    "FAULT_KINDS",
    "HALLUCINATION_MARKER",
    "FakeLLMServer",
    "Fault",
    "VerdictScript",
    "default_verdict",
    "fit_to_schema",
    "prompt_text",
]

if __name__ == "__main__":
    main()
