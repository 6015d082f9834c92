"""CPU per judge call: the OpenAI (chat, Responses) and Anthropic judges over the real SDKs.

Not a test: it prints figures. The fake judge is ``python -m guard.testing.fake_server`` in its
own process, so its CPU is not counted. For each judge kind, ``--concurrency`` workers make
``--n`` calls in all (after a warm-up that opens the connections) and the figures are this
process's CPU (``time.process_time``) and wall time over those calls: ms of CPU per call, calls
per second and calls per CPU-second. With ``--latency-ms`` small next to C x (CPU per call) the
run is CPU-bound, so calls/s is about 1000 / (ms CPU per call) on one core.

    .venv/bin/python bench/judge_cpu.py                       # all kinds, C=128, L=50 ms
    .venv/bin/python bench/judge_cpu.py --kind openai-chat --n 4000 --concurrency 256

See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

# bench/ is a folder of scripts: run them as files, so their folder is on sys.path.
from harness import FakeJudgeServer

from guard.assembly import make_judge
from guard.case import PreparedCase
from guard.engine import Guard
from guard.models import JudgeRequest
from guard.providers.anthropic import AnthropicJudge
from guard.providers.base import Judge
from guard.providers.openai import OpenAIJudge
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings, Provider

KINDS: dict[str, dict[str, Any]] = {
    "openai-chat": {"provider": "openai"},
    "openai-responses": {"provider": "openai", "openai_api": "responses"},
    "anthropic": {"provider": "anthropic"},
}
CONTEXT = [
    "Our return policy allows returns of unused items within 30 days of delivery. "
    "Refunds go back to the original payment method within 5 business days. " * 4,
    "Opened electronics can be returned within 14 days for store credit only. " * 4,
]
ANSWER = (
    "You can return unused items within 30 days of delivery and the refund reaches your "
    "original payment method within 5 business days; opened electronics get store "
    "credit within 14 days. "
) * 3


@dataclass
class Result:
    kind: str
    calls: int
    cpu_s: float
    wall_s: float
    errors: int

    @property
    def ms_cpu_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls

    def line(self) -> str:
        return (
            f"{self.kind:<17} {self.ms_cpu_per_call:7.2f} ms CPU/call "
            f"{self.calls / self.wall_s:8.1f} calls/s {self.calls / self.cpu_s:8.1f} "
            f"calls/CPU-s  ({self.calls} calls, {self.errors} errors, "
            f"{self.wall_s:.1f} s)"
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--kind",
        action="append",
        choices=sorted(KINDS),
        help="judge kind (repeatable; default: all)",
    )
    p.add_argument("--n", type=int, default=3000, help="measured calls per kind")
    p.add_argument(
        "--concurrency",
        type=int,
        default=128,
        help="concurrent calls C (also budget.max_in_flight)",
    )
    p.add_argument("--latency-ms", type=float, default=50.0, help="fake judge latency L")
    p.add_argument("--rounds", type=int, default=1, help="repeat every kind this many times")
    return p.parse_args(argv)


def prepared_case() -> PreparedCase:
    guard = Guard(make_judge(JudgeSettings(provider=Provider.FAKE), {}), JudgeSettings())
    case = guard.prepare(JudgeRequest(output=ANSWER, context=CONTEXT))
    assert isinstance(case, PreparedCase)
    return case


def judge_for(kind: str, url: str, concurrency: int) -> Judge:
    overrides = KINDS[kind]
    anthropic = overrides["provider"] == "anthropic"
    settings = JudgeSettings(
        base_url=url if anthropic else f"{url}/v1",
        timeout_s=60.0,
        max_retries=0,
        budget={"max_in_flight": concurrency},
        **overrides,
    )
    cls = AnthropicJudge if anthropic else OpenAIJudge
    judge: Judge = cls(settings, "sk-bench-not-a-key", retry=RetryPolicy(max_retries=0))
    return judge


async def drive(judge: Judge, case: PreparedCase, calls: int, concurrency: int) -> int:
    """``calls`` judge calls, ``concurrency`` at a time; returns the number that failed."""
    remaining = calls
    errors = 0

    async def worker() -> None:
        nonlocal remaining, errors
        while remaining > 0:
            remaining -= 1
            try:
                await judge.assess(case)
            except Exception as exc:  # a bench counts failures, it never stops
                errors += 1
                if errors == 1:
                    print(f"  first error: {exc!r}", file=sys.stderr)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return errors


async def measure(kind: str, url: str, args: argparse.Namespace) -> Result:
    case = prepared_case()
    judge = judge_for(kind, url, args.concurrency)
    try:
        await drive(judge, case, 2 * args.concurrency, args.concurrency)  # open connections
        gc.collect()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        errors = await drive(judge, case, args.n, args.concurrency)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        await judge.aclose()
    return Result(kind, args.n, cpu, wall, errors)


async def main_async(args: argparse.Namespace, url: str) -> list[Result]:
    results = []
    for _ in range(args.rounds):
        for kind in args.kind or sorted(KINDS):
            result = await measure(kind, url, args)
            print(result.line(), flush=True)
            results.append(result)
    return results


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    print(
        f"judge CPU: C={args.concurrency}, L={args.latency_ms:g} ms, n={args.n} per kind, "
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores",
        flush=True,
    )
    with FakeJudgeServer(args.latency_ms) as fake:
        asyncio.run(main_async(args, fake.url))
        print(f"fake judge peak in-flight: {fake.stats()['peak_in_flight']}")


if __name__ == "__main__":
    main()
