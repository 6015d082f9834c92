"""The settings reference, docs/settings.md: generated from the models, every setting described,
every setting's environment variable the one the service reads."""

from __future__ import annotations

import argparse
import enum
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field, SecretStr

from consumers import settings_doc
from consumers.cli.commands import settings_doc as command
from consumers.config import load_settings
from consumers.settings import ServiceSettings

ROOT = Path(__file__).resolve().parents[2]
ROWS = list(settings_doc.all_settings())


def leaf_paths(data: dict[str, Any], prefix: str = "") -> set[str]:
    """The dotted paths of the values in a settings dump that are not sections."""
    paths: set[str] = set()
    for name, value in data.items():
        nested = isinstance(value, dict) and name != "field_map"
        paths |= leaf_paths(value, f"{prefix}{name}.") if nested else {f"{prefix}{name}"}
    return paths


def env_text(value: Any) -> str:
    """``value`` as an environment variable gives it (lists and mappings as JSON)."""
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, tuple | dict):
        return json.dumps(value)
    if isinstance(value, list):  # judge.tiers: the settings of each tier, as given
        return json.dumps([v.model_dump(mode="json", exclude_unset=True) for v in value])
    return str(value)


SASL = {
    "GROUNDGUARD_SECURITY__PROTOCOL": "SASL_PLAINTEXT",
    "GROUNDGUARD_SECURITY__SASL_USERNAME": "guard",
    "GROUNDGUARD_SECURITY__SASL_PASSWORD": "s3cret",
}
TLS = {"GROUNDGUARD_SECURITY__PROTOCOL": "SSL"}
TLS_CLIENT = {**TLS, "GROUNDGUARD_SECURITY__SSL_CERTFILE": "{file}"}
# a value (and the other settings it needs) for the settings whose default cannot be given
# back as it is: null, the host name, or a field that only counts with another
EXAMPLES: dict[str, tuple[str, dict[str, str]]] = {
    "instance_id": ("replica-0", {}),
    "transactional_id_prefix": ("guard", {}),
    "topics.approved": ("guard.approved", {}),
    "security.sasl_mechanism": ("SCRAM-SHA-512", SASL),
    "security.sasl_username": ("guard", SASL),
    "security.sasl_password": ("s3cret", SASL),
    "security.ssl_cafile": ("{file}", TLS),
    "security.ssl_certfile": ("{file}", TLS),
    "security.ssl_keyfile": ("{file}", TLS_CLIENT),
    "security.ssl_key_password": ("s3cret", TLS_CLIENT),
    "security.ssl_check_hostname": ("false", TLS),
    "judge.base_url": ("http://127.0.0.1:8000/v1", {}),
    "serve.proxy.upstream_url": ("http://127.0.0.1:8000/v1", {}),
    "serve.proxy.upstream_api_key": ("sk-test", {}),
    "serve.proxy.publish": (
        "true",
        {
            "GROUNDGUARD_SERVE__PROXY__UPSTREAM_URL": "http://127.0.0.1:8000/v1",
            "GROUNDGUARD_BOOTSTRAP_SERVERS": "127.0.0.1:9092",
        },
    ),
    "judge.tiers": ('[{"pass_at": 0.9, "kind": "offline"}, {"kind": "fake"}]', {}),
    "judge.api_key": ("sk-test", {}),
    "judge.api_key_file": ("{file}", {}),
    "judge.price_file": ("{file}", {}),
    "judge.budget.rpm": ("500", {}),
    "judge.budget.tpm": ("100000", {}),
    "judge.budget.cost_per_minute_usd": ("0.5", {}),
    "judge.budget.cost_per_hour_usd": ("5.0", {}),
    "judge.budget.cost_per_day_usd": ("50.0", {}),
    "judge.budget.fallback_model": ("gpt-4o-mini", {}),
    "judge.budget.redis_url": (
        "redis://127.0.0.1:6379/0",
        {"GROUNDGUARD_JUDGE__BUDGET__FLEET": "redis"},
    ),
    "judge.prompt_cache.cache_key": ("guard-key", {}),
    "serve.api_keys_file": ("{file}", {}),
}


def test_the_checked_in_reference_is_the_one_generated_from_the_models() -> None:
    """Changing a setting without `groundguard settings-doc --write` fails here, with a diff."""
    committed = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert committed == settings_doc.render(), "\n".join(settings_doc.drift())
    assert settings_doc.drift() == []


def test_every_setting_has_a_description() -> None:
    assert settings_doc.undocumented() == []
    assert all(row.description.strip() for row in ROWS)


def test_the_reference_lists_every_setting_of_the_service_once() -> None:
    paths = [row.path for row in ROWS]
    assert len(paths) == len(set(paths))
    assert set(paths) == leaf_paths(ServiceSettings(instance_id="x").model_dump())
    committed = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert all(f"| `{row.path}` | `{row.env}` |" in committed for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.path)
def test_each_documented_variable_sets_its_setting(
    row: settings_doc.Setting, tmp_path: Path
) -> None:
    """The variable named in the reference is read into the setting at the documented path
    (the setting is marked as given, with the value given)."""
    *sections, name = row.path.split(".")
    text, companions = EXAMPLES.get(row.path, (None, {}))
    if text is None:
        section: Any = ServiceSettings(instance_id="x")
        for part in sections:
            section = getattr(section, part)
        text = env_text(getattr(section, name))
    a_file = tmp_path / "a-file"
    a_file.write_text("sk-test\n", encoding="utf-8")
    given = {**companions, row.env: text}
    environ = {key: value.replace("{file}", str(a_file)) for key, value in given.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # judge.budget.max_in_flight: deprecated
        loaded: Any = load_settings(None, environ)
    for part in sections:
        loaded = getattr(loaded, part)
    assert name in loaded.model_fields_set
    assert env_text(getattr(loaded, name)) == environ[row.env]


def test_a_setting_without_a_description_is_reported() -> None:
    class Section(BaseModel):
        described: int = Field(default=1, description="Says what it is.")
        bare: int = 2

    class Settings(BaseModel):
        size_bytes: int = Field(default=3, ge=1, description="Bytes.")
        section: Section = Field(default_factory=Section)

    assert settings_doc.undocumented(Settings) == ["section.bare"]
    rows = {row.path: row for row in settings_doc.all_settings(Settings)}
    assert rows["size_bytes"].type == "integer (bytes), >= 1"
    assert rows["section.bare"].env == "GROUNDGUARD_SECTION__BARE"


def test_check_exits_1_naming_the_fix_when_the_file_drifted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    target = tmp_path / "settings.md"
    check = parser.parse_args(["settings-doc", "--check", "--file", str(target)])
    assert check.func(check) == 1
    assert "missing" in capsys.readouterr().err
    write = parser.parse_args(["settings-doc", "--write", "--file", str(target)])
    assert write.func(write) == 0
    assert check.func(check) == 0
    target.write_text(target.read_text().replace("`127.0.0.1:9092`", "`kafka:9092`"))
    assert check.func(check) == 1
    err = capsys.readouterr().err
    assert (
        "-| `bootstrap_servers` | `GROUNDGUARD_BOOTSTRAP_SERVERS` | string, non-empty | `kafka"
        in err
    )
    assert (
        "+| `bootstrap_servers` | `GROUNDGUARD_BOOTSTRAP_SERVERS` | string, non-empty | `127" in err
    )
    assert "groundguard settings-doc --write" in err
