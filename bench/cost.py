"""Cost per 1,000 verdicts with and without the verdict cache and sampling.

Not a test: it prints figures. A duplicate-heavy stream (by default half the messages repeat an
earlier one, as with retried or re-published answers) goes through ``Guard`` and the budget
stack, with an in-process fake judge that reports realistic usage (about 1,400 input and 250
output tokens a call, a 4,000-character context) priced from ``guard/data/prices.json``. Each
configuration is measured in the same run and compared with the no-cache, no-sampling baseline:

    .venv/bin/python bench/cost.py                          # 10,000 messages, 50% repeats
    .venv/bin/python bench/cost.py --n 20000 --repeat 0.8 --model gpt-4o --sample-rate 0.1
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from dataclasses import dataclass

from guard.budgets import BudgetSettings, build_budgeted_judge
from guard.engine import Guard
from guard.models import JudgeRequest, Label, Usage
from guard.providers.pricing import PriceTable
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

USAGE = Usage(input_tokens=1_400, output_tokens=250)
CONTEXT = ("Our return policy allows returns within 30 days of delivery. " * 64)[:4_000]


@dataclass(frozen=True)
class Run:
    name: str
    judge_calls: int
    verdicts: int
    skipped: int
    cached: int
    spend_usd: float
    seconds: float


def stream(n: int, repeat: float, seed: int) -> list[JudgeRequest]:
    """``n`` requests; each repeats an earlier answer with probability ``repeat``."""
    rng = random.Random(seed)
    outputs: list[str] = []
    requests = []
    for i in range(n):
        if outputs and rng.random() < repeat:
            output = rng.choice(outputs)
        else:
            output = f"Returns are accepted within 30 days of delivery (answer {i})."
            outputs.append(output)
        requests.append(JudgeRequest(id=f"msg-{i}", output=output, context=CONTEXT))
    return requests


async def measure(
    name: str, requests: list[JudgeRequest], budget: BudgetSettings, model: str
) -> Run:
    table = PriceTable.load()
    table.require(model)
    settings = JudgeSettings(provider="fake", model=model, budget=budget)  # type: ignore[arg-type]
    fake = FakeJudge(model=model, usage=USAGE)
    judge = build_budgeted_judge(fake, budget, price=table.cost)
    guard = Guard(judge, settings, price=table.cost)
    started = time.perf_counter()
    verdicts = [await guard.judge(r) for r in requests]
    seconds = time.perf_counter() - started
    await guard.aclose()
    return Run(
        name,
        fake.calls,
        len(verdicts),
        sum(v.label is Label.SKIPPED for v in verdicts),
        sum(v.judge.cached for v in verdicts),
        sum(v.cost_usd for v in verdicts),
        seconds,
    )


def report(runs: list[Run]) -> None:
    base = runs[0]
    print(
        f"{'configuration':<26}{'calls':>8}{'cached':>8}{'skipped':>8}"
        f"{'USD/1k verdicts':>17}{'vs baseline':>13}{'s':>7}"
    )
    for r in runs:
        per_k = r.spend_usd / r.verdicts * 1_000
        ratio = r.spend_usd / base.spend_usd if base.spend_usd else float("nan")
        print(
            f"{r.name:<26}{r.judge_calls:>8}{r.cached:>8}{r.skipped:>8}"
            f"{per_k:>17.4f}{ratio:>12.2f}x{r.seconds:>7.2f}"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeat", type=float, default=0.5, help="fraction of repeats")
    parser.add_argument("--sample-rate", type=float, default=0.25)
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    requests = stream(args.n, args.repeat, args.seed)
    rate = args.sample_rate
    configs = [
        ("no cache (baseline)", BudgetSettings(cache_size=0)),
        ("cache", BudgetSettings()),
        (f"sampling {rate:g}", BudgetSettings(cache_size=0, sample_rate=rate)),
        (f"cache + sampling {rate:g}", BudgetSettings(sample_rate=rate)),
    ]
    print(
        f"{args.n} messages, {args.repeat:.0%} repeats, model {args.model}, "
        f"{USAGE.input_tokens} in / {USAGE.output_tokens} out tokens a call"
    )
    report([await measure(name, requests, budget, args.model) for name, budget in configs])


if __name__ == "__main__":
    asyncio.run(main())
