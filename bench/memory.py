"""Memory of ``groundguard run`` draining a backlog: the RSS curve, printed as it goes.

Not a test: it prints figures. Two service runs, each a subprocess against a backlog produced
before it starts (issue 15: memory must stay flat whatever the backlog and the message sizes),
and a copy loop:

1. ``offline``: N realistic requests of 1-4 KB (built from bench/data/realistic-dev.jsonl, each
   output made unique so no verdict cache answers it) judged by the offline judge
   (``--realistic-judge fake``: the in-process fake judge, named ``fake``; ``--skip offline``
   skips this run either way);
2. ``big``: M requests of ~500 KB judged by the in-process fake judge sleeping L per call, under
   the byte budget ``max_buffered_bytes`` (B);
3. ``copy``: bench/throughput.py's bare aiokafka copy loop on the same realistic requests, so
   the offline run's messages per CPU-second is printed beside the copy loop's.

Every ``--every`` seconds a line gives the elapsed time, the service's RSS and the messages its
group committed; the run ends when the backlog is committed or after ``--seconds`` (a backlog
larger than what drains in that time still shows whether memory grows with it). Peak RSS is the
kernel's high-water mark (VmHWM).

    .venv/bin/python bench/memory.py --bootstrap 127.0.0.1:39092
    .venv/bin/python bench/memory.py --n 1000000 --seconds 0   # the issue's goal: drain it all
    .venv/bin/python bench/memory.py --skip offline --big-n 300 --latency-ms 2000
    .venv/bin/python bench/memory.py --skip big --realistic-judge fake --n 200000 --seconds 0
    .venv/bin/python bench/memory.py --skip offline --skip copy --big-shape docs --big-kb 480 \
        --big-n 200 --latency-ms 30000 --seconds 60      # issue 29: parsed size under a slow judge
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient

# bench/ is a folder of scripts: run them as files, so their folder is on sys.path.
from harness import (
    ServiceProcess,
    create_topics,
    kafka_broker,
    realistic_payloads,
    service_config,
)
from throughput import run_copy_loop

GOAL_MB = 300


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=100_000, help="realistic 1-4 KB requests")
    p.add_argument("--big-n", type=int, default=300, help="~500 KB requests")
    p.add_argument("--big-kb", type=int, default=500)
    p.add_argument(
        "--big-shape",
        choices=["text", "docs", "turns"],
        default="text",
        help="the big requests: one long text, tiny documents, or chat turns",
    )
    p.add_argument("--latency-ms", type=float, default=2000.0, help="slow judge, big run")
    p.add_argument("--concurrency", type=int, default=256)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--budget-mb", type=int, default=32, help="max_buffered_bytes (B)")
    p.add_argument("--seconds", type=float, default=120.0, help="per run; 0: until drained")
    p.add_argument("--every", type=float, default=5.0, help="seconds between curve lines")
    p.add_argument("--bootstrap", help="use this broker instead of starting one")
    p.add_argument(
        "--realistic-judge",
        choices=["offline", "fake"],
        default="offline",
        help="judge of the realistic run: the offline judge (the issue's measure), or the "
        "in-process fake judge (no offline checks, so a longer backlog drains in the time; "
        "the runtime's memory without the offline judge's caches)",
    )
    p.add_argument(
        "--copy-n",
        type=int,
        default=20_000,
        help="messages for the copy loop (bench/throughput.py's) on the same realistic "
        "requests, printed beside the offline run's messages per CPU-second",
    )
    p.add_argument("--skip", action="append", default=[], choices=["offline", "big", "copy"])
    return p.parse_args(argv)


# --------------------------------------------------------------------------- payloads


def big_request(i: int, kb: int, shape: str = "text") -> bytes:
    """A ~``kb`` KB request: one long text, or (issue 29's adversarial shapes) as many tiny
    documents or chat turns as fit, which parse into many times their bytes."""
    output = f"The Eiffel Tower is in Paris (request {i})."  # unique: no verdict cache answers it
    if shape == "docs":  # 480 KB: 34,500 documents
        n = kb * 1024 // 18
        return orjson.dumps(
            {"id": f"big-{i}", "output": output, "context": [{"text": f"d{j}"} for j in range(n)]}
        )
    if shape == "turns":  # 480 KB: 11,500 turns
        n = kb * 1024 // 43
        turns = [
            {"role": "user" if j % 2 else "assistant", "content": f"turn {j}"} for j in range(n)
        ]
        return orjson.dumps({"id": f"big-{i}", "output": output, "messages": turns})
    words = " ".join(f"Paris fact {j} of request {i}." for j in range(kb * 1024 // 30))
    body = {"id": f"big-{i}", "output": output, "context": words}
    return orjson.dumps(body)[: kb * 1024 + 200]


async def produce(bootstrap: str, topic: str, n: int, make: Any) -> float:
    """``n`` records ``make(i)``; the seconds it took."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks=1,
        linger_ms=50,
        max_batch_size=1 << 20,
        max_request_size=4 << 20,
        compression_type=None,
    )
    await producer.start()
    t0 = time.monotonic()
    try:
        pending: list[asyncio.Future[Any]] = []
        for i in range(n):
            pending.append(await producer.send(topic, make(i), key=str(i).encode()))
            if len(pending) >= 20_000:
                await asyncio.gather(*pending)
                pending.clear()
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    return time.monotonic() - t0


