"""Latency that Kafka request-reply adds beyond the judge call, at half of measured capacity.

    .venv/bin/python bench/request_reply.py --bootstrap 127.0.0.1:39092 --seconds 8

For each target process (all on 127.0.0.1, the client in this process):

* ``run`` (``groundguard run``, instant fake judge, ``reply.allowed_prefixes`` set), once with
  the default producer ``kafka.linger_ms`` (5) and once with ``linger_ms: 0``;
* ``echo``: the baseline, Kafka's own request-reply round trip, tuned as ``run``'s clients
  are: an aiokafka consumer in a group (``read_committed``, offsets committed every second
  beside the loop, as ``run`` does) that answers every request on its reply topic with a fixed
  verdict record, through an idempotent ``acks=all`` producer without linger.

Each target is warmed up, its capacity measured with ``--concurrency`` screens in a closed loop
for ``--capacity-seconds``, then requests are sent open-loop for ``--seconds``: ``run`` at half
its capacity, the echo at the same rate as the first ``run`` target (a fair baseline: the same
load on broker and client), and at half of its own capacity. Added latency = the client's
round trip minus the verdict's ``latency_ms`` (the judge call). Each round trip is split, from
the reply record's timestamp (when the target handed it to its producer): request sent ->
reply handed to the producer (the client's produce, the target's fetch, judge and routing),
and reply handed -> arrived at the client (the target's produce, the client's fetch).
Goal (issue 12): p99 <= 50 ms for ``run``. ``--profile`` samples each ``run`` target with
py-spy during its paced phase and prints where its CPU goes. Figures depend on the machine's
load: compare the rows of one run, and the ratio to ``echo``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import ConsumerRecord

# bench/ is a folder of scripts: run them as files, so their folder is on sys.path.
from harness import (
    ServiceProcess,
    create_topics,
    kafka_broker,
    percentile,
    sample_process,
    service_config,
    start_profile,
    summarize_profile,
)
from throughput import instant_judge, owners

from consumers.heap import freeze_startup
from consumers.records import SourceCoordinates, VerdictRecord
from consumers.reply import ScreeningClient, unanswered
from consumers.reply.client import FETCH_MAX_WAIT_MS
from consumers.reply.headers import CORRELATION_ID_HEADER, ReplyTo, correlation_of, reply_target
from guard.models import JudgeRequest

PREFIX = "bench.reply."
EOS_FETCH_MAX_WAIT_MS = 10  # the client's, against exactly-once (ScreeningClient's docstring)
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
    parser.add_argument(
        "--targets",
        default="run5,run0,echo",
        help="comma-separated, in order: run5 (linger_ms 5, the default), run0, echo, eos "
        "(exactly-once, linger_ms 5, transaction_interval_s 0.1: the default interval; the "
        "client's fetch_max_wait_ms 10)",
    )
    parser.add_argument(
        "--rate", type=float, help="pace every target at this rate (default: half of capacity)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="sample each run target with py-spy (CPU only) during its paced phase and print "
        "where its CPU goes; py-spy pauses the target to sample it, so a profiled run's "
        "latency figures are not comparable to an unprofiled one",
    )
    parser.add_argument("--echo", help=argparse.SUPPRESS)  # internal: run the echo target
    return parser.parse_args(argv)


# --------------------------------------------------------------------------- the echo target


async def echo(bootstrap: str, topic: str) -> None:
    """Answer each request on its reply topic with a fixed verdict record, at once; commit the
    offsets every second beside the loop, as ``run`` does."""
    verdict = unanswered(JudgeRequest(output="x"), "echo", "echo", "echo baseline")
    record = VerdictRecord(
        **verdict.model_dump(), input=SourceCoordinates(topic=topic, partition=0, offset=0)
    )
    template = record.model_dump_json().encode()  # its request_id: the request's, spliced in
    assert template.count(b'"request_id":"echo"') == 1
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"echo-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="latest",
        enable_auto_commit=False,
        isolation_level="read_committed",
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, linger_ms=0, acks="all", enable_idempotence=True
    )
    await consumer.start()
    await producer.start()
    committing: asyncio.Task[None] | None = None
    last_commit = time.monotonic()
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=100)
            for records in batch.values():
                for r in records:
                    reply = reply_target(r.headers, allowed_prefixes=(PREFIX,))
                    if isinstance(reply, ReplyTo):
                        request_id = orjson.dumps(orjson.loads(r.value)["id"])
                        value = template.replace(b'"echo"', request_id, 1)
                        await producer.send(
                            reply.topic,
                            value,
                            key=r.key,
                            headers=[(CORRELATION_ID_HEADER, reply.correlation_id)],
                        )
            if time.monotonic() - last_commit >= 1.0 and (committing is None or committing.done()):
                committing = asyncio.create_task(consumer.commit())
                last_commit = time.monotonic()
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
    """Notes, per reply, its record's timestamp (when the target handed it to its producer)
    and when it arrived, by request id, to split the round trip (bench only: reads a private
    hook)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrivals: dict[str, tuple[float, float]] = {}

    def _answer(self, record: ConsumerRecord[Any, Any]) -> None:
        arrived = time.time()
        future = self._pending.get(correlation_of(record.headers or ()) or b"")
        super()._answer(record)
        if future is not None and future.done() and not future.exception():
            self.arrivals[future.result().request_id] = (record.timestamp / 1000, arrived)


