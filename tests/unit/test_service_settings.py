"""Service settings: file plus GROUNDGUARD_ environment, and bad settings that name the field
and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from consumers.config import load_settings
from consumers.errors import SettingsError
from consumers.settings import Guarantee, SecurityProtocol


def test_defaults_need_no_configuration() -> None:
    settings = load_settings(None, {})
    assert settings.topics.requests == "rag.responses"
    assert settings.topics.verdicts == "guard.verdicts"
    assert settings.topics.approved is None
    assert settings.concurrency == 256
    assert settings.guarantee is Guarantee.AT_LEAST_ONCE
    assert settings.failure_policy.value == "fail_closed"


def test_environment_overrides_the_file_field_by_field(tmp_path: Path) -> None:
    config = tmp_path / "gg.yaml"
    config.write_text(
        "bootstrap_servers: kafka:9092\n"
        "topics: {requests: in, verdicts: out}\n"
        "judge: {provider: offline, threshold: 0.7}\n",
        encoding="utf-8",
    )
    settings = load_settings(
        config,
        {
            "GROUNDGUARD_TOPICS__VERDICTS": "verdicts-env",
            "GROUNDGUARD_JUDGE__THRESHOLD": "0.9",
            "GROUNDGUARD_CONCURRENCY": "32",
            "HOME": "/root",
        },
    )
    assert settings.bootstrap_servers == "kafka:9092"
    assert settings.topics.requests == "in"
    assert settings.topics.verdicts == "verdicts-env"
    assert settings.judge.threshold == 0.9
    assert settings.judge.provider.value == "offline"
    assert settings.concurrency == 32


def test_a_json_file_is_read_too(tmp_path: Path) -> None:
    config = tmp_path / "gg.json"
    config.write_text('{"group_id": "g-json", "ordering": "key"}', encoding="utf-8")
    settings = load_settings(config, {})
    assert settings.group_id == "g-json"
    assert settings.ordering.value == "key"


@pytest.mark.parametrize(
    ("environ", "field", "fix_words"),
    [
        ({"GROUNDGUARD_CONCURRENCY": "many"}, "concurrency", "whole number"),
        ({"GROUNDGUARD_CONCURRENCY": "0"}, "concurrency", "GROUNDGUARD_CONCURRENCY"),
        ({"GROUNDGUARD_GUARANTEE": "twice"}, "guarantee", "allowed values"),
        (
            {"GROUNDGUARD_GUARANTEE": "exactly_once"},
            "transactional_id_prefix",
            "GROUNDGUARD_TRANSACTIONAL_ID_PREFIX",
        ),
        ({"GROUNDGUARD_SECURITY__PROTOCOL": "SASL_SSL"}, "security.sasl_username", "sasl_password"),
        (
            {
                "GROUNDGUARD_SECURITY__SSL_CAFILE": "/nonexistent/ca.pem",
                "GROUNDGUARD_SECURITY__PROTOCOL": "SSL",
            },
            "security.ssl_cafile",
            "PEM",
        ),
        (
            {
                "GROUNDGUARD_SECURITY__SASL_USERNAME": "svc",
                "GROUNDGUARD_SECURITY__SASL_PASSWORD": "pw",
            },
            "security.protocol",
            "GROUNDGUARD_SECURITY__PROTOCOL=SASL_SSL",
        ),
        (
            {
                "GROUNDGUARD_SECURITY__PROTOCOL": "SSL",
                "GROUNDGUARD_SECURITY__SASL_MECHANISM": "PLAIN",
            },
            "security.protocol",
            "remove the security.sasl_ settings",
        ),
        ({"GROUNDGUARD_SECURITY__SSL_CAFILE": __file__}, "security.protocol", "SSL or SASL_SSL"),
        ({"GROUNDGUARD_SECURITY__SSL_CHECK_HOSTNAME": "false"}, "security.protocol", "not use TLS"),
        ({"GROUNDGUARD_JUDGE__THRESHOLD": "2"}, "judge.threshold", "lower the value"),
        ({"GROUNDGUARD_JUDGE__PROVIDR": "openai"}, "judge.providr", "spelling"),
        ({"GROUNDGUARD_TOPICS__VERDICTS": "rag.responses"}, "topics.requests", "distinct"),
        ({"GROUNDGUARD_TOPICS__DELTAS": "rag.responses"}, "topics.requests", "distinct"),
        (
            {
                "GROUNDGUARD_TOPICS__DELTAS": "rag.deltas",
                "GROUNDGUARD_TOPICS__RELEASES": "guard.dlq",
            },
            "topics.releases",
            "a topic of its own",
        ),
        (
            {"GROUNDGUARD_TOPICS__DELTAS": "rag.deltas", "GROUNDGUARD_STREAM__TIMEOUT_S": "600"},
            "stream.timeout_s",
            "metrics.stall_after_s",
        ),
        (
            {"GROUNDGUARD_TOPICS__DELTAS": "rag.deltas", "GROUNDGUARD_JUDGE__DELIVERY": "batch"},
            "topics.deltas",
            "realtime or flex",
        ),
    ],
)
def test_a_bad_setting_names_the_field_and_the_fix(
    environ: dict[str, str], field: str, fix_words: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(None, environ)
    assert caught.value.field == field
    assert fix_words in str(caught.value)


def test_unknown_keys_in_the_file_are_rejected(tmp_path: Path) -> None:
    config = tmp_path / "gg.yaml"
    config.write_text("concurrancy: 10\n", encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        load_settings(config, {})
    assert caught.value.field == "concurrancy"


def test_a_missing_or_broken_file_is_a_settings_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings(tmp_path / "nope.yaml", {})
    broken = tmp_path / "broken.yaml"
    broken.write_text("topics: [unclosed\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="not valid YAML"):
        load_settings(broken, {})


def test_exactly_once_gets_a_stable_transactional_id_per_instance() -> None:
    settings = load_settings(
        None,
        {
            "GROUNDGUARD_GUARANTEE": "exactly_once",
            "GROUNDGUARD_TRANSACTIONAL_ID_PREFIX": "gg",
            "GROUNDGUARD_INSTANCE_ID": "pod-3",
        },
    )
    assert settings.transactional_id == "gg-pod-3"
    assert load_settings(None, {"GROUNDGUARD_INSTANCE_ID": "pod-3"}).transactional_id is None


def test_sasl_credentials_become_client_arguments_and_stay_secret() -> None:
    settings = load_settings(
        None,
        {
            "GROUNDGUARD_SECURITY__PROTOCOL": "SASL_PLAINTEXT",
            "GROUNDGUARD_SECURITY__SASL_MECHANISM": "SCRAM-SHA-512",
            "GROUNDGUARD_SECURITY__SASL_USERNAME": "svc",
            "GROUNDGUARD_SECURITY__SASL_PASSWORD": "hunter2",
        },
    )
    assert settings.security.protocol is SecurityProtocol.SASL_PLAINTEXT
    kwargs = settings.security.client_kwargs()
    assert kwargs["sasl_mechanism"] == "SCRAM-SHA-512"
    assert kwargs["sasl_plain_username"] == "svc"
    assert kwargs["sasl_plain_password"] == "hunter2"
    assert kwargs["ssl_context"] is None
    assert "hunter2" not in repr(settings)


def test_a_misspelt_environment_variable_is_refused_not_ignored() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(None, {"GROUNDGUARD_CONCURENCY": "64"})
    assert caught.value.field == "GROUNDGUARD_CONCURENCY"
    assert "spelling" in str(caught.value)


def test_variables_of_the_project_scripts_are_not_settings_and_are_allowed() -> None:
    settings = load_settings(
        None, {"GROUNDGUARD_KAFKA_HOME": "/tmp/k", "GROUNDGUARD_CACHE": "/tmp/c"}
    )
    assert settings.concurrency == 256
