"""Streamed answers over Kafka against a real broker: the service, a real process, is killed
(SIGKILL) while answers are half streamed, and restarted; every answer still gets a final
verdict (exactly-once: exactly one, as a read_committed reader sees; at-least-once: repeats
counted), release events on the releases topic, and an answer that never finishes a
``stream_timeout`` verdict.

Deltas are produced out of order and repeated, as a retrying producer would; the judge is the
loopback fake LLM server (a span with ``HALLUCINATED`` fails), slowed so that spans are being
judged when the kill comes.
"""

from __future__ import annotations

import contextlib
import random
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer

from guard.testing.fake_server import FakeLLMServer, marker_verdict
from tests.kafka.kafkautil import create_topics, produce
from tests.kafka.processes import Run, Service, Verdicts

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(120)]

ANSWERS = 40
SENTENCES = 4
TIMEOUT_S = 4.0  # stream.timeout_s: the abandoned answer's verdict comes this long after
EVIDENCE = ["Paris is the capital and largest city of France."]


@pytest.fixture(scope="module")
def slow_judge() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict, latency_s=0.3) as server:
        yield server


@pytest.fixture
async def run(
    kafka_bootstrap: str, slow_judge: FakeLLMServer, tmp_path: Path
) -> AsyncIterator[Run]:
    the_run = Run(kafka_bootstrap, slow_judge.openai_base_url, tmp_path)
    try:
        await the_run.create_topics()
        await create_topics(
            kafka_bootstrap, {deltas(the_run): the_run.partitions, releases(the_run): 2}
        )
        yield the_run
    finally:
        the_run.kill_all()


def deltas(run: Run) -> str:
    return f"{run.prefix}.deltas"


def releases(run: Run) -> str:
    return f"{run.prefix}.releases"


def answer(n: int) -> list[str]:
    """An answer of ``SENTENCES`` sentences cut into deltas mid-word; every fourth answer has
    an unsupported sentence (the fake judge fails it)."""
    sentences = [f"Paris is the capital of France, note {n}.{k} here. " for k in range(SENTENCES)]
    if n % 4 == 0:
        sentences[2] = f"HALLUCINATED: Lyon is the capital, note {n}. "
    text = "".join(sentences)
    cuts = sorted(random.Random(n).sample(range(1, len(text)), 2 * SENTENCES))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def delta_records(rid: str, pieces: list[str], seqs: range) -> list[bytes]:
    last = len(pieces) - 1
    out = []
    for seq in seqs:
        record: dict[str, Any] = {
            "response_id": rid,
            "seq": seq,
            "delta": pieces[seq],
            "final": seq == last,
        }
        if seq == 0:
            record |= {"question": "What is the capital of France?", "context": EVIDENCE}
        out.append(orjson.dumps(record))
    return out


async def publish(run: Run, batch: list[tuple[str, bytes]]) -> None:
    await produce(run.bootstrap, deltas(run), [(rid.encode(), v, None) for rid, v in batch])


