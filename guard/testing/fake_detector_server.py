"""A loopback fake of the detector model servers, Hugging Face TEI and vLLM, for tests.

Shipped for users' own tests of ``detector`` judges (as :mod:`guard.testing.fake_server` is for
the LLM judges): real HTTP/1.1 with keep-alive on 127.0.0.1, the endpoints' documented
request and answer shapes and error bodies, a deterministic scoring rule so a test can predict
pass and fail, fault injection, and counters.

Endpoints:

* TEI: ``POST /predict`` (``{"inputs": [[premise, hypothesis], ...], "raw_scores", "truncate"}``
  -> one list of ``{"label", "score"}`` per input, sorted by score; more inputs than
  ``max_client_batch_size`` is TEI's 413), ``GET /info``, ``GET /health``.
* vLLM: ``POST /score`` and ``/v1/score`` (``text_1``/``text_2``, 1:N or N:N ->
  ``{"data": [{"index", "score"}]}``), ``POST /classify`` (``input`` texts or token ids ->
  ``{"data": [{"index", "label", "probs", "num_classes"}]}``), ``POST /pooling`` with
  ``task: token_classify`` (-> ``{"data": [{"index", "data": [[p per class] per token]}]}``),
  ``GET /v1/models``. A ``model`` other than the served one is vLLM's 404.

The rule: P(supported) of (premise, hypothesis) is the share of the hypothesis's distinct words
(lowercased ``\\w+``) that occur in the premise; the class ``supported_label`` gets it and the
other classes share the rest. ``/classify`` splits a text input at ``pair_separator`` and a
token-id input at the first ``sep_token_id`` (ids in ``special_token_ids`` are left out). For
``/pooling`` a token is unsupported when its id (or, for a text input, its word) occurs only
once in the whole input: an answer token found in the context occurs twice. Supported tokens
get 0.9 on ``supported_label``'s class, unsupported ones 0.1. ``raw_scores`` /
``"use_activation": false`` answer logits (log-odds for one label, log-probabilities else).

In a test::

    with FakeDetectorServer() as srv:
        backend = TEIPairBackend(srv.base_url, api_key=None, timeout_s=5, max_length=512,
                                 supported_label="supported")
        srv.inject(DetectorFault("overloaded", retry_after_s=2))
        ...
        assert srv.stats()["connections_total"] <= 4

As a process: ``python -m guard.testing.fake_detector_server --port 0`` prints
``FAKE_DETECTOR_URL=http://127.0.0.1:PORT`` and serves ``GET /_stats``, ``POST /_faults``
(``{"faults": [{"kind", "retry_after_s", "hang_s", "path", "times"}], "clear", "latency_ms"}``)
and ``POST /_reset`` until SIGINT/SIGTERM.

Over 350 lines on purpose: two servers' five endpoints, their error bodies, fault injection and
counters share one dispatch and one lock, and a fake shipped to users is read as a whole.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import re
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from guard.testing.loopback import LoopbackServer

DetectorFaultKind = Literal[
    "hang",  # wait hang_s, then answer normally
    "drop",  # cut the connection without an answer (a crashed server)
    "server_error",  # 500
    "unavailable",  # 503
    "inference_failed",  # TEI's 424
    "overloaded",  # TEI's 429 {"error": "Model is overloaded"}, Retry-After if retry_after_s
    "rate_limit",  # vLLM-style 429 with Retry-After
    "too_large",  # 413 (TEI: batch or input too large)
    "bad_request",  # 400
    "unauthorized",  # 401
    "malformed",  # 200, not JSON
    "wrong_length",  # 200, one answer fewer than inputs
    "missing_label",  # 200, the supported label (TEI) or the class probabilities (vLLM) absent
    "nan",  # 200, a score that is NaN (the literal Python's json writes)
    "out_of_range",  # 200, a score of 1.5
    "bad_index",  # 200, vLLM data entries that share one index
]
FAULT_KINDS: tuple[str, ...] = get_args(DetectorFaultKind)

_TEI_PATHS = ("/predict", "/info", "/health")
_MODEL_PATHS = ("/predict", "/score", "/v1/score", "/classify", "/pooling")
_WORD = re.compile(r"\w+")
_STATUS = {
    "server_error": 500,
    "unavailable": 503,
    "inference_failed": 424,
    "overloaded": 429,
    "rate_limit": 429,
    "too_large": 413,
    "bad_request": 400,
    "unauthorized": 401,
}


@dataclass(frozen=True)
class DetectorFault:
    """One injected failure (see :data:`DetectorFaultKind`); ``path`` limits it to requests
    whose path ends with it."""

    kind: DetectorFaultKind
    retry_after_s: float | None = 1.0
    hang_s: float = 3600.0
    path: str | None = None

    def applies_to(self, path: str) -> bool:
        return self.path is None or path.endswith(self.path)


@dataclass
class _Rule:
    fault: DetectorFault
    remaining: int | None


@dataclass
class _Stats:
    requests_total: int = 0
    items_total: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    by_path: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    batch_sizes: deque[int] = field(default_factory=lambda: deque(maxlen=10_000))


@dataclass(frozen=True)
class _Reply:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


class _Drop(Exception):
    """The endpoint cuts the connection instead of answering."""


# --------------------------------------------------------------------------- the rule


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def overlap(premise: Collection[Any], hypothesis: Collection[Any]) -> float:
    """The share of ``hypothesis``'s distinct items found in ``premise`` (1.0 when empty)."""
    wanted = set(hypothesis)
    return len(wanted & set(premise)) / len(wanted) if wanted else 1.0


