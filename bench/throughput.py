"""Throughput of ``groundguard run`` against a slow judge, next to what a plain consumer does.

Not a test: it prints figures. One run measures, on the same broker and machine:

1. the service (a subprocess, ``python -m consumers run``) judging a backlog of N requests with
   the OpenAI provider against the loopback fake judge (its own process, latency L per call) at
   concurrency C: verdicts/s, efficiency = verdicts/s / (C/L), peak RSS, CPU; and the same with
   the in-process fake judge sleeping L per call (``provider: fake``, ``fake_latency_s``): the
   runtime's own parallelism, without the CPU the SDK's HTTP stack spends on every call;
2. the same service fed at half the ideal rate: added latency per message (time in groundguard
   beyond the judge call);
3. the baseline: a plain aiokafka loop, one message at a time per partition (what a plain
   consumer or FastStream's workers do), calling the same fake judge through the same SDK;
4. the service's own ceiling with an instant in-process judge (``provider: fake``), in
   verdicts/s and verdicts per CPU-second of the service process;
5. a bare consume-and-produce copy loop (aiokafka, no judging), as the Kafka client's ceiling.

    .venv/bin/python bench/throughput.py                      # L=200 ms, C=128, 4 partitions
    .venv/bin/python bench/throughput.py --latency-ms 500 --concurrency 256 --n 8000
    .venv/bin/python bench/throughput.py --bootstrap 127.0.0.1:9092   # an existing broker

See bench/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

# bench/ is a folder of scripts: run them as files, so their folder is on sys.path.
from harness import (
    PAYLOADS,
    FakeJudgeServer,
    Out,
    Payload,
    ServiceProcess,
    create_topics,
    kafka_broker,
    percentile,
    produce_backlog,
    produce_paced,
    read_topic,
    service_config,
    start_profile,
    summarize_profile,
)
from openai import AsyncOpenAI

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "explanation": {"type": "string"},
        "claims": {"type": "array"},
        "score": {"type": "integer"},
    },
    "required": ["explanation", "claims", "score"],
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--latency-ms", type=float, default=200.0, help="fake judge latency L")
    p.add_argument("--concurrency", type=int, default=128, help="service in-flight limit C")
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument(
        "--n",
        type=int,
        default=0,
        help="backlog for the slow-judge run (default: ~20 s of ideal work)",
    )
    p.add_argument(
        "--paced-seconds",
        type=float,
        default=6.0,
        help="length of the added-latency run, fed at --paced-fraction of C/L",
    )
    p.add_argument("--paced-fraction", type=float, default=0.5)
    p.add_argument("--baseline-seconds", type=float, default=10.0)
    p.add_argument(
        "--ceiling-n",
        type=int,
        default=20000,
        help="messages for the instant-judge ceiling and the copy loop",
    )
    p.add_argument(
        "--payload",
        choices=sorted(PAYLOADS),
        default="realistic",
        help="requests: realistic 1-4 KB (bench/data/realistic-dev.jsonl rows, default) or "
        "the small ~0.6 KB one of earlier runs; the copy loop copies the same",
    )
    p.add_argument(
        "--copy-n",
        type=int,
        default=0,
        help="messages for the copy loop (default: --ceiling-n); realistic requests cost the "
        "service ~5 ms of CPU each, the copy loop ~0.2 ms, so a short ceiling run wants a "
        "longer copy",
    )
    p.add_argument("--bootstrap", help="use this broker instead of starting one")
    p.add_argument(
        "--profile",
        action="store_true",
        help="sample the service with py-spy (CPU only) during the slow-judge and the "
        "instant-judge backlogs and print where its CPU goes",
    )
    p.add_argument(
        "--workdir",
        type=Path,
        help="keep the service configs and logs here (default: a temporary folder)",
    )
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["service", "inprocess", "baseline", "ceiling", "copy"],
    )
    return p.parse_args(argv)


MIN_RATE = 20  # msgs/s a phase may take at worst (realistic requests, loaded machine)


def patience(n: int, seconds_per_msg: float) -> float:
    """How long to wait for ``n`` verdicts: ``seconds_per_msg`` each, or ``MIN_RATE`` per
    second if that is longer, plus a minute of start-up."""
    return 60 + n * max(seconds_per_msg, 1 / MIN_RATE)


def unique(prefix: str) -> str:
    return f"bench-{prefix}-{uuid.uuid4().hex[:8]}"


@dataclass
class Rate:
    """Verdicts/s over the records from 10 % (the ceiling: 25 %) to 90 % of a run (start-up,
    the first fetches and the tail excluded)."""

    count: int
    seconds: float
    t0_s: float
    t1_s: float

    @property
    def per_s(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else float("nan")


# The service judges its first fetches (about 2,500 realistic messages here) before its first
# verdict is out: a window opening at 10 % of a short backlog counts verdicts whose CPU was
# spent before it (3,000 messages: ~2,000 verdicts per CPU-s against ~1,000 in steady state).
# The instant-judge ceiling, CPU-bound, is measured past a quarter of a backlog of at least
# CEILING_MIN_N messages.
CEILING_WARMUP = 0.25
CEILING_MIN_N = 10000


def steady_rate(timestamps_ms: list[int], warmup: float = 0.1) -> Rate:
    """The rate over the records from ``warmup`` to 90 % of the timestamps."""
    ts = sorted(timestamps_ms)
    lo, hi = int(len(ts) * warmup), int(len(ts) * 0.9)
    if hi - lo < 2:
        lo, hi = 0, len(ts) - 1
    seconds = (ts[hi] - ts[lo]) / 1000
    return Rate(hi - lo, seconds, ts[lo] / 1000, ts[hi] / 1000)


# --------------------------------------------------------------------------- the service


async def run_service(
    bootstrap: str,
    workdir: Path,
    *,
    name: str,
    n: int,
    partitions: int,
    concurrency: int,
    judge: dict[str, Any],
    timeout_s: float,
    make: Payload,
    profile: Path | None = None,
    after: Callable[[ServiceProcess, str, str, float], Awaitable[dict[str, Any]]] | None = None,
    warmup: float = 0.1,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Backlog of ``n`` requests, then start the service and wait for every verdict (rate and
    CPU from ``warmup`` to 90 % of them). ``env`` is added to the service's environment."""
    requests, verdicts = unique(f"{name}-in"), unique(f"{name}-verdicts")
    await create_topics(
        bootstrap,
        {
            requests: partitions,
            verdicts: partitions,
            f"{requests}.quarantine": partitions,
            f"{requests}.dlq": partitions,
        },
    )
    await produce_backlog(bootstrap, requests, "backlog", n, make)
    service = ServiceProcess(
        service_config(
            bootstrap=bootstrap,
            requests=requests,
            verdicts=verdicts,
            group=unique(name),
            concurrency=concurrency,
            judge=judge,
        ),
        workdir,
        env=env or {},
    )
    started = time.time()
    service.start()
    spy = None

    def watch(seen: int) -> None:
        nonlocal spy
        service.sample()
        if profile is not None and spy is None and seen > 0 and service.proc is not None:
            spy = start_profile(service.proc.pid, min(10.0, 0.6 * n / concurrency), profile)
        if not service.alive():
            raise RuntimeError(f"the service exited early:\n{service.tail()}")

    try:
        outs = await read_topic(bootstrap, verdicts, expected=n, timeout_s=timeout_s, on_poll=watch)
        service.sample()
        result = summarize_backlog(outs, n, service, started, warmup)
        if after is not None:
            result |= await after(service, requests, verdicts, result["rate"].per_s)
        service.sample()
        result["peak_rss_mb"] = service.peak_rss_mb
    finally:
        if spy is not None:
            spy.wait(30)
        result_status = service.stop()
    if profile is not None:
        result["profile"] = summarize_profile(profile)
        result["owners"] = owners(profile)
    result["exit_status"] = result_status
    return result


