"""Mapping SDK exceptions onto guard.errors where they enter the core."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from guard.errors import (
    JudgeRejected,
    JudgeTimeout,
    JudgeUnavailable,
    MalformedJudgeOutput,
    QuotaExhausted,
    RateLimited,
)
from guard.providers.errors import map_sdk_error, parse_retry_after, redact

URL = "http://127.0.0.1:1/v1/x"


def response(status: int, body: Any, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(
        status,
        headers=headers or {},
        content=json.dumps(body).encode(),
        request=httpx2.Request("POST", URL),
    )


def openai_error(
    status: int,
    code: str | None = None,
    etype: str = "x",
    headers: dict[str, str] | None = None,
    message: str = "m",
) -> openai.APIStatusError:
    body = {"message": message, "type": etype, "code": code}
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:1")
    try:
        return client._make_status_error(
            "m",
            body=body,  # the SDK's status -> class map
            response=response(status, {"error": body}, headers),
        )
    finally:
        client.close()


def anthropic_error(
    status: int, etype: str, message: str, headers: dict[str, str] | None = None
) -> anthropic.APIStatusError:
    body = {"type": "error", "error": {"type": etype, "message": message}}
    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:1")
    try:
        return client._make_status_error(
            message, body=body, response=response(status, body, headers)
        )
    finally:
        client.close()


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 529])
def test_transient_statuses_are_unavailable(status: int) -> None:
    for exc in (openai_error(status), anthropic_error(status, "api_error", "boom")):
        err = map_sdk_error("p", exc)
        assert isinstance(err, JudgeUnavailable)
        assert err.status == status
        assert err.retriable


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_rejections(status: int) -> None:
    for exc in (openai_error(status), anthropic_error(status, "invalid_request_error", "no")):
        err = map_sdk_error("p", exc)
        assert isinstance(err, JudgeRejected)
        assert err.status == status
        assert not err.retriable
    assert map_sdk_error("p", openai_error(401)).stops_intake
    assert not map_sdk_error("p", openai_error(400)).stops_intake


def test_429_is_rate_limited_with_retry_after() -> None:
    err = map_sdk_error(
        "openai", openai_error(429, "rate_limit_exceeded", headers={"retry-after": "3"})
    )
    assert isinstance(err, RateLimited)
    assert err.retry_after_s == 3.0
    err_ms = map_sdk_error(
        "anthropic",
        anthropic_error(
            429,
            "rate_limit_error",
            "slow down",
            headers={"retry-after-ms": "1500", "retry-after": "9"},
        ),
    )
    assert err_ms.retry_after_s == 1.5


def test_openai_insufficient_quota_is_quota_exhausted() -> None:
    err = map_sdk_error("openai", openai_error(429, "insufficient_quota", "insufficient_quota"))
    assert isinstance(err, QuotaExhausted)
    assert not err.retriable
    assert err.stops_intake


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (429, "You have reached your specified API usage limits."),
        (400, "Your credit balance is too low to access the Anthropic API."),
        (402, "Payment required"),
    ],
)
def test_anthropic_spend_limits_are_quota_exhausted(status: int, message: str) -> None:
    err = map_sdk_error("anthropic", anthropic_error(status, "rate_limit_error", message))
    assert isinstance(err, QuotaExhausted)


def test_timeouts_and_connection_errors() -> None:
    request = httpx2.Request("POST", URL)
    assert isinstance(map_sdk_error("p", openai.APITimeoutError(request)), JudgeTimeout)
    assert isinstance(map_sdk_error("p", anthropic.APITimeoutError(request)), JudgeTimeout)
    conn = map_sdk_error("p", openai.APIConnectionError(request=request))
    assert isinstance(conn, JudgeUnavailable)
    assert conn.retriable


def test_unparseable_answers_are_malformed() -> None:
    assert isinstance(map_sdk_error("p", json.JSONDecodeError("x", "{", 0)), MalformedJudgeOutput)
    validation = openai.APIResponseValidationError(response(200, {}), body={})
    assert isinstance(map_sdk_error("p", validation), MalformedJudgeOutput)


def test_keys_are_redacted_from_messages() -> None:
    exc = openai_error(
        401, "invalid_api_key", message="Incorrect API key provided: sk-proj-abcdef1234567890"
    )
    err = map_sdk_error("openai", exc)
    assert "Incorrect API key" in str(err)
    assert "sk-proj" not in str(err)
    assert redact("key sk-proj-abcdef1234567890 here") == "key [redacted] here"
    assert redact("x" * 1000).startswith("[redacted]")


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < (parse_retry_after({"retry-after": future}) or 0) <= 31


def test_an_ordinary_openai_rate_limit_mentioning_billing_is_not_an_exhausted_quota() -> None:
    """OpenAI's usual 429 text points at the billing page; its code says it is a rate limit."""
    from guard.errors import QuotaExhausted, RateLimited
    from guard.providers.errors import from_status

    body = {
        "error": {
            "type": "requests",
            "code": "rate_limit_exceeded",
            "message": "Rate limit reached for gpt-4o-mini on requests per min (RPM): "
            "Limit 500. You can increase your rate limit by adding a payment method "
            "to your account at https://platform.openai.com/account/billing.",
        }
    }
    error = from_status("openai", 429, {"retry-after": "2"}, body)
    assert isinstance(error, RateLimited)
    assert error.retriable
    quota = from_status(
        "openai",
        429,
        {},
        {
            "error": {
                "type": "insufficient_quota",
                "code": "insufficient_quota",
                "message": "You exceeded your quota.",
            }
        },
    )
    assert isinstance(quota, QuotaExhausted)
