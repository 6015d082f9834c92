"""A first start on a fresh broker logs no error lines: aiokafka's transient "no group
coordinator yet" is start-up noise, not an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from consumers.cli.broker import LocalBroker
from tests.kafka.kafkautil import create_topics, produce, read_until
from tests.kafka.servicekit import command, grounded, service_env

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
async def test_a_first_start_on_a_fresh_broker_logs_no_errors(
    own_broker: LocalBroker, tmp_path: Path
) -> None:
    bootstrap = own_broker.bootstrap
    names = ("rag.responses", "guard.verdicts", "guard.quarantine", "guard.dlq")
    await create_topics(bootstrap, dict.fromkeys(names, 1))
    await produce(bootstrap, "rag.responses", [(b"k", grounded(1), None)])
    env = service_env(
        GROUNDGUARD_BOOTSTRAP_SERVERS=bootstrap,
        GROUNDGUARD_METRICS__ENABLED="false",
        GROUNDGUARD_JUDGE__PROVIDER="offline",
        GROUNDGUARD_LOG__FORMAT="json",
    )
    log_path = tmp_path / "service.log"
    async with command("run", env=env, log_path=log_path) as proc:
        await read_until(bootstrap, "guard.verdicts", expected=1)
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert proc.returncode == 0
    assert [line for line in lines if line["level"] in ("error", "critical")] == []
    assert any(line["event"] == "service.started" for line in lines)
