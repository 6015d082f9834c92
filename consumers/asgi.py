"""The one HTTP server of the package: an ASGI app on uvicorn, inside the caller's event loop.

Both the health and metrics endpoint of ``groundguard run`` (:mod:`consumers.health`) and the
check API of ``groundguard serve`` (:mod:`consumers.serve`) run on :class:`AsgiServer`. It
differs from ``uvicorn.run`` in three ways the services need:

* the socket is bound in :meth:`AsgiServer.start`, so a port in use is an ``OSError`` there
  (uvicorn itself would log and ``sys.exit``), and ``port=0`` gives an ephemeral port;
* uvicorn installs no signal handlers: the service owns SIGTERM/SIGINT and decides when to stop;
* :meth:`AsgiServer.close` is a graceful stop: no new connections, requests in progress finish
  within ``grace_s``, then what is left is cancelled;
* every connection is bounded (:class:`ConnectionLimits`, on uvicorn's h11 protocol):
  ``TCP_NODELAY`` is set on it (the listening socket comes from ``socket.create_server``, whose
  protocol number 0 keeps asyncio from setting it, and without it a response written in two
  parts, head and body, waits for the client's delayed ACK: about 40 ms per request on a
  keep-alive connection); at most ``max_connections`` are open (one past it is answered 503
  with ``Retry-After`` and closed); and while the server waits on the client (for the first
  request, for the next one on a kept-alive connection, or for the unread rest of a body it
  refused) the client has ``header_timeout_s`` to send a request's headers whole, counted from
  when the wait began, not reset by each byte (a slowloris trickle), else the connection is
  closed (408 when part of a request had arrived).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import h11
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from guard.defaults import DEFAULT_SERVE_HEADER_TIMEOUT_S, DEFAULT_SERVE_MAX_CONNECTIONS

UVICORN_LOG_LEVEL = "warning"  # uvicorn's start/stop chatter stays out of the service's logs
STARTUP_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5  # an idle kept-alive connection is closed after this (uvicorn's default)


@dataclass(frozen=True)
class ConnectionLimits:
    """The bounds on each server's connections (see the module docstring)."""

    max_connections: int = DEFAULT_SERVE_MAX_CONNECTIONS
    header_timeout_s: float = DEFAULT_SERVE_HEADER_TIMEOUT_S
    retry_after_s: int = 1


_TOO_MANY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"retry-after: %d\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s"
)
_TOO_MANY_BODY = (
    b'{"error":{"code":"too_many_connections","message":"the server holds as many connections '
    b'as it may (serve.max_connections); retry","field":null}}'
)
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


class _BoundedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with :class:`ConnectionLimits` (a subclass per server sets
    ``limits``)."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            body = _TOO_MANY_BODY
            transport.write(_TOO_MANY % (self.limits.retry_after_s, len(body), body))
            transport.close()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        if self.cycle is not None:
            self.cycle.body = bytearray()  # what the app did not read of a refused body
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _waiting_on_client(self) -> bool:
        """No request is with the app: the server waits for the client's next headers."""
        idle = self.cycle is None or self.cycle.response_complete
        return idle and not self.transport.is_closing()

    def _watch(self) -> None:
        if not self._waiting_on_client():
            self._disarm()
        elif self._header_timer is None:
            self._header_timer = self.loop.call_later(self.limits.header_timeout_s, self._timed_out)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _timed_out(self) -> None:
        self._header_timer = None
        if not self._waiting_on_client():
            return
        started, _ = self.conn.trailing_data
        if started and self.conn.their_state is h11.IDLE:
            self.transport.write(_TIMED_OUT)
        self.transport.close()


def _protocol(limits: ConnectionLimits) -> type[_BoundedProtocol]:
    return type("BoundedProtocol", (_BoundedProtocol,), {"limits": limits})


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers (the service installs its own)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class AsgiServer:
    """Serves ``app`` on ``host:port`` until :meth:`close`. Use ``async with`` or start/close."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        host: str,
        port: int,
        grace_s: float = 1.0,
        max_header_bytes: int = 16_384,
        limits: ConnectionLimits | None = None,
    ) -> None:
        self.app = app
        self.host = host
        self._port = port
        self._config = uvicorn.Config(
            app,
            log_config=None,
            log_level=UVICORN_LOG_LEVEL,
            access_log=False,
            lifespan="off",
            # uvicorn hands it to asyncio.wait_for, which takes seconds as a float
            timeout_graceful_shutdown=grace_s,  # type: ignore[arg-type]
            h11_max_incomplete_event_size=max_header_bytes,
            server_header=False,
            http=_protocol(limits or ConnectionLimits()),
            timeout_keep_alive=KEEP_ALIVE_S,
        )
        self._server = _Server(self._config)
        self._socket: socket.socket | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        """The bound port (the ephemeral one once started with ``port=0``)."""
        return self._port

    @property
    def stopping(self) -> bool:
        return bool(self._server.should_exit)

    async def start(self) -> None:
        """Bind (``OSError`` when the port is taken) and serve in a background task."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        self._socket = socket.create_server((self.host, self._port), family=family, backlog=2048)
        self._socket.setblocking(False)
        self._port = int(self._socket.getsockname()[1])
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        async with asyncio.timeout(STARTUP_TIMEOUT_S):
            while not self._server.started:
                if self._task.done():
                    await self._task  # raises what stopped it
                    raise OSError(f"HTTP server on {self.host}:{self.port} stopped at start")
                await asyncio.sleep(0.005)

    def begin_close(self) -> None:
        """Stop accepting connections; requests in progress go on (see :meth:`close`)."""
        self._server.should_exit = True

    async def close(self) -> None:
        """Stop accepting connections and wait up to ``grace_s`` for requests in progress."""
        if self._task is None:
            return
        self.begin_close()
        try:
            await self._task
        finally:
            self._task = None
            if self._socket is not None:
                self._socket.close()

    async def __aenter__(self) -> AsgiServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
