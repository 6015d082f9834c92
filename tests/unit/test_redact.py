"""Secrets never reach a verdict: the configured key (exact) and anything key-like are redacted,
and the provider's text in a verdict is bounded."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from guard import Guard, JudgeSettings
from guard.errors import JudgeRejected
from guard.models import JudgeRequest, Label
from guard.providers.errors import map_sdk_error
from guard.redact import MAX_REDACTED_CHARS, redact
from guard.testing import FakeJudge
from tests.unit.test_provider_errors import anthropic_error, openai_error

ODD_KEY = "gg-live_7f3a-9c2e"  # not shaped like sk-..., shorter than 32 characters


@pytest.mark.parametrize(
    "message",
    [
        f"Incorrect API key provided: {ODD_KEY}.",
        f"invalid x-api-key '{ODD_KEY}'",
        f"Authorization: Bearer {ODD_KEY}",
        f"the token={ODD_KEY} was revoked",
    ],
)
def test_a_key_echoed_by_the_provider_after_a_credential_label_is_redacted(message: str) -> None:
    assert (
        ODD_KEY
        not in map_sdk_error("openai", openai_error(401, "invalid_api_key", message=message)).args[
            0
        ]
    )
    assert ODD_KEY not in str(
        map_sdk_error("anthropic", anthropic_error(401, "authentication_error", message))
    )


def test_the_configured_key_is_redacted_wherever_it_appears() -> None:
    key = "plainword"  # nothing key-like about it: only the exact match can catch it
    err = map_sdk_error(
        "openai", openai_error(400, message=f"unknown model {key} here"), secrets=(key,)
    )
    assert key not in str(err)
    assert "[redacted]" in str(err)


@pytest.mark.parametrize(
    "token", ["a1b2c3d4e5f6g7h8i9", "AKIAIOSFODNN7EXAMPLE", "sk-ant-api03-abc", "ghp_" + "x1" * 20]
)
def test_key_like_tokens_are_redacted(token: str) -> None:
    assert token not in redact(f"rejected {token} now")


@pytest.mark.parametrize(
    "text",
    [
        "The model `gpt-4o-mini-2024-07-18` does not exist",
        "Rate limit reached for requests in organization org-abc",
        "max_tokens is too large: 100000",
    ],
)
def test_ordinary_error_text_is_kept(text: str) -> None:
    assert redact(text) == text


@given(st.text(max_size=5000))
def test_redacted_text_is_bounded(text: str) -> None:
    assert len(redact(text)) <= MAX_REDACTED_CHARS


async def test_a_provider_message_echoing_the_configured_key_never_reaches_the_verdict() -> None:
    key = "zz-corp-key-0042"
    settings = JudgeSettings(provider="fake", api_key=key)
    judge = FakeJudge([JudgeRejected(f"HTTP 401: key {key!r} rejected; " + "x " * 500, status=401)])
    verdict = await Guard(judge, settings).judge(JudgeRequest(output="a b", context="a b"))
    assert verdict.label is Label.ERROR
    assert verdict.error is not None
    assert key not in verdict.model_dump_json()
    assert len(verdict.error.message) <= MAX_REDACTED_CHARS


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact(f"Invalid credentials presented: {ODD_KEY}", secrets=(ODD_KEY,))
    assert once == "Invalid credentials presented: [redacted]"
    assert redact(once) == once


@pytest.mark.parametrize(
    ("message", "secret"),
    [
        ("password: correcthorsebatterystaple", "correcthorsebatterystaple"),  # no digit in it
        ("token=abcdefghijklmnopqrstu", "abcdefghijklmnopqrstu"),
        ("x-api-key: ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP"),
        ("client_secret=ABC.def~ghi_JKL", "ABC.def~ghi_JKL"),  # label after an underscore
        ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
        ("passphrase: letmein", "letmein"),
        ("pwd=letmein99", "letmein99"),
        ("Authorization: token ghp_abc", "ghp_abc"),
        ("Cookie: session=abc123xyz", "abc123xyz"),
        ('{"api_key": "abcdefghij"}', "abcdefghij"),
        ("proxy error for https://gateway-user:hunter2pass@llm.internal/v1", "hunter2pass"),
        ("GET https://host/v1/models?key=AIzaSyA-abc&alt=json: 403", "AIzaSyA-abc"),
    ],
)
def test_credentials_without_a_digit_or_after_a_prefix_are_redacted(
    message: str, secret: str
) -> None:
    """Found by the red team: a gateway or proxy echoing its own credentials (not the
    configured key) reached the verdict when the value held no digit, followed ``client_``,
    or sat in a URL."""
    assert secret not in redact(message)


@given(
    label=st.sampled_from(
        [
            "password",
            "secret",
            "token",
            "api_key",
            "x-api-key",
            "client_secret",
            "passwd",
            "pwd",
            "Authorization",
        ]
    ),
    sep=st.sampled_from([": ", "=", " = ", '": "', ":"]),
    value=st.text(
        st.characters(min_codepoint=33, max_codepoint=126, exclude_characters=",;\"'<>"),
        min_size=6,
        max_size=40,
    ),
)
def test_a_value_assigned_to_a_credential_label_never_survives(
    label: str, sep: str, value: str
) -> None:
    assume(value not in "upstream said  is invalid")  # the text around it is no leak
    assert value not in redact(f"upstream said {label}{sep}{value} is invalid").replace(
        label, ""
    ).replace("[redacted]", "")


def test_a_secret_crossing_the_scanned_length_is_redacted_whole() -> None:
    """Redacted key-like tokens shrink the text; the part of a configured secret that crossed
    the scanned length then moved into the kept text."""
    secret = "open sesame " * 10
    message = ("k" * 99 + " ") * 11 + secret
    assert "sesame" not in redact(message, secrets=(secret,))


def test_ordinary_assignments_in_error_text_are_kept() -> None:
    for text in (
        "Invalid max_tokens: 100000",
        "the token count is large",
        "connection error: https://api.openai.com/v1/chat/completions timed out",
    ):
        assert redact(text) == text