# --------------------------------------------------------------------------- one run


async def committed(admin: AIOKafkaAdminClient, group: str) -> int:
    with contextlib.suppress(Exception):  # the group may not exist yet
        offsets = await admin.list_consumer_group_offsets(group)
        return sum(meta.offset for meta in offsets.values() if meta.offset > 0)
    return 0


async def drain(
    bootstrap: str,
    workdir: Path,
    args: argparse.Namespace,
    *,
    name: str,
    n: int,
    make: Any,
    judge: dict[str, Any],
    extra: dict[str, Any],
) -> dict[str, Any]:
    """Produce the backlog, run the service on it, print the curve; the figures."""
    requests = f"bench-mem-{name}-{uuid.uuid4().hex[:8]}"
    verdicts = f"{requests}.verdicts"
    parts = args.partitions
    await create_topics(
        bootstrap,
        {requests: parts, verdicts: parts, f"{requests}.quarantine": parts, f"{requests}.dlq": 1},
    )
    produced_s = await produce(bootstrap, requests, n, make)
    print(f"[{name}] backlog of {n:,} produced in {produced_s:.0f}s; draining", flush=True)
    group = f"bench-mem-{uuid.uuid4().hex[:8]}"
    config = service_config(
        bootstrap=bootstrap,
        requests=requests,
        verdicts=verdicts,
        group=group,
        concurrency=args.concurrency,
        judge=judge,
        max_buffered_bytes=args.budget_mb << 20,
        log={"level": "warning"},
        **extra,
    )
    service = ServiceProcess(config, workdir)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    curve: list[tuple[float, float, int]] = []
    t0 = time.monotonic()
    service.start()
    try:
        done = 0
        next_line = 0.0
        while done < n and (not args.seconds or time.monotonic() - t0 < args.seconds):
            await asyncio.sleep(1.0)
            if not service.alive():
                raise RuntimeError(f"the service exited:\n{service.tail()}")
            service.sample()
            done = await committed(admin, group)
            elapsed = time.monotonic() - t0
            rss = current_rss_mb(service)
            curve.append((elapsed, rss, done))
            if elapsed >= next_line:
                line = f"[{name}] t={elapsed:5.0f}s rss={rss:6.1f} MB committed={done:,}"
                print(line, flush=True)
                next_line += args.every
        service.sample()
        cpu = service.samples[-1].cpu_s - service.samples[0].cpu_s if service.samples else 0.0
    finally:
        await admin.close()
        service.stop()
    wall = curve[-1][0] if curve else 0.0
    return {
        "n": n,
        "drained": curve[-1][2] if curve else 0,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_rss_mb": service.peak_rss_mb,
        "rss_first_mb": next((r for _, r, d in curve if d > 0), 0.0),
        "rss_last_mb": curve[-1][1] if curve else 0.0,
    }