def summarize_backlog(
    outs: list[Out], n: int, service: ServiceProcess, started: float, warmup: float = 0.1
) -> dict[str, Any]:
    ids = {o.value.get("request_id") for o in outs}
    if len(ids) < n:
        raise RuntimeError(f"only {len(ids)} of {n} verdicts arrived:\n{service.tail()}")
    rate = steady_rate([o.timestamp_ms for o in outs], warmup)
    cpu = service.cpu_between(rate.t0_s, rate.t1_s)
    return {
        "verdicts": len(outs),
        "ids": len(ids),
        "rate": rate,
        "wall_s": max(o.timestamp_ms for o in outs) / 1000 - started,
        "cpu_s": cpu,
        "per_cpu_s": rate.count / cpu if cpu > 0 else float("nan"),
    }


def paced_phase(
    args: argparse.Namespace, bootstrap: str, make: Payload
) -> Callable[[ServiceProcess, str, str, float], Awaitable[dict[str, Any]]]:
    """Feeds the running service at a fraction of what it just sustained (of C/L, if less),
    so that nothing queues, and measures per-message added latency."""

    async def run(
        service: ServiceProcess, requests: str, verdicts: str, measured: float
    ) -> dict[str, Any]:
        ideal = args.concurrency / (args.latency_ms / 1000)
        rate = args.paced_fraction * min(ideal, measured)
        sent = await produce_paced(bootstrap, requests, "paced", rate, args.paced_seconds, make)
        outs = await read_topic(
            bootstrap,
            verdicts,
            expected=args.n + len(sent),
            timeout_s=60 + args.paced_seconds,
            on_poll=lambda _n: service.sample(),
        )
        beyond_nominal, beyond_call = [], []
        for o in outs:
            rid = o.value.get("request_id")
            if rid not in sent:
                continue
            e2e = o.timestamp_ms - sent[rid]
            beyond_nominal.append(e2e - args.latency_ms)
            beyond_call.append(e2e - float(o.value.get("latency_ms") or args.latency_ms))
        return {
            "paced_rate": rate,
            "paced_sent": len(sent),
            "paced_got": len(beyond_nominal),
            "added_nominal": beyond_nominal,
            "added_call": beyond_call,
        }

    return run


