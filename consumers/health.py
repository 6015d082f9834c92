"""The health and metrics endpoint: ``/metrics``, ``/healthz`` (liveness), ``/readyz`` (readiness).

A Starlette app on uvicorn (:class:`consumers.asgi.AsgiServer`), running in the service's own
event loop, so an answer at all proves the loop is responsive. Health means progress, not
"process alive":

* ``/readyz`` is 200 only while the consumer has partitions assigned and either has nothing to do
  (no lag, nothing held) or finished a message within ``stall_after_s``. It is 503 while starting
  (saying what start-up waits for, e.g. a missing topic), stopping, with intake stopped (quota
  spent, key rejected), without partitions (e.g. stuck after a rebalance, aiokafka #847/#1154),
  or with work waiting and no progress (a hung judge). Under ``judge.delivery: batch`` waiting
  for a batch is deliberate: gathering items into an open batch and each successful poll of a
  submitted batch count as progress (a batch that can no longer be polled does not), and the
  body says how many messages wait for a batch.
* ``/healthz`` is 200 while the loop answers, and 503 once the consumer has been stalled for
  ``LIVENESS_STALL_FACTOR`` times ``stall_after_s``: a consumer that stuck is restarted.
* Both are 503 at once when the service is stopping on its own (``ServiceStats.failed``, e.g.
  the consumer's fetch task ended, so no record would come again); it then exits non-zero.

Both answer with a small JSON body saying why.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from consumers.asgi import AsgiServer
from consumers.metrics import CONTENT_TYPE, NS, Metrics
from consumers.runtime.stats import ServiceStats

LIVENESS_STALL_FACTOR = 5.0
SHUTDOWN_GRACE_S = 1.0  # a scrape in progress at shutdown gets this long

log = logging.getLogger("consumers.health")


@dataclass(frozen=True)
class Health:
    """One health decision: ``ok`` and why."""

    ok: bool
    reason: str
    detail: Mapping[str, Any]


def _pending(stats: ServiceStats) -> int:
    """Messages not yet finished: lag over assigned partitions plus what is held in memory."""
    lag = sum(p.lag or 0 for p in stats.partitions.values())
    held = sum(p.outstanding for p in stats.partitions.values())
    return max(lag, held, stats.in_flight + stats.waiting)


def readiness(stats: ServiceStats, *, stall_after_s: float, now: float) -> Health:
    """Whether the consumer is making progress (see the module docstring for the rules)."""
    idle_s = max(0.0, now - stats.last_progress)
    detail = {
        "assigned": len(stats.partitions),
        "pending": _pending(stats),
        "seconds_since_progress": round(idle_s, 3),
    }
    if stats.batch is not None:
        detail["batch_items_waiting"] = stats.batch.items_waiting
    if stats.failed:
        return Health(False, f"failed: {stats.failed}", detail)
    if stats.stopping:
        return Health(False, "stopping", detail)
    if not stats.started:
        waiting_for = stats.waiting_for
        return Health(False, f"starting: {waiting_for}" if waiting_for else "starting", detail)
    if stats.intake_stopped:
        return Health(False, f"intake stopped: {stats.intake_stopped}", detail)
    if not stats.partitions:
        return Health(False, "no partitions assigned", detail)
    if detail["pending"] > 0 and idle_s > stall_after_s:
        return Health(
            False,
            f"stalled: {detail['pending']} pending, no progress for "
            f"{idle_s:.0f}s (stall_after_s={stall_after_s:g})",
            detail,
        )
    return Health(True, "progressing" if detail["pending"] else "idle", detail)


def liveness(stats: ServiceStats, *, stall_after_s: float, now: float) -> Health:
    """Alive unless stalled with pending work for ``LIVENESS_STALL_FACTOR * stall_after_s``.

    Waiting on purpose is not stuck: while intake is stopped (quota, credentials) or judge calls
    are in flight (each bounded by its timeout; a spent budget under ``pause`` or a rate limit
    holds them), a restart would only lose the budget's memory and spend again. What liveness
    catches is pending work with nothing in flight and no progress (a consumer stuck after a
    rebalance, aiokafka #1154)."""
    idle_s = max(0.0, now - stats.last_progress)
    limit = LIVENESS_STALL_FACTOR * stall_after_s
    waiting = bool(stats.intake_stopped) or stats.in_flight > 0
    stuck = (
        stats.started
        and not stats.stopping
        and not waiting
        and _pending(stats) > 0
        and idle_s > limit
    )
    detail = {"seconds_since_progress": round(idle_s, 3)}
    if stats.failed:
        return Health(False, f"failed: {stats.failed}", detail)
    if stuck:
        return Health(False, f"stuck: no progress for {idle_s:.0f}s with work pending", detail)
    return Health(True, "event loop responsive", detail)


class _HealthCollector(Collector):
    def __init__(self, server: HealthServer) -> None:
        self._server = server

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        ready = self._server.ready()
        yield GaugeMetricFamily(
            f"{NS}_ready", "1 while /readyz answers 200.", value=1.0 if ready.ok else 0.0
        )


def health_routes(
    *,
    ready: Callable[[], Health],
    live: Callable[[], Health],
    metrics: Callable[[], bytes] | None,
) -> list[Route]:
    """``/metrics`` (when given), ``/healthz`` (also ``/livez``) and ``/readyz`` as Starlette
    routes (GET and HEAD), for any app that serves them: ``run``'s and ``serve``'s."""
    routes = [
        Route(path, _endpoint(path, partial(_probe_reply, probe)), methods=["GET", "HEAD"])
        for path, probe in (("/healthz", live), ("/livez", live), ("/readyz", ready))
    ]
    if metrics is not None:
        render = metrics
        routes.append(
            Route(
                "/metrics",
                _endpoint("/metrics", lambda: (200, CONTENT_TYPE, render())),
                methods=["GET", "HEAD"],
            )
        )
    return routes


def _endpoint(
    path: str, reply: Callable[[], tuple[int, str, bytes]]
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            status, content_type, body = reply()
        except Exception:  # a failing probe must not take the endpoint down
            log.exception("health.endpoint_failed path=%s", path)
            status, content_type, body = 500, "text/plain", b"internal error\n"
        return _response(status, content_type, body)

    return endpoint


def _response(status: int, content_type: str, body: bytes) -> Response:
    return Response(body, status, headers=_NO_STORE, media_type=content_type)


async def _not_found(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException) and exc.status_code == 405:
        return _response(405, "text/plain", b"only GET\n")
    return _response(404, "text/plain", b"not found: try /metrics, /healthz or /readyz\n")


# Each answer closes its connection, as probes and scrapers open one per request anyway.
_NO_STORE = {"Cache-Control": "no-store", "Connection": "close"}


class HealthServer:
    """Serves ``/metrics``, ``/healthz`` and ``/readyz`` for ``stats`` on ``host:port``.

    ``port=0`` binds an ephemeral port (see :attr:`port` once started). Use ``async with``, or
    :meth:`start` and :meth:`close`. A Starlette app on :class:`consumers.asgi.AsgiServer`.
    """

    def __init__(
        self,
        *,
        metrics: Metrics,
        stats: ServiceStats,
        host: str = "0.0.0.0",
        port: int = 9464,
        stall_after_s: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.metrics = metrics
        self.stats = stats
        self.host = host
        self.stall_after_s = stall_after_s
        self._clock = clock
        routes = health_routes(ready=self.ready, live=self.live, metrics=metrics.render)
        app = Starlette(routes=routes, exception_handlers={404: _not_found, 405: _not_found})
        self._server = AsgiServer(app, host=host, port=port, grace_s=SHUTDOWN_GRACE_S)
        metrics.registry.register(_HealthCollector(self))

    @property
    def port(self) -> int:
        """The bound port (the ephemeral one when started with ``port=0``)."""
        return self._server.port

    def ready(self) -> Health:
        return readiness(self.stats, stall_after_s=self.stall_after_s, now=self._clock())

    def live(self) -> Health:
        return liveness(self.stats, stall_after_s=self.stall_after_s, now=self._clock())

    async def start(self) -> None:
        await self._server.start()
        log.info("health.listening host=%s port=%d", self.host, self.port)

    async def close(self) -> None:
        await self._server.close()

    async def __aenter__(self) -> HealthServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _probe_reply(probe: Callable[[], Health]) -> tuple[int, str, bytes]:
    return _health_reply(probe())


def _health_reply(health: Health) -> tuple[int, str, bytes]:
    body = json.dumps({"ok": health.ok, "reason": health.reason, **health.detail}).encode()
    return (200 if health.ok else 503), "application/json", body + b"\n"
