"""``groundguard run`` logs as a process: JSON lines with record context, no key, no bodies."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import orjson
import yaml

from tests.kafka.kafkautil import produce, read_until, unique
from tests.kafka.servicekit import EVIDENCE, create_all, new_topics

REPO = Path(__file__).resolve().parents[2]
API_KEY = "sk-ant-api03-DoNotLogMe-0123456789abcdef"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SECRET_ANSWER = "The Eiffel Tower is in Rome, says the confidential memo"


async def test_run_logs_json_lines_with_context_and_never_the_key_or_bodies(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """Every stderr line of `groundguard run` is one JSON event; per-message events carry the
    topic/partition/offset, request id and trace id; the API key and message bodies never
    appear (debug level, so every event is rendered)."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    config = {
        "bootstrap_servers": kafka_bootstrap,
        "group_id": unique("group"),
        "instance_id": "logs",
        "commit_interval_s": 0.3,
        "topics": {
            "requests": topics.requests,
            "verdicts": topics.verdicts,
            "quarantine": topics.quarantine,
            "dlq": topics.dlq,
        },
        "metrics": {"enabled": True, "host": "127.0.0.1", "port": 0},
        "log": {"format": "json", "level": "debug"},
        "judge": {"provider": "fake"},
    }
    path = tmp_path / "groundguard.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    body = orjson.dumps({"id": "secret-1", "output": SECRET_ANSWER, "context": EVIDENCE})
    traceparent = f"00-{TRACE_ID}-00f067aa0ba902b7-01".encode()
    await produce(
        kafka_bootstrap,
        topics.requests,
        [(b"k", body, [("traceparent", traceparent)]), (b"k", b'{"output": "half', None)],
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
    env["GROUNDGUARD_JUDGE__API_KEY"] = API_KEY
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "consumers",
        "run",
        "--config",
        str(path),
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await read_until(kafka_bootstrap, topics.quarantine, expected=1)
        await read_until(kafka_bootstrap, topics.dlq, expected=1)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout=60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    text = (stdout + stderr).decode()
    assert proc.returncode == 0, text[-2000:]
    assert API_KEY not in text
    assert "DoNotLogMe" not in text
    assert "confidential memo" not in text, [
        line for line in text.splitlines() if "confidential memo" in line
    ]
    assert "half" not in text
    events: list[dict[str, Any]] = [json.loads(line) for line in stderr.decode().splitlines()]
    names = {e["event"] for e in events}
    assert {
        "service.started",
        "message.quarantined",
        "message.dead_lettered",
        "service.stopped",
    } <= names
    quarantined = next(e for e in events if e["event"] == "message.quarantined")
    assert quarantined["request_id"] == "secret-1"
    assert quarantined["trace_id"] == TRACE_ID
    assert (quarantined["topic"], quarantined["partition"], quarantined["offset"]) == (
        topics.requests,
        0,
        0,
    )
    dead = next(e for e in events if e["event"] == "message.dead_lettered")
    assert dead["offset"] == 1
    assert all(e["level"] and e["timestamp"] for e in events)
