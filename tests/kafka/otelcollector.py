"""The test collector of ``scripts/otelcol`` (OTLP in, the file exporter's JSON lines out), and
reading what it received: spans and log records with their attributes as plain values."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tests.kafka.broker import ROOT, free_port

SCRIPT = ROOT / "scripts" / "otelcol"


@dataclass
class Collector:
    http_port: int
    grpc_port: int
    out: Path

    def endpoint(self, protocol: str) -> str:
        port = self.grpc_port if protocol == "grpc" else self.http_port
        return f"http://127.0.0.1:{port}"


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int  # OTLP: 1 internal, 2 server, 3 client, 4 producer, 5 consumer
    attributes: dict[str, Any]
    resource: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class LogRecord:
    event_name: str
    trace_id: str
    span_id: str
    attributes: dict[str, Any]


def can_build() -> bool:
    """Whether the collector is built or can be (Go is installed)."""
    built = subprocess.run([str(SCRIPT), "path"], capture_output=True, text=True, check=True)
    return Path(built.stdout.strip()).exists() or shutil.which("go") is not None


@contextlib.contextmanager
def running_collector(home: Path) -> Iterator[Collector]:
    """A collector of its own under ``home``, built first when needed (a few minutes once)."""
    grpc_port = free_port()
    http_port = grpc_port + 1
    env = os.environ | {"GROUNDGUARD_OTELCOL_HOME": str(home)}
    args = [str(SCRIPT), "start", "--port", str(http_port)]
    started = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    if started.returncode != 0:
        raise RuntimeError(f"scripts/otelcol start failed: {started.stderr[-3000:]}")
    try:
        yield Collector(http_port, grpc_port, Path(started.stdout.strip()))
    finally:
        subprocess.run([str(SCRIPT), "stop", "--port", str(http_port)], env=env, check=False)


def _value(value: dict[str, Any]) -> Any:
    for kind in ("stringValue", "boolValue", "doubleValue"):
        if kind in value:
            return value[kind]
    if "intValue" in value:
        return int(value["intValue"])
    return value


def _attributes(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {item["key"]: _value(item.get("value", {})) for item in items or []}


def read(out: Path) -> tuple[list[Span], list[LogRecord]]:
    spans: list[Span] = []
    logs: list[LogRecord] = []
    for line in out.read_bytes().splitlines():
        try:
            batch = orjson.loads(line)
        except orjson.JSONDecodeError:  # empty, or the line the exporter is writing now
            continue
        for resource_spans in batch.get("resourceSpans", []):
            resource = _attributes(resource_spans.get("resource", {}).get("attributes"))
            for scope in resource_spans.get("scopeSpans", []):
                for s in scope.get("spans", []):
                    spans.append(
                        Span(
                            s["traceId"],
                            s["spanId"],
                            s.get("parentSpanId", ""),
                            s["name"],
                            s.get("kind", 0),
                            _attributes(s.get("attributes")),
                            resource,
                            [
                                {"name": e["name"], **_attributes(e.get("attributes"))}
                                for e in s.get("events", [])
                            ],
                        )
                    )
        for resource_logs in batch.get("resourceLogs", []):
            for scope in resource_logs.get("scopeLogs", []):
                for r in scope.get("logRecords", []):
                    logs.append(
                        LogRecord(
                            r.get("eventName", ""),
                            r.get("traceId", ""),
                            r.get("spanId", ""),
                            _attributes(r.get("attributes")),
                        )
                    )
    return spans, logs


def wait_for(
    out: Path,
    trace_id: str,
    *,
    spans: set[str],
    events: frozenset[str] = frozenset(),
    timeout_s: float = 20.0,
) -> None:
    """Until the file holds the spans named ``spans`` and the log records named ``events`` of
    the trace ``trace_id`` (the test then reads and checks them)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got_spans, got_logs = read(out)
        names = {s.name for s in got_spans if s.trace_id == trace_id}
        got_events = {r.event_name for r in got_logs if r.trace_id == trace_id}
        if spans <= names and events <= got_events:
            return
        time.sleep(0.2)
