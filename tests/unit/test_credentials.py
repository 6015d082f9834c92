"""API keys: settings, then key file, then the provider's environment variable; never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.errors import ConfigError
from guard.providers.credentials import resolve_api_key
from guard.settings import JudgeSettings, Provider

SECRET = "sk-secret-0123456789"


def test_settings_key_wins(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("from-file")
    s = JudgeSettings(provider=Provider.OPENAI, api_key=SECRET, api_key_file=key_file)
    assert resolve_api_key(s, {"OPENAI_API_KEY": "from-env"}) == SECRET


def test_key_file_beats_environment_and_is_stripped(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(f"  {SECRET}\n")
    s = JudgeSettings(provider=Provider.ANTHROPIC, api_key_file=key_file)
    assert resolve_api_key(s, {"ANTHROPIC_API_KEY": "from-env"}) == SECRET


@pytest.mark.parametrize(
    ("provider", "var"),
    [
        (Provider.OPENAI, "OPENAI_API_KEY"),
        (Provider.ANTHROPIC, "ANTHROPIC_API_KEY"),
    ],
)
def test_environment_variable_by_provider(provider: Provider, var: str) -> None:
    s = JudgeSettings(provider=provider)
    assert resolve_api_key(s, {var: SECRET}) == SECRET
    with pytest.raises(ConfigError) as err:
        resolve_api_key(s, {"OTHER": "x", var: "  "})
    assert var in err.value.fix


def test_explicit_provider_overrides_settings_provider() -> None:
    s = JudgeSettings(provider=Provider.CASCADE)
    assert resolve_api_key(s, {"ANTHROPIC_API_KEY": SECRET}, Provider.ANTHROPIC) == SECRET


def test_offline_and_fake_need_no_key() -> None:
    for provider in (Provider.OFFLINE, Provider.FAKE):
        assert resolve_api_key(JudgeSettings(provider=provider), {}) is None


def test_openai_compatible_endpoint_needs_no_key() -> None:
    s = JudgeSettings(provider=Provider.OPENAI, base_url="http://127.0.0.1:11434/v1")
    assert resolve_api_key(s, {}) is None


def test_unreadable_or_empty_key_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        resolve_api_key(
            JudgeSettings(provider=Provider.OPENAI, api_key_file=tmp_path / "absent"), {}
        )
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(ConfigError, match="empty"):
        resolve_api_key(JudgeSettings(provider=Provider.OPENAI, api_key_file=empty), {})


def test_key_never_in_settings_repr_or_dump(tmp_path: Path) -> None:
    s = JudgeSettings(provider=Provider.OPENAI, api_key=SECRET)
    assert SECRET not in repr(s)
    assert SECRET not in str(s)
    assert SECRET not in s.model_dump_json()


def test_key_file_content_never_in_errors(tmp_path: Path) -> None:
    s = JudgeSettings(provider=Provider.OPENAI, api_key_file=tmp_path)  # a directory
    with pytest.raises(ConfigError) as err:
        resolve_api_key(s, {"OPENAI_API_KEY": SECRET})
    assert SECRET not in str(err.value)
