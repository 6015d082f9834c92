"""The one HTTP server (consumers.asgi.AsgiServer): a port in use fails at start, close lets a
request in progress finish within the grace period and cuts it off past it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest

from consumers.asgi import AsgiServer


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