def current_rss_mb(service: ServiceProcess) -> float:
    assert service.proc is not None
    try:
        status = Path(f"/proc/{service.proc.pid}/status").read_text()
    except FileNotFoundError:
        return 0.0
    kb = next((int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS:")), 0)
    return kb / 1024


def report(args: argparse.Namespace, results: dict[str, dict[str, Any]]) -> None:
    print("\n=== memory draining a backlog (issue 15: peak RSS goal < 300 MB) ===")
    drains = {name: r for name, r in results.items() if name != "copy"}
    for name, r in drains.items():
        rate = r["drained"] / r["wall_s"] if r["wall_s"] else float("nan")
        per_cpu = r["drained"] / r["cpu_s"] if r["cpu_s"] else float("nan")
        print(
            f"{name:8} drained {r['drained']:,} of {r['n']:,} in {r['wall_s']:.0f}s "
            f"({rate:.0f} msg/s, {per_cpu:.0f} per CPU-second); RSS at first commit "
            f"{r['rss_first_mb']:.0f} MB, at the end {r['rss_last_mb']:.0f} MB, peak "
            f"{r['peak_rss_mb']:.0f} MB ({r['peak_rss_mb'] / GOAL_MB:.2f} of the goal)"
        )
    print(f"budget max_buffered_bytes = {args.budget_mb} MB, concurrency {args.concurrency}")
    copy = results.get("copy")
    if copy:
        print(
            f"copy loop drained {copy['copied']:,} of the same realistic requests: "
            f"{copy['per_cpu_s']:.0f} msgs per CPU-second (aiokafka, no judging)"
        )
    judged = results.get(args.realistic_judge)
    if copy and judged and judged["cpu_s"]:
        ratio = judged["drained"] / judged["cpu_s"] / copy["per_cpu_s"]
        print(f"{args.realistic_judge} judge / copy loop, per CPU-second: {ratio:.3f} (this run)")


def fake_judge(workdir: Path) -> dict[str, Any]:
    """The in-process fake judge, its model priced at zero."""
    prices = workdir / "prices.json"
    prices.write_text('{"models": {"fake-judge": {"input": 0, "output": 0}}}')
    return {"provider": "fake", "price_file": str(prices)}


async def main_async(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    with (
        kafka_broker(args.bootstrap) as bootstrap,
        tempfile.TemporaryDirectory(prefix="gg-bench-mem-") as tmp,
    ):
        workdir = Path(tmp)
        if "offline" not in args.skip:
            payload = realistic_payloads()

            def realistic(i: int) -> bytes:  # unique output: no verdict cache answers it
                return payload(f"r-{i}", i)

            results[args.realistic_judge] = await drain(
                bootstrap,
                workdir,
                args,
                name=args.realistic_judge,
                n=args.n,
                make=realistic,
                judge={"provider": "offline"}
                if args.realistic_judge == "offline"
                else fake_judge(workdir),
                extra={},
            )
        if "copy" not in args.skip:
            results["copy"] = await run_copy_loop(
                bootstrap, partitions=args.partitions, n=args.copy_n, make=realistic_payloads()
            )
        if "big" not in args.skip:
            judge = fake_judge(workdir) | {"fake_latency_s": args.latency_ms / 1000}
            results["big"] = await drain(
                bootstrap,
                workdir,
                args,
                name="big",
                n=args.big_n,
                make=lambda i: big_request(i, args.big_kb, args.big_shape),
                judge=judge,
                extra={"max_message_bytes": (args.big_kb + 16) * 1024},
            )
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        report(args, asyncio.run(main_async(args)))
        return 0
    return 130


if __name__ == "__main__":
    sys.exit(main())
