"""The machinery the loopback fakes share: an ASGI app on uvicorn, on 127.0.0.1.

:class:`LoopbackServer` binds the host and port (port 0: any free one, kept for a restart on
the same port), drives uvicorn itself rather than through ``uvicorn.run`` (no signal handling
of its own, so it runs in a test's thread), and serves in a background thread with its own
event loop: :meth:`~LoopbackServer.start` returns once the port is bound, or raises the reason
it could not be; :meth:`~LoopbackServer.stop` cuts requests still running after
``_shutdown_grace_s`` and joins the thread. It is a context manager, sync and async.

Every accepted connection gets ``TCP_NODELAY`` (uvicorn writes an answer's head and body
apart; with Nagle on, the body waits for the client's delayed ACK, ~40 ms a request on
loopback) and is counted (:class:`ConnectionCounter`). A fake writes :meth:`_app` and, where
it keeps more per connection, extends :meth:`_connection_made` / :meth:`_connection_lost`.
:meth:`_serve` serves in the running loop; the fakes that run as a process publish it as
``serve_forever``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable
from typing import ClassVar, Self

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_BACKLOG = 1024


class ConnectionCounter:
    """TCP connections a server accepted: opened in total and open now (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0
        self.open = 0

    def opened(self) -> None:
        with self._lock:
            self.total += 1
            self.open += 1

    def closed(self) -> None:
        with self._lock:
            self.open -= 1

    def reset(self) -> None:
        """Count from zero again; connections still open stay counted as open."""
        with self._lock:
            self.total = 0


def no_delay(transport: asyncio.BaseTransport) -> None:
    """Small replies leave at once (no Nagle wait for the client's delayed ACK)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class LoopbackServer:
    """An ASGI app (:meth:`_app`) served on loopback by uvicorn (see the module docstring)."""

    _thread_name: ClassVar[str] = "loopback-server"
    _keep_alive_s: ClassVar[int] = 75  # idle keep-alive connections are kept this long
    _shutdown_grace_s: ClassVar[int] = 1  # at stop, requests still running are cut after this

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(f"{type(self).__name__} only listens on loopback")
        self.host = host
        self.port = port
        self._connections = ConnectionCounter()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped: asyncio.Event | None = None
        self._startup_error: BaseException | None = None

    # ------------------------------------------------------------------ what a fake writes

    def _app(self) -> Starlette:
        raise NotImplementedError

    def _bound(self) -> None:
        """Called once :attr:`port` holds the bound port, before the first request."""

    def _connection_made(self, transport: asyncio.Transport) -> None:
        self._connections.opened()

    def _connection_lost(self, transport: asyncio.Transport) -> None:
        self._connections.closed()

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    def start(self, timeout_s: float = 10.0) -> None:
        """Start serving in a background thread; returns once the port is bound."""
        name = type(self).__name__
        if self._thread is not None:
            raise RuntimeError(f"{name} already started")
        self._ready.clear()
        self._startup_error = None
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._serve()), name=self._thread_name, daemon=True
        )
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise RuntimeError(f"{name} did not start in time")
        if self._startup_error is not None:
            self._thread.join(timeout_s)
            self._thread = None
            raise RuntimeError(f"{name} failed to start") from self._startup_error

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop serving, cut requests still running after a grace second, join the thread.
        The port then refuses connections: a server that is down."""
        loop, thread, stopped = self._loop, self._thread, self._stopped
        if loop is None or thread is None:
            return
        if stopped is not None and thread.is_alive():
            # the loop may close meanwhile (the thread is ending anyway)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stopped.set)
        thread.join(timeout_s)
        self._thread = None

    def _request_stop(self) -> None:
        """Stop a server serving in the current loop (:meth:`_serve`)."""
        if self._stopped is not None:
            self._stopped.set()

    async def _serve(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve in the running loop until :meth:`stop` or :meth:`_request_stop`."""
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        try:
            family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            sock = socket.create_server((self.host, self.port), family=family, backlog=_BACKLOG)
        except OSError as exc:
            self._startup_error = exc
            self._ready.set()
            return
        self.port = sock.getsockname()[1]
        self._bound()
        config = self._uvicorn_config()
        config.load()
        server = uvicorn.Server(config)  # driven here: no signal handling of its own
        server.lifespan = config.lifespan_class(config)
        try:
            await server.startup(sockets=[sock])
            if server.should_exit:
                self._startup_error = RuntimeError("uvicorn did not start")
                return
            if on_ready is not None:
                on_ready()
            self._ready.set()
            await self._stopped.wait()
            await server.shutdown(sockets=[sock])
        finally:
            self._ready.set()
            sock.close()

    def _uvicorn_config(self) -> uvicorn.Config:
        """uvicorn serving :meth:`_app` over HTTP/1.1 with keep-alive, no logging of its own."""
        return uvicorn.Config(
            self._app(),
            http=_protocol(self),
            ws="none",
            lifespan="off",
            log_config=None,
            access_log=False,
            timeout_keep_alive=self._keep_alive_s,
            timeout_graceful_shutdown=self._shutdown_grace_s,
            backlog=_BACKLOG,
        )


def _protocol(server: LoopbackServer) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol with Nagle off, telling ``server`` of opens and closes."""

    class Counted(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            no_delay(transport)
            server._connection_made(transport)
            super().connection_made(transport)

        def connection_lost(self, exc: Exception | None) -> None:
            server._connection_lost(self.transport)
            super().connection_lost(exc)

    return Counted
