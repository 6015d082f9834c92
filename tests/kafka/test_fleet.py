"""A fleet of replicas under one global budget: real ``groundguard run`` processes against the
test broker, judging through the loopback fake LLM, which logs every call it answers.

Replicas join, leave and are SIGKILLed mid-run; every message still gets a verdict, and the
fleet's calls in any 60 s and its spend in any minute window (priced from the fake's own call
log) stay within the configured global limits, plus what the documented bounds allow:

* ``partition_share``: each replica may spend the largest share it held during the window (a
  rebalance inside a window lets the new owner of a partition spend its share again) and make
  one call more (a call always fits a window where nothing was spent, and the last call admitted
  may be the one that reaches the limit);
* ``redis``: the fleet takes the whole limits once, plus one call per replica (a call admitted
  by Redis may start a little later, held by the replica's per-second smoothing, and a call's
  actual cost may exceed its estimate).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from guard.models import Usage
from guard.providers.pricing import PriceTable
from guard.testing.fake_server import Call, FakeLLMServer
from tests.kafka.processes import Run, Service, Verdicts, wait_members

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(240)]

PARTITIONS = 6
N = 120
MODEL = "gpt-4o-mini"
RPM = 24
CALLS_PER_MINUTE_OF_BUDGET = 24  # the cost window holds about this many calls
LATENCY_S = 0.1
WAIT_S = 120.0


def call_cost(call: Call) -> float:
    usage = Usage(
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
        cached_tokens=call.cached_tokens,
    )
    return PriceTable.load().cost(MODEL, usage)


def timestamp(entry: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(entry["timestamp"]).replace("Z", "+00:00")).timestamp()


def largest_share(service: Service, start: float, end: float) -> float:
    """The largest budget share ``service`` held at any moment of ``[start, end)`` (0 before
    its first assignment: it cannot judge without partitions)."""
    held, largest = 0.0, 0.0
    for entry in service.events("budget.rescaled"):
        at = timestamp(entry)
        if at >= end:
            break
        if at <= start:
            held = float(entry["share"])
        else:
            largest = max(largest, float(entry["share"]))
    return max(largest, held)


def fleet_share(services: list[Service], start: float, end: float) -> float:
    return sum(largest_share(s, start, end) for s in services)


def budget_config(run: Run, cost_per_minute: float, **budget: Any) -> dict[str, Any]:
    """A replica's settings: the fleet's rpm and cost per minute, skipped when spent."""
    return {
        "concurrency": 8,
        "log": {"format": "json"},
        "judge": {
            "provider": "openai",
            "model": MODEL,
            "base_url": run.judge_url,
            "api_key": "test",
            "timeout_s": 10,
            "max_retries": 0,
            "budget": {
                "rpm": RPM,
                "cost_per_minute_usd": cost_per_minute,
                "on_budget_exhausted": "skip",
                "max_rate_wait_s": 10,
                "cache_size": 0,
                **budget,
            },
        },
    }


@pytest.fixture(scope="module")
def counting_judge() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(latency_s=LATENCY_S) as server:
        yield server


@pytest.fixture
async def run(
    kafka_bootstrap: str, counting_judge: FakeLLMServer, tmp_path: Path
) -> AsyncIterator[Run]:
    counting_judge.reset_stats()
    the_run = Run(kafka_bootstrap, counting_judge.openai_base_url, tmp_path, partitions=PARTITIONS)
    try:
        await the_run.create_topics()
        yield the_run
    finally:
        the_run.kill_all()


async def one_call_cost(run: Run, judge: FakeLLMServer) -> float:
    """What one call of this run's requests costs, measured through one replica."""
    await run.produce(0, 1)
    probe = run.service("probe", **budget_config(run, 1.0))
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        await seen.wait_for(1, run, watch=(probe,))
    probe.signal(signal.SIGTERM)
    assert probe.wait(30) == 0, run.logs()
    (call,) = judge.call_log()
    judge.reset_stats()
    return call_cost(call)


def assigned(service: Service) -> list[str]:
    """The partitions of ``service``'s last assignment."""
    found = service.events("partitions.assigned")
    return list(found[-1]["partitions"]) if found else []


async def until(check: Any, what: str, run: Run, timeout_s: float = WAIT_S) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not check():
        if loop.time() > deadline:
            pytest.fail(f"never: {what}\n{run.logs()}")
        await asyncio.sleep(0.2)


def owners(services: tuple[Service, ...]) -> set[str]:
    """The services whose last assignment covers the input partitions together (empty until
    their assignments add up to all of them)."""
    held = {p: s.name for s in services for p in assigned(s)}
    return set(held.values()) if len(held) == PARTITIONS else set()


