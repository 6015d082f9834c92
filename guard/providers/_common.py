"""What the OpenAI and Anthropic judges share: the retried, time-bounded call and header capture."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from guard.errors import JudgeError, JudgeTimeout
from guard.providers.errors import SDK_ERRORS, map_sdk_error
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings

T = TypeVar("T")


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
