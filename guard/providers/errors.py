"""Where SDK errors enter the judge core: map ``openai``/``anthropic`` exceptions onto
:mod:`guard.errors`.

* connection errors -> :class:`JudgeUnavailable`; SDK timeouts -> :class:`JudgeTimeout`
* 408, 409, 5xx, 529 -> :class:`JudgeUnavailable` (retriable)
* 429 -> :class:`RateLimited` with ``retry_after_s`` from ``retry-after-ms``/``retry-after``;
  the flex tier's capacity refusal (code ``resource_unavailable``) -> :class:`FlexUnavailable`;
  except quota or spend limits (OpenAI ``insufficient_quota``, Anthropic billing and usage-limit
  messages, any 402) -> :class:`QuotaExhausted`, never retried
* other 4xx (400/401/403/404/422 ...) -> :class:`JudgeRejected` with the status
* an answer that is not the strict schema -> :class:`MalformedJudgeOutput`

Messages never include API keys: the configured key (``secrets``) and anything that looks like
one is redacted (:mod:`guard.redact`).
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anthropic
import openai
import pydantic

from guard.errors import (
    FlexUnavailable,
    JudgeError,
    JudgeRejected,
    JudgeTimeout,
    JudgeUnavailable,
    MalformedJudgeOutput,
    QuotaExhausted,
    RateLimited,
)
from guard.redact import redact

__all__ = ["SDK_ERRORS", "from_status", "map_sdk_error", "parse_retry_after", "redact"]

_QUOTA_WORDS = (
    "insufficient_quota",
    "exceeded your current quota",
    "credit balance",
    "spend limit",
    "usage limit",
)
# OpenAI's code for an ordinary, transient rate limit decides before any message wording (its
# text points at the billing page, which must not read as an exhausted quota). Anthropic marks
# spend limits with type rate_limit_error too, so only the wording tells those apart.
_RATE_LIMIT_CODE = "rate_limit_exceeded"
_TRANSIENT_STATUSES = frozenset({408, 409})
_FLEX_CAPACITY_CODE = "resource_unavailable"  # OpenAI flex: 429 Resource Unavailable, not billed


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            when = email.utils.parsedate_tz(value)
            if when is not None:
                return max(0.0, email.utils.mktime_tz(when) - time.time())
    return None


def _error_fields(body: object) -> tuple[str, str, str]:
    """(type, code, message) of an OpenAI ``{"error": {...}}`` or Anthropic error body."""
    err: Any = body.get("error", body) if isinstance(body, Mapping) else None
    if not isinstance(err, Mapping):
        return "", "", ""
    return (str(err.get("type") or ""), str(err.get("code") or ""), str(err.get("message") or ""))


def _is_quota(status: int, body: object) -> bool:
    if status == 402:
        return True
    etype, code, message = _error_fields(body)
    if "insufficient_quota" in (etype, code):
        return True
    if code == _RATE_LIMIT_CODE:
        return False
    lowered = message.lower()
    return status in (400, 403, 429) and any(word in lowered for word in _QUOTA_WORDS)


def from_status(
    provider: str,
    status: int,
    headers: Mapping[str, str],
    body: object,
    secrets: Sequence[str] = (),
) -> JudgeError:
    """The :class:`JudgeError` for an HTTP error status from ``provider``."""
    etype, code, message = _error_fields(body)
    detail = redact(f"{provider} HTTP {status} {etype or code}: {message}".rstrip(": "), secrets)
    if _is_quota(status, body):
        return QuotaExhausted(detail, status=status)
    if status == 429 and (code == _FLEX_CAPACITY_CODE or "resource unavailable" in message.lower()):
        return FlexUnavailable(detail, status=status, retry_after_s=parse_retry_after(headers))
    if status == 429:
        return RateLimited(detail, status=status, retry_after_s=parse_retry_after(headers))
    if status in _TRANSIENT_STATUSES or status >= 500:
        return JudgeUnavailable(detail, status=status, retry_after_s=parse_retry_after(headers))
    return JudgeRejected(detail, status=status)


_TIMEOUTS = (openai.APITimeoutError, anthropic.APITimeoutError, TimeoutError)
_CONNECTION = (openai.APIConnectionError, anthropic.APIConnectionError)
_STATUS = (openai.APIStatusError, anthropic.APIStatusError)
_MALFORMED = (
    openai.APIResponseValidationError,
    anthropic.APIResponseValidationError,
    openai.LengthFinishReasonError,
    openai.ContentFilterFinishReasonError,
    pydantic.ValidationError,
    json.JSONDecodeError,
)

SDK_ERRORS: tuple[type[BaseException], ...] = (
    *_TIMEOUTS,
    *_CONNECTION,
    *_STATUS,
    *_MALFORMED,
    openai.OpenAIError,
    anthropic.AnthropicError,
)
"""Every exception :func:`map_sdk_error` translates; catch exactly these where SDKs are called."""


def map_sdk_error(provider: str, exc: BaseException, secrets: Sequence[str] = ()) -> JudgeError:
    """The :class:`JudgeError` for an exception raised by the ``openai``/``anthropic`` SDK;
    ``secrets`` (the configured key) never appear in its message."""
    if isinstance(exc, JudgeError):
        return exc
    if isinstance(exc, _TIMEOUTS):
        return JudgeTimeout(f"{provider} call timed out")
    if isinstance(exc, _CONNECTION):
        return JudgeUnavailable(redact(f"{provider} connection error: {exc}", secrets))
    if isinstance(exc, _STATUS):
        return from_status(provider, exc.status_code, exc.response.headers, exc.body, secrets)
    if isinstance(exc, _MALFORMED):
        return MalformedJudgeOutput(
            redact(
                f"{provider} answer is not the assessment schema: {type(exc).__name__}: {exc}",
                secrets,
            )
        )
    return JudgeUnavailable(redact(f"{provider} SDK error: {type(exc).__name__}: {exc}", secrets))
