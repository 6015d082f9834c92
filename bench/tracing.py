"""What tracing costs ``groundguard run``: throughput with tracing off, on (every message traced
to the local collector) and on at 10 % sampling, in one run on the same broker.

Not a test: it prints figures. Each configuration judges its own backlog of N requests with
the in-process fake judge (``provider: fake``), instant or sleeping ``--latency-ms`` per call,
so the service's own CPU is what is measured: tracing adds its spans (message, guardrail,
judge call, publish) and two log records per message on that CPU. The configurations take
turns for ``--rounds`` rounds (off, on, 10 %, off, ...); each one's best round is reported, with
its ratio to tracing off. The collector is ``scripts/otelcol`` (built from the Go module proxy
the first time, a few minutes); its file exporter writes everything it receives.

    .venv/bin/python bench/tracing.py                          # N=10000, instant judge, 2 rounds
    .venv/bin/python bench/tracing.py --latency-ms 200 --concurrency 128 --n 6000
    .venv/bin/python bench/tracing.py --bootstrap 127.0.0.1:9092   # an existing broker
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# bench/ is a folder of scripts: run them as files, so their folder is on sys.path.
from harness import PAYLOADS, ROOT, kafka_broker
from throughput import instant_judge, patience, run_service

OTELCOL = ROOT / "scripts" / "otelcol"
SAMPLED_RATIO = 0.1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10000, help="requests per configuration and round")
    p.add_argument("--latency-ms", type=float, default=0.0, help="the fake judge's latency")
    p.add_argument("--concurrency", type=int, default=128)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--payload", choices=sorted(PAYLOADS), default="realistic")
    p.add_argument("--bootstrap", help="use this broker instead of starting one")
    p.add_argument("--port", type=int, default=24318, help="the collector's OTLP/HTTP port")
    return p.parse_args(argv)


@contextlib.contextmanager
def collector(home: Path, port: int) -> Iterator[Path]:
    env = os.environ | {"GROUNDGUARD_OTELCOL_HOME": str(home)}
    args = [str(OTELCOL), "start", "--port", str(port)]
    started = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    if started.returncode != 0:
        raise SystemExit(f"scripts/otelcol start failed:\n{started.stderr[-2000:]}")
    try:
        yield Path(started.stdout.strip())
    finally:
        subprocess.run([str(OTELCOL), "stop", "--port", str(port)], env=env, check=False)


def configurations(port: int) -> dict[str, dict[str, str]]:
    traced = {
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }
    sampled = {
        "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG": str(SAMPLED_RATIO),
    }
    return {"off": {}, "on": traced, "on, 10 %": traced | sampled}


async def measure(args: argparse.Namespace, bootstrap: str, workdir: Path) -> dict[str, Any]:
    judge = instant_judge(workdir)
    if args.latency_ms:
        judge |= {"fake_latency_s": args.latency_ms / 1000}
    best: dict[str, dict[str, Any]] = {}
    for round_ in range(args.rounds):
        for name, env in configurations(args.port).items():
            result = await run_service(
                bootstrap,
                workdir,
                name=f"trace{round_}",
                n=args.n,
                partitions=args.partitions,
                concurrency=args.concurrency,
                judge=judge,
                timeout_s=patience(args.n, 0.0),
                make=PAYLOADS[args.payload](),
                warmup=0.25,
                env=env,
            )
            print(
                f"  round {round_ + 1} {name:>9}: {result['rate'].per_s:8.0f} verdicts/s, "
                f"{result['per_cpu_s']:6.0f} per CPU-s",
                flush=True,
            )
            if name not in best or result["rate"].per_s > best[name]["rate"].per_s:
                best[name] = result
    return best


def report(args: argparse.Namespace, best: dict[str, Any], received_mb: float) -> None:
    judge = f"fake judge, {args.latency_ms:g} ms" if args.latency_ms else "instant fake judge"
    print(
        f"\ntracing overhead: N={args.n}, {judge}, concurrency {args.concurrency}, "
        f"{args.partitions} partitions, best of {args.rounds} rounds"
    )
    off = best["off"]
    for name, result in best.items():
        rate, per_cpu = result["rate"].per_s, result["per_cpu_s"]
        print(
            f"  {name:>9}: {rate:8.0f} verdicts/s ({rate / off['rate'].per_s:5.2f}x off), "
            f"{per_cpu:6.0f} verdicts per CPU-s ({per_cpu / off['per_cpu_s']:5.2f}x off)"
        )
    print(f"  the collector received {received_mb:.1f} MB of OTLP JSON")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with (
        kafka_broker(args.bootstrap) as bootstrap,
        tempfile.TemporaryDirectory(prefix="gg-bench-trace-") as tmp,
        collector(Path(tmp) / "otelcol", args.port) as out,
    ):
        best = asyncio.run(measure(args, bootstrap, Path(tmp)))
        report(args, best, out.stat().st_size / 1e6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
