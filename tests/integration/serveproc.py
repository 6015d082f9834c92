"""A ``groundguard serve`` subprocess for tests and benches: started with settings in its
environment, its port read from its ``serve.listening`` log line, its log kept in a file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path

import httpx2

START_TIMEOUT_S = 60.0  # a loaded CI machine imports slowly


class ServeProcess:
    """``groundguard serve`` with ``GROUNDGUARD_...`` settings from ``env``, on a free port."""

    def __init__(self, log_path: Path, env: Mapping[str, str]) -> None:
        self.log_path = log_path
        base = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
        self.env = {
            **base,
            "GROUNDGUARD_SERVE__HOST": "127.0.0.1",
            "GROUNDGUARD_SERVE__PORT": "0",
            "GROUNDGUARD_LOG__FORMAT": "json",
            **env,
        }
        self.port = 0
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "consumers", "serve"],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.env,
        )
        self._wait_listening()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @cached_property
    def client(self) -> httpx2.Client:
        """One keep-alive client for the process's whole life (closed by :meth:`stop`)."""
        return httpx2.Client(base_url=self.url, timeout=30)

    def log_text(self) -> str:
        self._log.flush()
        return self.log_path.read_text("utf-8", "replace")

    def events(self) -> list[dict[str, object]]:
        found = []
        for line in self.log_text().splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
        return found

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited {self.proc.returncode}:\n{self.log_text()}")
            for event in self.events():
                if event.get("event") == "serve.listening":
                    self.port = int(str(event["port"]))
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"serve did not listen within {START_TIMEOUT_S}s:\n{self.log_text()}")

    def terminate(self) -> None:
        """Send SIGTERM (the graceful stop); :meth:`wait` for the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout_s: float = 30.0) -> int:
        return self.proc.wait(timeout=timeout_s)

    def stop(self) -> None:
        if "client" in self.__dict__:
            self.client.close()
        self.terminate()
        try:
            self.wait()
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
