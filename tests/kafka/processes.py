"""Services as real processes against the test broker, for the fault and fleet tests:
``python -m consumers run`` in its own process group, a run's topics and inputs, and a reader of
the verdicts topic."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from tests.kafka.broker import ROOT
from tests.kafka.kafkautil import create_topics, produce, unique

PARTITIONS = 4
CONCURRENCY = 16
COMMIT_INTERVAL_S = 0.2
WAIT_S = 60.0  # bound on every wait for verdicts


@dataclass
class Service:
    """``python -m consumers run --config FILE`` in its own process group."""

    config: dict[str, Any]
    workdir: Path
    name: str
    proc: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def start(self) -> None:
        config = self.workdir / f"{self.name}.json"
        config.write_text(json.dumps(self.config))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDGUARD_")}
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "consumers", "run", "--config", str(config)],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def wait(self, timeout_s: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout_s)

    def kill(self) -> None:
        """SIGKILL the whole process group and reap it (idempotent)."""
        if self.proc is None:
            return
        self.signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)

    def events(self, event: str) -> list[dict[str, Any]]:
        """The JSON log lines (``log.format: json``) of ``event``, oldest first."""
        if not self.log.exists():
            return []
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("{") and f'"{event}"' in line:
                with contextlib.suppress(ValueError):
                    entry = json.loads(line)
                    if entry.get("event") == event:
                        found.append(entry)
        return found

    def tail(self, lines: int = 30) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class Run:
    """One test's topics, inputs and services; kills every service it started at the end."""

    bootstrap: str
    judge_url: str
    workdir: Path
    prefix: str = field(default_factory=lambda: unique("fault"))
    partitions: int = PARTITIONS
    services: list[Service] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    @property
    def requests(self) -> str:
        return f"{self.prefix}.requests"

    @property
    def verdicts(self) -> str:
        return f"{self.prefix}.verdicts"

    @property
    def group(self) -> str:
        return f"{self.prefix}-group"

    async def create_topics(self) -> None:
        names = ("requests", "verdicts", "quarantine", "dlq")
        await create_topics(self.bootstrap, {f"{self.prefix}.{n}": self.partitions for n in names})

    async def produce(self, start: int, stop: int) -> None:
        batch = [(f"{self.prefix}-{i}", i) for i in range(start, stop)]
        self.ids.extend(rid for rid, _ in batch)
        await produce(
            self.bootstrap,
            self.requests,
            [(rid.encode(), request(rid, i), None) for rid, i in batch],
        )

    def service(self, instance: str, **overrides: Any) -> Service:
        config = {
            "bootstrap_servers": self.bootstrap,
            "group_id": self.group,
            "instance_id": instance,
            "concurrency": CONCURRENCY,
            "commit_interval_s": COMMIT_INTERVAL_S,
            "drain_timeout_s": 10,
            "topics": {
                "requests": self.requests,
                "verdicts": self.verdicts,
                "quarantine": f"{self.prefix}.quarantine",
                "dlq": f"{self.prefix}.dlq",
            },
            "kafka": {"session_timeout_ms": 6_000, "heartbeat_interval_ms": 1_000},
            "metrics": {"enabled": False},
            "judge": {
                "provider": "openai",
                "base_url": self.judge_url,
                "api_key": "test",
                "timeout_s": 10,
                "max_retries": 2,
            },
            **overrides,
        }
        service = Service(config, self.workdir, f"{instance}-{len(self.services)}")
        self.services.append(service)
        service.start()
        return service

    def logs(self) -> str:
        return "\n".join(f"--- {s.name}\n{s.tail()}" for s in self.services)

    def kill_all(self) -> None:
        for service in self.services:
            service.kill()


def request(rid: str, i: int) -> bytes:
    """A request whose text is its own (so no verdict cache answers it); every fifth fails."""
    output = (
        f"Paris is the capital of France ({rid})."
        if i % 5
        else f"HALLUCINATED: Lyon is the capital ({rid})."
    )
    return orjson.dumps(
        {
            "id": rid,
            "output": output,
            "context": ["Paris is the capital and largest city of France."],
        }
    )


# --------------------------------------------------------------------------- reading verdicts


class Verdicts:
    """Reads the verdicts topic from the start, incrementally, counting verdicts per request id."""

    def __init__(self, bootstrap: str, topic: str, *, isolation_level: str) -> None:
        self._consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=None,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            isolation_level=isolation_level,
        )
        self.counts: Counter[str] = Counter()

    async def __aenter__(self) -> Verdicts:
        await self._consumer.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._consumer.stop()

    async def poll(self) -> None:
        batch = await self._consumer.getmany(timeout_ms=200)
        for records in batch.values():
            for record in records:
                self.counts[str(orjson.loads(record.value)["request_id"])] += 1

    async def wait_for(
        self, n_ids: int, run: Run, *, timeout_s: float = WAIT_S, watch: tuple[Service, ...] = ()
    ) -> None:
        """Poll until ``n_ids`` distinct ids have a verdict; fail early if a watched service
        died, or when the timeout passes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self.counts) < n_ids:
            dead = [s.name for s in watch if not s.alive()]
            if dead or loop.time() > deadline:
                pytest.fail(
                    f"{len(self.counts)}/{n_ids} ids have verdicts; dead: {dead}\n{run.logs()}"
                )
            await self.poll()

    async def settle(self, seconds: float) -> None:
        """Keep reading a little longer to catch late duplicates."""
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        while loop.time() < until:
            await self.poll()

    @property
    def duplicates(self) -> int:
        return sum(self.counts.values()) - len(self.counts)


async def group_members(bootstrap: str, group: str) -> int:
    """How many members the consumer group has now, each with a partition assigned."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    # raw DescribeGroups responses: groups are (error, group, state, protocol_type, protocol,
    # members) tuples
    return sum(len(group[5]) for response in described for group in response.groups)


async def _members_or_none(bootstrap: str, group: str) -> int | None:
    """The group's member count; None while its coordinator is not available yet (a busy
    shared broker answers so for a new group)."""
    try:
        return await group_members(bootstrap, group)
    except KafkaError as exc:
        if not exc.retriable:
            raise
        return None


async def wait_members(bootstrap: str, group: str, n: int, run: Run) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while await _members_or_none(bootstrap, group) != n:
        if loop.time() > deadline:
            pytest.fail(f"group {group} never reached {n} members\n{run.logs()}")
        await asyncio.sleep(0.5)
