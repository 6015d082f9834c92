"""The health and metrics endpoint: ``/metrics``, ``/healthz`` (liveness), ``/readyz`` (readiness).

A tiny HTTP/1.1 server on asyncio streams, running in the service's own event loop, so an answer
at all proves the loop is responsive. Health means progress, not "process alive":

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

Both answer with a small JSON body saying why.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from consumers.metrics import CONTENT_TYPE, NS, Metrics
from consumers.runtime.stats import ServiceStats

LIVENESS_STALL_FACTOR = 5.0
REQUEST_READ_TIMEOUT_S = 5.0
MAX_REQUEST_HEADER_LINES = 100
MAX_LINE_BYTES = 8192

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


class HealthServer:
    """Serves ``/metrics``, ``/healthz`` and ``/readyz`` for ``stats`` on ``host:port``.

    ``port=0`` binds an ephemeral port (see :attr:`port` once started). Use ``async with``, or
    :meth:`start` and :meth:`close`.
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
        self._port = port
        self._clock = clock
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        metrics.registry.register(_HealthCollector(self))

    @property
    def port(self) -> int:
        """The bound port (the ephemeral one when started with ``port=0``)."""
        if self._server is not None and self._server.sockets:
            return int(self._server.sockets[0].getsockname()[1])
        return self._port

    def ready(self) -> Health:
        return readiness(self.stats, stall_after_s=self.stall_after_s, now=self._clock())

    def live(self) -> Health:
        return liveness(self.stats, stall_after_s=self.stall_after_s, now=self._clock())

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._serve, self.host, self._port, limit=MAX_LINE_BYTES
        )
        log.info("health.listening host=%s port=%d", self.host, self.port)

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> HealthServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            path = await asyncio.wait_for(_read_request(reader), REQUEST_READ_TIMEOUT_S)
            try:
                status, content_type, body = self._route(path)
            except Exception:  # a failing probe must not take the endpoint down
                log.exception("health.endpoint_failed path=%s", path)
                status, content_type, body = 500, "text/plain", b"internal error\n"
            await _respond(writer, status, content_type, body)
        except (TimeoutError, ValueError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
            if task is not None:
                self._connections.discard(task)

    def _route(self, path: str | None) -> tuple[int, str, bytes]:
        if path == "/metrics":
            return 200, CONTENT_TYPE, self.metrics.render()
        if path in ("/healthz", "/livez"):
            return _health_reply(self.live())
        if path == "/readyz":
            return _health_reply(self.ready())
        if path is None:
            return 405, "text/plain", b"only GET\n"
        return 404, "text/plain", b"not found: try /metrics, /healthz or /readyz\n"


def _health_reply(health: Health) -> tuple[int, str, bytes]:
    body = json.dumps({"ok": health.ok, "reason": health.reason, **health.detail}).encode()
    return (200 if health.ok else 503), "application/json", body + b"\n"


async def _read_request(reader: asyncio.StreamReader) -> str | None:
    """The path of a GET (query string dropped); ``None`` for other methods. Headers skipped."""
    request_line = (await reader.readline()).decode("latin-1").strip()
    for _ in range(MAX_REQUEST_HEADER_LINES):
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
    parts = request_line.split()
    if len(parts) < 2:
        raise ValueError("malformed request line")
    if parts[0] not in ("GET", "HEAD"):
        return None
    return parts[1].split("?", 1)[0]


_REASONS = {
    200: "OK",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


async def _respond(
    writer: asyncio.StreamWriter, status: int, content_type: str, body: bytes
) -> None:
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode("latin-1") + body)
    await writer.drain()
