"""``groundguard run`` as a process: it screens the topic and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import yaml

from tests.kafka.kafkautil import produce, read_until, unique
from tests.kafka.servicekit import (
    by_id,
    command,
    create_all,
    grounded,
    new_topics,
    service_env,
    wait_committed,
)

REPO = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, bootstrap: str, group: str, topics: object) -> Path:
    config = {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "instance_id": "proc",
        "topics": {
            "requests": topics.requests,
            "verdicts": topics.verdicts,  # type: ignore[attr-defined]
            "quarantine": topics.quarantine,
            "dlq": topics.dlq,
        },  # type: ignore[attr-defined]
        "commit_interval_s": 0.5,
        "metrics": {"enabled": True, "port": 0},
        "judge": {"provider": "offline"},
    }
    path = tmp_path / "groundguard.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


async def test_sigterm_drains_commits_and_exits_zero(kafka_bootstrap: str, tmp_path: Path) -> None:
    """The process judges every message, and on SIGTERM stops fetching, commits and exits 0
    with the committed offsets at the end offsets."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    group = unique("group")
    config = _config(tmp_path, kafka_bootstrap, group, topics)
    await produce(
        kafka_bootstrap, topics.requests, [(f"k{i}".encode(), grounded(i), None) for i in range(50)]
    )
    log_path = tmp_path / "service.log"
    async with command(
        "run", "--config", str(config), env=service_env(), log_path=log_path
    ) as proc:
        verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=50)
        committed, ends = await wait_committed(kafka_bootstrap, group, topics.requests, 2)
    stderr = log_path.read_bytes()
    assert proc.returncode == 0, stderr.decode()[-3000:]
    assert len(by_id(verdicts)) == 50, stderr.decode()[-3000:]
    assert committed == ends
    assert b"service.stopped" in stderr


async def test_a_bad_setting_exits_2_naming_the_field_and_the_fix(tmp_path: Path) -> None:
    """A bad setting stops the command before it connects, with the field and the fix."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
    env["GROUNDGUARD_GUARANTEE"] = "exactly_once"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "consumers",
        "run",
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 2
    assert b"transactional_id_prefix" in stderr
    assert b"GROUNDGUARD_TRANSACTIONAL_ID_PREFIX" in stderr


async def test_an_unreachable_broker_exits_1_with_a_clear_line() -> None:
    """No broker at the configured address: the command gives up after startup_timeout_s and
    exits 1, naming the address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
    env |= {
        "GROUNDGUARD_BOOTSTRAP_SERVERS": "127.0.0.1:1",
        "GROUNDGUARD_STARTUP_TIMEOUT_S": "1",
        "GROUNDGUARD_METRICS__ENABLED": "false",
        "GROUNDGUARD_JUDGE__PROVIDER": "offline",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "consumers",
        "run",
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 1
    assert b"127.0.0.1:1 did not answer" in stderr


async def test_a_metrics_port_in_use_exits_1_and_says_so() -> None:
    """The health server cannot bind: a clear line and exit 1, not a traceback."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
        env |= {
            "GROUNDGUARD_BOOTSTRAP_SERVERS": "127.0.0.1:1",
            "GROUNDGUARD_METRICS__HOST": "127.0.0.1",
            "GROUNDGUARD_METRICS__PORT": str(port),
            "GROUNDGUARD_JUDGE__PROVIDER": "offline",
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "consumers",
            "run",
            cwd=REPO,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 1
    assert b"Traceback" not in stderr
    assert b"address already in use" in stderr.lower()
