"""The image the chart deploys, run as the chart runs it (issue 31): read-only root filesystem,
uid 10001, every capability dropped, a tmpfs on /tmp, the config file mounted read-only at
/etc/groundguard/config.yaml, against the real broker on the host network.

``GROUNDGUARD_IMAGE`` names the image (``.ci/run`` builds it with ``scripts/image`` and sets it);
without it the image ``scripts/image --name`` prints is used when the engine has it. The tests
skip only where no container engine is installed or none has the image (say so: build it with
``scripts/image``)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest
import yaml

from tests.kafka.broker import free_port
from tests.kafka.kafkautil import produce, read_until
from tests.kafka.servicekit import (
    EVIDENCE,
    by_id,
    create_all,
    grounded,
    new_topics,
    ungrounded,
    wait_committed,
)

ROOT = Path(__file__).resolve().parents[2]
CHART_CONFIG = "/etc/groundguard/config.yaml"  # helm/groundguard/templates/deployment.yaml
GRACE_S = 45  # the chart's terminationGracePeriodSeconds


def _engine_env() -> dict[str, str]:
    env = dict(os.environ)
    if "CONTAINERS_CONF" not in env and shutil.which("runc"):
        env["CONTAINERS_CONF"] = str(ROOT / "scripts" / "podman.conf")  # as scripts/image does
    return env


def _engine() -> str | None:
    found = subprocess.run(
        [str(ROOT / "scripts" / "image"), "--engine"], capture_output=True, text=True, check=False
    )
    return found.stdout.strip() if found.returncode == 0 else None


@pytest.fixture(scope="module")
def image() -> tuple[str, str]:
    """(engine, image name)."""
    engine = _engine()
    if engine is None:
        pytest.skip("no container engine (docker or podman) on this machine")
    name = os.environ.get("GROUNDGUARD_IMAGE")
    if name is None:
        name = subprocess.run(
            [str(ROOT / "scripts" / "image"), "--name"], capture_output=True, text=True, check=True
        ).stdout.strip()
        has = subprocess.run(
            [engine, "image", "inspect", name], capture_output=True, env=_engine_env(), check=False
        )
        if has.returncode != 0:
            pytest.skip(f"{engine} has no image {name}: build it with scripts/image")
    return engine, name


class Container:
    """One detached container of ``image``, removed at the end."""

    def __init__(self, engine: str, name: str) -> None:
        self.engine, self.name = engine, name

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.engine, *args],
            capture_output=True,
            text=True,
            env=_engine_env(),
            check=check,
            timeout=120,
        )

    def start(
        self, image: str, config_dir: Path, *args: str, entrypoint: str | None = None
    ) -> None:
        self._run(
            "run",
            "--detach",
            "--name",
            self.name,
            "--network",
            "host",
            "--read-only",
            "--user",
            "10001:10001",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--tmpfs",
            "/tmp:size=64m",
            "--volume",
            f"{config_dir}:/etc/groundguard:ro",
            *(["--entrypoint", entrypoint] if entrypoint else []),
            image,
            *args,
        )

    def stop(self) -> int:
        """SIGTERM (the image's stop signal), as Kubernetes sends it; the exit code."""
        self._run("stop", "--time", str(GRACE_S), self.name)
        state = self._run("inspect", "--format", "{{.State.ExitCode}}", self.name)
        return int(state.stdout.strip())

    def logs(self) -> str:
        out = self._run("logs", self.name, check=False)
        return out.stdout + out.stderr

    def remove(self) -> None:
        self._run("rm", "--force", self.name, check=False)


@pytest.fixture
def container(image: tuple[str, str], tmp_path: Path) -> Iterator[Container]:
    box = Container(image[0], f"gg-test-{tmp_path.name}".replace("_", "-").lower()[:60])
    try:
        yield box
    finally:
        box.remove()


def _config(tmp_path: Path, settings: dict[str, Any]) -> Path:
    """A config directory as the chart's ConfigMap mounts it, readable by uid 10001."""
    directory = tmp_path / "config"
    directory.mkdir()
    (directory / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    directory.chmod(0o755)
    (directory / "config.yaml").chmod(0o644)
    return directory


async def _get_until_ok(url: str, attempts: int = 100) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=2.0) as client:
        reply: httpx2.Response | None = None
        for _ in range(attempts):
            try:
                reply = await client.get(url)
                if reply.status_code == 200:
                    return reply
            except httpx2.TransportError:
                pass
            await asyncio.sleep(0.2)
    raise AssertionError(f"{url} never answered 200 (last: {reply})")


def _started_line(logs: str, event: str) -> dict[str, Any]:
    for line in logs.splitlines():
        if f'"{event}"' in line:
            parsed: dict[str, Any] = json.loads(line[line.index("{") :])
            return parsed
    raise AssertionError(f"no {event} line in the container's log:\n{logs[-3000:]}")


async def test_the_image_runs_the_service_as_the_chart_does_and_stops_cleanly_on_sigterm(
    kafka_bootstrap: str, container: Container, image: tuple[str, str], tmp_path: Path
) -> None:
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    messages = [grounded(i) for i in range(4)] + [ungrounded(i) for i in range(2)]
    await produce(
        kafka_bootstrap, topics.requests, [(b"k%d" % i, m, None) for i, m in enumerate(messages)]
    )
    port = free_port()
    group = f"group-{topics.requests}"
    config = _config(
        tmp_path,
        {
            "bootstrap_servers": kafka_bootstrap,
            "group_id": group,
            "topics": {
                "requests": topics.requests,
                "verdicts": topics.verdicts,
                "quarantine": topics.quarantine,
                "dlq": topics.dlq,
            },
            "commit_interval_s": 0.2,
            "metrics": {"port": port},
            "judge": {"provider": "offline"},
        },
    )
    container.start(image[1], config, "--config", CHART_CONFIG)
    verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=6, timeout_s=120)
    assert by_id(verdicts) == {f"ok-{i}": 1 for i in range(4)} | {f"bad-{i}": 1 for i in range(2)}
    failed = {
        v["request_id"] for v in (orjson.loads(r.value) for r in verdicts) if v["hallucinated"]
    }
    assert failed == {"bad-0", "bad-1"}  # the offline judge: Rome contradicts Paris
    held = await read_until(kafka_bootstrap, topics.quarantine, expected=2)
    assert {orjson.loads(r.value)["verdict"]["request_id"] for r in held} == failed
    health = await _get_until_ok(f"http://127.0.0.1:{port}/healthz")
    ready = await _get_until_ok(f"http://127.0.0.1:{port}/readyz")
    assert (health.status_code, ready.status_code) == (200, 200)
    committed, ends = await wait_committed(kafka_bootstrap, group, topics.requests, 2)
    assert committed == ends
    assert container.stop() == 0  # SIGTERM: drained, committed, exit 0
    logs = container.logs()
    assert _started_line(logs, "service.started")["word_search"] == "native"
    assert "Traceback" not in logs
    assert "Read-only file system" not in logs


