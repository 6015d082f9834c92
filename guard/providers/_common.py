"""What the OpenAI and Anthropic judges share: the retried, time-bounded call and header capture."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import httpx2

from guard.errors import JudgeError, JudgeTimeout
from guard.providers.errors import SDK_ERRORS, map_sdk_error
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings

T = TypeVar("T")

SDK_MAX_CONNECTIONS = 1000  # the SDKs' own default pool size
SDK_MAX_KEEPALIVE = 100  # the SDKs' own default number of idle connections kept


def connection_limits(settings: JudgeSettings) -> httpx2.Limits:
    """A connection pool that keeps one idle connection per allowed in-flight call
    (``budget.max_in_flight``), so a busy judge reuses connections instead of reconnecting."""
    in_flight = settings.budget.max_in_flight
    return httpx2.Limits(max_connections=max(SDK_MAX_CONNECTIONS, in_flight),
                         max_keepalive_connections=max(SDK_MAX_KEEPALIVE, in_flight))


def default_retry(settings: JudgeSettings) -> RetryPolicy:
    """The retry policy for ``settings``: ``max_retries`` with the default backoff."""
    return RetryPolicy(max_retries=settings.max_retries)


def rate_limit_headers(headers: Mapping[str, str], prefixes: tuple[str, ...]) -> dict[str, str]:
    """The provider's rate-limit headers (lowercased names starting with ``prefixes``)."""
    return {k.lower(): v for k, v in headers.items() if k.lower().startswith(prefixes)}


async def bounded_call(provider: str, timeout_s: float,
                       call: Callable[[], Awaitable[T]]) -> T:
    """``call()`` within ``timeout_s``, with SDK errors mapped onto :mod:`guard.errors`."""
    try:
        async with asyncio.timeout(timeout_s):
            return await call()
    except TimeoutError:
        raise JudgeTimeout(f"{provider} call exceeded {timeout_s:g}s") from None
    except JudgeError:
        raise
    except SDK_ERRORS as exc:
        raise map_sdk_error(provider, exc) from exc


async def retried_call(provider: str, settings: JudgeSettings, retry: RetryPolicy,
                       call: Callable[[], Awaitable[T]]) -> T:
    """``call`` bounded by ``settings.timeout_s`` per attempt, retried by ``retry``."""
    return await retry.run(lambda: bounded_call(provider, settings.timeout_s, call))
