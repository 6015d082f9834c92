"""The one HTTP server of the package: an ASGI app on uvicorn, inside the caller's event loop.

Both the health and metrics endpoint of ``groundguard run`` (:mod:`consumers.health`) and the
check API of ``groundguard serve`` (:mod:`consumers.serve`) run on :class:`AsgiServer`. It
differs from ``uvicorn.run`` in three ways the services need:

* the socket is bound in :meth:`AsgiServer.start`, so a port in use is an ``OSError`` there
  (uvicorn itself would log and ``sys.exit``), and ``port=0`` gives an ephemeral port;
* uvicorn installs no signal handlers: the service owns SIGTERM/SIGINT and decides when to stop;
* :meth:`AsgiServer.close` is a graceful stop: no new connections, requests in progress finish
  within ``grace_s``, then what is left is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp

UVICORN_LOG_LEVEL = "warning"  # uvicorn's start/stop chatter stays out of the service's logs
STARTUP_TIMEOUT_S = 10.0


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
