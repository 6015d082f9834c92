"""A first start on a fresh broker logs no error lines: aiokafka's transient "no group
coordinator yet" is start-up noise, not an error."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from consumers.broker import LocalBroker
from tests.kafka.kafkautil import create_topics, produce, read_until
from tests.kafka.servicekit import grounded

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
async def test_a_first_start_on_a_fresh_broker_logs_no_errors(
        own_broker: LocalBroker, tmp_path: Path) -> None:
    bootstrap = own_broker.bootstrap
    await create_topics(bootstrap, {name: 1 for name in (
        "rag.responses", "guard.verdicts", "guard.quarantine", "guard.dlq")})
    await produce(bootstrap, "rag.responses", [(b"k", grounded(1), None)])
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
    env |= {"GROUNDGUARD_BOOTSTRAP_SERVERS": bootstrap, "GROUNDGUARD_METRICS__ENABLED": "false",
            "GROUNDGUARD_JUDGE__PROVIDER": "offline", "GROUNDGUARD_LOG__FORMAT": "json"}
    log_path = tmp_path / "service.log"
    with log_path.open("wb") as log_file:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "consumers", "run", cwd=REPO, env=env, stdout=log_file,
            stderr=log_file)
        try:
            await read_until(bootstrap, "guard.verdicts", expected=1)
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), timeout=60)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert proc.returncode == 0
    assert [line for line in lines if line["level"] in ("error", "critical")] == []
    assert any(line["event"] == "service.started" for line in lines)
