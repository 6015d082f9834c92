"""Secrets never reach a verdict: the configured key (exact) and anything key-like are redacted,
and the provider's text in a verdict is bounded."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard import Guard, JudgeSettings
from guard.errors import JudgeRejected
from guard.models import JudgeRequest, Label
from guard.providers.errors import map_sdk_error
from guard.redact import MAX_REDACTED_CHARS, redact
from guard.testing import FakeJudge
from tests.unit.test_provider_errors import anthropic_error, openai_error

ODD_KEY = "gg-live_7f3a-9c2e"  # not shaped like sk-..., shorter than 32 characters


@pytest.mark.parametrize("message", [
    f"Incorrect API key provided: {ODD_KEY}.",
    f"invalid x-api-key '{ODD_KEY}'",
    f"Authorization: Bearer {ODD_KEY}",
    f"the token={ODD_KEY} was revoked",
])
def test_a_key_echoed_by_the_provider_after_a_credential_label_is_redacted(message: str) -> None:
    assert ODD_KEY not in map_sdk_error("openai", openai_error(401, "invalid_api_key",
                                                               message=message)).args[0]
    assert ODD_KEY not in str(map_sdk_error("anthropic", anthropic_error(
        401, "authentication_error", message)))


def test_the_configured_key_is_redacted_wherever_it_appears() -> None:
    key = "plainword"  # nothing key-like about it: only the exact match can catch it
    err = map_sdk_error("openai", openai_error(400, message=f"unknown model {key} here"),
                        secrets=(key,))
    assert key not in str(err)
    assert "[redacted]" in str(err)


@pytest.mark.parametrize("token", ["a1b2c3d4e5f6g7h8i9", "AKIAIOSFODNN7EXAMPLE",
                                   "sk-ant-api03-abc", "ghp_" + "x1" * 20])
def test_key_like_tokens_are_redacted(token: str) -> None:
    assert token not in redact(f"rejected {token} now")


@pytest.mark.parametrize("text", ["The model `gpt-4o-mini-2024-07-18` does not exist",
                                  "Rate limit reached for requests in organization org-abc",
                                  "max_tokens is too large: 100000"])
def test_ordinary_error_text_is_kept(text: str) -> None:
    assert redact(text) == text


@given(st.text(max_size=5000))
def test_redacted_text_is_bounded(text: str) -> None:
    assert len(redact(text)) <= MAX_REDACTED_CHARS


async def test_a_provider_message_echoing_the_configured_key_never_reaches_the_verdict() -> None:
    key = "zz-corp-key-0042"
    settings = JudgeSettings(provider="fake", api_key=key)
    judge = FakeJudge([JudgeRejected(f"HTTP 401: key {key!r} rejected; " + "x " * 500,
                                     status=401)])
    verdict = await Guard(judge, settings).judge(JudgeRequest(output="a b", context="a b"))
    assert verdict.label is Label.ERROR
    assert verdict.error is not None
    assert key not in verdict.model_dump_json()
    assert len(verdict.error.message) <= MAX_REDACTED_CHARS


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact(f"Invalid credentials presented: {ODD_KEY}", secrets=(ODD_KEY,))
    assert once == "Invalid credentials presented: [redacted]"
    assert redact(once) == once
