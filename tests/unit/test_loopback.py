"""The loopback machinery the shipped fakes share (guard.testing.loopback)."""

from __future__ import annotations

import asyncio
import socket
import urllib.request

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from guard.testing.loopback import LoopbackServer


class _Hello(LoopbackServer):
    """Answers ``hello`` on every path; records TCP_NODELAY of each accepted socket."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(port=port)
        self.nodelay: list[int] = []

    def _app(self) -> Starlette:
        async def hello(_request: Request) -> Response:
            return Response(b"hello")

        return Starlette(routes=[Route("/{path:path}", hello)])

    def _connection_made(self, transport: asyncio.Transport) -> None:
        sock = transport.get_extra_info("socket")
        self.nodelay.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        super()._connection_made(transport)


def _get(server: LoopbackServer) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/", timeout=5) as resp:
        body: bytes = resp.read()
        return body


def test_starts_and_stops_twice_on_the_same_port() -> None:
    server = _Hello()
    server.start()
    port = server.port
    assert port != 0
    assert _get(server) == b"hello"
    server.stop()
    server.stop()  # a second stop is a no-op
    server.start()
    try:
        assert server.port == port
        assert _get(server) == b"hello"
    finally:
        server.stop()


def test_a_second_start_while_running_is_refused() -> None:
    with _Hello() as server, pytest.raises(RuntimeError, match="already started"):
        server.start()


def test_a_taken_port_is_a_startup_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        server = _Hello(port=taken.getsockname()[1])
        with pytest.raises(RuntimeError, match="_Hello failed to start") as caught:
            server.start()
        assert isinstance(caught.value.__cause__, OSError)
        server.stop()  # nothing to stop: the thread has ended


def test_accepted_connections_have_nodelay_and_are_counted() -> None:
    with _Hello() as server:
        _get(server)
        _get(server)
        assert server.nodelay == [1, 1]  # urllib opens a connection per request
        assert server._connections.total == 2
    assert server._connections.open == 0


async def test_async_context_manager() -> None:
    async with _Hello() as server:
        assert await asyncio.to_thread(_get, server) == b"hello"


def test_only_loopback() -> None:
    with pytest.raises(ValueError, match="only listens on loopback"):
        LoopbackServer(host="0.0.0.0")
