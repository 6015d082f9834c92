"""A broken ``--config`` never echoes a secret: YAML/JSON syntax errors are reported as file,
line, column and problem (never the line's text), and validation errors never the input value."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consumers.cli.main import main
from consumers.config import load_settings, read_config_file
from consumers.errors import SettingsError

# One broken file per shape of YAML error; SECRET sits on (or next to) the offending line.
BROKEN = [
    "security:\n  protocol: SASL_SSL\n  sasl_password: {s}: trailing\n",  # mapping values
    'judge:\n  api_key: "{s}\n',  # unterminated quote
    "judge:\n  api_key: !{s} x\n",  # unknown tag
    "judge:\n\tapi_key: {s}\n",  # a tab
    "judge:\n  api_key: *{s}\n",  # undefined alias
    "security:\n  sasl_password: [{s}, x\n",  # unclosed list
    "security:\n  sasl_password:\n    - {s}\n   c: d\n",  # bad indentation
    "judge: {{api_key: {s}}}\n}}\n",  # stray brace
]
secrets = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
    min_size=6,
    max_size=40,
).map(lambda s: "Zq" + s)


def _write(tmp_path: Path, text: str, suffix: str = ".yaml") -> Path:
    path = tmp_path / f"groundguard{suffix}"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("template", BROKEN)
def test_a_syntax_error_names_file_line_and_problem_without_the_text(
    tmp_path: Path, template: str
) -> None:
    secret = "sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    path = _write(tmp_path, template.format(s=secret))
    with pytest.raises(SettingsError) as raised:
        load_settings(path, {})
    message = str(raised.value)
    assert secret not in message
    assert "ABCDEFGH" not in message
    assert str(path) in message
    assert "line " in message
    assert "column " in message


@settings(max_examples=60, deadline=None)
@given(template=st.sampled_from(BROKEN), secret=secrets)
def test_no_broken_yaml_echoes_a_secret(
    tmp_path_factory: pytest.TempPathFactory, template: str, secret: str
) -> None:
    path = _write(tmp_path_factory.mktemp("cfg"), template.format(s=secret))
    with pytest.raises(SettingsError) as raised:
        load_settings(path, {})
    assert secret not in str(raised.value)


@settings(max_examples=30, deadline=None)
@given(secret=secrets, cut=st.integers(min_value=1, max_value=60))
def test_truncated_json_never_echoes_a_secret(
    tmp_path_factory: pytest.TempPathFactory, secret: str, cut: int
) -> None:
    text = '{"security": {"protocol": "SASL_SSL", "sasl_password": "' + secret + '"}}'
    path = _write(tmp_path_factory.mktemp("cfg"), text[:cut], ".json")
    with pytest.raises(SettingsError) as raised:
        load_settings(path, {})
    assert secret not in str(raised.value)


@pytest.mark.parametrize(
    "text",
    [
        "security:\n  protocol: SASL_SSL\n  sasl_username: u\n  sasl_password: [{s}]\n",
        "security:\n  protocol: SASL_SSL\n  sasl_username: u\n  sasl_password: {{v: {s}}}\n",
        "judge:\n  api_key: [{s}]\n",
        "judge:\n  api_kee: {s}\n",
        "security:\n  sasl_pasword: {s}\n",
    ],
)
def test_a_validation_error_of_a_secret_field_never_echoes_the_value(
    tmp_path: Path, text: str
) -> None:
    secret = "hunter2-very-secret-value"
    with pytest.raises(SettingsError) as raised:
        load_settings(_write(tmp_path, text.format(s=secret)), {})
    assert secret not in str(raised.value)


@pytest.mark.parametrize("template", BROKEN[:3])
def test_check_with_a_broken_config_prints_no_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], template: str
) -> None:
    secret = "sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    path = _write(tmp_path, template.format(s=secret))
    assert main(["check", "--config", str(path), "--context", "a", "--output", "a"]) == 2
    err = capsys.readouterr().err
    assert secret not in err
    assert "ABCDEFGH" not in err
    assert "line " in err


def test_a_file_that_is_not_utf8_is_a_settings_error(tmp_path: Path) -> None:
    path = tmp_path / "groundguard.yaml"
    path.write_bytes(b"judge:\n  api_key: \xff\xfesecret\n")
    with pytest.raises(SettingsError, match="not UTF-8"):
        load_settings(path, {})


@pytest.mark.parametrize("command", ["replay", "demo"])
def test_replay_and_demo_with_a_broken_config_exit_2_without_the_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    secret = "sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    path = _write(tmp_path, BROKEN[0].format(s=secret))
    args = [str(tmp_path / "none.jsonl")] if command == "replay" else []
    assert main([command, *args, "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "ABCDEFGH" not in err
    assert "line 3, column" in err


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_config_nested_too_deeply_is_a_settings_error_not_a_traceback(
    tmp_path: Path, suffix: str
) -> None:
    text = '{"judge": {"x": ' + "[" * 5000 + "]" * 5000 + "}}"
    path = _write(tmp_path, text, suffix)
    with pytest.raises(SettingsError, match="nested too deeply"):
        read_config_file(path)
