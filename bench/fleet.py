"""A fleet of ``groundguard run`` replicas: throughput by replica count, and how long a SIGKILLed
replica's partitions stall, with and without static group membership.

Not a test: it prints figures. Two phases, on the same broker and machine:

1. **scale-out**: the same backlog of N requests judged by 1, 2 and 3 replicas of one group
   (each its own process, concurrency C, the loopback fake judge at latency L in its own
   process): verdicts/s from the first verdict to the last, and the ratio to one replica;
2. **resume after SIGKILL**: two replicas judge a steady stream (R requests/s over P
   partitions); one is SIGKILLed and restarted at once under the same ``instance_id`` (as a
   kubelet restarts a crashed container); the figure is the time from the SIGKILL to the first
   verdict published for one of its partitions, without and with ``kafka.static_membership``,
   at the same ``session_timeout_ms``, and whether the other replica saw a rebalance.

    .venv/bin/python bench/fleet.py                                  # default session timeout
    .venv/bin/python bench/fleet.py --session-timeout-ms 10000 --skip scale
    .venv/bin/python bench/fleet.py --bootstrap 127.0.0.1:39092      # an existing broker
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaProducer

# bench/ is a folder of scripts: run them as files, so their folder is on sys.path.
from harness import (
    FakeJudgeServer,
    ServiceProcess,
    create_topics,
    kafka_broker,
    produce_backlog,
    read_topic,
    request_payload,
    service_config,
)

from guard import defaults


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS"))
    parser.add_argument("--n", type=int, default=900, help="backlog of the scale-out phase")
    parser.add_argument("--replicas", default="1,2,3", help="replica counts to compare")
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--latency-ms", type=float, default=200.0, help="fake judge latency")
    parser.add_argument("--concurrency", type=int, default=8, help="per replica")
    parser.add_argument("--rate", type=float, default=20.0, help="resume phase: requests/s")
    parser.add_argument(
        "--session-timeout-ms", type=int, default=defaults.DEFAULT_KAFKA_SESSION_TIMEOUT_MS
    )
    parser.add_argument(
        "--kill-leader",
        action="store_true",
        help="resume phase: SIGKILL the group's leader (the first replica) instead of the other",
    )
    parser.add_argument("--modes", default="dynamic,static", help="resume phase: memberships")
    parser.add_argument("--skip", action="append", default=[], choices=["scale", "resume"])
    parser.add_argument("--workdir", type=Path, help="keep the replicas' configs and logs here")
    return parser.parse_args(argv)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def replica(
    args: argparse.Namespace, workdir: Path, topics: tuple[str, str], group: str, name: str,
    judge_url: str, **kafka: Any,
) -> ServiceProcess:  # fmt: skip
    config = service_config(
        bootstrap=args.bootstrap,
        requests=topics[0],
        verdicts=topics[1],
        group=group,
        concurrency=args.concurrency,
        judge={"provider": "openai", "base_url": judge_url, "api_key": "bench", "max_retries": 0},
        instance_id=name,
        log={"format": "json"},
        commit_interval_s=0.5,
        kafka={"session_timeout_ms": args.session_timeout_ms, **kafka},
    )
    service = ServiceProcess(config, workdir, name=f"{group}-{name}")
    service.start()
    return service


async def new_topics(args: argparse.Namespace, prefix: str) -> tuple[str, str]:
    requests, verdicts = f"{prefix}.requests", f"{prefix}.verdicts"
    names = (requests, verdicts, f"{requests}.quarantine", f"{requests}.dlq")
    await create_topics(args.bootstrap, dict.fromkeys(names, args.partitions))
    return requests, verdicts


# --------------------------------------------------------------------------- scale-out


async def scale_out(args: argparse.Namespace, workdir: Path, judge_url: str, k: int) -> float:
    """Verdicts/s of ``k`` replicas over the same backlog (first verdict to last)."""
    prefix = unique(f"fleet{k}")
    topics = await new_topics(args, prefix)
    await produce_backlog(args.bootstrap, topics[0], prefix, args.n)
    fleet = [
        replica(args, workdir, topics, f"{prefix}-group", f"r{i}", judge_url) for i in range(k)
    ]
    try:
        out = await read_topic(args.bootstrap, topics[1], expected=args.n, timeout_s=600)
    finally:
        for service in fleet:
            service.stop()
    stamps = sorted(o.timestamp_ms for o in out)
    if len({o.value["request_id"] for o in out}) < args.n:
        raise SystemExit(f"{k} replicas: only {len(out)} of {args.n} verdicts")
    return args.n / max(0.001, (stamps[-1] - stamps[0]) / 1000)


# --------------------------------------------------------------------------- resume


def events(service: ServiceProcess, event: str) -> list[dict[str, Any]]:
    found = []
    for line in service.log_path.read_text(errors="replace").splitlines():
        if line.startswith("{") and f'"{event}"' in line:
            entry = json.loads(line)
            if entry.get("event") == event:
                found.append(entry)
    return found


def stamp(entry: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(entry["timestamp"]).replace("Z", "+00:00")).timestamp()


def owned(service: ServiceProcess) -> set[int]:
    found = events(service, "partitions.assigned")
    return {int(p.rsplit("-", 1)[1]) for p in found[-1]["partitions"]} if found else set()


async def until(check: Any, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the group")
        await asyncio.sleep(0.1)


async def stream(args: argparse.Namespace, topic: str, prefix: str, stop: asyncio.Event) -> None:
    """``args.rate`` requests a second, round-robin over the partitions, until ``stop``."""
    producer = AIOKafkaProducer(bootstrap_servers=args.bootstrap, acks="all", linger_ms=0)
    await producer.start()
    try:
        i = 0
        while not stop.is_set():
            rid = f"{prefix}-{i}"
            partition = i % args.partitions
            await producer.send(topic, request_payload(rid, i), key=None, partition=partition)
            i += 1
            await asyncio.sleep(1 / args.rate)
    finally:
        await producer.stop()


async def resume(
    args: argparse.Namespace, workdir: Path, judge_url: str, static: bool
) -> dict[str, Any]:
    """SIGKILL one of two replicas and restart it at once: seconds to the first verdict from
    its partitions, whether the other one rebalanced, whether it got the same partitions."""
    prefix = unique("static" if static else "dynamic")
    topics = await new_topics(args, prefix)
    group = f"{prefix}-group"
    kafka = {"static_membership": static}
    first = replica(args, workdir, topics, group, "a", judge_url, **kafka)
    await until(lambda: len(owned(first)) == args.partitions)
    second = replica(args, workdir, topics, group, "b", judge_url, **kafka)
    await until(lambda: bool(owned(second)) and len(owned(first)) < args.partitions)
    stop = asyncio.Event()
    producing = asyncio.create_task(stream(args, topics[0], prefix, stop))
    await asyncio.sleep(3)  # a steady stream through both
    # the first replica to join leads the group (it computes the assignment)
    dead, other = (first, second) if args.kill_leader else (second, first)
    victim, rebalances = owned(dead), len(events(other, "partitions.assigned"))
    assert dead.proc is not None
    killed = time.time()
    os.killpg(dead.proc.pid, signal.SIGKILL)
    dead.proc.wait()
    # restarted at once under the same instance_id (its log continues the same file)
    name = dead.config["instance_id"]
    again = replica(args, workdir, topics, group, name, judge_url, **kafka)
    resumed = await first_verdict(args, topics[1], victim, killed)
    stop.set()
    await producing
    restarted = stamp(events(again, "service.started")[-1])
    result = {
        "static_membership": static,
        "killed": "leader" if args.kill_leader else "member",
        "resume_s": round(resumed - killed, 2),
        # kill to the restart's service.started: process start-up and the join (the consumer's
        # start waits for it; a dynamic member's join waits out the dead one's session)
        "process_start_s": round(restarted - killed, 2),
        "started_to_verdict_s": round(resumed - restarted, 2),
        "rebalanced": len(events(other, "partitions.assigned")) != rebalances,
        "same_partitions": owned(again) == victim,
    }
    for service in (other, again):
        service.stop()
    return result


async def first_verdict(
    args: argparse.Namespace, topic: str, partitions: set[int], after: float
) -> float:
    """When the first verdict for one of ``partitions`` was published after ``after``."""
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=args.bootstrap, group_id=None, auto_offset_reset="earliest"
    )
    await consumer.start()
    deadline = time.monotonic() + args.session_timeout_ms / 1000 + 120
    try:
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=200)
            for records in batch.values():
                for r in records:
                    value = json.loads(r.value)
                    at = r.timestamp / 1000
                    if at > after and value["input"]["partition"] in partitions:
                        return at
    finally:
        await consumer.stop()
    raise SystemExit("no verdict from the killed replica's partitions")


# --------------------------------------------------------------------------- main


async def main_async(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with FakeJudgeServer(args.latency_ms) as judge:
        if "scale" not in args.skip:
            counts = [int(k) for k in args.replicas.split(",")]
            rates = {k: await scale_out(args, workdir, judge.url, k) for k in counts}
            results["scale"] = {k: round(r, 1) for k, r in rates.items()}
        if "resume" not in args.skip:
            modes = args.modes.split(",")
            results["resume"] = [
                await resume(args, workdir, judge.url, m == "static") for m in modes
            ]
    return results


def report(args: argparse.Namespace, results: dict[str, Any]) -> None:
    print(
        f"fleet bench: {args.partitions} partitions, judge latency {args.latency_ms:.0f} ms, "
        f"concurrency {args.concurrency} per replica"
    )
    scale = results.get("scale", {})
    if scale:
        base = scale[min(scale)]
        print(f"\nscale-out, backlog of {args.n}:")
        for k, rate in scale.items():
            print(f"  {k} replica(s): {rate:8.1f} verdicts/s  ({rate / base:.2f}x one replica)")
    for r in results.get("resume", []):
        mode = "static membership" if r["static_membership"] else "dynamic membership"
        mode += f", killed the group's {r['killed']}"
        print(
            f"\nresume after SIGKILL ({mode}, session_timeout_ms {args.session_timeout_ms}): "
            f"{r['resume_s']:.1f} s to the first verdict from its partitions "
            f"({r['process_start_s']:.1f} s until the restarted process had started and joined, "
            f"{r['started_to_verdict_s']:.1f} s from there); "
            f"other replica rebalanced: {r['rebalanced']}; "
            f"restarted replica got the same partitions: {r['same_partitions']}"
        )
    print(json.dumps(results))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with kafka_broker(args.bootstrap) as bootstrap:
        args.bootstrap = bootstrap
        if args.workdir:
            args.workdir.mkdir(parents=True, exist_ok=True)
            results = asyncio.run(main_async(args, args.workdir))
        else:
            with tempfile.TemporaryDirectory(prefix="gg-fleet-") as tmp:
                results = asyncio.run(main_async(args, Path(tmp)))
    report(args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