Sample = tuple[float, float, float]  # added latency; sent -> handed; handed -> arrived (s)


async def screen_once(client: TimedClient, out: list[Sample]) -> bool:
    """One screen; its sample in ``out``; whether it was answered."""
    sent = time.time()
    started = time.perf_counter()
    verdict = await client.screen(REQUEST, timeout=10)
    rtt = time.perf_counter() - started
    timing = client.arrivals.pop(verdict.request_id, None)
    if timing is None or (verdict.error is not None and verdict.error.kind == "reply_timeout"):
        return False
    handed, arrived = timing
    out.append((rtt - verdict.latency_ms / 1000, handed - sent, arrived - handed))
    return True


async def warm_up(client: ScreeningClient, deadline_s: float = 90.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        verdict = await client.screen(REQUEST, timeout=5)
        if verdict.reason != "reply_timeout":
            return
    raise RuntimeError("the target never answered")


async def sequential(client: TimedClient, n: int) -> list[Sample]:
    """One request at a time, 20 ms apart: the latency without queueing."""
    samples: list[Sample] = []
    for _ in range(n):
        await screen_once(client, samples)
        await asyncio.sleep(0.02)
    return samples


async def capacity(client: TimedClient, concurrency: int, seconds: float) -> float:
    samples: list[Sample] = []
    end = time.monotonic() + seconds

    async def loop() -> int:
        answered = 0
        while time.monotonic() < end:
            answered += await screen_once(client, samples)
        return answered

    started = time.monotonic()
    answered = sum(await asyncio.gather(*(loop() for _ in range(concurrency))))
    return answered / (time.monotonic() - started)


async def paced(client: TimedClient, rate: float, seconds: float) -> list[Sample]:
    samples: list[Sample] = []
    tasks: list[asyncio.Task[bool]] = []
    started = time.monotonic()
    for i in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, started + i / rate - time.monotonic()))
        tasks.append(asyncio.create_task(screen_once(client, samples)))
    await asyncio.gather(*tasks)
    return samples


def figures(samples: list[Sample]) -> dict[str, Any]:
    """p50/p99 (ms) of the added latency and of each leg."""
    out: dict[str, Any] = {"n": len(samples)}
    for i, name in enumerate(("", "_in", "_out")):
        ms = [s[i] * 1000 for s in samples]
        out[f"p50{name}"], out[f"p99{name}"] = percentile(ms, 50), percentile(ms, 99)
    out["max"] = max((s[0] * 1000 for s in samples), default=float("nan"))
    return out


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


def profile_path(target: ServiceProcess, phase: int) -> Path:
    return target.workdir / f"profile-{target.config['group_id']}-{phase}.txt"


def profile_of(
    target: ServiceProcess, args: argparse.Namespace, phase: int
) -> subprocess.Popen[bytes] | None:
    """py-spy on a ``run`` target (not the echo) for the paced phase, when ``--profile``."""
    if not args.profile or isinstance(target, EchoProcess) or target.proc is None:
        return None
    return start_profile(target.proc.pid, args.seconds, profile_path(target, phase))


def profile_rows(target: ServiceProcess, phase: int) -> list[str]:
    path = profile_path(target, phase)
    return [*owners(path), "", *summarize_profile(path, top=30)]


def cpu_of(target: ServiceProcess) -> float:
    """CPU seconds the target's process used so far."""
    assert target.proc is not None
    sample = sample_process(target.proc.pid)
    return sample.cpu_s if sample is not None else float("nan")


