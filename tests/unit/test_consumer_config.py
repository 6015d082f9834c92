"""The consumer's group timings (issue 29): the rebalance timeout covers a revoke, so a member
still handing back its partitions is not evicted; timings Kafka cannot honour fail at start."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from consumers.config import load_settings
from consumers.errors import SettingsError
from consumers.runtime.kafka import KafkaBroker
from consumers.settings import (
    INT32_MAX,
    REBALANCE_MARGIN_MS,
    ServiceSettings,
    rebalance_timeout_ms,
)


def settings(**values: Any) -> ServiceSettings:
    return ServiceSettings.model_validate({"bootstrap_servers": "127.0.0.1:1"} | values)


def consumer_timeout_ms(s: ServiceSettings, monkeypatch: pytest.MonkeyPatch) -> int:
    """The rebalance timeout the service builds its aiokafka consumer with."""
    given: dict[str, Any] = {}
    monkeypatch.setattr("consumers.runtime.kafka.AIOKafkaConsumer", lambda **kw: given.update(kw))
    KafkaBroker(s).consumer()
    built: int = given["rebalance_timeout_ms"]
    return built


def test_a_revoke_outlasting_the_session_timeout_fits_the_rebalance_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a 10 s session timeout, a revoke may take revoke_timeout_s (10 s) and then its
    commit: the group waits for all of it (aiokafka's default waited 10 s)."""
    s = settings(kafka={"session_timeout_ms": 10_000, "heartbeat_interval_ms": 3_000})
    built = consumer_timeout_ms(s, monkeypatch)
    assert built >= (s.revoke_timeout_s + s.commit_timeout_s) * 1000
    assert built > s.kafka.session_timeout_ms


def test_the_rebalance_timeout_is_never_below_the_session_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = settings(
        revoke_timeout_s=0,
        commit_timeout_s=1,
        kafka={"session_timeout_ms": 120_000, "heartbeat_interval_ms": 3_000},
    )
    assert consumer_timeout_ms(s, monkeypatch) == 120_000


@given(
    revoke=st.floats(min_value=0, max_value=1_000_000),
    commit=st.floats(min_value=0.001, max_value=1_000_000),
    session=st.integers(min_value=1000, max_value=600_000),
)
def test_a_valid_setting_gives_a_rebalance_timeout_kafka_can_carry(
    revoke: float, commit: float, session: int
) -> None:
    """Any settings that load give a rebalance timeout covering the revoke and within Kafka's
    32-bit field; those that would not fail naming the field."""
    values = {
        "revoke_timeout_s": revoke,
        "commit_timeout_s": commit,
        "kafka": {"session_timeout_ms": session, "heartbeat_interval_ms": 100},
    }
    if (revoke + commit) * 1000 + REBALANCE_MARGIN_MS > INT32_MAX:
        with pytest.raises(ValueError, match=r"\[revoke_timeout_s\]"):
            settings(**values)
        return
    s = settings(**values)
    timeout = rebalance_timeout_ms(s)
    assert (revoke + commit) * 1000 <= timeout <= 2**31 - 1
    assert timeout >= session


@pytest.mark.parametrize(
    ("environ", "field"),
    [
        (
            {
                "GROUNDGUARD_KAFKA__SESSION_TIMEOUT_MS": "6000",
                "GROUNDGUARD_KAFKA__HEARTBEAT_INTERVAL_MS": "6000",
            },
            "kafka.heartbeat_interval_ms",
        ),
        ({"GROUNDGUARD_REVOKE_TIMEOUT_S": "3000000"}, "revoke_timeout_s"),
    ],
)
def test_group_timings_kafka_cannot_honour_fail_at_start(
    environ: dict[str, str], field: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(None, environ)
    assert caught.value.field == field
