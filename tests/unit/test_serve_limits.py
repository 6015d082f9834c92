"""The check API's memory bound and where it listens: body bytes are reserved before a body is
read (429 and the connection closed past ``serve.max_buffered_body_bytes``), over real sockets;
``serve`` binds loopback unless told, and refuses a network address without API keys unless
``serve.allow_unauthenticated``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from consumers.asgi import AsgiServer
from consumers.errors import SettingsError
from consumers.serve.app import CheckApi, build_app
from consumers.serve.service import exposure_problem, is_loopback, make_api
from consumers.settings import ServiceSettings
from guard.engine import Guard
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

MAX_BODY = 40_000
BUFFERED = 100_000  # two bodies of MAX_BODY, not three


@dataclass
class Served:
    api: CheckApi
    port: int


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    settings = ServiceSettings.model_validate(
        {
            "serve": {"max_body_bytes": MAX_BODY, "max_buffered_body_bytes": BUFFERED},
            "judge": {"provider": "fake"},
        }
    )
    api, ready = make_api(settings, Guard(FakeJudge(), JudgeSettings(provider="fake")), None)
    api.state.started = True
    async with AsgiServer(build_app(api, ready=ready), host="127.0.0.1", port=0) as server:
        yield Served(api, server.port)


def _body(size: int) -> bytes:
    head = b'{"output": "Paris is in France.", "context": "Paris is in France.", "id": "'
    return head + b"p" * (size - len(head) - 2) + b'"}'


async def _hold(
    port: int, body: bytes, sent: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A client that sends its headers and ``sent`` bytes of ``body``, holding the rest."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /v1/check HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n" % len(body) + body[:sent]
    )
    await writer.drain()
    return reader, writer


async def _until_held(api: CheckApi, size: int) -> None:
    for _ in range(500):
        if api.bodies.held == size:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never {size} body bytes held (held {api.bodies.held})")


async def test_past_the_body_byte_bound_a_request_is_refused_before_its_body_is_read(
    served: Served,
) -> None:
    body = _body(MAX_BODY)
    first = await _hold(served.port, body, MAX_BODY - 1000)
    second = await _hold(served.port, body, MAX_BODY - 1000)
    await _until_held(served.api, 2 * MAX_BODY)  # both reserved, both still reading
    third_reader, third_writer = await _hold(served.port, body, 0)
    refused = await asyncio.wait_for(third_reader.readuntil(b"}}"), 10)  # answered, unread
    third_writer.close()
    assert refused.startswith(b"HTTP/1.1 429")
    assert b"retry-after: 1" in refused.lower()
    assert b"serve.max_buffered_body_bytes" in refused
    for reader, writer in (first, second):  # the two held ones finish and are judged
        writer.write(body[MAX_BODY - 1000 :])
        status = await asyncio.wait_for(reader.readline(), 10)
        writer.close()
        assert status.startswith(b"HTTP/1.1 200")
    await _until_held(served.api, 0)  # every reservation given back


async def test_a_chunked_body_is_counted_as_it_arrives(served: Served) -> None:
    """Without Content-Length nothing is known up front: each chunk is reserved as it comes."""
    held = [await _hold(served.port, _body(MAX_BODY), MAX_BODY - 1000) for _ in range(2)]
    await _until_held(served.api, 2 * MAX_BODY)
    reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
    writer.write(b"POST /v1/check HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n")
    chunk = b"x" * 30_000
    refused = b""
    for _ in range(5):  # the bound (100 KB, 80 KB held) refuses it on the way, not 413
        writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        try:
            refused = await asyncio.wait_for(reader.readuntil(b"}}"), 0.5)
        except TimeoutError:
            continue
        break
    writer.close()
    for _, held_writer in held:
        held_writer.close()
    assert refused.startswith(b"HTTP/1.1 429")


# --------------------------------------------------------------------------- where it listens


def _settings(**serve: object) -> ServiceSettings:
    return ServiceSettings.model_validate({"serve": serve})


def test_serve_listens_on_loopback_by_default() -> None:
    assert _settings().serve.host == "127.0.0.1"
    assert exposure_problem(_settings()) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.7", "serve.example.com"])
def test_a_network_address_without_api_keys_is_refused_naming_the_fix(host: str) -> None:
    problem = exposure_problem(_settings(host=host))
    assert isinstance(problem, SettingsError)
    assert problem.field == "serve.host"
    assert "serve.api_keys_file" in str(problem)
    assert "serve.allow_unauthenticated" in str(problem)
    assert exposure_problem(_settings(host=host, allow_unauthenticated=True)) is None


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.9.1", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("0.0.0.0", False), ("::", False), ("192.168.1.2", False),
     ("myhost", False)],
)  # fmt: skip
def test_loopback_addresses(host: str, *, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_body_byte_bound_below_the_body_limit_is_a_bad_setting() -> None:
    with pytest.raises(ValueError, match=r"serve\.max_buffered_body_bytes"):
        _settings(max_body_bytes=2_000_000, max_buffered_body_bytes=1_000_000)
