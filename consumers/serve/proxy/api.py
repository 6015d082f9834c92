"""The proxy routes of ``serve``: ``POST /v1/chat/completions`` (OpenAI) and ``POST
/v1/messages`` (Anthropic), streamed (``stream: true``) or whole.

A proxied request goes: the route's upstream kind (else 404), the API key (``Authorization:
Bearer`` or, for the Anthropic SDK, ``x-api-key``, when ``serve.api_keys_file`` is set), the
deadline header, content type, the body (size-limited, JSON), a slot of ``serve.max_in_flight``
(held until the answer ends), the evidence (:func:`guard.stream.chat.chat_request`), then the
upstream call with the body as sent, minus ``groundguard_context``.

Streamed, the upstream's events feed a :class:`~guard.stream.release.HoldAndRelease` (a task
reads the upstream while the response writes what is released); each span is judged by the
service's judge (:class:`~consumers.serve.deadline.DeadlineJudge`: ``GuardCore.judge`` within
``serve.deadline_ms``, or the deadline header, per span). Whole, the answer is judged once
before it is returned. A blocked answer: the wire's stop (:mod:`consumers.serve.proxy.wire`)
with ``serve.proxy.notice``. A client that leaves mid-stream: the upstream response is closed
(its generation cancelled) and the span judgements still running are cancelled.

Each answer (one the upstream began with status 200) logs one ``proxy.verdict`` line (request
id, route, release mode, label, reason, characters released, where it stopped, spans judged;
``monitoring_only`` under ``release: immediate``); never the text. With a broker configured,
each is also handed to the publisher exactly once (verdicts topic, and quarantine when it
blocks), which never waits: see :mod:`consumers.serve.proxy.publish`. An answer that ended
without a final verdict (the client left, the upstream broke off, the judge raised, no text)
is handed on with an ``error`` verdict saying why (:mod:`consumers.serve.proxy.unfinished`),
released as far as the client was written to; the streaming response's close hands on one
whose stream never ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx2
import orjson
import structlog
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from consumers.blocking import blocks
from consumers.serve import body
from consumers.serve.deadline import Deadline
from consumers.serve.errors import BadRequest, Refused
from consumers.serve.proxy.publish import Judged, Publisher
from consumers.serve.proxy.unfinished import unfinished, unfinished_verdict
from consumers.serve.proxy.upstream import (
    MAX_ERROR_BYTES,
    Upstream,
    UpstreamUnavailable,
    read_bounded,
    upstream_headers,
)
from consumers.serve.proxy.wire import AnthropicWire, End, Failed, OpenAIWire, Wire
from consumers.settings import ProxySettings, UpstreamKind
from guard.defaults import MAX_SERVE_DEADLINE_MS
from guard.models import JudgeRequest, Verdict
from guard.stream.chat import chat_request, without_extensions
from guard.stream.release import (
    Aborted,
    Finished,
    HoldAndRelease,
    Marked,
    Release,
    Stopped,
    StreamEvent,
    Text,
)
from guard.stream.sse import SseReader

if TYPE_CHECKING:
    from consumers.serve.app import CheckApi

log = structlog.get_logger("consumers.serve.proxy")

JSON = "application/json"
ABORT_MESSAGES = {
    "upstream_dropped": "the upstream connection broke off mid-answer",
    "upstream_ended_early": "the upstream stream ended before the end of the answer",
    "upstream_malformed": "the upstream sent an event that is not JSON",
    "upstream_error": "the upstream sent an error event",
    "answer_too_long": "the answer is longer than serve.proxy.max_answer_chars",
    "judge_raised": "the judge failed",
}
UNFINISHED_MESSAGES = {
    **ABORT_MESSAGES,
    "client_left": "the client closed the stream before the end of the answer",
    "upstream_too_large": "the upstream's answer is larger than the proxy reads",
    "finished": "the answer has no text to judge",
}


def summary(
    request: JudgeRequest,
    verdict: Verdict | None,
    release: Release,
    *,
    released: int,
    stopped_at: int | None,
    spans: int,
) -> dict[str, Any]:
    """The ``groundguard`` object of the last chunk: no claim or text of the answer."""
    return {
        "request_id": request.id,
        "label": verdict.label.value if verdict is not None else None,
        "reason": verdict.reason if verdict is not None else None,
        "score": verdict.score if verdict is not None else None,
        "release": release.value,
        "monitoring_only": release is Release.IMMEDIATE,
        "released_chars": released,
        "stopped_at": stopped_at,
        "spans_judged": spans,
    }


class _OwnedStream(StreamingResponse):
    """A streaming response that closes what it owns (its body's generator, the upstream
    response, the slot) however it ends, even when the client left before the first byte."""

    def __init__(
        self,
        content: AsyncIterator[bytes],
        owned: contextlib.AsyncExitStack,
        headers: dict[str, str],
    ) -> None:
        super().__init__(content, media_type="text/event-stream", headers=headers)
        self._content = content
        self._owned = owned

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            closing = getattr(self._content, "aclose", None)
            if closing is not None:
                await closing()
            await self._owned.aclose()


@dataclass
class _Answer:
    """One proxied answer: what its log line and summary need."""

    route: str
    base: JudgeRequest
    deadline_ms: int
    started: float
    model: str
    kind: UpstreamKind
    delivered: int = 0  # characters of the answer written to the client (streamed)
    handed: bool = False  # its end is logged and published, or left to a monitor


@dataclass
class ProxyApi:
    """The proxy routes over ``check``'s judge, keys, admission and metrics."""

    check: CheckApi
    settings: ProxySettings
    upstream: Upstream | None
    publisher: Publisher | None = None
    _monitors: set[asyncio.Task[None]] = field(default_factory=set)

    def routes(self) -> list[Route]:
        return [
            Route("/v1/chat/completions", self.chat_completions, methods=["POST"]),
            Route("/v1/messages", self.messages, methods=["POST"]),
        ]

    async def chat_completions(self, request: Request) -> Response:
        return await self._proxy(request, UpstreamKind.OPENAI)

    async def messages(self, request: Request) -> Response:
        return await self._proxy(request, UpstreamKind.ANTHROPIC)

    def start(self) -> None:
        """Start publishing verdicts (when a broker is configured): in the running loop."""
        if self.publisher is not None:
            self.publisher.start()

    async def aclose(self) -> None:
        """After the requests drained: the monitored answers settle, then what is queued for
        the broker is flushed (bounded: ``serve.proxy.publish_flush_s``)."""
        if self._monitors:
            await asyncio.gather(*self._monitors, return_exceptions=True)
        if self.publisher is not None:
            await self.publisher.aclose()
        if self.upstream is not None:
            await self.upstream.aclose()

    # ------------------------------------------------------------------ flow

    async def _proxy(self, request: Request, kind: UpstreamKind) -> Response:
        """One proxied request, under a SERVER span continuing its ``traceparent`` (the span
        covers the request up to its response head; a streamed body's judging follows)."""
        tracing = self.check.tracing
        with tracing.http(request.method, request.url.path, request.headers) as span:
            response = await self._proxied(request, kind)
            span.set_attributes({"http.response.status_code": response.status_code})
            return response

    async def _proxied(self, request: Request, kind: UpstreamKind) -> Response:
        started = time.perf_counter()
        route = f"proxy_{kind.value}"
        try:
            response = await self._answer(request, kind, started)
        except Refused as exc:
            response = exc.response()
            if exc.status in (429, 503):
                self.check.serve_metrics.shed(exc.code)
            self.check.serve_metrics.observe(route, exc.code, time.perf_counter() - started)
            log.debug("serve.refused", route=route, code=exc.code, field=exc.field)
        except Exception:  # a bug: answered 500, its traceback logged (never the body)
            log.exception("serve.internal_error", route=route)
            response = Refused("internal_error", "see the server log", status=500).response()
        return response

    async def _answer(self, request: Request, kind: UpstreamKind, started: float) -> Response:
        upstream = self._upstream_for(kind)
        authorization = request.headers.get("authorization")
        if authorization is None and request.headers.get("x-api-key"):
            authorization = f"Bearer {request.headers['x-api-key']}"
        self.check.keys.check(authorization)
        body.check_content_type(request)
        deadline_ms = body.deadline_ms(
            request, self.check.settings.deadline_ms, MAX_SERVE_DEADLINE_MS
        )
        payload = await self._payload(request, deadline_ms, started)
        answer = self._answer_of(payload, kind, deadline_ms, started)
        headers = upstream_headers(
            self.settings, request.headers, pass_credentials=not self.check.keys.required
        )
        owned = contextlib.AsyncExitStack()
        handed = False
        try:
            owned.enter_context(self.check.admission.admit())
            reply = await owned.enter_async_context(
                upstream.post(without_extensions(payload), headers)
            )
            if reply.status_code != 200:  # the upstream's refusal, forwarded unjudged
                raw = await read_bounded(reply, MAX_ERROR_BYTES)
                kind_of = reply.headers.get("content-type", JSON)
                return Response(raw, reply.status_code, media_type=kind_of)
            wire = _wire(kind, answer.model)
            if payload.get("stream") is True:
                handed = True
                engine = self._engine(answer)
                owned.push_async_callback(self._unhanded, answer, engine)
                stream = self._stream(reply, wire, answer, engine)
                return _OwnedStream(
                    stream,
                    owned,
                    {
                        "x-groundguard-release": self.settings.release.value,
                        "cache-control": "no-cache",
                    },
                )
            return await self._whole(reply, wire, answer)
        finally:
            if not handed:
                await owned.aclose()

    def _upstream_for(self, kind: UpstreamKind) -> Upstream:
        if self.upstream is None or self.settings.upstream_kind is not kind:
            raise Refused(
                "not_found",
                f"no {kind.value} upstream: set serve.proxy.upstream_url and "
                f"serve.proxy.upstream_kind: {kind.value}",
                status=404,
            )
        return self.upstream

    async def _payload(self, request: Request, deadline_ms: int, started: float) -> dict[str, Any]:
        left = Deadline(deadline_ms, started).left_s()
        with self.check.bodies.holding() as reservation:
            raw = await body.read_body(
                request, self.check.settings.max_body_bytes, left, reservation.take
            )
            payload = body.decode_object(raw)
        choices = payload.get("n")
        if isinstance(choices, int) and not isinstance(choices, bool) and choices > 1:
            raise BadRequest(
                "invalid_request", "n > 1: the proxy judges one answer", field="n", status=422
            )
        return payload

    def _answer_of(
        self, payload: dict[str, Any], kind: UpstreamKind, deadline_ms: int, started: float
    ) -> _Answer:
        release = self.settings.release
        metadata = {
            "groundguard_proxy": {
                "route": kind.value,
                "release": release.value,
                "monitoring_only": release is Release.IMMEDIATE,
            }
        }
        base = chat_request(
            payload,
            kind.value,
            request_id=uuid.uuid4().hex,
            system_as_evidence=self.settings.system_as_evidence,
            metadata=metadata,
        )
        model = str(payload.get("model") or "")
        return _Answer(f"proxy_{kind.value}", base, deadline_ms, started, model, kind)

    async def _judge(self, answer: _Answer, request: JudgeRequest) -> Verdict:
        deadline = Deadline(answer.deadline_ms, time.perf_counter())
        return await self.check.judge.judge(request, deadline)

    def _blocks(self, verdict: Verdict) -> bool:
        return blocks(verdict, self.settings.undecided)

    # ------------------------------------------------------------------ streamed

    def _engine(self, answer: _Answer) -> HoldAndRelease:
        return HoldAndRelease(
            answer.base,
            lambda request: self._judge(answer, request),
            self._blocks,
            release=self.settings.release,
            max_in_flight=self.settings.max_spans_in_flight,
            max_span_chars=self.settings.max_span_chars,
            max_answer_chars=self.settings.max_answer_chars,
        )

    async def _stream(
        self, reply: httpx2.Response, wire: Wire, answer: _Answer, engine: HoldAndRelease
    ) -> AsyncIterator[bytes]:
        pump = asyncio.create_task(_pump(reply, wire, engine))
        last: StreamEvent | None = None
        try:
            async for event in engine.events():
                last = event
                chunk = self._written(event, wire, engine, answer)
                if chunk:
                    yield chunk
                if isinstance(event, Text):  # written: the client did not leave meanwhile
                    answer.delivered += len(event.text)
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
            if isinstance(last, Finished) and self.settings.release is Release.IMMEDIATE:
                self._monitor(answer, engine)
            else:
                await engine.aclose()
                self._logged(answer, engine, last)

    def _written(
        self, event: StreamEvent, wire: Wire, engine: HoldAndRelease, answer: _Answer
    ) -> bytes:
        if isinstance(event, Text):
            return wire.text(event.text)
        if isinstance(event, Marked):
            return wire.mark(event.item)
        release = self.settings.release
        spans = len(engine.verdicts)
        if isinstance(event, Stopped):
            about = summary(
                answer.base,
                event.verdict,
                release,
                released=event.released,
                stopped_at=event.at,
                spans=spans,
            )
            return wire.stopped(self.settings.notice, about)
        if isinstance(event, Finished):
            about = summary(
                answer.base,
                event.verdict,
                release,
                released=event.released,
                stopped_at=None,
                spans=spans,
            )
            return wire.finished(about)
        assert isinstance(event, Aborted)
        return wire.aborted(event.reason, ABORT_MESSAGES.get(event.reason, event.reason))

    def _monitor(self, answer: _Answer, engine: HoldAndRelease) -> None:
        """``immediate``: the verdicts are awaited after the client's stream ended (a last span
        the judge raised on, and so has no verdict: ``judge_raised``)."""
        answer.handed = True

        async def settle() -> None:
            verdict = await engine.settled()
            raised = verdict is None and engine.spans > 0
            last = Finished(verdict, engine.released)
            self._logged(answer, engine, last, outcome="judge_raised" if raised else None)

        task = asyncio.create_task(settle())
        self._monitors.add(task)
        task.add_done_callback(self._monitors.discard)

    async def _unhanded(self, answer: _Answer, engine: HoldAndRelease) -> None:
        """At the response's close: an answer whose stream never ran (the client left before
        its first byte) or broke before its end was handled still gets its one record."""
        if not answer.handed:
            self._logged(answer, engine, None)
            await engine.aclose()

    def _logged(
        self,
        answer: _Answer,
        engine: HoldAndRelease,
        last: StreamEvent | None,
        *,
        outcome: str | None = None,
    ) -> None:
        """The answer's one ``proxy.verdict`` line and record: its final verdict, or the error
        verdict of an answer that ended without one (:mod:`consumers.serve.proxy.unfinished`),
        released as far as the client was written to."""
        answer.handed = True
        verdict = last.verdict if isinstance(last, Stopped | Finished) else None
        outcome = outcome or _outcome(last, verdict)
        if verdict is not None:
            self.check.metrics.observe_verdict(verdict)
        self.check.serve_metrics.observe(
            answer.route, outcome, time.perf_counter() - answer.started
        )
        request = answer.base.model_copy(update={"output": engine.text})
        final, blocking = self._final(request, verdict, outcome)
        released = engine.released if verdict is not None else answer.delivered
        stopped_at, stopped_span = _stopped(last, released)
        log.info(
            "proxy.verdict",
            request_id=answer.base.id,
            route=answer.route,
            stream=True,
            release=self.settings.release.value,
            monitoring_only=self.settings.release is Release.IMMEDIATE,
            outcome=outcome,
            label=final.label.value,
            reason=final.reason,
            released_chars=released,
            answer_chars=len(engine.text),
            stopped_at=stopped_at,
            spans_judged=len(engine.verdicts),
            aborted=last.reason if isinstance(last, Aborted) else None,
        )
        self._publish(
            answer,
            request,
            final,
            blocks=blocking,
            stream=True,
            outcome=outcome,
            released=released,
            stopped=(stopped_at, stopped_span),
            spans=len(engine.verdicts),
        )

    def _final(
        self, request: JudgeRequest, verdict: Verdict | None, outcome: str
    ) -> tuple[Verdict, bool]:
        """The answer's verdict to publish and whether it blocks: the judge's, or the error
        verdict of an answer that ended as ``outcome`` without one, which blocks only when the
        judge could not decide (see :mod:`consumers.serve.proxy.unfinished`)."""
        if verdict is not None:
            return verdict, self._blocks(verdict)
        why = unfinished(outcome, UNFINISHED_MESSAGES.get(outcome, outcome))
        judge = self.check.judge
        made = unfinished_verdict(
            request, why, judge=judge.guard.judge_info, settings=judge.settings
        )
        return made, why.undecided and self._blocks(made)

    def _publish(
        self,
        answer: _Answer,
        request: JudgeRequest,
        verdict: Verdict,
        *,
        blocks: bool,
        stream: bool,
        outcome: str,
        released: int,
        stopped: tuple[int | None, int | None],
        spans: int,
    ) -> None:
        """Hand the answer's final verdict to the publisher (never waits; none: no broker),
        under the answer's request id (a span's verdict has the span's: ``<id>.<span>``)."""
        if self.publisher is None:
            return
        try:
            judged = Judged(
                request=request,
                verdict=verdict.model_copy(update={"request_id": request.id}),
                route=answer.kind.value,
                stream=stream,
                release=self.settings.release,
                outcome=outcome,
                released=released,
                stopped_at=stopped[0],
                stopped_span=stopped[1],
                spans=spans,
                blocks=blocks,
            )
            self.publisher.offer(judged)
        except Exception:  # a bug: never the client's stream's end; logged with its traceback
            log.exception("proxy.publish_internal_error", request_id=request.id)

    # ------------------------------------------------------------------ whole

    async def _whole(self, reply: httpx2.Response, wire: Wire, answer: _Answer) -> Response:
        limit = self.settings.max_answer_chars * 4 + MAX_ERROR_BYTES
        try:
            data = _upstream_object(await read_bounded(reply, limit))
        except UpstreamUnavailable as exc:  # it began (200) but never arrived whole: a 502
            self._whole_unfinished(answer, answer.base, exc.code)
            raise
        text = wire.answer(data)
        request = answer.base.model_copy(update={"output": text})
        release = self.settings.release
        if release is Release.IMMEDIATE:
            self._monitor_whole(answer, request)
            about = summary(request, None, release, released=len(text), stopped_at=None, spans=0)
            return _json_response({**data, "groundguard": about})
        verdict = await self._judged_whole(answer, request)
        stopped = verdict is not None and self._blocks(verdict)
        out = wire.blocked(data, self.settings.notice) if stopped else data
        about = summary(
            request,
            verdict,
            release,
            released=0 if stopped else len(text),
            stopped_at=0 if stopped else None,
            spans=1 if verdict else 0,
        )
        self._log_whole(answer, request, verdict, about)
        return _json_response({**out, "groundguard": about})

    async def _judged_whole(self, answer: _Answer, request: JudgeRequest) -> Verdict | None:
        """The verdict on a whole answer (None: no text to judge); a judge that raises is
        logged and published as ``judge_raised``, then raises on (a 500)."""
        if not request.output.strip():
            return None
        try:
            return await self._judge(answer, request)
        except Exception:
            returned = self.settings.release is Release.IMMEDIATE
            self._whole_unfinished(answer, request, "judge_raised", returned=returned)
            raise

    def _monitor_whole(self, answer: _Answer, request: JudgeRequest) -> None:
        async def settle() -> None:
            try:
                verdict = await self._judged_whole(answer, request)
            except Exception:  # logged and published as judge_raised: nothing more to do
                log.exception("proxy.judge_raised", request_id=request.id)
                return
            about = summary(
                request,
                verdict,
                self.settings.release,
                released=len(request.output),
                stopped_at=None,
                spans=1 if verdict else 0,
            )
            self._log_whole(answer, request, verdict, about)

        task = asyncio.create_task(settle())
        self._monitors.add(task)
        task.add_done_callback(self._monitors.discard)

    def _log_whole(
        self,
        answer: _Answer,
        request: JudgeRequest,
        verdict: Verdict | None,
        about: dict[str, Any],
    ) -> None:
        if verdict is not None:
            self.check.metrics.observe_verdict(verdict)
        outcome = "stopped" if about["stopped_at"] is not None else "finished"
        self.check.serve_metrics.observe(
            answer.route, outcome, time.perf_counter() - answer.started
        )
        final, blocking = self._final(request, verdict, outcome)
        logged = {**about, "label": final.label.value, "reason": final.reason}
        log.info("proxy.verdict", route=answer.route, stream=False, outcome=outcome, **logged)
        self._publish(
            answer,
            request,
            final,
            blocks=blocking,
            stream=False,
            outcome=outcome,
            released=about["released_chars"],
            stopped=(0, 0) if outcome == "stopped" else (None, None),
            spans=about["spans_judged"],
        )

    def _whole_unfinished(
        self, answer: _Answer, request: JudgeRequest, outcome: str, *, returned: bool = False
    ) -> None:
        """A whole answer the upstream began that got no verdict: refused to the client (its
        serve metric is the refusal's), nothing of it released; or, ``returned`` (``release:
        immediate``), judged after the client got it whole."""
        final, blocking = self._final(request, None, outcome)
        released = len(request.output) if returned else 0
        stopped_at = None if returned else 0
        about = summary(
            request, final, self.settings.release, released=released, stopped_at=stopped_at, spans=0
        )
        log.info("proxy.verdict", route=answer.route, stream=False, outcome=outcome, **about)
        self._publish(
            answer,
            request,
            final,
            blocks=blocking,
            stream=False,
            outcome=outcome,
            released=released,
            stopped=(stopped_at, None),
            spans=0,
        )


