"""``judge.delivery: batch`` against a real broker: a SIGKILL while a batch is in flight, and a
rebalance mid-batch, each end with every message submitted to the provider exactly once (the
fake counts submitted items by ``custom_id``) and every verdict published.

The service runs as a real process (``python -m consumers run``); the fake LLM server runs in
this process; its batches are held running until the fault has hit and the successor has read
the journal, then let end.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from guard.testing.fake_server import FakeLLMServer, marker_verdict
from tests.kafka.processes import PARTITIONS, Run, Service, Verdicts, wait_members
from tests.kafka.servicekit import end_offsets

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(180)]

N = 40
BATCH_DELAY_S = 1.0
HELD_S = 600.0  # a batch held running until the test lets it end (the fake reads it live)
WAIT_S = 60.0


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict, batch_delay_s=BATCH_DELAY_S) as server:
        yield server


@pytest.fixture
async def run(kafka_bootstrap: str, provider: FakeLLMServer, tmp_path: Path) -> AsyncIterator[Run]:
    provider.reset_stats()
    provider.batches.delay_s = BATCH_DELAY_S
    the_run = Run(kafka_bootstrap, provider.openai_base_url, tmp_path)
    try:
        await the_run.create_topics()
        yield the_run
    finally:
        the_run.kill_all()


def batch_service(run: Run, instance: str, **extra: Any) -> Service:
    """A replica in batch mode: one batch for its whole backlog, polled often."""
    overrides: dict[str, Any] = {
        "concurrency": 64,
        "revoke_timeout_s": 0.5,
        "topics": {
            "requests": run.requests,
            "verdicts": run.verdicts,
            "quarantine": f"{run.prefix}.quarantine",
            "dlq": f"{run.prefix}.dlq",
            "batch_state": f"{run.prefix}.batches",
        },
        "judge": {
            "provider": "openai",
            "base_url": run.judge_url,
            "api_key": "test",
            "timeout_s": 10,
            "delivery": "batch",
            "batch": {"max_items": 200, "max_wait_s": 1.0, "poll_interval_s": 0.25},
        },
    }
    return run.service(instance, **overrides, **extra)


async def until_submitted(provider: FakeLLMServer, n: int, run: Run, *watch: Service) -> None:
    """Wait (bounded) until the provider holds ``n`` submitted items."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while provider.stats()["batch"]["items_submitted"] < n:
        dead = [s.name for s in watch if not s.alive()]
        if dead or loop.time() > deadline:
            pytest.fail(f"submitted {provider.stats()['batch']}; dead: {dead}\n{run.logs()}")
        await asyncio.sleep(0.1)


async def until_journaled(run: Run, service: Service) -> None:
    """Wait (bounded) until the submitted batch is in the journal topic, one record for each
    input partition (the journal is written right after the provider accepts a batch)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while len(await end_offsets(run.bootstrap, f"{run.prefix}.batches", PARTITIONS)) < PARTITIONS:
        if not service.alive() or loop.time() > deadline:
            pytest.fail(f"the batch was never journaled\n{run.logs()}")
        await asyncio.sleep(0.1)


def assert_judged_once(provider: FakeLLMServer, n: int) -> None:
    stats = provider.stats()
    assert stats["batch"]["items_submitted"] == n, stats["batch"]
    assert stats["batch"]["items_distinct"] == n
    assert stats["batch"]["items_duplicated"] == []
    realtime = {p: n for p, n in stats["by_path"].items() if p.endswith("/chat/completions")}
    assert realtime == {}, realtime


async def until_resumed(run: Run, service: Service) -> None:
    """Wait (bounded) until ``service`` was assigned partitions whose journal holds a batch."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while not any(
        line.get("event") == "batches.resumed" and line.get("batches", 0) > 0
        for line in log_lines(service)
    ):
        if not service.alive() or loop.time() > deadline:
            pytest.fail(f"{service.name} resumed no batch\n{run.logs()}")
        await asyncio.sleep(0.2)