# --------------------------------------------------------------------------- the server


class FakeDetectorServer(LoopbackServer):
    """A loopback fake of TEI's and vLLM's detector endpoints (see the module doc).

    ``labels``: the model's classes in index order; ``supported_label`` the one that gets
    P(supported). ``model``: the name vLLM serves (TEI's ``model_id``). ``max_model_len``: the
    window reported by ``/info`` and ``/v1/models``. ``latency_s``: seconds per model call.
    ``api_key``: when set, calls without ``Authorization: Bearer <key>`` get 401.

    A context manager (sync or async) serving in a background thread with its own loop;
    :meth:`serve_forever` serves in the calling loop instead.
    """

    _thread_name = "fake-detector"

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "fake-detector",
        labels: Sequence[str] = ("supported", "unsupported"),
        supported_label: str = "supported",
        max_client_batch_size: int = 32,
        max_model_len: int = 512,
        pair_separator: str = "</s></s>",
        sep_token_id: int | None = None,
        special_token_ids: Collection[int] = (),
        latency_s: float = 0.0,
        api_key: str | None = None,
        faults: Sequence[DetectorFault] = (),
    ) -> None:
        super().__init__(host=host, port=port)
        if supported_label not in labels:
            raise ValueError(f"supported_label {supported_label!r} is not in labels")
        self.model = model
        self.labels = list(labels)
        self.supported = self.labels.index(supported_label)
        self.max_client_batch_size = max_client_batch_size
        self.max_model_len = max_model_len
        self.pair_separator = pair_separator
        self.sep_token_id = sep_token_id
        self.special_token_ids = frozenset(special_token_ids)
        self.latency_s = latency_s
        self.api_key = api_key
        self._lock = threading.Lock()
        self._rules: deque[_Rule] = deque(_Rule(f, 1) for f in faults)
        self._stats = _Stats()
        self._requests: deque[dict[str, Any]] = deque(maxlen=64)
        self._transports: dict[Any, asyncio.Transport] = {}

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # ------------------------------------------------------------------ faults and counters

    def inject(self, fault: DetectorFault, times: int | None = 1) -> None:
        """Serve ``fault`` to the next ``times`` matching model calls (None: to every one)."""
        with self._lock:
            self._rules.append(_Rule(fault, times))

    def clear_faults(self) -> None:
        with self._lock:
            self._rules.clear()

    def stats(self) -> dict[str, Any]:
        """Requests (total, by path, by status), inputs judged, batch sizes per model call,
        in flight (now, peak), TCP connections (opened in total, open now), faults served."""
        with self._lock:
            s = self._stats
            return {
                "requests_total": s.requests_total,
                "items_total": s.items_total,
                "batch_sizes": list(s.batch_sizes),
                "in_flight": s.in_flight,
                "peak_in_flight": s.peak_in_flight,
                "connections_total": self._connections.total,
                "connections_open": self._connections.open,
                "by_path": dict(s.by_path),
                "by_status": {str(k): v for k, v in s.by_status.items()},
                "faults": dict(s.faults),
            }

    def reset_stats(self) -> None:
        with self._lock:
            self._stats = _Stats(in_flight=self._stats.in_flight)
            self._requests.clear()
        self._connections.reset()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The last 64 model-call bodies, with ``_path`` (headers are not kept)."""
        with self._lock:
            return list(self._requests)

    # ------------------------------------------------------------------ lifecycle
    # start(), stop() and the context managers (sync and async) come from LoopbackServer;
    # stop() cuts hung requests after a grace second, and the port then refuses connections.

    def request_stop(self) -> None:
        self._request_stop()

    async def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve in the running loop until :meth:`stop`."""
        await self._serve(on_ready)

    def _connection_made(self, transport: asyncio.Transport) -> None:
        """Each connection's transport is kept by peer address, so a ``drop`` fault can cut
        it."""
        super()._connection_made(transport)
        with self._lock:
            self._transports[transport.get_extra_info("peername")] = transport

    def _connection_lost(self, transport: asyncio.Transport) -> None:
        super()._connection_lost(transport)
        with self._lock:
            self._transports.pop(transport.get_extra_info("peername"), None)

    # ------------------------------------------------------------------ HTTP

    def _app(self) -> Starlette:
        async def endpoint(request: Request) -> Response:
            raw = await request.body()
            try:
                reply = await self._dispatch(request, raw)
            except _Drop:
                self._cut(request)
                return Response(b"", 500)  # never reaches the client: the connection is gone
            with self._lock:
                self._stats.by_status[reply.status] += 1
            return Response(reply.body, reply.status, dict(reply.headers), "application/json")

        methods = ["GET", "POST"]
        return Starlette(routes=[Route("/{path:path}", endpoint, methods=methods)])

    def _cut(self, request: Request) -> None:
        client = request.scope.get("client")
        with self._lock:
            transport = self._transports.get(tuple(client) if client else None)
        if transport is not None:
            transport.abort()

    async def _dispatch(self, request: Request, raw: bytes) -> _Reply:
        path, method = request.url.path, request.method
        if path.startswith("/_"):
            return self._control(method, path, raw)
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _json(401, {"error": "Unauthorized"})
        if method == "GET":
            return self._metadata(path)
        if path not in _MODEL_PATHS:
            return _error(path, 404, f"no route POST {path}", "NotFoundError")
        self._enter(path)
        try:
            return await self._model_call(path, raw)
        finally:
            with self._lock:
                self._stats.in_flight -= 1

    def _enter(self, path: str) -> None:
        with self._lock:
            s = self._stats
            s.requests_total += 1
            s.by_path[path] += 1
            s.in_flight += 1
            s.peak_in_flight = max(s.peak_in_flight, s.in_flight)

    async def _model_call(self, path: str, raw: bytes) -> _Reply:
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _error(path, 400, "body is not JSON", "BadRequestError")
        if not isinstance(body, dict):
            return _error(path, 422, "body is not an object", "BadRequestError")
        with self._lock:
            self._requests.append({**body, "_path": path})
        fault = self._next_fault(path)
        if fault is not None and fault.kind == "hang":
            await asyncio.sleep(fault.hang_s)
            fault = None
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if fault is not None and fault.kind == "drop":
            raise _Drop
        if fault is not None and fault.kind in _STATUS:
            return _fault_reply(fault, path)
        if fault is not None and fault.kind == "malformed":
            return _Reply(200, b"<html>502 Bad Gateway</html>")
        return self._answer(path, body, fault.kind if fault else None)

    def _answer(self, path: str, body: dict[str, Any], spoil: str | None) -> _Reply:
        if path != "/predict" and body.get("model", self.model) != self.model:
            message = f"The model `{body.get('model')}` does not exist."
            return _error(path, 404, message, "NotFoundError")
        handler = {
            "/predict": self._predict,
            "/score": self._score,
            "/v1/score": self._score,
            "/classify": self._classify,
            "/pooling": self._pooling,
        }[path]
        try:
            status, payload = handler(body)
        except (KeyError, TypeError, ValueError) as exc:
            return _error(path, 400, f"invalid request: {exc}", "BadRequestError")
        if status != 200:
            return _error(path, status, str(payload), "BadRequestError")
        return _Reply(200, _spoiled(path, payload, spoil, self.labels[self.supported]))

    def _count(self, n: int) -> None:
        with self._lock:
            self._stats.items_total += n
            self._stats.batch_sizes.append(n)

    # ------------------------------------------------------------------ TEI

    def _predict(self, body: Mapping[str, Any]) -> tuple[int, Any]:
        inputs = body["inputs"]
        single = isinstance(inputs, str) or bool(inputs and isinstance(inputs[0], str))
        if single:  # one text or one pair: TEI answers one list of predictions
            inputs = [[inputs] if isinstance(inputs, str) else inputs]
        if len(inputs) > self.max_client_batch_size:
            return 413, (
                f"batch size {len(inputs)} > maximum allowed batch size "
                f"{self.max_client_batch_size}"
            )
        self._count(len(inputs))
        raw = bool(body.get("raw_scores", False))
        answers = [self._predictions(pair, raw) for pair in inputs]
        return 200, answers[0] if single else answers

    def _predictions(self, pair: Sequence[str], raw: bool) -> list[dict[str, Any]]:
        premise, hypothesis = (pair[0], pair[1]) if len(pair) == 2 else ("", pair[0])
        probs = self._class_probs(overlap(words(premise), words(hypothesis)))
        scores = _logits(probs) if raw else probs
        ranked = sorted(zip(self.labels, scores, strict=True), key=lambda ls: -ls[1])
        return [{"label": label, "score": score} for label, score in ranked]

    def _metadata(self, path: str) -> _Reply:
        if path == "/health":
            return _Reply(200, b"")
        if path == "/info":
            id2label = {str(i): label for i, label in enumerate(self.labels)}
            label2id = {label: i for i, label in enumerate(self.labels)}
            return _json(
                200,
                {
                    "model_id": self.model,
                    "model_type": {"classifier": {"id2label": id2label, "label2id": label2id}},
                    "max_concurrent_requests": 512,
                    "max_input_length": self.max_model_len,
                    "max_client_batch_size": self.max_client_batch_size,
                    "version": "fake",
                },
            )
        if path == "/v1/models":
            card = {
                "id": self.model,
                "object": "model",
                "created": int(time.time()),
                "owned_by": "vllm",
                "root": self.model,
                "max_model_len": self.max_model_len,
            }
            return _json(200, {"object": "list", "data": [card]})
        return _error(path, 404, f"no route GET {path}", "NotFoundError")

    # ------------------------------------------------------------------ vLLM

    def _score(self, body: Mapping[str, Any]) -> tuple[int, Any]:
        first, second = body["text_1"], body["text_2"]
        firsts = [first] if isinstance(first, str) else list(first)
        seconds = [second] if isinstance(second, str) else list(second)
        if len(firsts) == 1:
            firsts = firsts * len(seconds)
        if len(firsts) != len(seconds):
            return 400, "text_1 and text_2 must have the same length (or text_1 one text)"
        self._count(len(seconds))
        raw = body.get("use_activation") is False
        data = []
        for i, (premise, hypothesis) in enumerate(zip(firsts, seconds, strict=True)):
            p = overlap(words(premise), words(hypothesis))
            data.append({"index": i, "object": "score", "score": _logit(p) if raw else p})
        return 200, self._listing("score", data, len(seconds))

    def _classify(self, body: Mapping[str, Any]) -> tuple[int, Any]:
        inputs = _inputs(body["input"])
        self._count(len(inputs))
        data = []
        for i, item in enumerate(inputs):
            premise, hypothesis = self._split(item)
            probs = self._class_probs(overlap(premise, hypothesis))
            top = max(range(len(probs)), key=probs.__getitem__)
            entry = {"index": i, "label": self.labels[top], "probs": probs}
            data.append({**entry, "num_classes": len(probs)})
        return 200, self._listing("classify", data, len(inputs))

    def _split(self, item: str | list[int]) -> tuple[Collection[Any], Collection[Any]]:
        """(premise, hypothesis) words of a text input, or ids of a token-id input."""
        if isinstance(item, str):
            premise, _, hypothesis = item.partition(self.pair_separator)
            return words(premise), words(hypothesis)
        if self.sep_token_id is None or self.sep_token_id not in item:
            raise ValueError("token ids without the fake's sep_token_id")
        cut = item.index(self.sep_token_id)
        keep = self.special_token_ids | {self.sep_token_id}
        return [t for t in item[:cut] if t not in keep], [t for t in item[cut:] if t not in keep]

    def _pooling(self, body: Mapping[str, Any]) -> tuple[int, Any]:
        if body.get("task", "token_classify") != "token_classify":
            return 400, f"task {body.get('task')!r} is not supported by this model"
        inputs = _inputs(body["input"])
        self._count(len(inputs))
        raw = body.get("use_activation") is False
        data: list[dict[str, Any]] = []
        tokens_total = 0
        for i, item in enumerate(inputs):
            tokens = item if isinstance(item, list) else [w.lower() for w in _WORD.findall(item)]
            seen = Counter(tokens)
            rows = [self._token_probs(seen[t] > 1) for t in tokens]
            rows = [_logits(row) for row in rows] if raw else rows
            data.append({"index": i, "object": "pooling", "data": rows})
            tokens_total += len(tokens)
        return 200, self._listing("pooling", data, tokens_total)

    def _class_probs(self, p: float) -> list[float]:
        """P(supported) on the supported class; the other classes share the rest."""
        if len(self.labels) == 1:
            return [p]
        rest = (1.0 - p) / (len(self.labels) - 1)
        return [p if i == self.supported else rest for i in range(len(self.labels))]

    def _token_probs(self, supported: bool) -> list[float]:
        return self._class_probs(0.9 if supported else 0.1)

    def _listing(self, kind: str, data: list[Any], tokens: int) -> dict[str, Any]:
        return {
            "id": f"{kind}-fake",
            "object": "list",
            "created": int(time.time()),
            "model": self.model,
            "data": data,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0},
        }

    # ------------------------------------------------------------------ faults

    def _next_fault(self, path: str) -> DetectorFault | None:
        with self._lock:
            for rule in self._rules:
                if rule.fault.applies_to(path):
                    if rule.remaining is not None:
                        rule.remaining -= 1
                        if rule.remaining <= 0:
                            self._rules.remove(rule)
                    self._stats.faults[rule.fault.kind] += 1
                    return rule.fault
        return None

    def _control(self, method: str, path: str, raw: bytes) -> _Reply:
        try:
            if method == "GET" and path == "/_stats":
                return _json(200, self.stats())
            if method == "POST" and path == "/_reset":
                self.clear_faults()
                self.reset_stats()
                return _json(200, {"ok": True})
            if method == "POST" and path == "/_faults":
                self._apply_faults(orjson.loads(raw or b"{}"))
                return _json(200, {"ok": True})
        except (ValueError, TypeError, KeyError) as exc:
            return _json(400, {"error": str(exc)})
        return _json(404, {"error": f"no route {method} {path}"})

    def _apply_faults(self, spec: Mapping[str, Any]) -> None:
        if spec.get("clear"):
            self.clear_faults()
        for item in spec.get("faults", []):
            if item["kind"] not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {item['kind']!r}")
            fault = DetectorFault(
                item["kind"],
                retry_after_s=item.get("retry_after_s", 1.0),
                hang_s=float(item.get("hang_s", 3600.0)),
                path=item.get("path"),
            )
            self.inject(fault, times=item.get("times", 1))
        if "latency_ms" in spec:
            self.latency_s = float(spec["latency_ms"]) / 1000


