"""Latency that Kafka request-reply adds beyond the judge call, at half of measured capacity.

    .venv/bin/python bench/request_reply.py --bootstrap 127.0.0.1:39092 --seconds 8

For each target process (all on 127.0.0.1, the client in this process):

* ``echo``: a bare aiokafka consumer that answers every request on its reply topic with a
  fixed verdict record: the baseline, Kafka's own request-reply round trip;
* ``run`` (``groundguard run``, instant fake judge, ``reply.allowed_prefixes`` set), once with
  the default producer ``kafka.linger_ms`` (5) and once with ``linger_ms: 0``.

Each target is warmed up, its capacity measured with ``--concurrency`` screens in a closed loop
for ``--capacity-seconds``, then requests are sent open-loop at half that rate for ``--seconds``.
Added latency = the client's round trip minus the verdict's ``latency_ms`` (the judge call).
Goal (issue 12): p99 <= 50 ms for ``run``. Figures depend on the machine's load: compare the
rows of one run, and the ratio to ``echo``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import ConsumerRecord

# bench/ is a folder of scripts: run them as files, so their folder is on sys.path.
from harness import (
    ServiceProcess,
    create_topics,
    kafka_broker,
    percentile,
    service_config,
)
from throughput import instant_judge

from consumers.records import SourceCoordinates, VerdictRecord
from consumers.reply import ScreeningClient, unanswered
from consumers.reply.headers import CORRELATION_ID_HEADER, ReplyTo, reply_target
from guard.models import JudgeRequest

PREFIX = "bench.reply."
REQUEST = {
    "output": "The Eiffel Tower is in Paris.",
    "context": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="a running broker (default: start one)")
    parser.add_argument("--seconds", type=float, default=8.0, help="paced phase per target")
    parser.add_argument("--capacity-seconds", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, default=32, help="closed-loop screens")
    parser.add_argument("--sequential", type=int, default=100, help="requests sent one by one")
    parser.add_argument("--echo", help=argparse.SUPPRESS)  # internal: run the echo target
    return parser.parse_args(argv)


# --------------------------------------------------------------------------- the echo target


async def echo(bootstrap: str, topic: str) -> None:
    """Answer each request on its reply topic with a fixed verdict record, at once."""
    verdict = unanswered(JudgeRequest(output="x"), "echo", "echo", "echo baseline")
    record = VerdictRecord(
        **verdict.model_dump(), input=SourceCoordinates(topic=topic, partition=0, offset=0)
    )
    value = record.model_dump_json().encode()
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"echo-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="latest",
        enable_auto_commit=True,
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=0, acks="all")
    await consumer.start()
    await producer.start()
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=100)
            for records in batch.values():
                for r in records:
                    reply = reply_target(r.headers, allowed_prefixes=(PREFIX,))
                    if isinstance(reply, ReplyTo):
                        await producer.send(
                            reply.topic,
                            value,
                            key=r.key,
                            headers=[(CORRELATION_ID_HEADER, reply.correlation_id)],
                        )
    finally:
        await consumer.stop()
        await producer.stop()


class EchoProcess(ServiceProcess):
    """The echo target (this script with --echo) in its own process."""

    def start(self) -> None:
        cmd = [
            sys.executable,
            __file__,
            "--bootstrap",
            self.config["bootstrap_servers"],
            "--echo",
            self.config["topics"]["requests"],
        ]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )


# --------------------------------------------------------------------------- measuring


class TimedClient(ScreeningClient):
    """Notes, per reply, its record's timestamp (when ``run`` handed it to its producer) and
    when it arrived, to split the round trip (bench only: reads a private hook)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrivals: list[tuple[float, float]] = []

    def _answer(self, record: ConsumerRecord[Any, Any]) -> None:
        self.arrivals.append((record.timestamp / 1000, time.time()))
        super()._answer(record)


async def split_once(client: TimedClient, splits: list[tuple[float, float, float]]) -> None:
    """One screen's round trip in three (ms): request sent -> verdict built in ``run`` (its
    ``created_at``; judge call included), verdict built -> reply handed to the producer, reply
    handed to the producer -> arrived at the client. Wall clocks of one machine."""
    sent = time.time()
    verdict = await client.screen(REQUEST, timeout=10)
    if verdict.reason == "reply_timeout" or not client.arrivals:
        return
    built = verdict.created_at.timestamp()
    handed, arrived = client.arrivals[-1]
    splits.append(((built - sent) * 1000, (handed - built) * 1000, (arrived - handed) * 1000))


async def screen_once(client: ScreeningClient, out: list[float]) -> None:
    started = time.perf_counter()
    verdict = await client.screen(REQUEST, timeout=10)
    rtt = time.perf_counter() - started
    if verdict.error is None or verdict.error.kind != "reply_timeout":
        out.append(rtt - verdict.latency_ms / 1000)


async def warm_up(client: ScreeningClient, deadline_s: float = 90.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        verdict = await client.screen(REQUEST, timeout=5)
        if verdict.reason != "reply_timeout":
            return
    raise RuntimeError("the target never answered")


async def sequential(
    client: TimedClient, n: int
) -> tuple[list[float], list[tuple[float, float, float]]]:
    """One request at a time, 20 ms apart: the latency without queueing, and its split."""
    added: list[float] = []
    splits: list[tuple[float, float, float]] = []
    for _ in range(n):
        await screen_once(client, added)
        await asyncio.sleep(0.02)
        await split_once(client, splits)
        await asyncio.sleep(0.02)
    return added, splits


async def capacity(client: ScreeningClient, concurrency: int, seconds: float) -> float:
    done: list[float] = []
    end = time.monotonic() + seconds

    async def loop() -> None:
        while time.monotonic() < end:
            await screen_once(client, done)

    started = time.monotonic()
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    return len(done) / (time.monotonic() - started)


async def paced(client: ScreeningClient, rate: float, seconds: float) -> list[float]:
    added: list[float] = []
    tasks: list[asyncio.Task[None]] = []
    started = time.monotonic()
    for i in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, started + i / rate - time.monotonic()))
        tasks.append(asyncio.create_task(screen_once(client, added)))
    await asyncio.gather(*tasks)
    return added


