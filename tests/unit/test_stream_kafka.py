"""Streamed answers through :class:`consumers.runtime.streams.Streams` without a broker: the
offline judge, a recording commit policy, a hand-driven clock. One final verdict per answer,
release events as spans pass, a verdict with a reason for an answer that times out or is
evicted (counted and logged), and a delta's offset finished only when its answer is closed."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import orjson
from aiokafka.structs import ConsumerRecord, TopicPartition
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import CollectorRegistry
from structlog.testing import capture_logs

from consumers.metrics import _streams
from consumers.reply.failclosed import error_verdict
from consumers.runtime.commits import _streamed_commit
from consumers.runtime.envelope import OutRecord
from consumers.runtime.intake import Partition, Staged
from consumers.runtime.kinds import OutputKind
from consumers.runtime.message import Pipeline
from consumers.runtime.offsets import decode_finished
from consumers.runtime.stats import ServiceStats
from consumers.runtime.streams import Streams
from consumers.settings import ServiceSettings
from guard.assembly import build_guard
from guard.settings import JudgeSettings

DELTAS = "guard.deltas"
EVIDENCE = "Paris is the capital and largest city of France. It has 2.1 million residents."
ANSWER = ["Paris is the cap", "ital of France. It has 2.1 mil", "lion residents."]


class Recorder:
    """A commit policy that delivers at once and keeps what it was given."""

    interval_s = 1.0
    commit_after_fatal = True

    def __init__(self) -> None:
        self.delivered: list[tuple[int, OutRecord]] = []
        self.notes: list[OutRecord] = []

    async def deliver(
        self, part: Partition, offset: int, outputs: list[OutRecord], refused: Any, **_: Any
    ) -> list[OutRecord]:
        self.delivered += [(offset, out) for out in outputs]
        return outputs

    async def note(self, part: Partition, outputs: list[OutRecord], refused: Any) -> None:
        self.notes += outputs

    async def commit(self, parts: list[Partition], timeout_s: float, *, draining: bool) -> None:
        return None

    async def close(self) -> None:
        return None

    def verdicts(self) -> list[dict[str, Any]]:
        return [orjson.loads(o.value) for _, o in self.delivered if o.kind is OutputKind.VERDICT]

    def releases(self) -> list[dict[str, Any]]:
        return [orjson.loads(out.value) for out in self.notes]


def exposed(stats: ServiceStats) -> str:
    """The streamed-answer metrics as Prometheus exposes them."""

    class Collector:
        def collect(self) -> Any:
            yield from _streams(stats)

    registry = CollectorRegistry()
    registry.register(Collector())  # type: ignore[arg-type]
    return generate_latest(registry).decode()


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def make(**stream: Any) -> tuple[Streams, Recorder, Partition, Clock]:
    settings = ServiceSettings.model_validate(
        {"topics": {"deltas": DELTAS}, "judge": {"provider": "offline"}, "stream": stream}
    )
    guard = build_guard(JudgeSettings(provider="offline"), os.environ)
    clock = Clock()
    streams = Streams(settings, guard, ServiceStats(), asyncio.Semaphore(4), clock=clock)
    policy = Recorder()
    streams.started(Pipeline(settings, guard.parse), policy)  # type: ignore[arg-type]
    return streams, policy, Partition(TopicPartition(DELTAS, 0)), clock


def record(offset: int, rid: str, seq: int, delta: str, final: bool = False) -> Any:
    value: dict[str, Any] = {"response_id": rid, "seq": seq, "delta": delta, "final": final}
    if seq == 0:
        value["context"] = EVIDENCE
    return raw(offset, rid, orjson.dumps(value))


def raw(offset: int, rid: str, value: bytes) -> Any:
    return ConsumerRecord(
        DELTAS, 0, offset, 0, 0, rid.encode(), value, None, len(rid), len(value), ()
    )


async def take(streams: Streams, part: Partition, records: list[Any]) -> None:
    for rec in records:
        part.tracker.start(rec.offset)
        await streams.take(part, rec)


async def settled(streams: Streams, part: Partition) -> None:
    """Until the partition's tasks ended and the drivers had time to judge (the offline
    judge takes milliseconds; a driver of an open answer waits for its next delta)."""
    if part.tasks:
        await asyncio.wait(set(part.tasks), timeout=5)
    for _ in range(30):
        await asyncio.sleep(0.01)
    if part.tasks:
        await asyncio.wait(set(part.tasks), timeout=5)


def answer_records(rid: str, first_offset: int = 0) -> list[Any]:
    last = len(ANSWER) - 1
    return [
        record(first_offset + seq, rid, seq, text, seq == last) for seq, text in enumerate(ANSWER)
    ]


async def test_shuffled_repeated_deltas_give_one_verdict_and_release_everything() -> None:
    """Out of order and repeated: assembled once, judged once, released whole."""
    streams, policy, part, _ = make()
    records = answer_records("r1")
    arrivals = [records[2], records[0], records[0], records[1]]  # the final first, seq 0 twice
    for offset, rec in enumerate(arrivals):  # offsets in arrival order, as a partition has
        rec = raw(offset, "r1", rec.value)
        part.tracker.start(offset)
        await streams.take(part, rec)
    await settled(streams, part)
    verdicts = policy.verdicts()
    assert [(v["request_id"], v["label"]) for v in verdicts] == [("r1", "pass")]
    assert policy.releases()[-1]["released_up_to"] == len("".join(ANSWER))
    assert policy.releases()[-1]["final"]
    spans = [span for event in policy.releases() for span in event["spans"]]
    assert [span["index"] for span in spans] == [0, 1]  # each span once, in order
    assert spans[-1]["end"] == len("".join(ANSWER))
    assert streams.stats.stream_dropped["duplicate"] == 1
    assert part.tracker.frontier == len(arrivals)  # every delta finished once it closed


async def test_offsets_stay_unfinished_until_the_answer_is_closed() -> None:
    """The lowest offset of an open answer bounds the commit: its deltas are finished only
    with its verdict."""
    streams, policy, part, _ = make()
    records = answer_records("r1")
    await take(streams, part, records[:2])
    await settled(streams, part)
    assert part.tracker.frontier == 0
    await take(streams, part, records[2:])
    await settled(streams, part)
    assert part.tracker.frontier == 3
    assert len(policy.verdicts()) == 1


async def test_a_failing_span_stops_the_release_and_decides_at_once() -> None:
    """The failing span's verdict is the final one, published at once; the release stops
    before it; the answer's offsets wait for its last delta, and that gives no second
    verdict."""
    streams, policy, part, _ = make()
    wrong = ["Paris is the capital of France. ", "It has 9.7 million residents. Mo", "re."]
    recs = [record(n, "r2", n, text, n == 2) for n, text in enumerate(wrong)]
    await take(streams, part, recs[:2])
    await settled(streams, part)
    assert [v["label"] for v in policy.verdicts()] == ["fail"]
    (held,) = [
        orjson.loads(o.value) for _, o in policy.delivered if o.kind is OutputKind.QUARANTINE
    ]
    assert held["payload"]["output"] == "".join(wrong[:2])  # the answer as assembled so far
    last = policy.releases()[-1]
    assert last["stopped"]
    assert last["released_up_to"] == len(wrong[0])
    spans = [span for event in policy.releases() for span in event["spans"]]
    assert [(s["index"], s["start"], s["label"]) for s in spans] == [
        (0, 0, "pass"),
        (1, len(wrong[0]), "fail"),  # the span that stopped it, last
    ]
    assert part.tracker.frontier == 0  # decided, but its last delta is not in
    await take(streams, part, recs[2:])
    assert part.tracker.frontier == 3
    assert len(policy.verdicts()) == 1


async def test_an_answer_that_never_finishes_gets_a_timeout_verdict() -> None:
    """A gap not filled within stream.timeout_s of the last delta: an error verdict saying
    what it waited for, counted and logged; its offsets finished; a delta after it is late."""
    streams, policy, part, clock = make(timeout_s=5.0)
    await take(streams, part, [record(0, "r3", 0, "Paris is "), record(1, "r3", 2, "France.")])
    clock.now = 4.0
    streams.sweep()
    await settled(streams, part)
    assert policy.verdicts() == []
    clock.now = 5.0
    with capture_logs() as logs:
        streams.sweep()
        await settled(streams, part)
    (verdict,) = policy.verdicts()
    assert (verdict["label"], verdict["reason"]) == ("error", "stream_timeout")
    assert "waiting for seq 1" in verdict["error"]["message"]
    assert streams.stats.stream_closed["stream_timeout"] == 1
    assert any(entry["event"] == "stream.timed_out" for entry in logs)
    assert part.tracker.frontier == 2
    await take(streams, part, [record(2, "r3", 1, "the capital of ")])  # late: dropped
    assert streams.stats.stream_dropped["late"] == 1
    assert part.tracker.frontier == 3
    assert len(policy.verdicts()) == 1


async def test_past_the_bounds_the_oldest_answer_is_evicted_with_a_verdict() -> None:
    """One answer more than stream.max_open evicts the oldest: a stream_evicted verdict,
    counted and logged, never silent."""
    streams, policy, part, _ = make(max_open=1)
    with capture_logs() as logs:
        await take(streams, part, [record(0, "old", 0, "Paris is ")])
        await take(streams, part, [record(1, "new", 0, "Paris is ")])
        await settled(streams, part)
    (verdict,) = policy.verdicts()
    assert (verdict["request_id"], verdict["reason"]) == ("old", "stream_evicted")
    assert streams.stats.stream_closed["stream_evicted"] == 1
    assert [e["response_id"] for e in logs if e["event"] == "stream.evicted"] == ["old"]
    assert 'groundguard_stream_responses_closed_total{reason="stream_evicted"} 1.0' in exposed(
        streams.stats
    )
    assert part.tracker.frontier == 1  # the new one holds its offset


async def test_an_invalid_delta_is_dead_lettered_alone() -> None:
    streams, policy, part, _ = make()
    await take(streams, part, [raw(0, "x", b'{"response_id": "x", "seq": -1}')])
    ((offset, letter),) = policy.delivered
    assert (offset, letter.kind, letter.tag) == (0, OutputKind.DEAD_LETTER, "invalid_request")
    assert part.tracker.frontier == 1


class StoppedJudge:
    """A judge core whose account ran out: every verdict is the error that stops intake."""

    intake_stop_reason = "quota_exhausted"

    def __init__(self, real: Any) -> None:
        self._real = real
        self.judge_info = real.judge_info
        self.parse = real.parse

    async def judge(self, request: Any, **_: Any) -> Any:
        return error_verdict(
            request.id, "quota_exhausted", "no quota", judge=self.judge_info, retriable=True
        )


async def test_an_answer_judged_while_intake_is_stopped_is_left_undecided() -> None:
    """The quota error says nothing of the answer: no verdict, no stop, no timeout while
    intake is stopped; the partition's rewind drops it, to be assembled again."""
    streams, policy, part, clock = make(timeout_s=5.0)
    streams.guard = StoppedJudge(streams.guard)  # type: ignore[assignment]
    await take(streams, part, answer_records("r5"))
    await settled(streams, part)
    clock.now = 60.0
    streams.sweep()
    await settled(streams, part)
    assert policy.verdicts() == []
    assert not any(event["stopped"] for event in policy.releases())
    assert part.tracker.frontier == 0
    streams.rewound(part)
    assert streams.assembler.open == {}


def test_exactly_once_a_closed_answer_between_open_ones_is_committed_with_its_verdict() -> None:
    """A deltas partition's transaction: the frontier stays at the open answer's first delta,
    the closed answer's deltas beyond it go in the metadata, and its staged verdict with them;
    nothing new, no transaction."""
    part = Partition(TopicPartition(DELTAS, 0))
    for offset in range(5):
        part.tracker.start(offset)
    part.ready[3] = Staged([], lambda detail: None, 0)  # type: ignore[arg-type,return-value]
    for offset in (1, 3):  # the closed answer; 0, 2 and 4 are another, open one
        part.tracker.finish(offset)
    entry = _streamed_commit(part)
    assert entry is not None
    frontier, metadata, published = entry
    assert (frontier, published) == (0, [3])
    assert decode_finished(0, metadata) == {1, 3}
    part.metadata = metadata
    part.ready.clear()
    part.tracker.mark_committed(0)
    assert _streamed_commit(part) is None
