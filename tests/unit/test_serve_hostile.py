"""Hostile input to the check API is a 4xx with a clear message, never a 500: any header value
(the deadline, the API key, the content type and length), any body shape (nesting, numbers
past every range, duplicate keys, non-UTF-8), in process (any header bytes) and over a real
socket (what uvicorn and h11 let through)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from consumers.asgi import AsgiServer
from consumers.serve.app import build_app
from consumers.serve.service import make_api
from consumers.settings import ServiceSettings
from guard.engine import Guard
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

KEY = "k" * 32
REQUEST = {"output": "Paris is in France.", "context": "Paris is in France."}


def app(tmp_path: Path) -> Any:
    keys = tmp_path / "keys"
    keys.write_text(KEY, encoding="utf-8")
    settings = ServiceSettings.model_validate(
        {"serve": {"api_keys_file": str(keys)}, "judge": {"provider": "fake"}}
    )
    api, ready = make_api(settings, Guard(FakeJudge(), JudgeSettings(provider="fake")), None)
    api.state.started = True
    return build_app(api, ready=ready)


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for n in range(depth):
        value = {"a": value} if n % 2 else [value]
    return value


_DIGITS = st.integers(1, 6000).map(lambda n: "9" * n)
_HEADER = st.one_of(
    st.binary(max_size=300),
    _DIGITS.map(str.encode),
    st.sampled_from([b"", b" ", b"-1", b"0", b"1e3", b"\xb2", b"\xef\xbc\x91", b"0" * 5000 + b"1"]),
)
_AUTH = st.one_of(st.just(f"Bearer {KEY}".encode()), _HEADER, _HEADER.map(lambda v: b"Bearer " + v))
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=10,
)
_FIELDS = st.sampled_from(["output", "context", "messages", "id", "metadata", "context_field"])
_DEEP = st.builds(nested, st.integers(1, 1200), _JSON)
_BODY = st.one_of(
    st.binary(max_size=200),
    st.dictionaries(_FIELDS, st.one_of(_JSON, _DEEP), max_size=4).map(
        lambda v: json.dumps({**REQUEST, **v}).encode()
    ),
    _DEEP.map(lambda v: json.dumps({**REQUEST, "metadata": {"x": v}}).encode()),
    _DIGITS.map(lambda d: b'{"output": "x", "context": "x", "metadata": {"n": %s}}' % d.encode()),
    _DIGITS.map(lambda d: b'{"output": "x", "context": "x", "id": %s}' % d.encode()),
    st.just(b'{"output": "x", "output": "y", "context": "x"}'),
)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    deadline=st.none() | _HEADER,
    auth=_AUTH,
    content_type=st.none() | _HEADER,
    raw=_BODY,
    batch=st.booleans(),
)
def test_no_hostile_header_or_body_gets_a_5xx(
    tmp_path: Path,
    deadline: bytes | None,
    auth: bytes,
    content_type: bytes | None,
    raw: bytes,
    batch: bool,
) -> None:
    headers = {"authorization": auth}
    if deadline is not None:
        headers["x-groundguard-deadline-ms"] = deadline
    if content_type is not None:
        headers["content-type"] = content_type
    content = b'{"requests": [%s]}' % raw if batch else raw
    reply = asyncio.run(
        _post(app(tmp_path), "/v1/check/batch" if batch else "/v1/check", content, headers)
    )
    assert reply.status_code < 500, reply.text
    if reply.status_code >= 400:
        error = reply.json()["error"]
        assert error["code"]
        assert error["message"]


async def _post(asgi: Any, path: str, content: bytes, headers: dict[str, bytes]) -> httpx2.Response:
    transport = httpx2.ASGITransport(app=asgi)
    async with httpx2.AsyncClient(transport=transport, base_url="http://serve") as client:
        return await client.post(path, content=content, headers=headers)


# --------------------------------------------------------------------------- over a socket


@pytest.fixture
async def port(tmp_path: Path) -> AsyncIterator[int]:
    async with AsgiServer(app(tmp_path), host="127.0.0.1", port=0) as server:
        yield server.port


def _head(extra: bytes, length: int, key: bytes = KEY.encode()) -> bytes:
    return (
        b"POST /v1/check HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n"
        b"authorization: Bearer " + key + b"\r\n" + extra
        + b"content-length: %d\r\n\r\n" % length
    )  # fmt: skip


_DEEP_METADATA = json.dumps({**REQUEST, "metadata": nested(300)}).encode()


@pytest.mark.parametrize(
    ("head", "body", "status"),
    [
        (_head(b"x-groundguard-deadline-ms: " + b"1" * 5000 + b"\r\n", 2), b"{}", 400),
        (_head(b"x-groundguard-deadline-ms: 00" + b"0" * 5000 + b"7\r\n", 2), b"{}", 422),
        (_head(b"", len(_DEEP_METADATA)), _DEEP_METADATA, 422),
        (_head(b"", 2, key=b"\xff\xfe" * 20), b"{}", 401),
        (b"POST /v1/check HTTP/1.1\r\nhost: t\r\ncontent-length: " + b"9" * 5000 + b"\r\n\r\n",
         b"", 400),
    ],
    ids=["5000-digit deadline", "zero-padded deadline", "metadata 300 deep", "a key not UTF-8",
         "5000-digit content-length"],
)  # fmt: skip
async def test_hostile_requests_over_a_socket_are_4xx(
    port: int, head: bytes, body: bytes, status: int
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head + body)
    line = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    assert line.split()[1] == str(status).encode(), line
