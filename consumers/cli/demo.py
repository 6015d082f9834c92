"""The one-command demo: a local broker, bundled RAG traffic, the service, a table of results.

It starts a local Kafka (unless given one), creates this run's topics, produces the bundled
sample (faithful and hallucinated answers, a conversation with tool results, malformed
messages), runs the guard service in-process until every message has a verdict or a dead
letter, reads the output topics back, prints what happened, and stops what it started.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from consumers.cli.broker import LocalBroker
from consumers.runtime.run import run_service
from consumers.runtime.stats import ServiceStats
from consumers.runtime.topics import ensure_topics
from consumers.settings import MetricsSettings, ServiceSettings, TopicSettings
from guard.settings import JudgeSettings

PARTITIONS = 3
POLL_S = 0.2


@dataclass(frozen=True)
class Sample:
    key: str
    expected: str  # pass | fail | dead_letter
    value: bytes


@dataclass
class DemoResult:
    produced: int = 0
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # request id -> verdict
    quarantined: list[str] = field(default_factory=list)
    dead_letters: list[dict[str, Any]] = field(default_factory=list)
    expected: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0

    @property
    def outcomes(self) -> dict[str, str]:
        """Request key -> what happened: pass / fail / error / dead_letter."""
        seen = {key: verdict["label"] for key, verdict in self.verdicts.items()}
        for letter in self.dead_letters:
            seen[letter["input"]["key"]] = "dead_letter"
        return seen

    @property
    def matches(self) -> int:
        outcomes = self.outcomes
        return sum(1 for key, want in self.expected.items() if outcomes.get(key) == want)


def load_samples(path: Path | None = None) -> list[Sample]:
    source = path or resources.files("consumers.cli") / "data" / "sample_traffic.jsonl"
    samples = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = orjson.loads(line)
        value = row["raw"].encode() if "raw" in row else orjson.dumps(row["value"])
        samples.append(Sample(row["key"], row["expected"], value))
    return samples


def demo_settings(bootstrap: str, judge: JudgeSettings, run_id: str) -> ServiceSettings:
    prefix = f"demo-{run_id}"
    topics = TopicSettings(
        requests=f"{prefix}.rag.responses",
        verdicts=f"{prefix}.verdicts",
        quarantine=f"{prefix}.quarantine",
        dlq=f"{prefix}.dlq",
    )
    return ServiceSettings(
        bootstrap_servers=bootstrap,
        topics=topics,
        group_id=prefix,
        client_id=prefix,
        instance_id="demo",
        concurrency=32,
        commit_interval_s=0.5,
        create_topics=True,
        topic_partitions=PARTITIONS,
        metrics=MetricsSettings(enabled=False),
        judge=judge,
    )


async def _produce(settings: ServiceSettings, samples: list[Sample]) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(
        bootstrap_servers=settings.bootstrap_servers, acks="all", enable_idempotence=True
    )
    await producer.start()
    try:
        sent = [
            await producer.send(
                settings.topics.requests,
                s.value,
                key=s.key.encode(),
                headers=[("traceparent", _traceparent())],
            )
            for s in samples
        ]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()


def _traceparent() -> bytes:
    return f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01".encode()


async def _read_topic(
    settings: ServiceSettings, topic: str, expected: int, timeout_s: float
) -> list[dict[str, Any]]:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=settings.bootstrap_servers,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        group_id=None,
    )
    await consumer.start()
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(found) < expected and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=200)).values():
                found += [orjson.loads(r.value) for r in records]
    finally:
        await consumer.stop()
    return found


async def _wait_for_all(
    stats: ServiceStats,
    total: int,
    timeout_s: float,
    on_tick: Callable[[ServiceStats], None] | None,
) -> None:
    deadline = time.monotonic() + timeout_s
    while _done(stats) < total and time.monotonic() < deadline:
        if on_tick is not None:
            on_tick(stats)
        await asyncio.sleep(POLL_S)
    if on_tick is not None:
        on_tick(stats)


def _done(stats: ServiceStats) -> int:
    return sum(stats.verdicts.values()) + stats.dead_letters_total


async def screen(
    settings: ServiceSettings,
    samples: list[Sample],
    *,
    timeout_s: float,
    on_tick: Callable[[ServiceStats], None] | None = None,
) -> DemoResult:
    """Produce ``samples``, run the service until all are handled, read the outputs back."""
    started = time.monotonic()
    await ensure_topics(settings)
    await _produce(settings, samples)
    stats, stop = ServiceStats(), asyncio.Event()
    service = asyncio.create_task(run_service(settings, stop=stop, stats=stats))
    try:
        await _wait_for_all(stats, len(samples), timeout_s, on_tick)
    finally:
        stop.set()
        await service
    return await _collect(settings, samples, stats, time.monotonic() - started)


async def _collect(
    settings: ServiceSettings, samples: list[Sample], stats: ServiceStats, elapsed_s: float
) -> DemoResult:
    topics, read_s = settings.topics, 30.0
    judged = sum(stats.verdicts.values())
    verdicts = await _read_topic(settings, topics.verdicts, judged, read_s)
    quarantined = await _read_topic(settings, topics.quarantine, stats.quarantined, read_s)
    letters = await _read_topic(settings, topics.dlq, stats.dead_letters_total, read_s)
    return DemoResult(
        produced=len(samples),
        verdicts={v["request_id"]: v for v in verdicts},
        quarantined=[q["request_id"] for q in quarantined],
        dead_letters=letters,
        expected={s.key: s.expected for s in samples},
        elapsed_s=elapsed_s,
    )


# --------------------------------------------------------------------------- the whole demo


async def run_demo(
    judge: JudgeSettings,
    *,
    bootstrap: str | None,
    timeout_s: float,
    say: Callable[[str], None],
    on_tick: Callable[[ServiceStats], None] | None = None,
) -> DemoResult:
    samples = load_samples()
    with tempfile.TemporaryDirectory(prefix="groundguard-demo-") as home:
        broker = None
        if bootstrap is None:
            say(
                "starting a local Kafka broker on 127.0.0.1 (the first run downloads its jars "
                "from Maven Central) ..."
            )
            broker = LocalBroker(Path(home))
            await asyncio.to_thread(broker.start, fresh=True)
            bootstrap = broker.bootstrap
        try:
            settings = demo_settings(bootstrap, judge, uuid.uuid4().hex[:8])
            say(
                f"broker {bootstrap}; producing {len(samples)} messages to "
                f"{settings.topics.requests}; judge: {judge.provider.value}"
            )
            return await screen(settings, samples, timeout_s=timeout_s, on_tick=on_tick)
        finally:
            if broker is not None:
                say("stopping the local broker ...")
                await asyncio.to_thread(broker.stop)


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _why(verdict: dict[str, Any]) -> str:
    claims = verdict.get("unsupported_claims") or []
    if claims:
        return str(claims[0]["reason"])
    return str(verdict.get("reason") or "")


def format_result(result: DemoResult) -> str:
    outcomes, lines = result.outcomes, []
    lines.append(f"{'message':<16} {'expected':<12} {'outcome':<12} {'score':>5}  why")
    for key, want in result.expected.items():
        verdict = result.verdicts.get(key, {})
        score = verdict.get("score")
        mark = "" if outcomes.get(key) == want else "  <-- differs"
        why = _why(verdict) if verdict else _dead_reason(result, key)
        lines.append(
            f"{key:<16} {want:<12} {outcomes.get(key, 'missing'):<12} "
            f"{'' if score is None else f'{score:.2f}':>5}  {_short(why, 70)}{mark}"
        )
    labels = Counter(v["label"] for v in result.verdicts.values())
    reasons = Counter(d["reason"] for d in result.dead_letters)
    lines += [
        "",
        f"messages produced: {result.produced}",
        f"verdicts published: {len(result.verdicts)} "
        f"({', '.join(f'{k} {v}' for k, v in sorted(labels.items()))})",
        f"quarantined: {len(result.quarantined)}",
        f"dead-lettered: {len(result.dead_letters)} "
        f"({', '.join(f'{k} {v}' for k, v in sorted(reasons.items()))})",
        f"as expected: {result.matches} of {len(result.expected)}",
        f"elapsed: {result.elapsed_s:.1f} s",
    ]
    return "\n".join(lines)


def _dead_reason(result: DemoResult, key: str) -> str:
    for letter in result.dead_letters:
        if letter["input"]["key"] == key:
            return f"{letter['reason']}: {letter['detail']}"
    return ""


def progress_line(stats: ServiceStats, total: int) -> str:
    labels = ", ".join(f"{k} {v}" for k, v in sorted(stats.verdicts.items()))
    return (
        f"handled {_done(stats)}/{total}: verdicts ({labels or 'none yet'}), "
        f"quarantined {stats.quarantined}, dead-lettered {stats.dead_letters_total}, "
        f"in flight {stats.in_flight}"
    )


__all__ = ["DemoResult", "Sample", "format_result", "load_samples", "run_demo", "screen"]
