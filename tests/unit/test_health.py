"""Metrics and health endpoints: counters follow the service's stats; readiness means progress."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from consumers.health import LIVENESS_STALL_FACTOR, HealthServer, liveness, readiness
from consumers.metrics import Metrics, split_partition_key
from consumers.runtime.stats import PartitionStats, ServiceStats
from guard.engine import Guard
from guard.models import JudgeRequest
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

STALL_S = 10.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def running_stats(clock: Clock, *, lag: int = 0) -> ServiceStats:
    stats = ServiceStats(started=True, last_progress=clock.now)
    stats.partitions["rag.responses-0"] = PartitionStats(committed=10, highwater=10 + lag)
    return stats


async def get(port: int, path: str) -> tuple[int, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
        await writer.wait_closed()
    head, _, body = raw.decode().partition("\r\n\r\n")
    return int(head.split()[1]), body


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture
async def server() -> AsyncIterator[tuple[HealthServer, ServiceStats, Clock]]:
    clock = Clock()
    stats = running_stats(clock)
    metrics = Metrics(stats, breaker=lambda: "open", budget=lambda: {"day": 4.5})
    health = HealthServer(
        metrics=metrics, stats=stats, host="127.0.0.1", port=0, stall_after_s=STALL_S, clock=clock
    )
    async with health:
        yield health, stats, clock


async def test_metrics_endpoint_reflects_stats_and_verdicts(
    server: tuple[HealthServer, ServiceStats, Clock],
) -> None:
    health, stats, _ = server
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    verdict = await guard.judge(JudgeRequest(output="Paris", context="Paris is big."))
    await guard.aclose()
    health.metrics.observe_verdict(verdict)
    stats.consumed += 3
    stats.dead_lettered["invalid_json"] += 2
    stats.buffered_bytes = 4096
    stats.partitions["rag.responses-0"].highwater = 15
    status, body = await get(health.port, "/metrics")
    assert status == 200
    got = samples(body)
    assert got[("groundguard_messages_consumed_total", ())] == 3
    assert got[("groundguard_dead_lettered_total", (("reason", "invalid_json"),))] == 2
    assert got[("groundguard_verdicts_total", (("label", "pass"), ("tier", "llm")))] == 1
    assert (
        got[("groundguard_judge_tokens_total", (("kind", "input"), ("model", "fake-judge")))] == 100
    )
    assert got[("groundguard_judge_latency_seconds_count", (("tier", "llm"),))] == 1
    assert got[("groundguard_consumer_lag", (("partition", "0"), ("topic", "rag.responses")))] == 5
    assert got[("groundguard_breaker_open", ())] == 1
    assert got[("groundguard_budget_left_usd", (("window", "day"),))] == 4.5
    assert got[("groundguard_ready", ())] == 1
    assert got[("groundguard_buffered_bytes", ())] == 4096


async def test_readyz_turns_unready_when_stalled_with_lag_and_ready_on_progress(
    server: tuple[HealthServer, ServiceStats, Clock],
) -> None:
    health, stats, clock = server
    assert (await get(health.port, "/readyz"))[0] == 200
    stats.partitions["rag.responses-0"].highwater = 20
    clock.now += STALL_S + 1
    status, body = await get(health.port, "/readyz")
    assert status == 503
    assert "stalled" in json.loads(body)["reason"]
    stats.progressed()
    clock.now = stats.last_progress
    assert (await get(health.port, "/readyz"))[0] == 200


async def test_readyz_is_unready_with_intake_stopped_and_healthz_still_alive(
    server: tuple[HealthServer, ServiceStats, Clock],
) -> None:
    health, stats, _ = server
    stats.intake_stopped = "quota_exhausted"
    status, body = await get(health.port, "/readyz")
    assert status == 503
    assert "quota_exhausted" in json.loads(body)["reason"]
    assert (await get(health.port, "/healthz"))[0] == 200


async def test_unknown_path_is_404(server: tuple[HealthServer, ServiceStats, Clock]) -> None:
    health, _, _ = server
    assert (await get(health.port, "/nope"))[0] == 404


def test_idle_consumer_without_lag_stays_ready_however_long_it_waits() -> None:
    clock = Clock()
    stats = running_stats(clock)
    clock.now += 100 * STALL_S
    assert readiness(stats, stall_after_s=STALL_S, now=clock.now).ok


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"started": False}, "starting"),
        ({"stopping": True}, "stopping"),
        ({"partitions": {}}, "no partitions assigned"),
    ],
)
def test_not_ready_while_starting_stopping_or_unassigned(
    change: dict[str, object], reason: str
) -> None:
    clock = Clock()
    stats = running_stats(clock)
    for name, value in change.items():
        setattr(stats, name, value)
    health = readiness(stats, stall_after_s=STALL_S, now=clock.now)
    assert not health.ok
    assert health.reason == reason


def test_liveness_fails_only_after_a_long_stall_with_work_pending() -> None:
    clock = Clock()
    stats = running_stats(clock, lag=3)
    clock.now += STALL_S * 2
    assert liveness(stats, stall_after_s=STALL_S, now=clock.now).ok
    clock.now += STALL_S * LIVENESS_STALL_FACTOR
    assert not liveness(stats, stall_after_s=STALL_S, now=clock.now).ok


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("in_flight", 4),  # judge calls held by a paused budget or a rate limit
        ("intake_stopped", "quota_exhausted"),  # waiting for an operator, not stuck
    ],
)
def test_waiting_on_purpose_is_never_restarted(field: str, value: object) -> None:
    """A restart would forget the spent budget and spend again: liveness stays ok."""
    clock = Clock()
    stats = running_stats(clock, lag=3)
    setattr(stats, field, value)
    clock.now += STALL_S * LIVENESS_STALL_FACTOR * 10
    assert liveness(stats, stall_after_s=STALL_S, now=clock.now).ok
    assert not readiness(stats, stall_after_s=STALL_S, now=clock.now).ok


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("rag.responses-3", ("rag.responses", "3")),
        ("my-topic-12", ("my-topic", "12")),
        (("t", 1), ("t", "1")),
    ],
)
def test_partition_keys_split_into_topic_and_partition(
    key: object, expected: tuple[str, str]
) -> None:
    assert split_partition_key(key) == expected


def test_each_metrics_instance_has_its_own_registry() -> None:
    first, second = Metrics(ServiceStats()), Metrics(ServiceStats())
    assert first.registry is not second.registry
    assert b"groundguard_messages_consumed_total 0.0" in first.render()


async def test_breaker_budget_and_provider_calls_come_from_the_budgeted_judge() -> None:
    from guard.budgets.judge import build_budgeted_judge
    from guard.budgets.settings import BudgetSettings

    judge = build_budgeted_judge(
        FakeJudge(), BudgetSettings(cost_per_day_usd=2.0), price=lambda model, usage: 0.5
    )
    guard = Guard(judge, JudgeSettings(provider="fake"))
    await guard.judge(JudgeRequest(output="Paris", context="Paris is big."))
    await guard.aclose()
    got = samples(Metrics(ServiceStats(), judge_stats=guard.budget_stats).render().decode())
    assert got[("groundguard_breaker_state", (("state", "closed"),))] == 1
    assert got[("groundguard_breaker_open", ())] == 0
    assert got[("groundguard_budget_left_usd", (("window", "day"),))] == 1.5
    assert got[("groundguard_judge_provider_calls_total", ())] == 1


async def test_a_failing_probe_answers_500_and_the_server_keeps_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> str:
        raise RuntimeError("probe failed")

    stats = running_stats(Clock())
    health = HealthServer(
        metrics=Metrics(stats, breaker=broken), stats=stats, host="127.0.0.1", port=0
    )
    async with health:
        assert (await get(health.port, "/metrics"))[0] == 500
        assert (await get(health.port, "/healthz"))[0] == 200
    assert "health.endpoint_failed" in caplog.text
