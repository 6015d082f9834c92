"""A Kafka broker for the tests: the one configured, a testcontainers container, or the script.

Order: ``KAFKA_BOOTSTRAP_SERVERS`` if set; a testcontainers Kafka when a Docker engine answers;
else ``scripts/kafka`` (Maven Central's jars, single-node KRaft on 127.0.0.1).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "kafka"


def free_port() -> int:
    """A port with a free neighbour (the controller listens on port + 1)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        with socket.socket() as s2:
            try:
                s2.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no free pair of loopback ports")


def docker_engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@dataclass
class ScriptBroker:
    """A broker started by ``scripts/kafka``; it can be stopped and started again (same data)."""

    home: Path
    port: int = field(default_factory=free_port)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    restartable = True

    def _run(self, *args: str) -> None:
        env = {**os.environ, "GROUNDGUARD_KAFKA_HOME": str(self.home)}
        subprocess.run([str(SCRIPT), *args, "--port", str(self.port)], env=env, check=True,
                       timeout=180, stdout=subprocess.DEVNULL)

    def start(self, *, fresh: bool = False) -> None:
        self._run("start", *(["--fresh"] if fresh else []))

    def stop(self) -> None:
        self._run("stop")


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