# --------------------------------------------------------------------------- wire helpers


def _json(status: int, payload: Any) -> _Reply:
    return _Reply(status, orjson.dumps(payload))


def _error(path: str, status: int, message: str, kind: str) -> _Reply:
    """TEI's ``{"error", "error_type"}`` on TEI paths, vLLM's ``{"error": {...}}`` else."""
    if path in _TEI_PATHS:
        error_type = {413: "validation", 422: "tokenizer", 429: "overloaded"}.get(status, "backend")
        return _json(status, {"error": message, "error_type": error_type})
    error = {"message": message, "type": kind, "param": None, "code": status}
    return _json(status, {"error": error})


def _fault_reply(fault: DetectorFault, path: str) -> _Reply:
    status = _STATUS[fault.kind]
    messages = {
        "overloaded": "Model is overloaded",
        "rate_limit": "Too many requests",
        "inference_failed": "Inference failed",
        "too_large": "batch size too large",
        "unauthorized": "Unauthorized",
    }
    reply = _error(path, status, messages.get(fault.kind, f"fake {fault.kind}"), fault.kind)
    if status in (429, 503) and fault.retry_after_s is not None:
        return _Reply(status, reply.body, (("retry-after", f"{fault.retry_after_s:g}"),))
    return reply


def _spoiled(path: str, payload: Any, spoil: str | None, supported: str) -> bytes:
    """``payload`` as JSON, spoiled as the shape faults say."""
    rows = payload if path == "/predict" else payload["data"]
    if spoil == "wrong_length":
        rows.pop()
    elif spoil == "bad_index":
        for row in rows:
            row["index"] = 0
    elif spoil == "missing_label":
        for row in rows:
            if path == "/predict":
                row[:] = [p for p in row if p["label"] != supported]
            else:
                row.pop("probs", None)
                row.pop("data", None)
                row.pop("score", None)
    elif spoil in ("nan", "out_of_range"):
        value = 1.5 if spoil == "out_of_range" else "__NAN__"
        first = rows[0] if rows else None
        if isinstance(first, list):  # TEI
            first[0]["score"] = value
        elif isinstance(first, dict):
            for key in ("score", "probs", "data"):
                if key in first:
                    first[key] = value if key == "score" else _set_first(first[key], value)
    return orjson.dumps(payload).replace(b'"__NAN__"', b"NaN")


