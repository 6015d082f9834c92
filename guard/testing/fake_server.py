"""A loopback fake of the OpenAI and Anthropic HTTP APIs, for tests and benches.

It speaks just enough of three model endpoints for the real ``openai`` and ``anthropic`` SDKs,
including their structured-output ``parse`` helpers:

* ``POST .../chat/completions`` (OpenAI chat; ``response_format`` json_schema or a forced tool),
* ``POST .../responses`` (OpenAI Responses API; ``text.format`` json_schema),
* ``POST .../messages`` (Anthropic; a forced ``tool_use`` block, or JSON text for
  ``output_config.format``).

and the batch endpoints (OpenAI Files + Batches, Anthropic Message Batches; see
:mod:`guard.testing.fake_batches`), whose items are answered like the model calls after
``batch_delay_s`` and counted by ``custom_id``.

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
``POST /_script`` and ``POST /_reset`` until SIGINT/SIGTERM. The wire formats (replies, error
bodies, verdict scripts) live in :mod:`guard.testing.fake_api`.

HTTP is the project's ASGI stack: one catch-all Starlette route on uvicorn (HTTP/1.1 with
keep-alive, connections counted), driven by :class:`guard.testing.loopback.LoopbackServer`
rather than by ``uvicorn.run``, so it runs in a test's thread as well as in the foreground of
:func:`main`; at stop, requests still hanging (a ``hang`` fault) are cut after a grace second.

Over 350 lines on purpose: one HTTP server with three provider APIs, fault injection, rate
limits and counters shares one dispatch and one lock; a test fake shipped to users is read
as a whole, and the wire formats are already apart in :mod:`guard.testing.fake_api`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from guard.testing.fake_api import (
    FAULT_KINDS,
    HALLUCINATION_MARKER,
    REPLY_BUILDERS,
    Fault,
    FaultKind,
    Reply,
    VerdictScript,
    default_verdict,
    estimate_tokens,
    fault_reply,
    fenced_text,
    fit_to_schema,
    json_reply,
    marker_verdict,
    new_id,
    numbers_verdict,
    prompt_text,
    route,
)
from guard.testing.fake_batches import ITEM_ERROR_MARKER, ITEM_EXPIRE_MARKER, FakeBatches
from guard.testing.fake_cache import FakePromptCache
from guard.testing.loopback import LoopbackServer

_MAX_BODY = 16 * 1024 * 1024
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_RATE_LIMIT_REQUESTS = 10_000
_CALLS_KEPT = 100_000  # answered model calls remembered for call_log()
_RATE_LIMIT_TOKENS = 2_000_000


@dataclass
class _Rule:
    fault: Fault
    remaining: int | None  # None: forever


@dataclass
class _Stats:
    requests_total: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    by_path: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    calls: deque[Call] = field(default_factory=lambda: deque(maxlen=_CALLS_KEPT))


@dataclass(frozen=True)
class Call:
    """One answered model call: when it arrived (Unix time) and the usage it reported."""

    at: float
    path: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int


# --------------------------------------------------------------------------- the server


Latency = float | Callable[[Mapping[str, Any]], float]


class FakeLLMServer(LoopbackServer):
    """A loopback HTTP/1.1 fake of the OpenAI and Anthropic APIs.

    ``latency_s``: seconds per model call, or a function of the request body.
    ``verdict``: a :data:`VerdictScript` (default :func:`default_verdict`).
    ``faults``: faults served first, one per matching request, in order.
    ``fail_rate``/``fail_kind``: after the queue, each model call fails with this probability.
    ``cached_tokens``: reported as cached input tokens on every call.
    ``batch_delay_s``: how long a batch takes to end; ``batch_fail_rate``: the share of batch
    items that error (see :mod:`guard.testing.fake_batches` for the markers that fail or expire
    an item). :attr:`batches` holds the batch state and counts submitted items.
    ``prompt_cache``: a :class:`FakePromptCache` that reports cache reads and writes from the
    prefixes it has seen instead (``cached_tokens`` is then ignored).

    Use it as a context manager (sync or async): it runs in a background thread with its own
    event loop. :meth:`serve_forever` runs it in the calling thread instead.
    """

    _thread_name = "fake-llm-server"

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: Latency = 0.0,
        verdict: VerdictScript | None = None,
        faults: list[Fault] | None = None,
        fail_rate: float = 0.0,
        fail_kind: FaultKind = "server_error",
        cached_tokens: int = 0,
        prompt_cache: FakePromptCache | None = None,
        seed: int | None = 0,
        batch_delay_s: float = 1.0,
        batch_fail_rate: float = 0.0,
    ) -> None:
        super().__init__(host=host, port=port)
        self.latency_s: Latency = latency_s
        self.verdict: VerdictScript = verdict or default_verdict
        self.fail_rate = fail_rate
        self.fail_kind: FaultKind = fail_kind
        self.cached_tokens = cached_tokens
        self.prompt_cache = prompt_cache
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._rules: deque[_Rule] = deque(_Rule(f, 1) for f in faults or [])
        self._stats = _Stats()
        self._requests_seen: list[dict[str, Any]] = []
        self.keep_requests = 64
        self.batches = FakeBatches(
            self._batch_item, delay_s=batch_delay_s, fail_rate=batch_fail_rate, seed=seed or 0
        )

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
            return {
                "requests_total": s.requests_total,
                "in_flight": s.in_flight,
                "peak_in_flight": s.peak_in_flight,
                "connections_total": self._connections.total,
                "connections_open": self._connections.open,
                "by_path": dict(s.by_path),
                "by_status": {str(k): v for k, v in s.by_status.items()},
                "faults": dict(s.faults),
                "batch": self.batches.stats(),
            }

    def reset_stats(self) -> None:
        with self._lock:
            in_flight = self._stats.in_flight
            self._stats = _Stats(in_flight=in_flight, peak_in_flight=in_flight)
            self._requests_seen.clear()
        self._connections.reset()
        self.batches.reset()

    def call_log(self) -> list[Call]:
        """The answered model calls (the last 100,000), oldest first: arrival time and usage,
        so a test can count calls per minute and price what was spent."""
        with self._lock:
            return list(self._stats.calls)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The last ``keep_requests`` model-call bodies (with ``_path`` and ``_headers``)."""
        with self._lock:
            return list(self._requests_seen)

    # ------------------------------------------------------------------ lifecycle
    # start(), stop() and the context managers (sync and async) come from LoopbackServer.

    def request_stop(self) -> None:
        """Ask a server running in the current loop (:meth:`serve_forever`) to stop."""
        self._request_stop()

    async def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve in the running loop until :meth:`stop` (or the loop's task is cancelled)."""
        await self._serve(on_ready)

    def _bound(self) -> None:
        self.batches.base_url = self.base_url

    # ------------------------------------------------------------------ HTTP

    def _app(self) -> Starlette:
        """One Starlette route for every path and method; :meth:`_dispatch` decides."""

        async def endpoint(request: Request) -> Response:
            if int(request.headers.get("content-length") or 0) > _MAX_BODY:
                return Response(b'{"error": {"message": "body too large"}}', 413)
            raw = await request.body()
            headers = {k.lower(): v for k, v in request.headers.items()}
            reply = await self._dispatch(request.method, request.url.path, headers, raw)
            return Response(
                reply.body,
                status_code=reply.status,
                headers=dict(reply.headers),
                media_type=reply.content_type,
            )

        return Starlette(routes=[Route("/{path:path}", endpoint, methods=list(_METHODS))])

    async def _dispatch(
        self, method: str, path: str, headers: Mapping[str, str], raw: bytes
    ) -> Reply:
        if path.startswith("/_"):
            return self._control(method, path, raw)
        if self.batches.handles(method, path):
            with self._lock:
                self._stats.requests_total += 1
                self._stats.by_path[path] += 1
            fault = self._next_fault(path, named_only=True)
            if fault is not None:  # only a fault naming a batch path applies to one
                return fault_reply(fault, "messages" if "/messages/" in path else "chat")
            return self.batches.dispatch(method, path, dict(headers), raw)
        api = route(path)
        if method != "POST" or api is None:
            return json_reply(404, {"error": {"message": f"no route {method} {path}"}})
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

    async def _model_call(
        self, api: str, path: str, headers: Mapping[str, str], raw: bytes
    ) -> Reply:
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return json_reply(400, {"error": {"message": "body is not JSON"}})
        self._remember(path, headers, body)
        arrived = time.time()
        fault = self._next_fault(path)
        if fault is not None and fault.kind == "hang":
            await asyncio.sleep(fault.hang_s)
            fault = None
        await self._sleep_latency(body)
        if fault is not None:
            presented = headers.get("x-api-key") or headers.get("authorization", "")
            reply = fault_reply(fault, api, presented.removeprefix("Bearer ").strip())
            return self._with_rate_headers(reply, api, 0)
        payload, usage = self._answer(api, body)
        call = Call(arrived, path, usage["input"], usage["output"], usage["cached"])
        with self._lock:
            self._stats.calls.append(call)
        return self._with_rate_headers(json_reply(200, payload), api, usage["input"])

    def _answer(self, api: str, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
        """The reply body of a model call by the verdict script, and its usage."""
        text = prompt_text(body)
        verdict = self.verdict(body, text)
        tokens, cached, written = estimate_tokens(text) + 12, self.cached_tokens, 0
        if self.prompt_cache is not None:
            tokens, cached, written = self.prompt_cache.usage(api, body, tokens)
        usage = {
            "input": tokens,
            "cached": cached,
            "cache_write": written,
            "output": estimate_tokens(orjson.dumps(verdict).decode()),
        }
        return REPLY_BUILDERS[api](body, verdict, usage), usage

    def _batch_item(self, api: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One batch item answered as the model call would be (no latency, no faults; not in
        :meth:`call_log`, which holds realtime calls)."""
        return 200, self._answer(api, body)[0]

    def _remember(self, path: str, headers: Mapping[str, str], body: Any) -> None:
        if not isinstance(body, dict) or self.keep_requests <= 0:
            return
        safe_headers = {k: v for k, v in headers.items() if k not in ("authorization", "x-api-key")}
        with self._lock:
            self._requests_seen.append({**body, "_path": path, "_headers": safe_headers})
            del self._requests_seen[: -self.keep_requests]

    async def _sleep_latency(self, body: Mapping[str, Any]) -> None:
        delay = self.latency_s(body) if callable(self.latency_s) else self.latency_s
        if delay > 0:
            await asyncio.sleep(delay)

    def _next_fault(self, path: str, *, named_only: bool = False) -> Fault | None:
        """The fault to serve for ``path``; ``named_only``: only one whose ``path`` names it
        (the batch endpoints), never a drawn one."""
        with self._lock:
            for rule in self._rules:
                if rule.fault.applies_to(path) and not (named_only and rule.fault.path is None):
                    if rule.remaining is not None:
                        rule.remaining -= 1
                        if rule.remaining <= 0:
                            self._rules.remove(rule)
                    self._stats.faults[rule.fault.kind] += 1
                    return rule.fault
            if not named_only and self.fail_rate > 0 and self._rng.random() < self.fail_rate:
                self._stats.faults[self.fail_kind] += 1
                return Fault(self.fail_kind, retry_after_s=0.05, hang_s=1.0)
        return None

    def _with_rate_headers(self, reply: Reply, api: str, tokens: int) -> Reply:
        with self._lock:
            n = self._stats.requests_total
        remaining_req = str(max(0, _RATE_LIMIT_REQUESTS - n % _RATE_LIMIT_REQUESTS))
        remaining_tok = str(max(0, _RATE_LIMIT_TOKENS - tokens))
        if api == "messages":
            extra = (
                ("anthropic-ratelimit-requests-limit", str(_RATE_LIMIT_REQUESTS)),
                ("anthropic-ratelimit-requests-remaining", remaining_req),
                ("anthropic-ratelimit-requests-reset", "2099-01-01T00:00:00Z"),
                ("anthropic-ratelimit-tokens-limit", str(_RATE_LIMIT_TOKENS)),
                ("anthropic-ratelimit-tokens-remaining", remaining_tok),
                ("anthropic-ratelimit-tokens-reset", "2099-01-01T00:00:00Z"),
                ("request-id", new_id("req_")),
            )
        else:
            extra = (
                ("x-ratelimit-limit-requests", str(_RATE_LIMIT_REQUESTS)),
                ("x-ratelimit-remaining-requests", remaining_req),
                ("x-ratelimit-reset-requests", "6ms"),
                ("x-ratelimit-limit-tokens", str(_RATE_LIMIT_TOKENS)),
                ("x-ratelimit-remaining-tokens", remaining_tok),
                ("x-ratelimit-reset-tokens", "1ms"),
                ("x-request-id", new_id("req_")),
            )
        return Reply(reply.status, reply.body, reply.headers + extra, reply.content_type)

    # ------------------------------------------------------------------ control endpoints

    def _control(self, method: str, path: str, raw: bytes) -> Reply:
        """``GET /_stats``; ``POST /_faults``, ``/_script``, ``/_reset`` (see module doc)."""
        try:
            if method == "GET" and path == "/_stats":
                return json_reply(200, self.stats())
            if method == "POST" and path == "/_reset":
                self.clear_faults()
                self.reset_stats()
                return json_reply(200, {"ok": True})
            if method == "POST" and path == "/_faults":
                self._apply_faults(orjson.loads(raw or b"{}"))
                return json_reply(200, {"ok": True})
            if method == "POST" and path == "/_script":
                self._apply_script(orjson.loads(raw or b"{}"))
                return json_reply(200, {"ok": True})
        except (ValueError, TypeError, KeyError) as exc:
            return json_reply(400, {"error": {"message": str(exc)}})
        return json_reply(404, {"error": {"message": f"no route {method} {path}"}})

    def _apply_faults(self, spec: Mapping[str, Any]) -> None:
        """``{"faults": [{"kind": ..., "retry_after_s": ..., "hang_s": ..., "path": ...,
        "times": n|null}], "fail_rate": r, "fail_kind": k, "latency_ms": l, "clear": bool,
        "batch_delay_ms": d, "batch_fail_rate": b}``"""
        if spec.get("clear"):
            self.clear_faults()
        for item in spec.get("faults", []):
            kind = item["kind"]
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r}")
            self.inject(
                Fault(
                    kind,
                    retry_after_s=item.get("retry_after_s", 1.0),
                    hang_s=float(item.get("hang_s", 3600.0)),
                    path=item.get("path"),
                ),
                times=item.get("times", 1),
            )
        if "fail_rate" in spec:
            self.fail_rate = float(spec["fail_rate"])
        if "fail_kind" in spec:
            if spec["fail_kind"] not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {spec['fail_kind']!r}")
            self.fail_kind = spec["fail_kind"]
        if "latency_ms" in spec:
            self.latency_s = float(spec["latency_ms"]) / 1000
        if "batch_delay_ms" in spec:
            self.batches.delay_s = float(spec["batch_delay_ms"]) / 1000
        if "batch_fail_rate" in spec:
            self.batches.fail_rate = float(spec["batch_fail_rate"])

    def _apply_script(self, spec: Mapping[str, Any]) -> None:
        """``{"verdict": {...}}``: answer every call with this assessment;
        ``{"script": "default" | "numbers" | "marker"}``: a named script (see :data:`SCRIPTS`)."""
        fixed = spec.get("verdict")
        if fixed is not None:
            if not isinstance(fixed, dict):
                raise TypeError("verdict must be an object or null")
            self.set_verdict(lambda _body, _text: dict(fixed))
            return
        name = spec.get("script", "default")
        if name not in SCRIPTS:
            raise ValueError(f"unknown script {name!r}; known: {sorted(SCRIPTS)}")
        self.set_verdict(SCRIPTS[name])


SCRIPTS: dict[str, VerdictScript] = {
    "default": default_verdict,
    "numbers": numbers_verdict,
    "marker": marker_verdict,
}
"""Named verdict scripts, for ``--script`` and ``POST /_script``."""


# --------------------------------------------------------------------------- process entry


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m guard.testing.fake_server",
        description="Loopback fake of the OpenAI/Anthropic APIs.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--fail-rate", type=float, default=0.0)
    parser.add_argument("--fail-kind", choices=FAULT_KINDS, default="server_error")
    parser.add_argument("--cached-tokens", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--batch-delay-ms", type=float, default=1000.0, help="how long a batch takes to end"
    )
    parser.add_argument("--batch-fail-rate", type=float, default=0.0)
    parser.add_argument(
        "--script",
        choices=sorted(SCRIPTS),
        default="default",
        help="verdict script: default (fails an output whose numbers the evidence lacks, or "
        "holding the marker HALLUCINATED; 'numbers' is its earlier name) or marker (fails only "
        "the marker: passes every other output)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run the fake in the foreground; print its URL; stop on SIGINT/SIGTERM."""
    args = _parse_args(argv)
    server = FakeLLMServer(
        host=args.host,
        port=args.port,
        latency_s=args.latency_ms / 1000,
        fail_rate=args.fail_rate,
        fail_kind=args.fail_kind,
        cached_tokens=args.cached_tokens,
        seed=args.seed,
        verdict=SCRIPTS[args.script],
        batch_delay_s=args.batch_delay_ms / 1000,
        batch_fail_rate=args.batch_fail_rate,
    )

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, server.request_stop)
        await server.serve_forever(
            on_ready=lambda: print(f"FAKE_LLM_URL={server.base_url}", flush=True)
        )

    asyncio.run(run())


__all__ = [
    "FAULT_KINDS",
    "HALLUCINATION_MARKER",
    "ITEM_ERROR_MARKER",
    "ITEM_EXPIRE_MARKER",
    "SCRIPTS",
    "FakeLLMServer",
    "Fault",
    "VerdictScript",
    "default_verdict",
    "fenced_text",
    "fit_to_schema",
    "marker_verdict",
    "numbers_verdict",
    "prompt_text",
]

if __name__ == "__main__":
    main()