# --------------------------------------------------------------------------- the baseline


async def judge_once(client: AsyncOpenAI, payload: dict[str, Any]) -> dict[str, Any]:
    """One judge call, as a hand-written consumer would make it."""
    reply = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "Judge whether the answer is grounded."},
            {
                "role": "user",
                "content": f"Evidence: {payload.get('context')}\n\nAnswer: {payload.get('output')}",
            },
        ],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "assessment", "schema": JUDGE_SCHEMA},
        },
    )
    assessment = orjson.loads(reply.choices[0].message.content or "{}")
    score = int(assessment.get("score", 1))
    return {
        "request_id": payload.get("id"),
        "label": "pass" if score >= 3 else "fail",
        "score": (score - 1) / 4,
    }


async def run_baseline(
    bootstrap: str,
    fake_url: str,
    *,
    partitions: int,
    seconds: float,
    latency_ms: float,
    make: Payload,
) -> dict[str, Any]:
    """One consumer per partition; each judges, publishes and commits one message at a time."""
    requests, verdicts = unique("baseline-in"), unique("baseline-verdicts")
    await create_topics(bootstrap, {requests: partitions, verdicts: partitions})
    n = int(partitions / (latency_ms / 1000) * seconds * 1.5) + partitions * 4
    await produce_backlog(bootstrap, requests, "baseline", n, make)
    group = unique("baseline")
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    client = AsyncOpenAI(base_url=f"{fake_url}/v1", api_key="bench", max_retries=0)
    await producer.start()
    done: list[float] = []
    try:
        deadline = time.monotonic() + seconds
        await asyncio.gather(
            *(
                _baseline_partition(
                    bootstrap,
                    group,
                    TopicPartition(requests, p),
                    producer,
                    client,
                    verdicts,
                    deadline,
                    done,
                )
                for p in range(partitions)
            )
        )
    finally:
        await producer.stop()
        await client.close()
    rate = (len(done) - 1) / (max(done) - min(done)) if len(done) > 1 else float("nan")
    return {"verdicts": len(done), "per_s": rate}


