"""A judge API key that no HTTP header can carry (non-ASCII, whitespace or control characters
inside) is refused at start naming where it came from, never shown: it used to surface as a
UnicodeEncodeError traceback on the first call, or (a carriage return) as a connection error."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from consumers.cli.main import main
from guard.assembly import build_guard
from guard.errors import ConfigError
from guard.providers.credentials import check_api_key_shape, resolve_api_key
from guard.settings import JudgeSettings, Provider

BAD_KEYS = [
    "sk-ünïcode-0123456789",
    "sk-abc\r\n0123456789",
    "sk-abc def-0123",
    "sk-\x00-01234",
    "sk-\u200b0123456",
]
GOOD = "sk-proj-AbC_123.xyz~+/=0123456789"


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_key_from_the_settings_that_no_header_can_carry_is_refused(key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_api_key(JudgeSettings(provider=Provider.OPENAI, api_key=key), {})
    assert caught.value.field == "judge.api_key"
    assert key not in str(caught.value)
    assert "printable ASCII" in str(caught.value)


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_key_from_the_environment_or_a_file_is_refused_naming_its_source(
    tmp_path: Path, key: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_api_key(JudgeSettings(provider=Provider.ANTHROPIC), {"ANTHROPIC_API_KEY": key})
    assert caught.value.field == "ANTHROPIC_API_KEY"
    key_file = tmp_path / "key"
    key_file.write_text(key, encoding="utf-8")
    with pytest.raises(ConfigError) as from_file:
        resolve_api_key(JudgeSettings(provider=Provider.OPENAI, api_key_file=key_file), {})
    assert from_file.value.field == "judge.api_key_file"
    assert key.strip() not in str(from_file.value)


def test_a_usual_key_is_accepted_and_the_cascade_checks_its_llm_key_at_start() -> None:
    assert resolve_api_key(JudgeSettings(provider=Provider.OPENAI, api_key=GOOD), {}) == GOOD
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_guard(JudgeSettings(provider=Provider.CASCADE), {"OPENAI_API_KEY": BAD_KEYS[0]})


@given(st.text(min_size=1, max_size=40))
def test_any_key_is_accepted_only_when_it_is_printable_ascii_without_spaces(key: str) -> None:
    fault = check_api_key_shape(key)
    usable = all(c in string.printable and not c.isspace() for c in key)
    assert (fault is None) == usable
    # the fault names a position, a kind and a code point: nothing else of the key
    assert fault is None or re.fullmatch(
        r"character \d+ of the API key is (whitespace|not printable ASCII) \(U\+[0-9A-F]{4,6}\)",
        fault,
    )


def test_serve_and_run_refuse_such_a_key_with_exit_2_and_no_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GROUNDGUARD_JUDGE__PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", BAD_KEYS[0])
    for command in ("serve", "run"):
        assert main([command]) == 2
        err = capsys.readouterr().err
        assert "OPENAI_API_KEY" in err
        assert "Traceback" not in err
        assert BAD_KEYS[0] not in err