PROXY_ERROR = "proxy_error"  # reading the upstream raised: a bug, logged with its traceback


async def _pump(reply: httpx2.Response, wire: Wire, engine: HoldAndRelease) -> None:
    """Read the upstream's events into ``engine`` until its end, an error or a drop."""
    reader = SseReader()
    try:
        async for chunk in reply.aiter_bytes():
            for event in reader.feed(chunk):
                for item in wire.read(event):
                    if isinstance(item, str):
                        engine.add(item)
                    elif isinstance(item, End):
                        engine.finish()
                        return
                    elif isinstance(item, Failed):
                        engine.abort("upstream_error")
                        return
                    else:
                        engine.mark(item)
    except httpx2.HTTPError:
        engine.abort("upstream_dropped")
        return
    except ValueError:  # not JSON, or a line without an end
        engine.abort("upstream_malformed")
        return
    except Exception:  # a bug reading it: the answer ends now, not at the upstream's timeout
        log.exception("proxy.read_failed")
        engine.abort(PROXY_ERROR)
        return
    engine.abort("upstream_ended_early")


def _outcome(last: StreamEvent | None, verdict: Verdict | None) -> str:
    if last is None or isinstance(last, Text | Marked):
        return "client_left"
    if isinstance(last, Aborted):
        return last.reason
    if isinstance(last, Stopped):
        return "stopped"
    return "finished"


def _stopped(last: StreamEvent | None, released: int) -> tuple[int | None, int | None]:
    """Where the answer stopped reaching the client (offset, span index): the span that
    blocked; for one cut short without a verdict, the end of what it received (no span); none
    for one that reached it whole."""
    if isinstance(last, Stopped):
        return last.at, last.span
    if isinstance(last, Finished):
        return None, None
    return released, None


def _wire(kind: UpstreamKind, model: str) -> Wire:
    return OpenAIWire(model) if kind is UpstreamKind.OPENAI else AnthropicWire(model)


def _upstream_object(raw: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise UpstreamUnavailable(
            "upstream_malformed", "the upstream's answer is not a JSON object"
        )
    return value


def _json_response(value: dict[str, Any]) -> Response:
    return Response(orjson.dumps(value), media_type=JSON)
