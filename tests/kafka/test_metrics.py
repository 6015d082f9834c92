"""The metrics and health endpoints of a service running against the real broker.

The service is wired as ``groundguard run`` wires it (ServiceStats shared by the service, the
metrics and the health server; ``on_verdict`` feeding the metrics) and scraped over HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from prometheus_client.parser import text_string_to_metric_families

from consumers import schemas
from consumers.health import HealthServer
from consumers.metrics import Metrics
from consumers.runtime.service import GuardService
from consumers.runtime.stats import ServiceStats
from consumers.settings import MetricsSettings, ServiceSettings
from guard.case import PreparedCase
from guard.errors import QuotaExhausted
from guard.providers.base import JudgeOutcome
from guard.testing import FakeJudge
from tests.kafka.kafkautil import produce, read_until
from tests.kafka.servicekit import (
    create_all,
    grounded,
    guard_with,
    make_settings,
    new_topics,
    ungrounded,
)

POLL_S = 0.1
POLLS = 600  # 60 s at most for any state to show


class GatedJudge(FakeJudge):
    """A fake judge whose calls hang until ``gate`` is set: a judge stuck mid-call."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        await self.gate.wait()
        return await super().assess(case)


@dataclass
class Running:
    service: GuardService
    health: HealthServer


@contextlib.asynccontextmanager
async def serving(settings: ServiceSettings, judge: Any) -> AsyncIterator[Running]:
    """The service plus its metrics/health server on an ephemeral loopback port."""
    stats = ServiceStats()
    guard = guard_with(judge, settings)
    metrics = Metrics(stats, judge_stats=guard.budget_stats)
    health = HealthServer(
        metrics=metrics,
        stats=stats,
        host="127.0.0.1",
        port=0,
        stall_after_s=settings.metrics.stall_after_s,
    )
    stop = asyncio.Event()
    service = GuardService(
        settings, guard, stop=stop, on_verdict=metrics.observe_verdict, stats=stats
    )
    await health.start()
    task = asyncio.create_task(service.run())
    try:
        yield Running(service, health)
    finally:
        stop.set()
        judge_gate = getattr(judge, "gate", None)
        if judge_gate is not None:
            judge_gate.set()
        try:
            await asyncio.wait_for(task, timeout=60)
        finally:
            await health.close()
            await guard.aclose()


async def http_get(port: int, path: str) -> tuple[int, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), timeout=10)
    finally:
        writer.close()
        await writer.wait_closed()
    head, _, body = raw.decode().partition("\r\n\r\n")
    return int(head.split()[1]), body


async def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    status, body = await http_get(port, "/metrics")
    assert status == 200
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def value(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def lags(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float]) -> dict[str, float]:
    return {
        dict(labels)["partition"]: v
        for (name, labels), v in samples.items()
        if name == "groundguard_consumer_lag"
    }


async def poll_readyz(port: int, *, status: int) -> dict[str, Any]:
    """Poll ``/readyz`` (bounded) until it answers ``status``; its last JSON body."""
    body: dict[str, Any] = {}
    for _ in range(POLLS):
        got, text = await http_get(port, "/readyz")
        body = json.loads(text)
        if got == status:
            return body
        await asyncio.sleep(POLL_S)
    raise AssertionError(f"/readyz never answered {status}; last: {body}")


def settings_for(bootstrap: str, topics: Any, **overrides: Any) -> ServiceSettings:
    return make_settings(bootstrap, topics, **overrides)


