"""Fault tests: the service, as a real process against a real broker, loses no input when it is
killed, when the broker restarts, when a second instance joins and leaves the group, or
(exactly-once) when a member is frozen past its session timeout.

The judge is the loopback fake LLM server reached through the real OpenAI SDK, slowed down so
that work is in flight when the fault hits. Every test produces its own topics and group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient

from guard.testing.fake_server import FakeLLMServer
from tests.kafka.broker import ROOT, ScriptBroker
from tests.kafka.kafkautil import create_topics, produce, unique

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(180)]

PARTITIONS = 4
CONCURRENCY = 16
COMMIT_INTERVAL_S = 0.2
JUDGE_LATENCY_S = 0.15
WAIT_S = 60.0  # bound on every wait for verdicts
N = 300

# At-least-once repeats after a crash: what was in flight, plus what finished within the last
# commit interval (its outputs are published, its offsets not yet committed).
REPEAT_BOUND = CONCURRENCY + math.ceil(CONCURRENCY / JUDGE_LATENCY_S * COMMIT_INTERVAL_S)


# --------------------------------------------------------------------------- the service process


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
        await create_topics(self.bootstrap, {f"{self.prefix}.{n}": PARTITIONS for n in names})

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


async def wait_members(bootstrap: str, group: str, n: int, run: Run) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while await group_members(bootstrap, group) != n:
        if loop.time() > deadline:
            pytest.fail(f"group {group} never reached {n} members\n{run.logs()}")
        await asyncio.sleep(0.5)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def slow_judge() -> Iterator[FakeLLMServer]:
    """The loopback fake LLM, 150 ms per call: a run of 300 takes seconds, not milliseconds."""
    with FakeLLMServer(latency_s=JUDGE_LATENCY_S) as server:
        yield server


@pytest.fixture
async def run(
    kafka_bootstrap: str, slow_judge: FakeLLMServer, tmp_path: Path
) -> AsyncIterator[Run]:
    slow_judge.latency_s = JUDGE_LATENCY_S
    the_run = Run(kafka_bootstrap, slow_judge.openai_base_url, tmp_path)
    try:
        await the_run.create_topics()
        yield the_run
    finally:
        the_run.kill_all()


# --------------------------------------------------------------------------- the tests


async def test_sigkill_mid_run_then_restart_gives_every_input_a_verdict(run: Run) -> None:
    """At-least-once: after SIGKILL and a restart every input has a verdict, and the repeats are
    at most what was in flight or finished but not yet committed when the process died."""
    await run.produce(0, N)
    first = run.service("a")
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        await seen.wait_for(N // 4, run, watch=(first,))
        first.signal(signal.SIGKILL)
        first.wait(10)
        assert len(seen.counts) < N, "the run finished before the kill: nothing was tested"
        second = run.service("a")
        await seen.wait_for(N, run, watch=(second,))
        await seen.settle(1.0)
        assert set(seen.counts) == set(run.ids)
        print(f"repeats after SIGKILL: {seen.duplicates} (bound {REPEAT_BOUND})")
        assert seen.duplicates <= REPEAT_BOUND, seen.duplicates
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0, run.logs()


async def test_sigkill_mid_run_in_exactly_once_mode_leaves_no_duplicates(run: Run) -> None:
    """Exactly-once: a read_committed reader sees one verdict per input id, no more, even though
    the service was killed mid-run (outputs published only inside transactions, one possibly
    open) and restarted with the same instance id, which fences and aborts the old one."""
    await run.produce(0, N)
    eos = {"guarantee": "exactly_once", "transactional_id_prefix": run.prefix}
    first = run.service("eos", **eos)
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_committed") as seen:
        await seen.wait_for(N // 4, run, watch=(first,))
        first.signal(signal.SIGKILL)
        first.wait(10)
        assert len(seen.counts) < N, "the run finished before the kill: nothing was tested"
        second = run.service("eos", **eos)
        await seen.wait_for(N, run, watch=(second,))
        await seen.settle(2.0)
        assert set(seen.counts) == set(run.ids)
        assert seen.duplicates == 0, [k for k, v in seen.counts.items() if v > 1][:10]
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0, run.logs()


async def test_second_instance_joining_then_leaving_loses_nothing(
    run: Run, slow_judge: FakeLLMServer
) -> None:
    """Rebalance: a second instance joins mid-run (partitions move to it while work is in
    flight), then leaves on SIGTERM; every input gets a verdict, repeats stay bounded."""
    slow_judge.latency_s = 0.25
    await run.produce(0, N // 2)
    first = run.service("a")
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        await seen.wait_for(N // 8, run, watch=(first,))
        second = run.service("b")
        await wait_members(run.bootstrap, run.group, 2, run)
        await run.produce(N // 2, N)  # work for both, arriving after the join
        await seen.wait_for(N // 2, run, watch=(first, second))
        assert len(seen.counts) < N, "the run finished before the leave: nothing was tested"
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0, run.logs()
        slow_judge.latency_s = 0.02
        await seen.wait_for(N, run, watch=(first,))
        await seen.settle(1.0)
        assert set(seen.counts) == set(run.ids)
        print(f"repeats after join and leave: {seen.duplicates} (bound {REPEAT_BOUND})")
        assert seen.duplicates <= REPEAT_BOUND, seen.duplicates
        assert first.alive(), run.logs()


async def test_exactly_once_a_member_frozen_past_its_session_timeout_leaves_no_duplicate(
    run: Run, slow_judge: FakeLLMServer
) -> None:
    """Exactly-once, two replicas: one is frozen (SIGSTOP) with work staged or in a transaction
    until the group drops it and gives its partitions to the other, then thawed (SIGCONT). A
    read_committed reader sees every input's verdict exactly once: no loss, no duplicate."""
    slow_judge.latency_s = 0.25
    eos = {"guarantee": "exactly_once", "transactional_id_prefix": run.prefix}
    await run.produce(0, N // 2)
    first = run.service("a", **eos)
    second = run.service("b", **eos)
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_committed") as seen:
        await wait_members(run.bootstrap, run.group, 2, run)
        await seen.wait_for(N // 8, run, watch=(first, second))
        second.signal(signal.SIGSTOP)
        try:
            await run.produce(N // 2, N)
            await wait_members(run.bootstrap, run.group, 1, run)  # after session_timeout_ms
            assert len(seen.counts) < N, "the run finished before the freeze: nothing was tested"
        finally:
            second.signal(signal.SIGCONT)
        slow_judge.latency_s = 0.02
        await seen.wait_for(N, run, watch=(first,))
        await seen.settle(3.0)
        assert set(seen.counts) == set(run.ids)
        assert seen.duplicates == 0, [k for k, v in seen.counts.items() if v > 1][:10]
        for service in (first, second):
            service.signal(signal.SIGTERM)
            assert service.wait(30) == 0, run.logs()


# --------------------------------------------------------------------------- broker restart


async def test_broker_restart_mid_run_loses_nothing_and_the_service_survives(
    own_broker: ScriptBroker, slow_judge: FakeLLMServer, tmp_path: Path
) -> None:
    """The broker stops (clean shutdown) while verdicts are in flight and comes back with its
    data a few seconds later; the service keeps running and every input gets a verdict."""
    slow_judge.latency_s = JUDGE_LATENCY_S
    run = Run(own_broker.bootstrap, slow_judge.openai_base_url, tmp_path)
    try:
        await run.create_topics()
        await run.produce(0, N)
        service = run.service("a")
        async with Verdicts(
            run.bootstrap, run.verdicts, isolation_level="read_uncommitted"
        ) as seen:
            await seen.wait_for(N // 4, run, watch=(service,))
            assert len(seen.counts) < N, "the run finished before the stop: nothing was tested"
        await asyncio.to_thread(own_broker.stop)
        await asyncio.sleep(3)
        assert service.alive(), f"the service exited when the broker stopped\n{run.logs()}"
        await asyncio.to_thread(own_broker.start)
        async with Verdicts(
            run.bootstrap, run.verdicts, isolation_level="read_uncommitted"
        ) as seen:
            await seen.wait_for(N, run, timeout_s=90, watch=(service,))
            assert set(seen.counts) == set(run.ids)
        assert service.alive(), run.logs()
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0, run.logs()
    finally:
        run.kill_all()