async def produce_acks(bootstrap: str, topic: str, n: int = 40) -> dict[int, list[float]]:
    """One produce acknowledgement at a time (acks=all, idempotent), ``linger_ms`` 5 and 0
    alternated twice: what the service's linger costs each reply."""
    acks: dict[int, list[float]] = {5: [], 0: []}
    for linger in (5, 0, 5, 0):
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, linger_ms=linger, acks="all", enable_idempotence=True
        )
        await producer.start()
        try:
            for _ in range(n):
                started = time.perf_counter()
                await producer.send_and_wait(topic, b"x" * 600)
                acks[linger].append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(0.02)
        finally:
            await producer.stop()
    return acks


async def measure(
    target: ServiceProcess, bootstrap: str, requests: str, args: argparse.Namespace
) -> dict[str, Any]:
    target.start()
    try:
        async with TimedClient(
            bootstrap, request_topic=requests, reply_topic_prefix=PREFIX
        ) as client:
            await warm_up(client)
            added, splits = await sequential(client, args.sequential)
            alone = [a * 1000 for a in added]
            rate = await capacity(client, args.concurrency, args.capacity_seconds)
            ms = [a * 1000 for a in await paced(client, rate / 2, args.seconds)]
    finally:
        target.stop()
    return {
        "split_p50": [percentile([s[i] for s in splits], 50) for i in range(3)],
        "alone_p50": percentile(alone, 50),
        "alone_p99": percentile(alone, 99),
        "capacity": rate,
        "n": len(ms),
        "p50": percentile(ms, 50),
        "p99": percentile(ms, 99),
        "max": max(ms, default=float("nan")),
    }


async def main_async(args: argparse.Namespace) -> None:
    with kafka_broker(args.bootstrap) as bootstrap, tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        results: dict[str, dict[str, Any]] = {}
        targets = [("echo", None), ("run linger_ms=5", 5), ("run linger_ms=0", 0)]
        for name, linger in targets:
            run_id = uuid.uuid4().hex[:8]
            requests = f"bench-rr-{run_id}"
            await create_topics(
                bootstrap,
                {
                    requests: 1,
                    f"{requests}.verdicts": 1,
                    f"{requests}.quarantine": 1,
                    f"{requests}.dlq": 1,
                },
            )
            config = service_config(
                bootstrap=bootstrap,
                requests=requests,
                verdicts=f"{requests}.verdicts",
                group=f"bench-rr-{run_id}",
                concurrency=256,
                judge=instant_judge(workdir),
                reply={"allowed_prefixes": [PREFIX]},
                kafka={"linger_ms": linger or 0},
                log={"level": "warning"},
            )
            target = (
                EchoProcess(config, workdir) if linger is None else ServiceProcess(config, workdir)
            )
            results[name] = await measure(target, bootstrap, requests, args)
        acks = await produce_acks(bootstrap, requests)
        report(args, results)
        for linger, ms in acks.items():
            print(
                f"one produce acknowledgement, linger_ms={linger}: "
                f"p50 {percentile(ms, 50):.1f} ms, p99 {percentile(ms, 99):.1f} ms"
            )


def report(args: argparse.Namespace, results: dict[str, dict[str, Any]]) -> None:
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    print(
        f"paced phase {args.seconds:g}s at half of capacity; "
        "client linger_ms=0, fetch_max_wait_ms=100"
    )
    print(
        f"{'':<18} {'one by one':>17} | {'':>10} {'at half of capacity':>33}\n"
        f"{'target':<18} {'p50 ms':>8} {'p99 ms':>8} | {'capacity/s':>10} {'n':>6} "
        f"{'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
    )
    for name, r in results.items():
        alone = f"{r['alone_p50']:>8.1f} {r['alone_p99']:>8.1f}"
        paced = f"{r['p50']:>8.1f} {r['p99']:>8.1f} {r['max']:>8.1f}"
        print(f"{name:<18} {alone} | {r['capacity']:>10.0f} {r['n']:>6} {paced}")
    print("one by one, p50 ms: sent -> verdict built | built -> reply to producer | -> client")
    for name, r in results.items():
        if name != "echo":
            a, b, c = r["split_p50"]
            print(f"  {name:<16} {a:>8.1f} | {b:>8.1f} | {c:>8.1f}")
    base = results["echo"]
    for name, r in results.items():
        if name == "echo":
            continue
        met = "met" if r["p99"] <= 50 else "NOT met"
        print(
            f"{name}: one by one p50 {r['alone_p50'] - base['alone_p50']:+.1f} ms over echo; "
            f"at half capacity p50 {r['p50'] / base['p50']:.2f}x echo "
            f"({r['p50'] - base['p50']:+.1f} ms), p99 {r['p99'] / base['p99']:.2f}x echo "
            f"({r['p99'] - base['p99']:+.1f} ms); goal p99 <= 50 ms: {met}"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.echo:
        asyncio.run(echo(args.bootstrap, args.echo))
        return 0
    asyncio.run(main_async(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
