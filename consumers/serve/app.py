"""The routes of ``serve``: ``POST /v1/check``, ``POST /v1/check/batch``, ``GET /openapi.json``
and the health routes shared with ``run`` (``/healthz``, ``/readyz``, ``/metrics``).

A check goes: API key, deadline header, content type, its body bytes reserved (or 429 at once,
unread), the body (size-limited), JSON, request model, a slot (or 429 at once), the judge within
the deadline, the verdict (with a ``Server-Timing:
judge;dur=<ms>`` header: the judge's share of the time, so a caller sees what ``serve`` adds).
Every refusal is a :class:`~consumers.serve.errors.Refused` answered with its status and the
field at fault.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import orjson
import structlog
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from consumers import telemetry
from consumers.health import Health, health_routes
from consumers.metrics import Metrics
from consumers.serve import body, labels
from consumers.serve.admission import Admission, BodyBytes, Reservation
from consumers.serve.auth import ApiKeys
from consumers.serve.deadline import Deadline, DeadlineJudge
from consumers.serve.errors import Refused, Unavailable
from consumers.serve.metrics import ServeMetrics
from consumers.serve.openapi import document
from consumers.serve.outcomes import outcome_of, status_of
from consumers.settings import ServeSettings
from consumers.telemetry import RuntimeTracing
from guard.defaults import MAX_SERVE_DEADLINE_MS
from guard.learning.learner import Learner
from guard.models import JudgeRequest, Verdict

if TYPE_CHECKING:
    from consumers.serve.proxy import ProxyApi

log = structlog.get_logger("consumers.serve")

JSON = "application/json"


@dataclass
class ServeState:
    """What readiness reads: started, stopping."""

    started: bool = False
    stopping: bool = False


@dataclass
class CheckApi:
    """The check endpoints over a judge, its settings, keys, admission and metrics."""

    settings: ServeSettings
    judge: DeadlineJudge
    parse: body.Parse
    keys: ApiKeys
    metrics: Metrics
    state: ServeState = field(default_factory=ServeState)
    learner: Learner | None = None  # judge.cascade.learn: POST /v1/labels teaches it
    tracing: RuntimeTracing = field(default_factory=telemetry.current)
    proxy: ProxyApi | None = None  # serve.proxy: set by consumers.serve.service.make_api

    def __post_init__(self) -> None:
        self.admission = Admission(
            self.settings.max_in_flight, retry_after_s=self.settings.retry_after_s
        )
        self.bodies = BodyBytes(
            self.settings.max_buffered_body_bytes, retry_after_s=self.settings.retry_after_s
        )
        self.serve_metrics = ServeMetrics(
            self.metrics, in_flight=lambda: float(self.admission.in_flight)
        )
        self._openapi = orjson.dumps(document())

    # ------------------------------------------------------------------ endpoints

    async def check(self, request: Request) -> Response:
        return await self._answer("check", request, self._check_one)

    async def check_batch(self, request: Request) -> Response:
        return await self._answer("batch", request, self._check_batch)

    async def label(self, request: Request) -> Response:
        return await labels.label(request, self.learner, self.keys)

    async def openapi(self, request: Request) -> Response:
        return Response(self._openapi, media_type=JSON)

    # ------------------------------------------------------------------ flow

    async def _answer(
        self,
        route: str,
        request: Request,
        handle: Callable[[Request, Deadline, Reservation], Awaitable[tuple[Response, str]]],
    ) -> Response:
        path = request.url.path
        with self.tracing.http(request.method, path, request.headers) as span:
            response, outcome = await self._answered(route, request, handle)
            span.set_attributes(
                {"http.response.status_code": response.status_code, "groundguard.outcome": outcome}
            )
            return response

    async def _answered(
        self,
        route: str,
        request: Request,
        handle: Callable[[Request, Deadline, Reservation], Awaitable[tuple[Response, str]]],
    ) -> tuple[Response, str]:
        started = time.perf_counter()
        try:
            deadline = Deadline(self._admitted(request), started)
            with self.bodies.holding() as reservation:  # until answered: parsing makes more
                response, outcome = await handle(request, deadline, reservation)
        except Refused as exc:
            response, outcome = exc.response(), exc.code
            if exc.status in (429, 503):
                self.serve_metrics.shed(exc.code)
            log.debug("serve.refused", route=route, code=exc.code, field=exc.field)
        except asyncio.CancelledError:
            if not self.state.stopping:
                raise
            # the drain deadline passed: say so, rather than uvicorn's bare 500
            refused: Refused = Unavailable(
                "shutting_down", "the server stopped before the verdict; retry", status=503
            )
            response, outcome = refused.response(), refused.code
        except Exception:  # a bug: answered 500, its traceback logged (never the body)
            log.exception("serve.internal_error", route=route)
            refused = Refused("internal_error", "see the server log", status=500)
            response, outcome = refused.response(), refused.code
        self.serve_metrics.observe(route, outcome, time.perf_counter() - started)
        return response, outcome

    async def _check_one(
        self, request: Request, deadline: Deadline, reservation: Reservation
    ) -> tuple[Response, str]:
        raw = await self._object(request, deadline, reservation)
        judge_request = body.parse_one(self.parse, raw)
        with self.admission.admit():
            judging = time.perf_counter()
            verdict = await self.judge.judge(judge_request, deadline)
            judge_ms = (time.perf_counter() - judging) * 1000
        self.metrics.observe_verdict(verdict)
        status = status_of(verdict)
        headers = {"Server-Timing": f"judge;dur={judge_ms:.3f}"}
        if status != 200:
            headers["Retry-After"] = str(self.settings.retry_after_s)
            self.serve_metrics.shed(verdict.reason or "budget")
        return _verdict_response(verdict, status, headers), outcome_of(verdict)

    async def _check_batch(
        self, request: Request, deadline: Deadline, reservation: Reservation
    ) -> tuple[Response, str]:
        raw = await self._object(request, deadline, reservation)
        items = body.parse_batch(self.parse, raw, self.settings.max_batch_items)
        with self.admission.admit(len(items)):
            verdicts = await asyncio.gather(*(self._judged(item, deadline) for item in items))
        payload = b'{"verdicts":[' + b",".join(_json(v) for v in verdicts) + b"]}"
        return Response(payload, media_type=JSON), "verdicts"

    async def _judged(self, item: JudgeRequest, deadline: Deadline) -> Verdict:
        verdict = await self.judge.judge(item, deadline)
        self.metrics.observe_verdict(verdict)
        return verdict

    def _admitted(self, request: Request) -> int:
        """Auth, content type and the deadline header (its ms), before the body is read."""
        self.keys.check(request.headers.get("authorization"))
        body.check_content_type(request)
        return body.deadline_ms(request, self.settings.deadline_ms, MAX_SERVE_DEADLINE_MS)

    async def _object(
        self, request: Request, deadline: Deadline, reservation: Reservation
    ) -> dict[str, object]:
        raw = await body.read_body(
            request, self.settings.max_body_bytes, deadline.left_s(), reservation.take
        )
        return body.decode_object(raw)

    # ------------------------------------------------------------------ health

    def ready(self, intake_stop_reason: str | None) -> Health:
        detail = {"in_flight": self.admission.in_flight, "limit": self.admission.limit}
        if self.state.stopping:
            return Health(False, "stopping", detail)
        if not self.state.started:
            return Health(False, "starting", detail)
        if intake_stop_reason:
            return Health(False, f"intake stopped: {intake_stop_reason}", detail)
        return Health(True, "serving", detail)


def _json(verdict: Verdict) -> bytes:
    return verdict.model_dump_json().encode()


def _verdict_response(verdict: Verdict, status: int, headers: dict[str, str]) -> Response:
    return Response(_json(verdict), status, headers=headers, media_type=JSON)


async def _not_found(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 404
    code = "method_not_allowed" if status == 405 else "not_found"
    message = "try POST /v1/check, POST /v1/check/batch or GET /openapi.json"
    return Refused(code, message, status=status).response()


def build_app(
    api: CheckApi, *, ready: Callable[[], Health], expose_metrics: bool = True
) -> Starlette:
    """The ASGI app: check routes, the OpenAPI document and the shared health routes
    (``/metrics`` among them unless ``expose_metrics`` is off: ``metrics.enabled: false``)."""
    metrics = api.metrics.render if expose_metrics else None
    routes = [
        Route("/v1/check", api.check, methods=["POST"]),
        Route("/v1/check/batch", api.check_batch, methods=["POST"]),
        Route("/v1/labels", api.label, methods=["POST"]),
        Route("/openapi.json", api.openapi, methods=["GET"]),
        *(api.proxy.routes() if api.proxy is not None else []),
        *health_routes(ready=ready, live=_alive, metrics=metrics),
    ]
    return Starlette(routes=routes, exception_handlers={404: _not_found, 405: _not_found})


def _alive() -> Health:
    return Health(True, "event loop responsive", {})