async def measure(
    target: ServiceProcess,
    bootstrap: str,
    requests: str,
    args: argparse.Namespace,
    rates: list[float | None],
    fetch_max_wait_ms: int = FETCH_MAX_WAIT_MS,
) -> dict[str, Any]:
    """The target's figures one by one, its capacity, and paced at each of ``rates`` (None:
    half of its capacity)."""
    target.start()
    try:
        async with TimedClient(
            bootstrap,
            request_topic=requests,
            reply_topic_prefix=PREFIX,
            fetch_max_wait_ms=fetch_max_wait_ms,
        ) as client:
            await warm_up(client)
            alone = figures(await sequential(client, args.sequential))
            cap = await capacity(client, args.concurrency, args.capacity_seconds)
            runs = []
            for rate in rates if args.rate is None else [args.rate]:
                rate = cap / 2 if rate is None else rate
                before, mine = cpu_of(target), time.process_time()
                spy = profile_of(target, args, len(runs))
                found = figures(await paced(client, rate, args.seconds))
                if spy is not None:
                    spy.wait()
                    found["profile"] = profile_rows(target, len(runs))
                found["cpu_ms"] = (cpu_of(target) - before) * 1000 / max(1.0, found["n"])
                found["client_cpu_ms"] = (time.process_time() - mine) * 1000 / max(1.0, found["n"])
                runs.append((rate, found))
    finally:
        target.stop()
    return {"alone": alone, "capacity": cap, "paced": runs}


async def main_async(args: argparse.Namespace) -> None:
    with kafka_broker(args.bootstrap) as bootstrap, tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        results: dict[str, dict[str, Any]] = {}
        targets = {
            "run5": ("run linger_ms=5", 5),
            "run0": ("run linger_ms=0", 0),
            "eos": ("run exactly-once", 5),
        }
        for key in args.targets.split(","):
            name, linger = targets.get(key, ("echo", None))
            eos = {"guarantee": "exactly_once", "transactional_id_prefix": "bench-rr"}
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
                **(eos if key == "eos" else {}),
            )
            if linger is None:  # the echo: at the first run's rate, then at half its own
                rates = [*[r["paced"][0][0] for r in results.values()][:1], None]
                target: ServiceProcess = EchoProcess(config, workdir)
                results[name] = await measure(target, bootstrap, requests, args, rates)
            else:
                target = ServiceProcess(config, workdir)
                wait_ms = EOS_FETCH_MAX_WAIT_MS if key == "eos" else FETCH_MAX_WAIT_MS
                results[name] = await measure(target, bootstrap, requests, args, [None], wait_ms)
        acks = await produce_acks(bootstrap, requests)
        report(args, results)
        for linger, ms in acks.items():
            print(
                f"one produce acknowledgement, linger_ms={linger}: "
                f"p50 {percentile(ms, 50):.1f} ms, p99 {percentile(ms, 99):.1f} ms"
            )


def report(args: argparse.Namespace, results: dict[str, dict[str, Any]]) -> None:
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"paced phases {args.seconds:g}s; client linger_ms=0, fetch_max_wait_ms=100 (eos: 10); "
        "ms: added latency p50/p99 (max), and p50/p99 of each leg: "
        "sent -> reply handed to the target's producer | -> arrived"
    )
    print(
        f"{'target':<16} {'phase':<22} {'n':>5} {'p50':>6} {'p99':>6} {'max':>6} | "
        f"{'in p50':>6} {'p99':>6} | {'out p50':>7} {'p99':>6} | cpu ms/request: target, client"
    )

    def row(name: str, phase: str, f: dict[str, Any]) -> None:
        print(
            f"{name:<16} {phase:<22} {f['n']:>5.0f} {f['p50']:>6.1f} {f['p99']:>6.1f} "
            f"{f['max']:>6.0f} | {f['p50_in']:>6.1f} {f['p99_in']:>6.1f} | "
            f"{f['p50_out']:>7.1f} {f['p99_out']:>6.1f}"
            + (f" | {f['cpu_ms']:.2f}, {f['client_cpu_ms']:.2f}" if "cpu_ms" in f else "")
        )

    for name, r in results.items():
        row(name, "one by one", r["alone"])
        for rate, f in r["paced"]:
            row(name, f"{rate:.0f}/s of {r['capacity']:.0f}/s", f)
    for name, r in results.items():
        for rate, f in r["paced"]:
            if f.get("profile"):
                print(f"where {name}'s CPU goes at {rate:.0f}/s (py-spy, share of CPU samples):")
                print("\n".join(f"  {line}" for line in f["profile"]))
    echo = results.get("echo")
    for name, r in results.items():
        if echo is None or name == "echo":
            continue
        same_rate = echo["paced"][0][1]
        f = r["paced"][0][1]
        met = "met" if f["p99"] <= 50 else "NOT met"
        print(
            f"{name}: one by one p50 {r['alone']['p50'] - echo['alone']['p50']:+.1f} ms, "
            f"p99 {r['alone']['p99'] - echo['alone']['p99']:+.1f} ms over echo; at half "
            f"capacity p50 {f['p50'] / same_rate['p50']:.2f}x, "
            f"p99 {f['p99'] / same_rate['p99']:.2f}x the echo at the first run's rate; "
            f"goal p99 <= 50 ms: {met}"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    freeze_startup()  # the load generator and the echo pause for no full collection, as run
    if args.echo:
        asyncio.run(echo(args.bootstrap, args.echo))
        return 0
    asyncio.run(main_async(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
