"""A Kafka broker for the tests: the one configured, a testcontainers container, or the script.

Order: ``KAFKA_BOOTSTRAP_SERVERS`` if set; a testcontainers Kafka when a Docker engine answers;
else ``scripts/kafka`` (Maven Central's jars, single-node KRaft on 127.0.0.1).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from consumers.cli.broker import LocalBroker as ScriptBroker
from consumers.cli.broker import free_port_pair as free_port

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "FixedBroker", "ScriptBroker", "free_port", "provide_broker"]


def docker_engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@dataclass
class FixedBroker:
    """A broker someone else runs (``KAFKA_BOOTSTRAP_SERVERS`` or a container)."""

    bootstrap: str
    handle: Any = None
    restartable = False

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.stop()


def provide_broker(tmp_home: Path) -> ScriptBroker | FixedBroker:
    configured = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if configured:
        return FixedBroker(configured)
    if docker_engine_answers():
        from testcontainers.kafka import KafkaContainer

        container = KafkaContainer().with_kraft()
        container.start()
        return FixedBroker(container.get_bootstrap_server(), handle=container)
    broker = ScriptBroker(tmp_home)
    broker.start(fresh=True)
    return broker
