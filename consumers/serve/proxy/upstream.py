"""The upstream model API: one keep-alive ``httpx2`` client, the request as the caller sent it
(minus groundguard's extension fields), and the caller's credentials or the configured key.

Headers sent upstream: the credentials (``Authorization``, ``x-api-key``: the caller's, or
``serve.proxy.upstream_api_key`` in their place), and the API's own request headers
(:data:`PASSED_HEADERS`: organisation, project, API version and beta flags). Nothing else of the
caller's request is forwarded (not its cookies, not groundguard's deadline header).

Errors where they enter: a connection that fails or times out before the answer starts is
:class:`UpstreamUnavailable` (502/504 to the caller); an upstream's own error status is
forwarded with its body, unjudged (there is no answer to judge).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import orjson

from consumers.serve.errors import Refused
from consumers.settings import ProxySettings, UpstreamKind

PASSED_HEADERS = frozenset(
    {"openai-organization", "openai-project", "openai-beta", "anthropic-version", "anthropic-beta"}
)
CREDENTIALS = frozenset({"authorization", "x-api-key"})
ANTHROPIC_VERSION = "2023-06-01"
PATHS = {UpstreamKind.OPENAI: "/chat/completions", UpstreamKind.ANTHROPIC: "/v1/messages"}
MAX_ERROR_BYTES = 65_536  # of an upstream's error body forwarded


class UpstreamUnavailable(Refused):
    """The upstream could not be reached, or did not answer in time."""

    status = 502


def upstream_headers(
    settings: ProxySettings, caller: Mapping[str, str], *, pass_credentials: bool
) -> dict[str, str]:
    """The headers of the upstream request (see the module docstring)."""
    headers = {k: v for k, v in caller.items() if k.lower() in PASSED_HEADERS}
    if settings.upstream_api_key is not None:
        key = settings.upstream_api_key.get_secret_value()
        if settings.upstream_kind is UpstreamKind.ANTHROPIC:
            headers["x-api-key"] = key
        else:
            headers["authorization"] = f"Bearer {key}"
    elif pass_credentials:
        headers |= {k: v for k, v in caller.items() if k.lower() in CREDENTIALS}
    if settings.upstream_kind is UpstreamKind.ANTHROPIC:
        headers.setdefault("anthropic-version", ANTHROPIC_VERSION)
    return headers


class Upstream:
    """POSTs chat requests to ``settings.upstream_url`` over one pooled client."""

    def __init__(self, settings: ProxySettings, *, max_connections: int) -> None:
        assert settings.upstream_url is not None
        self.settings = settings
        self.url = settings.upstream_url.rstrip("/") + PATHS[settings.upstream_kind]
        timeout = settings.upstream_timeout_s
        self.client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(timeout, connect=timeout),
            limits=httpx2.Limits(max_connections=max_connections),
        )

    @asynccontextmanager
    async def post(
        self, body: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncIterator[httpx2.Response]:
        """The upstream's response, its body not yet read; closed (and a stream still running
        cancelled) when the block is left."""
        request = self.client.build_request(
            "POST",
            self.url,
            content=orjson.dumps(body),
            headers={**headers, "content-type": "application/json"},
        )
        try:
            response = await self.client.send(request, stream=True)
        except httpx2.TimeoutException:
            raise UpstreamUnavailable(
                "upstream_timeout", "the upstream did not answer in time", status=504
            ) from None
        except httpx2.HTTPError as exc:
            raise UpstreamUnavailable(
                "upstream_unreachable", f"the upstream failed: {type(exc).__name__}"
            ) from None
        try:
            yield response
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        await self.client.aclose()


async def read_bounded(response: httpx2.Response, limit: int) -> bytes:
    """The body, at most ``limit`` bytes (:class:`UpstreamUnavailable` past it)."""
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise UpstreamUnavailable(
                    "upstream_too_large", f"the upstream's answer is larger than {limit} bytes"
                )
            chunks.append(chunk)
    except httpx2.HTTPError as exc:
        raise UpstreamUnavailable(
            "upstream_dropped", f"the upstream broke off: {type(exc).__name__}"
        ) from None
    return b"".join(chunks)