async def test_scraped_counters_move_as_the_service_judges(kafka_bootstrap: str) -> None:
    """Consumed, verdicts by label and tier, quarantined, dead-lettered by reason, tokens and
    latency all move on /metrics; the lag gauge covers each assigned partition and drains to 0
    once the offsets are committed. Every published record obeys its JSON Schema."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=2)
    settings = settings_for(kafka_bootstrap, topics, concurrency=8)
    async with serving(settings, FakeJudge()) as run:
        port = run.health.port
        before = await scrape(port)
        assert value(before, "groundguard_messages_consumed_total") == 0
        await poll_readyz(port, status=200)
        records = [
            *[(None, grounded(i), None) for i in range(6)],
            *[(None, ungrounded(i), None) for i in range(4)],
            (None, b'{"output": "half', None),
        ]
        await produce(kafka_bootstrap, topics.requests, records)
        published = {
            "verdict": await read_until(kafka_bootstrap, topics.verdicts, expected=10),
            "quarantine": await read_until(kafka_bootstrap, topics.quarantine, expected=4),
            "dead-letter": await read_until(kafka_bootstrap, topics.dlq, expected=1),
        }
        after: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        for _ in range(POLLS):
            after = await scrape(port)
            if (
                value(after, "groundguard_messages_consumed_total") == 11
                and value(after, "groundguard_dead_lettered_total", reason="invalid_json") == 1
                and value(after, "groundguard_quarantined_total") == 4
                and lags(after) == {"0": 0.0, "1": 0.0}
            ):
                break
            await asyncio.sleep(POLL_S)
    assert value(after, "groundguard_messages_consumed_total") == 11
    assert value(after, "groundguard_verdicts_total", label="pass", tier="llm") == 6
    assert value(after, "groundguard_verdicts_total", label="fail", tier="llm") == 4
    assert value(after, "groundguard_quarantined_total") == 4
    assert value(after, "groundguard_dead_lettered_total", reason="invalid_json") == 1
    assert value(after, "groundguard_judge_latency_seconds_count", tier="llm") == 10
    assert value(after, "groundguard_judge_tokens_total", model="fake-judge", kind="input") > 0
    assert value(after, "groundguard_assigned_partitions") == 2
    assert lags(after) == {"0": 0.0, "1": 0.0}, "lag per partition, drained once committed"
    for name, records in published.items():
        validator = Draft202012Validator(schemas.load(name))
        for record in records:
            assert list(validator.iter_errors(json.loads(record.value))) == [], name


async def test_readyz_turns_unready_while_the_judge_hangs_and_ready_when_it_progresses(
    kafka_bootstrap: str,
) -> None:
    """Ready while idle; with messages pending and the judge stuck, /readyz turns 503 (stalled)
    after stall_after_s; once the judge answers and verdicts flow, it turns 200 again."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = settings_for(kafka_bootstrap, topics, metrics=MetricsSettings(stall_after_s=1.0))
    judge = GatedJudge()
    async with serving(settings, judge) as run:
        port = run.health.port
        idle = await poll_readyz(port, status=200)
        assert idle["assigned"] == 1
        await produce(
            kafka_bootstrap, topics.requests, [(None, grounded(i), None) for i in range(3)]
        )
        stuck = await poll_readyz(port, status=503)
        assert stuck["reason"].startswith("stalled")
        assert stuck["pending"] > 0
        assert value(await scrape(port), "groundguard_ready") == 0
        judge.gate.set()
        await read_until(kafka_bootstrap, topics.verdicts, expected=3)
        recovered = await poll_readyz(port, status=200)
        assert recovered["reason"] in ("progressing", "idle")
        assert (await http_get(port, "/healthz"))[0] == 200


async def test_readyz_is_unready_once_intake_stops(kafka_bootstrap: str) -> None:
    """A judge reporting its quota spent stops intake; /readyz says so with 503."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    settings = settings_for(kafka_bootstrap, topics)
    judge = FakeJudge([QuotaExhausted("insufficient_quota", status=429)])
    async with serving(settings, judge) as run:
        port = run.health.port
        await poll_readyz(port, status=200)
        await produce(kafka_bootstrap, topics.requests, [(None, grounded(0), None)])
        body = await poll_readyz(port, status=503)
        assert "intake stopped" in body["reason"]
        samples = await scrape(port)
        assert value(samples, "groundguard_intake_stopped", reason="quota_exhausted") == 1