async def test_the_same_image_serves_a_check(
    container: Container, image: tuple[str, str], tmp_path: Path
) -> None:
    port = free_port()
    config = _config(
        tmp_path,
        {"serve": {"host": "127.0.0.1", "port": port}, "judge": {"provider": "offline"}},
    )
    # the chart's serve Deployment: command ["groundguard", "serve"]
    container.start(image[1], config, "serve", "--config", CHART_CONFIG, entrypoint="groundguard")
    await _get_until_ok(f"http://127.0.0.1:{port}/readyz")  # serve answers its probes itself
    async with httpx2.AsyncClient(timeout=30.0) as client:
        grounded_reply = await client.post(
            f"http://127.0.0.1:{port}/v1/check",
            json={"id": "c-1", "output": "The Eiffel Tower is in Paris", "context": EVIDENCE},
        )
    assert grounded_reply.status_code == 200, grounded_reply.text
    verdict = grounded_reply.json()
    assert verdict["request_id"] == "c-1"
    assert (verdict["label"], verdict["hallucinated"]) == ("pass", False)
    assert container.stop() == 0
    assert _started_line(container.logs(), "serve.listening")["word_search"] == "native"


async def test_the_image_ships_the_detector_and_otel_extras(
    container: Container, image: tuple[str, str], tmp_path: Path
) -> None:
    """A detector tier with an in-process ONNX model (a tiny one built here, mounted with the
    config as a ConfigMap or volume would be) judges in the image, and the OTLP exporter
    imports: both extras are installed, not only the core."""
    from guard.testing.tiny_detector import build_tiny_detector

    port = free_port()
    detector = {
        "kind": "detector",
        "name": "det",
        "backend": "onnx",
        "model_dir": "/etc/groundguard/model",
        "task": "pair",
        "supported_label": "supported",
        "pass_at": 0.0,
        "fail_at": 1.0,
    }
    config = _config(
        tmp_path,
        {
            "serve": {"host": "127.0.0.1", "port": port},
            "judge": {"tiers": [detector, {"kind": "offline"}]},
        },
    )
    model = build_tiny_detector(config / "model")
    model.chmod(0o755)
    for path in model.iterdir():
        path.chmod(0o644)
    container.start(image[1], config, "serve", "--config", CHART_CONFIG, entrypoint="groundguard")
    await _get_until_ok(f"http://127.0.0.1:{port}/readyz")
    async with httpx2.AsyncClient(timeout=30.0) as client:
        reply = await client.post(
            f"http://127.0.0.1:{port}/v1/check",
            json={"id": "d-1", "output": "The Eiffel Tower is in Paris", "context": EVIDENCE},
        )
    assert reply.status_code == 200, reply.text
    judge = reply.json()["judge"]
    assert (judge["tier"], judge["tier_name"]) == ("detector", "det")
    assert judge["tiers"][0]["error"] is None
    assert container.stop() == 0
    imported = _python_in(
        image,
        "import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http.trace_exporter, "
        "opentelemetry.exporter.otlp.proto.grpc.trace_exporter, onnxruntime, tokenizers",
    )
    assert imported.returncode == 0, imported.stderr


def _python_in(image: tuple[str, str], code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by the image's Python, as the chart runs the image (read-only, uid 10001)."""
    return subprocess.run(
        [image[0], "run", "--rm", "--read-only", "--user", "10001:10001", "--entrypoint",
         "python", image[1], "-c", code],
        capture_output=True, text=True, env=_engine_env(), check=False, timeout=120,
    )  # fmt: skip