async def _baseline_partition(
    bootstrap: str,
    group: str,
    tp: TopicPartition,
    producer: AIOKafkaProducer,
    client: AsyncOpenAI,
    verdicts: str,
    deadline: float,
    done: list[float],
) -> None:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        while time.monotonic() < deadline:
            record = await asyncio.wait_for(consumer.getone(), timeout=10)
            verdict = await judge_once(client, orjson.loads(record.value))
            await producer.send_and_wait(verdicts, orjson.dumps(verdict), key=record.key)
            await consumer.commit({tp: record.offset + 1})
            done.append(time.monotonic())
    finally:
        await consumer.stop()


# --------------------------------------------------------------------------- the copy loop


async def run_copy_loop(
    bootstrap: str, *, partitions: int, n: int, make: Payload
) -> dict[str, Any]:
    """aiokafka consume -> produce -> commit, no judging: the Kafka client's own ceiling."""
    requests, copies = unique("copy-in"), unique("copy-out")
    await create_topics(bootstrap, {requests: partitions, copies: partitions})
    await produce_backlog(bootstrap, requests, "copy", n, make)
    consumer = AIOKafkaConsumer(
        requests,
        bootstrap_servers=bootstrap,
        group_id=unique("copy"),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=500,
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=5
    )
    await consumer.start()
    await producer.start()
    copied, cpu0 = 0, time.process_time()
    try:
        deadline = time.monotonic() + 120
        while copied < n and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=100, max_records=500)
            futures = [
                await producer.send(copies, r.value, key=r.key)
                for records in batch.values()
                for r in records
            ]
            await asyncio.gather(*futures)
            await consumer.commit()
            copied += len(futures)
    finally:
        cpu = time.process_time() - cpu0
        await producer.stop()
        await consumer.stop()
    return {
        "copied": copied,
        "cpu_s": cpu,
        "per_cpu_s": copied / cpu if cpu else float("nan"),
        "rate": steady_rate(await _timestamps(bootstrap, copies, copied)),
    }


async def _timestamps(bootstrap: str, topic: str, n: int) -> list[int]:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=None,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    out: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(out) < n and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=250, max_records=5000)
            out.extend(r.timestamp for records in batch.values() for r in records)
    finally:
        await consumer.stop()
    return out


# --------------------------------------------------------------------------- report


RUNTIME_FILES = frozenset(
    p.name
    for p in Path(__file__).resolve().parent.parent.joinpath("consumers", "runtime").glob("*.py")
)
LOGGING = "logging (structlog, logging)"
OWNERS = (
    ("guard/", "judge core (guard/)"),
    ("aiokafka/", "Kafka client (aiokafka)"),
    ("structlog/", LOGGING),
    ("logging/", LOGGING),
    ("consumers/logging.py", LOGGING),
)


def _owner(frame: str) -> str | None:
    """Who a py-spy frame's code belongs to (None: the event loop, Python, or a wrapper)."""
    file = frame.rpartition(" (")[2].rstrip(")").rsplit(":", 1)[0]
    if "cli/" in file or file.endswith(("offload.py", "__main__.py")):
        return None  # wrappers around everything
    if file in RUNTIME_FILES or file.startswith("consumers/runtime/"):
        return "runtime (consumers/runtime/)"
    return next((owner for prefix, owner in OWNERS if prefix in file), None)