def log_lines(service: Service) -> list[dict[str, Any]]:
    lines = service.log.read_text(errors="replace").splitlines() if service.log.exists() else []
    return [orjson.loads(line) for line in lines if line.startswith("{")]


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
async def test_sigkill_while_a_batch_runs_resumes_it_without_submitting_again(
    run: Run, provider: FakeLLMServer, guarantee: str
) -> None:
    """The replica dies after submitting the batch (its state is in the journal topic, no
    verdict is out, no offset committed); its successor reads the journal, polls the same
    batch, and publishes every verdict: each message judged once, none lost. Exactly-once
    too: the journal is written outside the verdicts' transactions."""
    provider.batches.delay_s = HELD_S
    await run.produce(0, N)
    eos = {"guarantee": guarantee, "transactional_id_prefix": run.prefix}
    first = batch_service(run, "a", **eos)
    isolation = "read_committed" if guarantee == "exactly_once" else "read_uncommitted"
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level=isolation) as seen:
        await until_submitted(provider, N, run, first)
        await until_journaled(run, first)
        first.signal(signal.SIGKILL)
        first.wait(10)
        second = batch_service(run, "a", **eos)
        await until_resumed(run, second)
        await seen.settle(0.5)
        assert len(seen.counts) == 0, "verdicts before the batch ended"
        provider.batches.delay_s = BATCH_DELAY_S  # the batch ends now
        await seen.wait_for(N, run, watch=(second,))
        await seen.settle(0.5)
        assert set(seen.counts) == set(run.ids)
        if guarantee == "exactly_once":
            assert seen.duplicates == 0
        assert_judged_once(provider, N)
        assert provider.stats()["batch"]["batches_created"] == 1
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0, run.logs()


async def test_a_replica_leaving_mid_batch_hands_its_batch_over(
    run: Run, provider: FakeLLMServer
) -> None:
    """Two replicas each submit a batch for their partitions; one leaves (SIGTERM, a short
    drain) while the batches run. The partitions handed over are resumed from the journal by
    the other replica (polled, not resubmitted): every verdict is published and every message
    judged once."""
    provider.batches.delay_s = HELD_S
    first, second = batch_service(run, "a"), batch_service(run, "b", drain_timeout_s=0.5)
    await wait_members(run.bootstrap, run.group, 2, run)
    await run.produce(0, N)
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        await until_submitted(provider, N, run, first, second)
        await until_journaled(run, first)
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0, run.logs()
        await until_resumed(run, first)
        provider.batches.delay_s = BATCH_DELAY_S
        await seen.wait_for(N, run, watch=(first,))
        await seen.settle(1.0)
        assert set(seen.counts) == set(run.ids)
        assert_judged_once(provider, N)
        first.signal(signal.SIGTERM)
        assert first.wait(30) == 0, run.logs()


async def test_a_replica_joining_mid_batch_resumes_the_partitions_it_takes_over(
    run: Run, provider: FakeLLMServer
) -> None:
    """A second replica joins while the first one's batch runs: the partitions it takes over
    are resumed from the journal (its batch polled by both, submitted once), the first one
    keeps the rest; every verdict is published and every message judged once."""
    provider.batches.delay_s = HELD_S
    await run.produce(0, N)
    first = batch_service(run, "a")
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        await until_submitted(provider, N, run, first)
        await until_journaled(run, first)
        second = batch_service(run, "b")
        await until_resumed(run, second)
        provider.batches.delay_s = BATCH_DELAY_S
        await seen.wait_for(N, run, watch=(first, second))
        await seen.settle(1.0)
        assert set(seen.counts) == set(run.ids)
        assert_judged_once(provider, N)
        assert provider.stats()["batch"]["batches_created"] == 1
        for service in (first, second):
            service.signal(signal.SIGTERM)
            assert service.wait(30) == 0, run.logs()


async def test_sigkill_between_submitting_and_journaling_adopts_the_batch(
    run: Run, provider: FakeLLMServer
) -> None:
    """The replica is killed as the provider accepts its batch (the fake SIGKILLs it from inside
    the create call), so only the batch's intent is in the journal, not its id. The successor
    finds the intent, finds the provider's batch by the key in its metadata and polls it: every
    message judged once by the provider, every verdict published."""
    provider.batches.delay_s = HELD_S
    await run.produce(0, N)
    first = batch_service(run, "a")
    provider.batches.on_create = lambda: first.signal(signal.SIGKILL)
    try:
        async with Verdicts(
            run.bootstrap, run.verdicts, isolation_level="read_uncommitted"
        ) as seen:
            first.wait(WAIT_S)
            provider.batches.on_create = None
            assert provider.stats()["batch"]["batches_created"] == 1
            second = batch_service(run, "a")
            await until_resumed(run, second)
            provider.batches.delay_s = BATCH_DELAY_S  # the batch ends now
            await seen.wait_for(N, run, watch=(second,))
            await seen.settle(0.5)
            assert set(seen.counts) == set(run.ids)
            assert_judged_once(provider, N)
            assert any(line.get("event") == "batch.adopted" for line in log_lines(second))
            second.signal(signal.SIGTERM)
            assert second.wait(30) == 0, run.logs()
    finally:
        provider.batches.on_create = None
