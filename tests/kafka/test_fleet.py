"""A fleet of replicas under one global budget: real ``groundguard run`` processes against the
test broker, judging through the loopback fake LLM, which logs every call it answers.

Work arrives steadily, faster than the limits allow, while replicas join, one leaves and one is
SIGKILLed; every message gets a verdict, and the fleet's calls and spend, as the fake LLM counts
them, stay within the global limits plus the calls in flight, in both modes:

* in any 60 s, at most ``rpm`` calls, besides those in flight when the 60 s begin (admitted
  before, arriving within ``IN_FLIGHT_S``);
* in any minute window, at most ``cost_per_minute_usd``, besides the calls in flight when it
  begins (their cost was reserved in the window before, up to ``max_rate_wait_s`` before they
  were made).

The replica SIGKILLed is the first one, which spent from the start: its share of the window is
unknown to the replicas that take its partitions (``partition_share`` holds their gain back for
a window; Redis counts it).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from guard.models import Usage
from guard.providers.pricing import PriceTable
from guard.testing.fake_server import Call, FakeLLMServer, marker_verdict
from tests.kafka.processes import Run, Service, Verdicts, wait_members

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(240)]

PARTITIONS = 6
MODEL = "gpt-4o-mini"
RPM = 24
CALLS_PER_MINUTE_OF_BUDGET = 24  # the cost window holds about this many calls
LATENCY_S = 0.1
WAIT_S = 120.0
MAX_RATE_WAIT_S = 2.0
IN_FLIGHT_S = 1.0  # a call reaches the fake LLM within this long of its admission
ARRIVALS_PER_S = 2  # offered work: five times what rpm allows


def call_cost(call: Call) -> float:
    usage = Usage(
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
        cached_tokens=call.cached_tokens,
    )
    return PriceTable.load().cost(MODEL, usage)


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
                "max_rate_wait_s": MAX_RATE_WAIT_S,
                "cache_size": 0,
                **budget,
            },
        },
    }


@pytest.fixture(scope="module")
def counting_judge() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict, latency_s=LATENCY_S) as server:
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


async def arrive_steadily(run: Run) -> None:
    """Produce ``ARRIVALS_PER_S`` requests a second until cancelled."""
    while True:
        start = len(run.ids)
        await run.produce(start, start + ARRIVALS_PER_S)
        await asyncio.sleep(1.0)


async def churn(
    run: Run, config: dict[str, Any], judge: FakeLLMServer
) -> tuple[list[Service], list[float]]:
    """Work arrives steadily. One replica judges alone until it has spent half a minute's
    budget; two join; then a fourth joins, one of the two leaves (SIGTERM) and the first is
    SIGKILLed. Returns every replica that ran, once every message has a verdict, and the shares
    the two survivors held then."""
    first = run.service("a", **config)
    await wait_members(run.bootstrap, run.group, 1, run)
    arrivals = asyncio.create_task(arrive_steadily(run))
    try:
        await until(lambda: len(judge.call_log()) >= RPM // 2, "a judged alone", run)
        fleet = [first, run.service("b", **config), run.service("c", **config)]
        await wait_members(run.bootstrap, run.group, 3, run)
        fleet.append(run.service("d", **config))
        fleet[1].signal(signal.SIGTERM)
        first.signal(signal.SIGKILL)
        survivors = (fleet[2], fleet[3])
        await until(lambda: len(owners(survivors)) == 2, "c and d own every partition", run)
    finally:
        arrivals.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await arrivals
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        await seen.wait_for(len(run.ids), run, timeout_s=WAIT_S, watch=survivors)
        assert set(seen.counts) == set(run.ids)
    held = [float(s.events("budget.rescaled")[-1]["share"]) for s in survivors]
    assert fleet[1].wait(30) == 0, run.logs()
    for service in survivors:
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0, run.logs()
    return fleet, held


def most_calls_in_a_minute(calls: list[Call]) -> tuple[float, int]:
    """The most calls that arrived in a 60 s span, less those in flight when it began (the
    first ``IN_FLIGHT_S`` of it), and when that span began."""
    times = sorted(c.at for c in calls)
    counts = [
        (t, sum(1 for u in times[i:] if u < t + 60 - IN_FLIGHT_S)) for i, t in enumerate(times)
    ]
    return max(counts, key=lambda found: found[1])


def spend_by_minute(calls: list[Call]) -> dict[int, float]:
    """Spend in each minute window, less the calls in flight when it began (those that arrived
    within ``MAX_RATE_WAIT_S + IN_FLIGHT_S`` of its start were reserved in the window before)."""
    spent: dict[int, float] = {}
    for call in calls:
        minute = int(call.at // 60)
        if call.at - minute * 60 >= MAX_RATE_WAIT_S + IN_FLIGHT_S:
            spent[minute] = spent.get(minute, 0.0) + call_cost(call)
    return spent


@pytest.mark.parametrize("mode", ["partition_share", "redis"])
async def test_the_fleet_stays_within_the_global_budget_through_churn(
    mode: str, run: Run, counting_judge: FakeLLMServer, request: pytest.FixtureRequest
) -> None:
    """Replicas joining, one leaving, one SIGKILLed after spending: every message gets a
    verdict, and the fleet's calls in any 60 s stay within rpm and its spend in every minute
    window within the cost budget (plus the calls in flight), with partition shares (the
    default) and with Redis."""
    shared: dict[str, Any] = {}
    if mode == "redis":
        server = request.getfixturevalue("redis_server")
        shared = {"fleet": "redis", "redis_url": server.url, "redis_prefix": run.prefix}
    cost = await one_call_cost(run, counting_judge)
    per_minute = cost * CALLS_PER_MINUTE_OF_BUDGET
    fleet, held = await churn(run, budget_config(run, per_minute, **shared), counting_judge)
    calls = counting_judge.call_log()
    assert RPM // 2 <= len(calls) < len(run.ids), "the limits did not bind"
    began, most = most_calls_in_a_minute(calls)
    assert most <= RPM, (began, most)
    for minute, spent in spend_by_minute(calls).items():
        assert spent <= per_minute, (minute, spent, per_minute)
    assert sum(held) == pytest.approx(1.0, abs=0.01)  # the two survivors hold it all
    assert not any("budget.shared_unavailable" in s.log.read_text() for s in fleet)
    print(f"{mode}: {len(calls)} calls, at most {most} in 60 s, {len(run.ids)} messages")


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


async def test_replicas_judge_on_through_a_redis_outage_and_use_redis_again_after_it(
    run: Run, counting_judge: FakeLLMServer, own_redis: Any
) -> None:
    """fleet: redis, and Redis stops while two replicas run: neither crashes, every message
    still gets a verdict judged by the LLM (the documented policy: fail open to the partition
    share, never stop judging), each logs the outage once; Redis returns: each logs the
    recovery and the fleet's calls are logged in Redis again."""
    config = budget_config(
        run, 1.0, fleet="redis", redis_url=own_redis.url, redis_prefix=run.prefix
    )
    config["judge"]["budget"] |= {"rpm": 6000, "redis_timeout_s": 0.5, "redis_retry_s": 0.5}
    fleet = (run.service("a", **config), run.service("b", **config))
    await wait_members(run.bootstrap, run.group, 2, run)
    # both judge through the outage: each holds partitions before the first request (a group
    # of two members may still be finishing its rebalance, a judging alone)
    await until(lambda: len(owners(fleet)) == 2, "both replicas own partitions", run)
    calls_logged = f"{run.prefix}:rate:openai-compatible:{MODEL}"  # a base_url: compatible
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level="read_uncommitted") as seen:
        for batch, redis_up in enumerate((True, False, True)):
            if not redis_up:
                own_redis.stop()
            elif batch:
                own_redis.start()
                await asyncio.sleep(1.0)  # past redis_retry_s: the next call asks Redis again
            before = len(counting_judge.call_log())
            await run.produce(batch * 20, batch * 20 + 20)
            await seen.wait_for(len(run.ids), run, timeout_s=WAIT_S, watch=fleet)
            assert len(counting_judge.call_log()) - before == 20  # judged, not skipped
            if redis_up:  # a restarted Redis starts empty; calls before a retry skip it
                async with Redis.from_url(own_redis.url) as client:
                    logged = await client.zcard(calls_logged)
                assert logged == 20 if batch == 0 else 0 < logged <= 20, (batch, logged)
    for service in fleet:
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0, run.logs()
        lines = service.log.read_text().splitlines()
        for event in ("budget.shared_unavailable", "budget.shared_recovered"):
            assert sum(event in line for line in lines) == 1, (event, service.tail())
