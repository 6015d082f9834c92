"""CPU per message of the detector judge (ONNX backend, tiny model) beside the offline judge's.

Not a test: it prints figures. The requests are ``bench/harness.py::realistic_pool`` (rows of
bench/data/realistic-dev.jsonl with other rows' documents added until 1-4 KB), prepared by the
judge core as the service does. The detector is ``guard.testing.tiny_detector`` (random weights,
``--hidden`` wide, a word-level tokenizer): its graph is nearly free, so the figures are the
detector's own work around a model -- sentence splitting, chunking, tokenizing, batching,
padding, the ONNX Runtime call -- a floor under any real model's, whose graph then adds its
own (a 300M-parameter encoder on CPU is ~0.1-1 s per 512-token pair: run the bench with a
real ``--model-dir`` for that). Figures are this process's CPU (``time.process_time``, every
thread, ONNX Runtime's too) and wall time over ``--n`` messages, ``--concurrency`` at once,
with ``batch_size`` 1 and 16 (the batching gain) and the offline judge on the same cases; each
row is the quietest of ``--rounds`` runs.

    .venv/bin/python bench/detector_cpu.py                     # n=400, C=64, pair and spans
    .venv/bin/python bench/detector_cpu.py --task pair --n 1000 --max-length 256
    .venv/bin/python bench/detector_cpu.py --model-dir ~/models/minicheck-onnx \\
        --preset minicheck-roberta-large --task pair
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# bench/ is a folder of scripts: run them as files, so their folder is on sys.path.
from harness import realistic_pool

from guard.case import PreparedCase
from guard.detect.judge import DetectorJudge, build_detector
from guard.detect.pairs import PairReader
from guard.detect.settings import DetectorTier
from guard.engine import Guard
from guard.models import JudgeRequest
from guard.offline import OfflineJudge
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from guard.testing.tiny_detector import build_tiny_detector


@dataclass
class Figures:
    name: str
    messages: int
    cpu_s: float
    wall_s: float
    calls: int = 0
    inputs: int = 0

    def row(self) -> str:
        per = 1000 * self.cpu_s / self.messages
        rate = self.messages / self.wall_s if self.wall_s else float("inf")
        calls = f"{self.calls:>6}" if self.calls else "     -"
        inputs = f"{self.inputs / self.messages:>6.1f}" if self.inputs else "     -"
        return f"{self.name:34} {per:>8.2f} {rate:>9.0f} {calls} {inputs}"


def cases(n: int) -> list[PreparedCase]:
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    out = []
    for request in realistic_pool(n):
        prepared = guard.prepare(JudgeRequest.model_validate(request))
        assert isinstance(prepared, PreparedCase)
        out.append(prepared)
    return out


def tier(args: argparse.Namespace, model_dir: Path, task: str, batch_size: int) -> DetectorTier:
    fields: dict[str, Any] = {
        "kind": "detector",
        "model_dir": model_dir,
        "batch_size": batch_size,
        "batch_wait_ms": args.batch_wait_ms,
        "max_length": args.max_length,
        "threads": args.threads,
        "max_inputs": 100_000,
        "timeout_s": 600,
    }
    if args.preset:
        fields["preset"] = args.preset
    else:
        fields |= {"task": task, "supported_label": "supported"}
        if task == "spans":
            fields["preset"] = "lettucedetect-base-modernbert"  # its prompt around the passages
    return DetectorTier(**fields)


async def run_detector(judge: DetectorJudge, work: list[PreparedCase], concurrency: int) -> Figures:
    gate = asyncio.Semaphore(concurrency)

    async def one(case: PreparedCase) -> None:
        async with gate:
            await judge.assess(case)

    await asyncio.gather(*(one(c) for c in work[:8]))  # warm-up: sessions, caches
    inputs = sum(_inputs(judge, c) for c in work)  # planned outside the measured run
    calls = judge.reader.batcher.calls
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(c) for c in work))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return Figures("", len(work), cpu, wall, judge.reader.batcher.calls - calls, inputs)


def _inputs(judge: DetectorJudge, case: PreparedCase) -> int:
    reader = judge.reader
    if isinstance(reader, PairReader):
        return len(reader.plan(case).pairs)
    return len(reader.plan(case).items)


def run_offline(work: list[PreparedCase], rounds: int) -> Figures:
    judge = OfflineJudge(JudgeSettings())
    for case in work[:8]:
        judge.decide(case)
    runs = []
    for _ in range(rounds):
        gc.collect()
        cpu, wall = time.process_time(), time.perf_counter()
        for case in work:
            judge.decide(case)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        runs.append(Figures("offline judge (decide)", len(work), cpu, wall))
    return min(runs, key=lambda f: f.cpu_s)


async def detector_rows(args: argparse.Namespace, work: list[PreparedCase]) -> list[Figures]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for task in ["pair", "spans"] if args.task == "both" else [args.task]:
            model_dir = args.model_dir or build_tiny_detector(
                Path(tmp) / task,
                task=task,
                hidden=args.hidden,
                max_length=args.max_length,
                labels=("unsupported", "supported") if task == "pair" else ("supported", "x"),
            )
            for batch_size in (1, 16):
                judge = build_detector(tier(args, model_dir, task, batch_size))
                assert isinstance(judge, DetectorJudge)
                runs = [
                    await run_detector(judge, work, args.concurrency) for _ in range(args.rounds)
                ]
                figures = min(runs, key=lambda f: f.cpu_s)  # the quietest round
                figures.name = f"detector {task}, batch_size {batch_size}"
                rows.append(figures)
                await judge.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400, help="messages per run")
    parser.add_argument("--concurrency", type=int, default=64, help="messages judged at once")
    parser.add_argument("--task", choices=["pair", "spans", "both"], default="both")
    parser.add_argument("--max-length", type=int, default=512, help="the model's window")
    parser.add_argument("--hidden", type=int, default=64, help="the tiny model's width")
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--batch-wait-ms", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each row; the quietest")
    parser.add_argument("--model-dir", type=Path, help="a real model dir instead of the tiny one")
    parser.add_argument("--preset", help="with --model-dir: the model's preset")
    args = parser.parse_args()
    work = cases(args.n)
    sizes = sorted(len(c.output) + len(c.evidence) for c in work)
    print(f"{len(work)} realistic requests, output+evidence {sizes[0]}-{sizes[-1]} chars")
    rows = [*asyncio.run(detector_rows(args, work)), run_offline(work, args.rounds)]
    print(f"{'':34} {'CPU ms/msg':>10} {'msgs/s':>7} {'calls':>6} {'in/msg':>6}")
    for figures in rows:
        print(figures.row())
    for task in ("pair", "spans"):
        one = next((r for r in rows if r.name == f"detector {task}, batch_size 1"), None)
        many = next((r for r in rows if r.name == f"detector {task}, batch_size 16"), None)
        if one and many:
            print(f"batching gain, {task}: {one.cpu_s / many.cpu_s:.2f}x less CPU per message")


if __name__ == "__main__":
    main()