async def churn(run: Run, config: dict[str, Any]) -> tuple[list[Service], list[float]]:
    """Three replicas judge a backlog; mid-run a fourth joins, one leaves (SIGTERM) and one is
    SIGKILLed. Returns every replica that ran, once every message has a verdict, and the shares
    of the two survivors then."""
    await run.produce(1, N // 2)
    fleet = [run.service(name, **config) for name in ("a", "b", "c")]
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        await wait_members(run.bootstrap, run.group, 3, run)
        await seen.wait_for(N // 4, run, timeout_s=WAIT_S, watch=tuple(fleet))
        fleet.append(run.service("d", **config))
        fleet[1].signal(signal.SIGTERM)
        fleet[2].signal(signal.SIGKILL)
        await run.produce(N // 2, N)  # work arriving while the group changes
        await seen.wait_for(N, run, timeout_s=WAIT_S, watch=(fleet[0], fleet[3]))
        assert set(seen.counts) == set(run.ids)
    survivors = (fleet[0], fleet[3])
    await until(lambda: len(owners(survivors)) == 2, "a and d own every partition", run)
    assert owners(survivors) == {fleet[0].name, fleet[3].name}
    shares = [float(s.events("budget.rescaled")[-1]["share"]) for s in survivors]
    assert fleet[1].wait(30) == 0, run.logs()
    for service in (fleet[0], fleet[3]):
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0, run.logs()
    return fleet, shares


def calls_in_any_minute(calls: list[Call]) -> list[tuple[float, int]]:
    """For each call, the calls that arrived in the 60 s starting with it."""
    times = sorted(c.at for c in calls)
    return [(t, sum(1 for u in times[i:] if u < t + 60)) for i, t in enumerate(times)]


def spend_by_minute(calls: list[Call]) -> dict[int, float]:
    spent: dict[int, float] = {}
    for call in calls:
        minute = int(call.at // 60)
        spent[minute] = spent.get(minute, 0.0) + call_cost(call)
    return spent


@pytest.mark.parametrize("mode", ["partition_share", "redis"])
async def test_the_fleet_stays_within_the_global_budget_through_churn(
    mode: str, run: Run, counting_judge: FakeLLMServer, request: pytest.FixtureRequest
) -> None:
    """3 replicas, one joining, one leaving, one SIGKILLed: every message gets a verdict and
    the fleet stays within the global rpm and cost budget, with partition shares (the default)
    and with Redis."""
    shared: dict[str, Any] = {}
    if mode == "redis":
        server = request.getfixturevalue("redis_server")
        shared = {"fleet": "redis", "redis_url": server.url, "redis_prefix": run.prefix}
    cost = await one_call_cost(run, counting_judge)
    per_minute = cost * CALLS_PER_MINUTE_OF_BUDGET
    fleet, survivors = await churn(run, budget_config(run, per_minute, **shared))
    calls = counting_judge.call_log()
    assert RPM // 2 <= len(calls) < N, "the limits did not bind, or the fleet hardly judged"

    def share(start: float) -> float:  # of the global limits the fleet may take in 60 s
        return fleet_share(fleet, start, start + 60) if mode == "partition_share" else 1.0

    for start, count in calls_in_any_minute(calls):
        assert count <= share(start) * RPM + len(fleet), (start, count, share(start))
    largest_call = max(call_cost(c) for c in calls)
    for minute, spent in spend_by_minute(calls).items():
        bound = share(minute * 60) * per_minute + len(fleet) * largest_call
        assert spent <= bound, (minute, spent, share(minute * 60))
    assert sum(survivors) == pytest.approx(1.0, abs=0.01)  # the two survivors share it all
    assert not any("budget.shared_unavailable" in s.log.read_text() for s in fleet)
    print(f"{mode}: fleet calls {len(calls)}, spend by minute {spend_by_minute(calls)}")


async def test_a_sigkilled_static_member_gets_its_partitions_back_without_a_rebalance(
    run: Run,
) -> None:
    """kafka.static_membership: a replica SIGKILLed and restarted under the same instance_id
    (within session_timeout_ms) owns the same partitions again, and the other replica sees no
    rebalance; messages produced after the restart all get verdicts. (How long the partitions
    stalled is measured by bench/fleet.py, not asserted here.)"""
    static = {
        "log": {"format": "json"},
        "kafka": {
            "static_membership": True,
            "session_timeout_ms": 45_000,  # margin for a slow restart on a loaded machine
            "heartbeat_interval_ms": 1_000,
        },
    }
    first = run.service("a", **static)
    await wait_members(run.bootstrap, run.group, 1, run)
    second = run.service("b", **static)
    await wait_members(run.bootstrap, run.group, 2, run)
    await until(lambda: len(assigned(first)) == PARTITIONS // 2, "the group settled", run)
    await until(lambda: len(assigned(second)) == PARTITIONS // 2, "b was assigned", run)
    owned = assigned(second)
    rebalances = [len(first.events(e)) for e in ("partitions.assigned", "partitions.revoked")]
    second.signal(signal.SIGKILL)
    second.wait(10)
    again = run.service("b", **static)
    await until(lambda: bool(assigned(again)), "b rejoined", run)
    await run.produce(0, 60)
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        await seen.wait_for(60, run, timeout_s=WAIT_S, watch=(first, again))
    assert assigned(again) == owned
    after = [len(first.events(e)) for e in ("partitions.assigned", "partitions.revoked")]
    assert after == rebalances, run.logs()