def owners(path: Path) -> list[str]:
    """Share of CPU samples by the owner of the innermost frame of a known package: what the
    judge core, the runtime, the Kafka client and logging each cost (py-spy folded stacks)."""
    shares: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines() if path.exists() else []:
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        total += int(count)
        owner = next(
            (o for f in reversed(stack.split(";")) if (o := _owner(f))), "event loop, other"
        )
        shares[owner] = shares.get(owner, 0) + int(count)
    return [
        f"{100 * n / total:5.1f}%  {owner}"
        for owner, n in sorted(shares.items(), key=lambda kv: -kv[1])
    ]


def report(args: argparse.Namespace, results: dict[str, Any]) -> None:
    ideal = args.concurrency / (args.latency_ms / 1000)
    print(
        f"\n== groundguard throughput: L = {args.latency_ms:g} ms, C = {args.concurrency}, "
        f"{args.partitions} partitions, N = {args.n}, {args.payload} requests"
    )
    svc = results.get("service")
    if svc:
        rate: Rate = svc["rate"]
        print(
            f"service, slow judge     {rate.per_s:8.1f} verdicts/s   ideal C/L = {ideal:.0f}/s"
            f"   efficiency {rate.per_s / ideal:.2f}"
        )
        print(
            f"                        {svc['ids']} ids, {svc['verdicts']} verdicts, "
            f"wall {svc['wall_s']:.1f} s from start, peak judge in-flight "
            f"{svc.get('peak_in_flight')}, peak RSS {svc['peak_rss_mb']:.0f} MB, "
            f"{svc['per_cpu_s']:.0f} verdicts per CPU-s, exit {svc['exit_status']}"
        )
        if svc.get("added_nominal"):
            an, ac = svc["added_nominal"], svc["added_call"]
            print(
                f"added latency           p50 {percentile(an, 50):6.1f} ms   p99 "
                f"{percentile(an, 99):6.1f} ms   (publish time - produce time - L; "
                f"{svc['paced_got']}/{svc['paced_sent']} msgs at {svc['paced_rate']:.0f}/s)"
            )
            print(
                f"  outside judge call    p50 {percentile(ac, 50):6.1f} ms   p99 "
                f"{percentile(ac, 99):6.1f} ms   (same, minus the verdict's own latency_ms)"
            )
        if svc.get("profile"):
            print("where the service's CPU goes (py-spy, inclusive share of CPU samples):")
            for row in svc["profile"]:
                print(f"    {row}")
    inproc = results.get("inprocess")
    if inproc:
        rate = inproc["rate"]
        print(
            f"service, in-process L   {rate.per_s:8.1f} verdicts/s   ideal C/L = {ideal:.0f}/s"
            f"   efficiency {rate.per_s / ideal:.2f}   (fake judge sleeping L, no HTTP; "
            f"{inproc['per_cpu_s']:.0f} verdicts per CPU-s, peak RSS "
            f"{inproc['peak_rss_mb']:.0f} MB)"
        )
    base = results.get("baseline")
    if base:
        print(
            f"baseline, 1 at a time   {base['per_s']:8.1f} verdicts/s   ideal P/L = "
            f"{args.partitions / (args.latency_ms / 1000):.0f}/s   ({base['verdicts']} "
            f"verdicts in {args.baseline_seconds:g} s)"
        )
        if svc:
            print(f"service / baseline      {svc['rate'].per_s / base['per_s']:8.1f} x")
    ceil = results.get("ceiling")
    if ceil:
        print(
            f"ceiling, instant judge  {ceil['rate'].per_s:8.1f} verdicts/s   "
            f"{ceil['per_cpu_s']:8.1f} verdicts per CPU-s   peak RSS "
            f"{ceil['peak_rss_mb']:.0f} MB   ({args.ceiling_n} msgs; verdicts "
            f"{CEILING_WARMUP:.0%}-90 %)"
        )
        if args.ceiling_n < CEILING_MIN_N:
            print(
                f"  (under {CEILING_MIN_N} messages the window holds verdicts judged before "
                "it opened: the ceiling reads high)"
            )
        if ceil.get("profile"):
            print("where the service's CPU goes with the instant judge (py-spy):")
            for row in ceil["profile"]:
                print(f"    {row}")
            print("  by owner (innermost frame of a known package):")
            for row in ceil["owners"]:
                print(f"    {row}")
    copy = results.get("copy")
    if copy:
        print(
            f"copy loop, no judge     {copy['rate'].per_s:8.1f} msgs/s       "
            f"{copy['per_cpu_s']:8.1f} msgs per CPU-s   ({copy['copied']} msgs)"
        )
    if ceil and copy:
        print(
            f"ceiling / copy loop     {ceil['per_cpu_s'] / copy['per_cpu_s']:8.3f}   "
            "(verdicts per CPU-s over msgs per CPU-s, this run)"
        )
    print(
        "(rates: output records from 10 % (the ceiling: 25 %) to 90 % of their timestamps; "
        "CPU-s: user+system of that process over the same window)"
    )


