"""What the OpenAI and Anthropic judges share: the retried, time-bounded call and header capture."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import httpx2
import orjson
import pydantic

from guard.errors import JudgeError, JudgeTimeout, MalformedJudgeOutput
from guard.providers.errors import SDK_ERRORS, map_sdk_error
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings

T = TypeVar("T")
M = TypeVar("M", bound=pydantic.BaseModel)

SDK_MAX_CONNECTIONS = 1000  # the SDKs' own default pool size
SDK_MAX_KEEPALIVE = 100  # the SDKs' own default number of idle connections kept
CUT_MESSAGE = "cut at judge.max_tokens (raise it for outputs with very many claims)"
CONNECTIONS_PER_CLIENT = 32  # in-flight calls per SDK client (per connection pool)


def connection_limits(settings: JudgeSettings) -> httpx2.Limits:
    """A connection pool that keeps one idle connection per allowed in-flight call
    (``budget.max_in_flight``), so a busy judge reuses connections instead of reconnecting."""
    in_flight = settings.budget.max_in_flight
    return httpx2.Limits(
        max_connections=max(SDK_MAX_CONNECTIONS, in_flight),
        max_keepalive_connections=max(SDK_MAX_KEEPALIVE, in_flight),
    )


def client_count(settings: JudgeSettings) -> int:
    """How many SDK clients share ``budget.max_in_flight``: one per
    :data:`CONNECTIONS_PER_CLIENT` calls. httpx2's pool scans every connection it holds on each
    request and release, so one pool of C connections costs O(C) CPU per call, k pools O(C/k)."""
    return max(1, -(-settings.budget.max_in_flight // CONNECTIONS_PER_CLIENT))


def round_robin(clients: Sequence[T]) -> Iterator[T]:
    """``clients`` in turn, forever: calls spread evenly over the connection pools."""
    return itertools.cycle(clients)


def parse_body(model: type[M], response: httpx2.Response, provider: str) -> M:
    """A 200 body as the SDK's response ``model``: validated by pydantic-core (about 15x cheaper
    than the SDK's own lenient build), or, when it is not quite the SDK's schema (an
    OpenAI-compatible server's own values), built leniently as the SDK does by default.
    A body that is not a JSON object is :class:`MalformedJudgeOutput`."""
    try:
        return model.model_validate_json(response.content)
    except pydantic.ValidationError:
        pass
    try:
        data = orjson.loads(response.content)
    except orjson.JSONDecodeError as exc:
        raise MalformedJudgeOutput(f"{provider} answer body is not JSON") from exc
    if not isinstance(data, dict):
        raise MalformedJudgeOutput(f"{provider} answer body is not a JSON object")
    return model.construct(**data)  # the SDKs override it: a recursive, non-validating build


def parse_data(model: type[M], data: Any, provider: str) -> M:
    """An already-decoded answer (a batch item's body) as the SDK's response ``model``:
    validated, or built leniently as :func:`parse_body` does."""
    if not isinstance(data, dict):
        raise MalformedJudgeOutput(f"{provider} answer body is not a JSON object")
    try:
        return model.model_validate(data)
    except pydantic.ValidationError:
        return model.construct(**data)


def default_retry(settings: JudgeSettings) -> RetryPolicy:
    """The retry policy for ``settings``: ``max_retries`` with the default backoff."""
    return RetryPolicy(max_retries=settings.max_retries)


def rate_limit_headers(headers: Mapping[str, str], prefixes: tuple[str, ...]) -> dict[str, str]:
    """The provider's rate-limit headers (lowercased names starting with ``prefixes``)."""
    return {k.lower(): v for k, v in headers.items() if k.lower().startswith(prefixes)}


async def bounded_call(
    provider: str, timeout_s: float, call: Callable[[], Awaitable[T]], secrets: Sequence[str] = ()
) -> T:
    """``call()`` within ``timeout_s``, with SDK errors mapped onto :mod:`guard.errors`
    (``secrets`` redacted from their messages)."""
    try:
        async with asyncio.timeout(timeout_s):
            return await call()
    except TimeoutError:
        raise JudgeTimeout(f"{provider} call exceeded {timeout_s:g}s") from None
    except JudgeError:
        raise
    except SDK_ERRORS as exc:
        raise map_sdk_error(provider, exc, secrets) from exc
    except (AttributeError, TypeError, KeyError, IndexError) as exc:
        # a 200 whose body is not the API's shape (OpenAI-compatible servers vary): leniently
        # built SDK objects then miss fields where the answer is read
        raise MalformedJudgeOutput(
            f"{provider} answer has an unexpected shape: {type(exc).__name__}"
        ) from exc


async def retried_call(
    provider: str,
    settings: JudgeSettings,
    retry: RetryPolicy,
    call: Callable[[], Awaitable[T]],
    secrets: Sequence[str] = (),
) -> T:
    """``call`` bounded by ``settings.timeout_s`` per attempt, retried by ``retry``."""
    return await retry.run(lambda: bounded_call(provider, settings.timeout_s, call, secrets))