def shuffled_with_repeats(batch: list[tuple[str, bytes]], seed: int) -> list[tuple[str, bytes]]:
    """``batch`` shuffled, a fifth of it repeated, each repeat before its answer's last delta
    arrives (a producer's retry; a repeat after the answer closed is a late delta, which a
    restart may read as a new answer: docs/delivery.md)."""
    rng = random.Random(seed)
    order = rng.sample(batch, len(batch))
    last = {rid: at for at, (rid, _) in enumerate(order)}
    keyed = [(float(at), item) for at, item in enumerate(order)]
    for at, (rid, value) in rng.sample(list(enumerate(order)), len(order) // 5):
        if at < last[rid]:
            keyed.append((rng.uniform(at, last[rid] - 0.5), (rid, value)))
    return [item for _, item in sorted(keyed, key=lambda pair: pair[0])]


async def wait_releases(run: Run, answers: int, service: Service, isolation: str) -> None:
    """Until release events of ``answers`` answers are readable (bounded)."""
    seen: set[str] = set()
    async with releases_reader(run, isolation) as consumer:
        for _ in range(200):
            batch = await consumer.getmany(timeout_ms=200)
            seen.update(
                orjson.loads(record.value)["response_id"]
                for records in batch.values()
                for record in records
            )
            if len(seen) >= answers:
                return
            assert service.alive(), run.logs()
    pytest.fail(f"release events of {len(seen)} answers, not {answers}\n{run.logs()}")


@contextlib.asynccontextmanager
async def releases_reader(run: Run, isolation: str) -> AsyncIterator[AIOKafkaConsumer]:
    consumer = AIOKafkaConsumer(
        releases(run),
        bootstrap_servers=run.bootstrap,
        group_id=None,
        auto_offset_reset="earliest",
        isolation_level=isolation,
    )
    await consumer.start()
    try:
        yield consumer
    finally:
        await consumer.stop()


async def read_releases(run: Run, isolation: str) -> dict[str, list[dict[str, Any]]]:
    """Every release event, by answer, in order (reading until a poll brings nothing)."""
    found: dict[str, list[dict[str, Any]]] = {}
    async with releases_reader(run, isolation) as consumer:
        quiet = 0
        while quiet < 3:
            batch = await consumer.getmany(timeout_ms=500)
            quiet = 0 if batch else quiet + 1
            for records in batch.values():
                for record in records:
                    event = orjson.loads(record.value)
                    found.setdefault(event["response_id"], []).append(event)
    return found


EXACTLY_ONCE = {"guarantee": "exactly_once", "transaction_interval_s": 0.2}
AT_LEAST_ONCE = {"guarantee": "at_least_once", "commit_interval_s": 0.2}


async def test_sigkill_mid_stream_exactly_once_gives_every_answer_one_final_verdict(
    run: Run,
) -> None:
    """Exactly-once: a read_committed reader sees one verdict per answer, no more."""
    duplicates = await sigkill_mid_stream(
        run, EXACTLY_ONCE | {"transactional_id_prefix": run.prefix}
    )
    assert duplicates == 0


async def test_sigkill_mid_stream_at_least_once_gives_every_answer_a_verdict(run: Run) -> None:
    """At-least-once: every answer has a verdict; answers decided since the last commit
    before the kill are judged again after the restart (counted: docs/delivery.md)."""
    duplicates = await sigkill_mid_stream(run, AT_LEAST_ONCE)
    print(f"at-least-once repeats after SIGKILL mid-stream: {duplicates} of {ANSWERS + 1}")
    assert duplicates <= ANSWERS // 2 + 1  # at most the answers the first run could decide


async def sigkill_mid_stream(run: Run, guarantee: dict[str, Any]) -> int:
    """Half of every answer's deltas (shuffled, some repeated) are published, the service is
    killed once spans are being released, the rest is published, and a restarted service
    (same instance id: exactly-once, it fences the first) finishes them: a verdict for every
    answer, the failing ones stopped at the failing span, the abandoned one timed out. The
    verdicts beyond one per answer."""
    committed = guarantee["guarantee"] == "exactly_once"
    isolation = "read_committed" if committed else "read_uncommitted"
    rids = [f"{run.prefix}-s{n}" for n in range(ANSWERS)]
    pieces = {rid: answer(n) for n, rid in enumerate(rids)}
    first_half = [
        (rid, v)
        for n, rid in enumerate(rids)
        for v in delta_records(rid, pieces[rid], range(len(pieces[rid]) if n % 2 else 4))
    ]
    abandoned = f"{run.prefix}-abandoned"
    first_half += [(abandoned, v) for v in delta_records(abandoned, ["Paris is ", "the"], range(1))]
    await publish(run, shuffled_with_repeats(first_half, 1))
    config = guarantee | {
        "topics": {**run_topics(run), "deltas": deltas(run), "releases": releases(run)},
        "stream": {"timeout_s": TIMEOUT_S},
    }
    first = run.service("s", **config)
    async with Verdicts(run.bootstrap, run.verdicts, isolation_level=isolation) as seen:
        await wait_releases(run, ANSWERS // 4, first, isolation)  # spans judged, answers half in
        first.signal(signal.SIGKILL)
        first.wait(10)
        rest = [
            (rid, v)
            for n, rid in enumerate(rids)
            if n % 2 == 0
            for v in delta_records(rid, pieces[rid], range(2, len(pieces[rid])))
        ]  # seq 2 and 3 again: repeats across the kill
        await publish(run, shuffled_with_repeats(rest, 2))
        second = run.service("s", **config)
        await seen.wait_for(ANSWERS + 1, run, watch=(second,))
        await seen.settle(2.0)
        assert set(seen.counts) == {*rids, abandoned}
        if committed:
            assert seen.duplicates == 0, [k for k, v in seen.counts.items() if v > 1][:10]
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0, run.logs()
    verdicts = await read_verdicts(run, isolation)
    assert verdicts[abandoned]["reason"] == "stream_timeout"
    for n, rid in enumerate(rids):
        assert verdicts[rid]["label"] == ("fail" if n % 4 == 0 else "pass"), verdicts[rid]
    events = await read_releases(run, isolation)
    for n, rid in enumerate(rids):
        last = events[rid][-1]
        assert last["final"], last
        assert last["stopped"] == (n % 4 == 0), last
        text = "".join(pieces[rid])
        assert last["released_up_to"] == (text.index("HALLUCINATED") if n % 4 == 0 else len(text))
    return seen.duplicates


def run_topics(run: Run) -> dict[str, str]:
    return {
        "requests": run.requests,
        "verdicts": run.verdicts,
        "quarantine": f"{run.prefix}.quarantine",
        "dlq": f"{run.prefix}.dlq",
    }


async def read_verdicts(run: Run, isolation: str) -> dict[str, dict[str, Any]]:
    consumer = AIOKafkaConsumer(
        run.verdicts,
        bootstrap_servers=run.bootstrap,
        group_id=None,
        auto_offset_reset="earliest",
        isolation_level=isolation,
    )
    await consumer.start()
    found: dict[str, dict[str, Any]] = {}
    try:
        quiet = 0
        while quiet < 3:  # until a poll brings nothing, three times
            batch = await consumer.getmany(timeout_ms=500)
            quiet = 0 if batch else quiet + 1
            for records in batch.values():
                for record in records:
                    verdict = orjson.loads(record.value)
                    found[verdict["request_id"]] = verdict
    finally:
        await consumer.stop()
    return found