def instant_judge(workdir: Path) -> dict[str, Any]:
    """The in-process fake judge (no latency), with an explicit zero price for its model (older
    builds of the service refused to price verdicts of models missing from the price table)."""
    prices = workdir / "prices.json"
    prices.write_text(orjson.dumps({"models": {"fake-judge": {"input": 0, "output": 0}}}).decode())
    return {"provider": "fake", "price_file": str(prices)}


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with (
        kafka_broker(args.bootstrap) as bootstrap,
        FakeJudgeServer(args.latency_ms) as fake,
        tempfile.TemporaryDirectory(prefix="gg-bench-") as tmp,
    ):
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        ideal = args.concurrency / (args.latency_ms / 1000)
        make = PAYLOADS[args.payload]()
        if "service" not in args.skip:
            fake.reset()
            judge = {
                "provider": "openai",
                "base_url": f"{fake.url}/v1",
                "api_key": "bench",
                "timeout_s": 30,
            }
            results["service"] = await run_service(
                bootstrap,
                workdir,
                name="slow",
                n=args.n,
                partitions=args.partitions,
                concurrency=args.concurrency,
                judge=judge,
                timeout_s=patience(args.n, 10 / ideal),
                make=make,
                after=paced_phase(args, bootstrap, make),
                profile=workdir / "profile-slow.txt" if args.profile else None,
            )
            results["service"]["peak_in_flight"] = fake.stats()["peak_in_flight"]
        if "inprocess" not in args.skip:
            judge = instant_judge(workdir) | {"fake_latency_s": args.latency_ms / 1000}
            results["inprocess"] = await run_service(
                bootstrap,
                workdir,
                name="inproc",
                n=args.n,
                partitions=args.partitions,
                concurrency=args.concurrency,
                judge=judge,
                timeout_s=patience(args.n, 10 / ideal),
                make=make,
            )
        if "baseline" not in args.skip:
            results["baseline"] = await run_baseline(
                bootstrap,
                fake.url,
                partitions=args.partitions,
                seconds=args.baseline_seconds,
                latency_ms=args.latency_ms,
                make=make,
            )
        if "ceiling" not in args.skip:
            results["ceiling"] = await run_service(
                bootstrap,
                workdir,
                name="ceiling",
                n=args.ceiling_n,
                partitions=args.partitions,
                concurrency=args.concurrency,
                judge=instant_judge(workdir),
                timeout_s=patience(args.ceiling_n, 0.0),
                make=make,
                warmup=CEILING_WARMUP,
                profile=workdir / "profile-ceiling.txt" if args.profile else None,
            )
        if "copy" not in args.skip:
            results["copy"] = await run_copy_loop(
                bootstrap, partitions=args.partitions, n=args.copy_n or args.ceiling_n, make=make
            )
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.n:
        args.n = int(20 * args.concurrency / (args.latency_ms / 1000))
    with contextlib.suppress(KeyboardInterrupt):
        results = asyncio.run(main_async(args))
        report(args, results)
        return 0
    return 130


if __name__ == "__main__":
    sys.exit(main())
