"""A real ``redis-server`` on a free loopback port, without persistence, for the tests of
``judge.budget.fleet: redis`` (the binary comes from ``scripts/redis``, which installs Debian's
package when it is missing)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 10.0


def redis_binary() -> str:
    """The path of redis-server (``scripts/redis`` installs it if needed)."""
    found = subprocess.run(
        [str(ROOT / "scripts" / "redis")], capture_output=True, text=True, check=False
    )
    if found.returncode != 0:
        raise RuntimeError(f"no redis-server for the tests: {found.stderr.strip()}")
    return found.stdout.strip()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """``redis-server`` on 127.0.0.1:``port``; :meth:`stop` and :meth:`start` again make an
    outage and its end."""

    def __init__(self, binary: str, port: int | None = None) -> None:
        self.binary, self.port = binary, port or free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._proc = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--protected-mode", "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._answers():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False
