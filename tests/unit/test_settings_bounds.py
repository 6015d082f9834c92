"""Settings that would fail late, or silently mean something else, fail at start instead: the
error names the setting and the fix (issue 29, configuration and start-up)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from consumers.config import load_settings
from consumers.errors import SettingsError
from consumers.settings import NOT_SETTINGS

INT32_MAX = 2**31 - 1


Refused = Callable[..., SettingsError]


@pytest.fixture
def refused(tmp_path: Path) -> Refused:
    """Loads settings from ``environ`` and a YAML ``text`` and returns the SettingsError."""

    def load(environ: dict[str, str] | None = None, text: str | None = None) -> SettingsError:
        path = None
        if text is not None:
            path = tmp_path / "groundguard.yaml"
            path.write_text(text, encoding="utf-8")
        with pytest.raises(SettingsError) as caught:
            load_settings(path, environ or {})
        return caught.value

    return load


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("max_message_bytes", 2_000_000_000),
        ("max_message_bytes", 10**20),
        ("max_output_bytes", INT32_MAX),
        ("kafka.max_batch_size", INT32_MAX + 1),
        ("kafka.session_timeout_ms", INT32_MAX + 1),
        ("kafka.max_poll_interval_ms", 10**12),
        ("kafka.request_timeout_ms", 10**12),
        ("kafka.transaction_timeout_ms", 10**12),
        ("kafka.linger_ms", 10**12),
        ("kafka.heartbeat_interval_ms", 10**12),
        ("kafka.max_poll_records", 10**12),
        ("topic_partitions", INT32_MAX + 1),
        ("topic_replication", 2**15),
    ],
)
def test_sizes_beyond_kafkas_32_bit_fields_are_refused_naming_the_limit(
    refused: Refused, setting: str, value: int
) -> None:
    section, _, name = setting.rpartition(".")
    text = f"{section}:\n  {name}: {value}\n" if section else f"{name}: {value}\n"
    error = refused(text=text)
    assert error.field == setting
    assert "less than or equal to" in str(error)
    assert "lower the value" in str(error)


def test_the_largest_message_size_that_fits_the_fetch_field_is_accepted() -> None:
    settings = load_settings(None, {"GROUNDGUARD_MAX_MESSAGE_BYTES": str(INT32_MAX // 2)})
    assert 2 * settings.max_message_bytes <= INT32_MAX


@pytest.mark.parametrize(
    "text",
    [
        "failure_policy: fail_closed\nfailure_policy: fail_open\n",
        "topics:\n  verdicts: a\n  quarantine: b\n  verdicts: c\n",
        "judge:\n  budget:\n    rpm: 10\n    rpm: 20\n",
    ],
)
def test_a_key_given_twice_in_a_yaml_file_is_refused_naming_key_and_line(
    refused: Refused, text: str
) -> None:
    error = refused(text=text)
    key = text.strip().splitlines()[-1].split(":")[0].strip()
    line = len(text.strip().splitlines())
    assert error.field == "config"
    assert f"'{key}'" in str(error)
    assert f"line {line}" in str(error)


def test_a_key_given_twice_in_a_json_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "groundguard.json"
    path.write_text(
        '{"judge": {"threshold": 0.5,\n "threshold": 0.9}, "concurrency": 4}', encoding="utf-8"
    )
    with pytest.raises(SettingsError, match="'threshold' is given twice") as caught:
        load_settings(path, {})
    assert "line 2" in str(caught.value)


def test_the_same_key_in_different_sections_is_no_duplicate(tmp_path: Path) -> None:
    text = "judge:\n  timeout_s: 5\nreply:\n  timeout_s: 5\nmetrics: {port: 1}\nserve: {port: 2}\n"
    path = tmp_path / "ok.yaml"
    path.write_text(text, encoding="utf-8")
    settings = load_settings(path, {})
    assert (settings.metrics.port, settings.serve.port) == (1, 2)
    assert json.loads(settings.model_dump_json())["judge"]["timeout_s"] == 5


@pytest.mark.parametrize(
    "text",
    [
        "concurrency: true\n",
        "partition_buffer: false\n",
        "judge:\n  timeout_s: true\n",
        "kafka:\n  linger_ms: true\n",
        "judge:\n  budget:\n    rpm: true\n",
    ],
)
def test_a_boolean_is_not_taken_for_a_number(refused: Refused, text: str) -> None:
    error = refused(text=text)
    name = text.strip().splitlines()[-1].split(":")[0].strip()
    assert error.field.endswith(name)
    assert "true or false is not a number" in str(error)


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("judge.timeout_s", ".inf"),
        ("judge.timeout_s", ".nan"),
        ("drain_timeout_s", ".inf"),
        ("drain_timeout_s", ".nan"),
        ("judge.threshold", ".nan"),
        ("judge.budget.cost_per_day_usd", ".inf"),
        ("judge.budget.cache_ttl_s", ".inf"),
        ("commit_interval_s", "-.inf"),
        ("startup_timeout_s", "1e300"),
        ("revoke_timeout_s", "1e12"),
        ("metrics.stall_after_s", "1e12"),
        ("judge.batch.max_wait_s", "1e12"),
        ("concurrency", ".inf"),
    ],
)
def test_every_number_is_finite_and_every_duration_bounded(
    refused: Refused, setting: str, value: str
) -> None:
    *sections, name = setting.split(".")
    text = "".join(f"{'  ' * depth}{part}:\n" for depth, part in enumerate(sections))
    text += f"{'  ' * len(sections)}{name}: {value}\n"
    error = refused(text=text)
    assert error.field == setting


@pytest.mark.parametrize(
    ("environ", "field", "fix_words"),
    [
        (
            {"GROUNDGUARD_TOPICS__VERDICTS": "x", "GROUNDGUARD_TOPICS__QUARANTINE": "x"},
            "topics.quarantine",
            "a topic of its own",
        ),
        ({"GROUNDGUARD_TOPICS__DLQ": "guard.verdicts"}, "topics.dlq", "a topic of its own"),
        (
            {"GROUNDGUARD_TOPICS__APPROVED": "guard.quarantine"},
            "topics.approved",
            "a topic of its own",
        ),
        ({"GROUNDGUARD_TOPICS__QUARANTINE": "rag.responses"}, "topics.requests", "distinct"),
        ({"GROUNDGUARD_TOPICS__VERDICTS": "guard verdicts"}, "topics.verdicts", "[a-zA-Z0-9._-]"),
        ({"GROUNDGUARD_TOPICS__REQUESTS": "r" * 300}, "topics.requests", "249"),
        ({"GROUNDGUARD_TOPICS__DLQ": ".."}, "topics.dlq", "'.' and '..'"),
        ({"GROUNDGUARD_TOPICS__APPROVED": "ok/no"}, "topics.approved", "[a-zA-Z0-9._-]"),
        ({"GROUNDGUARD_TOPICS__BATCH_STATE": "jöurnal"}, "topics.batch_state", "[a-zA-Z0-9._-]"),
        ({"GROUNDGUARD_MAX_OUTPUT_BYTES": "1024"}, "max_output_bytes", "raise the value"),
        ({"GROUNDGUARD_BOOTSTRAP_SERVERS": "kafka:99999"}, "bootstrap_servers", "65535"),
        ({"GROUNDGUARD_BOOTSTRAP_SERVERS": "kafka:x"}, "bootstrap_servers", "host:port"),
        ({"GROUNDGUARD_BOOTSTRAP_SERVERS": "a:9092,,b:9092"}, "bootstrap_servers", "host:port"),
        ({"GROUNDGUARD_BOOTSTRAP_SERVERS": "[::1]:0"}, "bootstrap_servers", "65535"),
    ],
)
def test_topics_sizes_and_addresses_that_cannot_work_fail_at_start(
    refused: Refused, environ: dict[str, str], field: str, fix_words: str
) -> None:
    error = refused(environ)
    assert error.field == field
    assert fix_words in str(error)


@pytest.mark.parametrize(
    "servers", ["kafka:9092", "a:9092,b:9093", "[::1]:9092", "kafka", " a:1 , b:65535 "]
)
def test_usual_bootstrap_server_lists_are_accepted(servers: str) -> None:
    settings = load_settings(None, {"GROUNDGUARD_BOOTSTRAP_SERVERS": servers})
    assert settings.bootstrap_servers == servers


@pytest.mark.parametrize("name", sorted(NOT_SETTINGS | {"GROUNDGUARD_REQUIRE_NATIVE"}))
def test_the_projects_own_switches_are_not_taken_for_misspelt_settings(name: str) -> None:
    assert name in NOT_SETTINGS
    settings = load_settings(None, {name: "1"})
    assert settings.concurrency == 256
