"""Fault tests: the service, as a real process against a real broker, loses no input when it is
killed, when the broker restarts, when a second instance joins and leaves the group, or
(exactly-once) when a member is frozen past its session timeout.

The judge is the loopback fake LLM server reached through the real OpenAI SDK, slowed down so
that work is in flight when the fault hits. Every test produces its own topics and group.
"""

from __future__ import annotations

import asyncio
import math
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from guard.testing.fake_server import FakeLLMServer, marker_verdict
from tests.kafka.broker import ScriptBroker
from tests.kafka.processes import (
    COMMIT_INTERVAL_S,
    CONCURRENCY,
    Run,
    Verdicts,
    wait_members,
)

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(180)]

JUDGE_LATENCY_S = 0.15
N = 300

# At-least-once repeats after a crash: what was in flight, plus what finished within the last
# commit interval (its outputs are published, its offsets not yet committed).
REPEAT_BOUND = CONCURRENCY + math.ceil(CONCURRENCY / JUDGE_LATENCY_S * COMMIT_INTERVAL_S)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def slow_judge() -> Iterator[FakeLLMServer]:
    """The loopback fake LLM, 150 ms per call: a run of 300 takes seconds, not milliseconds."""
    with FakeLLMServer(verdict=marker_verdict, latency_s=JUDGE_LATENCY_S) as server:
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