def _set_first(values: list[Any], value: Any) -> list[Any]:
    if values and isinstance(values[0], list):
        return [_set_first(values[0], value), *values[1:]]
    return [value, *values[1:]]


def _inputs(value: Any) -> list[Any]:
    """vLLM's ``input``: a text, texts, token ids, or lists of token ids, as a list of inputs."""
    if isinstance(value, str):
        return [value]
    if value and all(isinstance(v, int) for v in value):
        return [list(value)]
    return list(value)


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def _logits(probs: Sequence[float]) -> list[float]:
    """Log-odds for one class, log-probabilities for several (a softmax gives ``probs`` back)."""
    if len(probs) == 1:
        return [_logit(probs[0])]
    return [math.log(max(p, 1e-9)) for p in probs]


# --------------------------------------------------------------------------- process entry


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m guard.testing.fake_detector_server",
        description="Loopback fake of TEI and vLLM detector endpoints.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default="fake-detector")
    parser.add_argument("--labels", default="supported,unsupported", help="comma-separated")
    parser.add_argument("--supported-label", default="supported")
    parser.add_argument("--max-client-batch-size", type=int, default=32)
    parser.add_argument("--max-model-len", type=int, default=512)
    parser.add_argument("--pair-separator", default="</s></s>")
    parser.add_argument("--sep-token-id", type=int, default=None)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run the fake in the foreground; print its URL; stop on SIGINT/SIGTERM."""
    args = _parse_args(argv)
    server = FakeDetectorServer(
        host=args.host,
        port=args.port,
        model=args.model,
        labels=args.labels.split(","),
        supported_label=args.supported_label,
        max_client_batch_size=args.max_client_batch_size,
        max_model_len=args.max_model_len,
        pair_separator=args.pair_separator,
        sep_token_id=args.sep_token_id,
        latency_s=args.latency_ms / 1000,
    )

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, server.request_stop)
        await server.serve_forever(
            on_ready=lambda: print(f"FAKE_DETECTOR_URL={server.base_url}", flush=True)
        )

    asyncio.run(run())


__all__ = ["FAULT_KINDS", "DetectorFault", "FakeDetectorServer", "overlap", "words"]

if __name__ == "__main__":
    main()
