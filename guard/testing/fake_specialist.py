"""A loopback fake of an OpenAI-compatible server running a specialist groundedness model, for
tests of :mod:`guard.specialist` (and users' own).

It answers ``POST .../chat/completions`` in the OpenAI wire format with plain text, a
``finish_reason`` and, when the request asks for them (``logprobs: true``), token logprobs in
``choices[0].logprobs.content[].top_logprobs``, as vLLM returns them. What it answers is a
script: a function of the request body returning a :class:`SpecialistReply` (an answer, an
error status, a hang, or a body that is not JSON). Replies queued with :meth:`queue` are served
first, one per request. The default script, :func:`marker_script`, answers like the three
formats' models would: not grounded when the answer (or claim) holds
:data:`HALLUCINATION_MARKER`, grounded otherwise.

In a test::

    with FakeSpecialistServer() as srv:
        srv.queue(answer("No", p=0.9))
        judge = build_specialist(SpecialistTier(..., base_url=srv.base_url), {})
        ...
        assert srv.requests[0]["chat_template_kwargs"] == {...}

HTTP is Starlette on uvicorn in a background thread with its own event loop
(:class:`guard.testing.loopback.LoopbackServer`); requests still hanging at stop are cut after
a second.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from guard.testing.loopback import LoopbackServer

HALLUCINATION_MARKER = "HALLUCINATED"
LYNX_MARK = "QUESTION (THIS DOES NOT COUNT AS BACKGROUND INFORMATION)"
MINICHECK_MARK = "Determine whether the provided claim is consistent"
_KEEP_REQUESTS = 256

Alternatives = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Token:
    """One generated token: its text, logprob and the alternatives reported for it (the token
    itself first, as servers list it)."""

    token: str
    logprob: float
    top: Alternatives = ()


@dataclass(frozen=True)
class SpecialistReply:
    """What the fake answers one request with.

    ``status`` other than 200: an OpenAI-style error body with ``message`` and ``code`` (and
    ``Retry-After`` when ``retry_after_s`` is set). ``raw``: this body as is. ``hang_s``: wait
    this long first. ``tokens``: the logprobs sent when the request asks for them (None: the
    server has none, ``logprobs: null``)."""

    text: str = ""
    finish_reason: str = "stop"
    tokens: tuple[Token, ...] | None = None
    status: int = 200
    message: str = ""
    code: str | None = None
    retry_after_s: float | None = None
    raw: bytes | None = None
    hang_s: float = 0.0


Script = Callable[[dict[str, Any]], SpecialistReply]


def answer(
    text: str,
    *,
    p: float | None = None,
    other: str | None = None,
    finish_reason: str = "stop",
) -> SpecialistReply:
    """``text`` as the reply; with ``p``, its first token ``text`` has probability ``p`` and the
    opposite label (``other``, default Yes/No swapped) ``1 - p``."""
    if p is None:
        return SpecialistReply(text=text, finish_reason=finish_reason)
    first = text.split()[0] if text.split() else text
    rival = other or ("No" if first.strip().lower() == "yes" else "Yes")
    top = [(first, _log(p)), (rival, _log(1.0 - p))]
    tokens = (Token(first, _log(p), tuple(top)),)
    return SpecialistReply(text=text, finish_reason=finish_reason, tokens=tokens)


def error(
    status: int, message: str = "error", code: str | None = None, retry_after_s: float | None = None
) -> SpecialistReply:
    return SpecialistReply(status=status, message=message, code=code, retry_after_s=retry_after_s)


def hang(seconds: float, then: SpecialistReply | None = None) -> SpecialistReply:
    """Wait ``seconds``, then answer ``then`` (default: a grounded MiniCheck "Yes")."""
    return replace(then or answer("Yes"), hang_s=seconds)


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -9999.0


def _contents(body: Mapping[str, Any]) -> dict[str, str]:
    """The last message's content of each role."""
    messages = body.get("messages") or []
    return {
        str(m.get("role")): str(m.get("content") or "") for m in messages if isinstance(m, dict)
    }


def marker_script(body: dict[str, Any]) -> SpecialistReply:
    """Answers as Lynx, Granite Guardian or MiniCheck would, by the prompt's shape: not grounded
    when the judged text holds :data:`HALLUCINATION_MARKER`."""
    roles = _contents(body)
    if "context" in roles:
        risky = HALLUCINATION_MARKER in roles.get("assistant", "")
        return answer("Yes" if risky else "No", p=0.97)
    if roles.get("system", "").startswith(MINICHECK_MARK):
        claim = roles.get("user", "").rpartition("\nClaim: ")[2]
        return answer("No" if HALLUCINATION_MARKER in claim else "Yes", p=0.95)
    user = roles.get("user", "")
    if LYNX_MARK in user:
        judged = user.rpartition("ANSWER:\n")[2]
        score = "FAIL" if HALLUCINATION_MARKER in judged else "PASS"
        return answer(f'{{"REASONING": ["The answer was checked."], "SCORE": "{score}"}}')
    return error(400, "the fake knows no such prompt format")


