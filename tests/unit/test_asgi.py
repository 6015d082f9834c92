"""The one HTTP server (consumers.asgi.AsgiServer): a port in use fails at start, close lets a
request in progress finish within the grace period and cuts it off past it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import httpx2
import pytest

from consumers.asgi import AsgiServer, ConnectionLimits


def slow_app(seconds: float, entered: asyncio.Event | None = None) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if entered is not None:
            entered.set()
        await asyncio.sleep(seconds)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})

    return app


async def test_a_port_in_use_is_an_oserror_at_start() -> None:
    async with AsgiServer(slow_app(0), host="127.0.0.1", port=0) as first:
        second = AsgiServer(slow_app(0), host="127.0.0.1", port=first.port)
        with pytest.raises(OSError, match="in use"):
            await second.start()


async def test_close_lets_a_request_in_progress_finish_within_the_grace_period() -> None:
    entered = asyncio.Event()
    server = AsgiServer(slow_app(0.5, entered), host="127.0.0.1", port=0, grace_s=5.0)
    await server.start()
    async with httpx2.AsyncClient(timeout=10) as client:
        reply = asyncio.create_task(client.get(f"http://127.0.0.1:{server.port}/"))
        await asyncio.wait_for(entered.wait(), 10)  # the request is in the app now
        await server.close()
        assert (await reply).text == "done"
        with pytest.raises(httpx2.ConnectError):
            await client.get(f"http://127.0.0.1:{server.port}/")


async def test_close_cuts_off_what_outlives_the_grace_period(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The stop never hangs on a request: past the grace period it is cancelled (uvicorn
    answers 500 when nothing was sent yet) and close returns."""
    entered = asyncio.Event()
    server = AsgiServer(slow_app(30.0, entered), host="127.0.0.1", port=0, grace_s=0.2)
    await server.start()
    async with httpx2.AsyncClient(timeout=10) as client:
        reply = asyncio.create_task(client.get(f"http://127.0.0.1:{server.port}/"))
        await asyncio.wait_for(entered.wait(), 10)
        await asyncio.wait_for(server.close(), 5)
        assert (await reply).status_code == 500
    assert "timeout graceful shutdown exceeded" in caplog.text


def accepted_sockets(server: AsgiServer) -> list[socket.socket]:
    """The server side of every open connection (uvicorn's protocols hold the transports)."""
    connections = server._server.server_state.connections  # the test's probe
    return [c.transport.get_extra_info("socket") for c in connections]  # type: ignore[attr-defined]


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
async def test_accepted_connections_have_tcp_nodelay_set(host: str) -> None:
    """Without TCP_NODELAY a response written in two parts (head, body) waits for the client's
    delayed ACK: about 40 ms per request on a keep-alive connection."""
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6")
    async with AsgiServer(slow_app(0), host=host, port=0) as server:
        url = f"http://[{host}]:{server.port}/" if ":" in host else f"http://{host}:{server.port}/"
        async with httpx2.AsyncClient(timeout=10) as client:
            assert (await client.get(url)).text == "done"  # the connection is kept alive
            sockets = accepted_sockets(server)
            assert len(sockets) == 1
            assert sockets[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


REQUEST = b"GET / HTTP/1.1\r\nhost: t\r\n\r\n"


async def _reply(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection (bounded by a timeout)."""
    return await asyncio.wait_for(reader.read(), 10)


async def test_headers_trickled_past_the_header_timeout_get_408_and_the_connection_closed() -> None:
    """A slowloris client: one byte of headers at a time never completes a request, and each
    byte does not restart the clock."""
    limits = ConnectionLimits(header_timeout_s=0.3)
    async with AsgiServer(slow_app(0), host="127.0.0.1", port=0, limits=limits) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        trickle = b"GET / HTTP/1.1\r\n" + b"x-slow: " + b"a" * 400
        closed_after = None
        for n, byte in enumerate(trickle):
            writer.write(bytes([byte]))
            with contextlib.suppress(TimeoutError):
                got = await asyncio.wait_for(reader.read(), 0.02)
                closed_after = n
                break
        writer.close()
    assert closed_after is not None
    assert closed_after < len(trickle) - 1  # cut off mid-headers
    assert got.startswith(b"HTTP/1.1 408")


async def test_an_idle_connection_is_closed_after_the_header_timeout() -> None:
    limits = ConnectionLimits(header_timeout_s=0.2)
    async with AsgiServer(slow_app(0), host="127.0.0.1", port=0, limits=limits) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        assert await _reply(reader) == b""  # closed without a word: nothing was asked
        writer.close()


async def test_past_max_connections_a_new_connection_gets_503_and_is_closed() -> None:
    limits = ConnectionLimits(max_connections=2, retry_after_s=3)
    async with AsgiServer(slow_app(0), host="127.0.0.1", port=0, limits=limits) as server:
        held = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(2)]
        for reader, writer in held:  # both accepted and served, kept alive
            writer.write(REQUEST)
            assert (await asyncio.wait_for(reader.readuntil(b"done"), 10)).startswith(
                b"HTTP/1.1 200"
            )
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        refused = await _reply(reader)
        writer.close()
        assert refused.startswith(b"HTTP/1.1 503")
        assert b"retry-after: 3" in refused
        assert b"too_many_connections" in refused
        held[0][1].close()
        await held[0][1].wait_closed()
        async with httpx2.AsyncClient(timeout=10) as client:  # room again once one closed
            for _ in range(100):
                reply = await client.get(f"http://127.0.0.1:{server.port}/")
                if reply.status_code == 200:
                    break
            assert reply.status_code == 200
        held[1][1].close()
