"""A local Kafka broker for the demo and the tests: ``scripts/kafka`` of a source checkout.

The script fetches Apache Kafka's jars from Maven Central once (cached), starts a single-node
KRaft broker on 127.0.0.1 and waits until it answers.
"""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from consumers.errors import BrokerUnavailable

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kafka"
START_TIMEOUT_S = 300.0  # the first start downloads the jars


def free_port_pair() -> int:
    """A loopback port whose neighbour is free too (the controller listens on port + 1)."""
    for _ in range(50):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = int(first.getsockname()[1])
        with socket.socket() as second:
            try:
                second.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise BrokerUnavailable("no free pair of loopback ports for a local broker")


@dataclass
class LocalBroker:
    """A broker run by ``scripts/kafka`` under ``home``; stop and start keep its data."""

    home: Path
    port: int = field(default_factory=free_port_pair)
    restartable = True

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _run(self, *args: str) -> None:
        if not SCRIPT.is_file():
            raise BrokerUnavailable(
                f"no local broker script at {SCRIPT}: run from a source checkout, or give "
                "--bootstrap HOST:PORT of a running Kafka"
            )
        env = {**os.environ, "GROUNDGUARD_KAFKA_HOME": str(self.home)}
        try:
            subprocess.run(
                [str(SCRIPT), *args, "--port", str(self.port)],
                env=env,
                check=True,
                timeout=START_TIMEOUT_S,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
        except subprocess.CalledProcessError as exc:
            raise BrokerUnavailable(
                f"scripts/kafka {args[0]} failed: {exc.stderr.strip()}"
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise BrokerUnavailable(f"scripts/kafka {args[0]} timed out") from exc

    def start(self, *, fresh: bool = False) -> None:
        self._run("start", *(["--fresh"] if fresh else []))

    def stop(self) -> None:
        self._run("stop")