class FakeSpecialistServer(LoopbackServer):
    """A loopback HTTP fake of an OpenAI-compatible specialist model server (see the module
    docstring). :attr:`requests` holds the bodies received, oldest first, and
    :attr:`authorizations` their ``Authorization`` headers."""

    _thread_name = "fake-specialist"
    _keep_alive_s = 5  # uvicorn's default, as this fake always had

    def __init__(self, script: Script | None = None, *, host: str = "127.0.0.1") -> None:
        super().__init__(host=host, port=0)
        self.script: Script = script or marker_script
        self._queued: deque[SpecialistReply] = deque()
        self._requests: deque[dict[str, Any]] = deque(maxlen=_KEEP_REQUESTS)
        self._authorizations: deque[str] = deque(maxlen=_KEEP_REQUESTS)
        self._in_flight = 0
        self.peak_in_flight = 0  # the most requests handled at once since start or reset
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    @property
    def authorizations(self) -> list[str]:
        with self._lock:
            return list(self._authorizations)

    def set_script(self, script: Script | None) -> None:
        self.script = script or marker_script

    def queue(self, *replies: SpecialistReply) -> None:
        """Serve ``replies`` first, one per request, in order."""
        with self._lock:
            self._queued.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._queued.clear()
            self._requests.clear()
            self._authorizations.clear()
            self.peak_in_flight = self._in_flight
        self.script = marker_script

    # ------------------------------------------------------------------ lifecycle
    # start(), stop() and the context managers come from LoopbackServer.

    def _app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self._endpoint, methods=["POST"])])

    # ------------------------------------------------------------------ HTTP

    async def _endpoint(self, request: Request) -> Response:
        with self._lock:
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
        try:
            return await self._handle(request)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _handle(self, request: Request) -> Response:
        if not request.url.path.endswith("/chat/completions"):
            return _error_response(error(404, f"no route {request.url.path}"))
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return _error_response(error(400, "body is not JSON"))
        if not isinstance(body, dict):
            return _error_response(error(400, "body is not a JSON object"))
        reply = self._reply_for(body, request.headers.get("authorization", ""))
        if reply.hang_s > 0:
            await asyncio.sleep(reply.hang_s)
        if reply.raw is not None:
            return Response(reply.raw, 200, media_type="application/json")
        if reply.status != 200:
            return _error_response(reply)
        return Response(orjson.dumps(completion(body, reply)), media_type="application/json")

    def _reply_for(self, body: dict[str, Any], authorization: str) -> SpecialistReply:
        with self._lock:
            self._requests.append(body)
            self._authorizations.append(authorization)
            queued = self._queued.popleft() if self._queued else None
        return queued or self.script(body)


def _error_response(reply: SpecialistReply) -> Response:
    headers = {}
    if reply.retry_after_s is not None:
        headers["retry-after"] = f"{reply.retry_after_s:g}"
    payload = {"error": {"message": reply.message, "type": "error", "code": reply.code}}
    return Response(orjson.dumps(payload), reply.status, headers, media_type="application/json")


def completion(body: Mapping[str, Any], reply: SpecialistReply) -> dict[str, Any]:
    """The chat completion body for ``reply`` to ``body`` (logprobs only when asked)."""
    wanted = bool(body.get("logprobs")) and reply.tokens is not None
    top_n = int(body.get("top_logprobs") or 0)
    logprobs = {"content": [_token(t, top_n) for t in reply.tokens or ()], "refusal": None}
    prompt = " ".join(_contents(body).values())
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": reply.finish_reason,
                "logprobs": logprobs if wanted else None,
            }
        ],
        "usage": {
            "prompt_tokens": max(1, len(prompt) // 4),
            "completion_tokens": max(1, len(reply.text) // 4),
            "total_tokens": max(1, len(prompt) // 4) + max(1, len(reply.text) // 4),
        },
    }


def _token(token: Token, top_n: int) -> dict[str, Any]:
    return {
        "token": token.token,
        "logprob": token.logprob,
        "bytes": list(token.token.encode()),
        "top_logprobs": [
            {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in token.top[:top_n]
        ],
    }


__all__ = [
    "HALLUCINATION_MARKER",
    "FakeSpecialistServer",
    "Script",
    "SpecialistReply",
    "Token",
    "answer",
    "completion",
    "error",
    "hang",
    "marker_script",
]
