"""USD per 1,000 verdicts for each way of delivering the same traffic to the judge.

Not a test: it prints figures. The traffic is a labelled dev set (default
``bench/data/realistic-dev.jsonl``); every row is prepared as the engine prepares it and its
judge prompt rendered as the OpenAI chat judge sends it (schema, system prompt with or without
the worked examples, user message), and tokens are counted with the project's estimator
(``guard.budgets.estimate``, four characters a token). Output tokens per call are modelled, not
measured (no live LLM here): the reply of each row is the offline tier's assessment of it (its
claims, quotes and reasons on the real row) in the strict reply schema, cut to the prompt's length
bounds (``guard.providers.prompts.*_MAX_WORDS``: the explanation at most 25 words, a claim 12, a
quote 15, a reason 12 and only for claims not shown supported); the same replies uncut are what
the earlier, unbounded prompt allowed. ``--output-tokens N`` uses a fixed N instead (the budget
reserves 250 a call). Prices come from the price table
(``guard/data/prices.json``), cache arithmetic from ``guard.providers.caching``. Rows that need no
call (no evidence) are verdicts too, at no cost.

Each figure is printed with the tokens behind it and its ratio to ``realtime``: the product's
default realtime configuration (the prompt as shipped for the model, ``examples: auto``) when no
call finds its prefix cached, at list price. The other rows:

* ``realtime, examples off``: the shortest prompt cold (the cheapest way to pay list price: the
  second ratio printed for each row is against it);
* ``realtime + cached prefix``: the default prompt at steady traffic, ``--hit-rate`` of calls
  reading the prefix from the cache (OpenAI: 1,024 + k*128 tokens at the cached price;
  Anthropic: the marked prefix, a 1.25x write on a miss and a 0.1x read on a hit);
* ``cached, the other prompt``: the same with the examples the other way round than shipped
  (what ``examples: on``/``off`` would cost at steady traffic, if its prefix is cached);
* ``flex``: the cached prefix at the flex tier (``delivery_factor.flex``; marked n/a when the
  model has no flex tier);
* ``batch``: the default prompt through the batch API (``delivery_factor.batch``), no cache hits;
* ``batch + cache + cascade``: the cached prefix through the batch API, only for the rows the
  cascade's offline tier hands on to the LLM (its decisions on the same rows).

``--verdict-cache`` also runs the older measurement of the verdict cache and sampling on a
duplicate-heavy stream through ``Guard`` and the budget stack (a few minutes on two cores)::

    .venv/bin/python bench/cost.py                                   # gpt-4o-mini, 95% hits
    .venv/bin/python bench/cost.py --model gpt-4.1-mini --hit-rate 0.8
    .venv/bin/python bench/cost.py --verdict-cache --n 10000 --repeat 0.5 --sample-rate 0.25
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guard.budgets import BudgetSettings, build_budgeted_judge
from guard.budgets.estimate import estimate_tokens
from guard.case import PreparedCase
from guard.decide.assessment import Assessment, ClaimAssessment
from guard.engine import Guard
from guard.models import JudgeRequest, Label, Usage
from guard.offline import OfflineJudge, quality
from guard.prepare.injection import Fence
from guard.providers.caching import (
    break_even_hit_rate,
    breakpoint_pays,
    cached_prefix_tokens,
    use_examples,
)
from guard.providers.openai import _response_format
from guard.providers.pricing import ModelPrice, PriceTable
from guard.providers.prompts import (
    CLAIM_MAX_WORDS,
    EXPLANATION_MAX_WORDS,
    QUOTE_MAX_WORDS,
    REASON_MAX_WORDS,
    build_prompt,
)
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from guard.tiers.cascade import CascadeJudge

ROOT = Path(__file__).resolve().parents[1]
TRAFFIC = ROOT / "bench" / "data" / "realistic-dev.jsonl"
MESSAGE_OVERHEAD_TOKENS = 12  # role markers of the two chat messages (the fake counts the same)
PER = 1_000_000


# --------------------------------------------------------------------------- the traffic


@dataclass(frozen=True)
class Call:
    """Token counts of one rendered judge call."""

    prefix_short: int  # schema + system prompt, examples off
    prefix_long: int  # schema + system prompt, examples on (the default)
    user: int  # the user message and the chat overhead
    to_llm: bool  # the cascade's offline tier hands this row on to the LLM
    output: int  # the modelled reply under the prompt's length bounds
    unbounded: int  # the same reply uncut (what the earlier prompt allowed)


def _tokens(case: PreparedCase, examples: bool) -> tuple[int, int]:
    prompt = build_prompt(case, Fence.new(), examples=examples)
    schema = estimate_tokens(json.dumps(_response_format(prompt.output_model)))
    return schema + estimate_tokens(prompt.system), estimate_tokens(prompt.user)


def _words(text: str, limit: int) -> str:
    return " ".join(text.split()[:limit])


def _bounded_claim(claim: ClaimAssessment) -> ClaimAssessment:
    """``claim`` as the prompt's bounds allow it: a reason only when it is not shown supported
    (the offline tier marks unproven claims "not verified" yet passes them: counted as
    unsupported, so the model does not undercount reasons)."""
    proven = claim.supported and not claim.reason.startswith("not verified")
    quote = claim.evidence_quote
    return ClaimAssessment(
        claim=_words(claim.claim, CLAIM_MAX_WORDS),
        evidence_quote=None if quote is None else _words(quote, QUOTE_MAX_WORDS),
        supported=claim.supported,
        reason="" if proven else _words(claim.reason, REASON_MAX_WORDS),
    )


def reply_tokens(assessment: Assessment) -> tuple[int, int]:
    """Tokens of ``assessment`` as the reply JSON: cut to the prompt's bounds, and uncut."""
    bounded = assessment.model_copy(
        update={
            "explanation": _words(assessment.explanation, EXPLANATION_MAX_WORDS),
            "claims": [_bounded_claim(c) for c in assessment.claims],
        }
    )
    return (
        estimate_tokens(bounded.model_dump_json()),
        estimate_tokens(assessment.model_dump_json()),
    )


async def _cascade_sends(guard: Guard, request: JudgeRequest, llm: FakeJudge) -> bool:
    before = llm.calls
    await guard.judge(request)
    return llm.calls > before


async def render(rows: list[dict[str, object]]) -> list[Call]:
    """One :class:`Call` per row that reaches a judge (rows without evidence need none)."""
    settings = JudgeSettings()
    offline = OfflineJudge(settings)
    llm = FakeJudge()
    cascade = Guard(CascadeJudge.two_tier(offline, llm, settings.cascade_confidence), settings)
    calls = []
    for number, row in enumerate(rows):
        request = JudgeRequest.model_validate({**row, "id": str(number)})
        case = cascade.prepare(request)
        if not isinstance(case, PreparedCase):
            continue
        short, user = _tokens(case, examples=False)
        long, _ = _tokens(case, examples=True)
        sent = await _cascade_sends(cascade, request, llm)
        output, unbounded = reply_tokens((await offline.assess(case)).assessment)
        calls.append(Call(short, long, user + MESSAGE_OVERHEAD_TOKENS, sent, output, unbounded))
    return calls


# --------------------------------------------------------------------------- the modes


@dataclass(frozen=True)
class Mode:
    name: str
    examples: bool
    hits: float  # share of calls that find the prefix cached
    delivery: str  # realtime, flex or batch (the price table's delivery_factor)
    cascade: bool = False


@dataclass(frozen=True)
class Bill:
    """Tokens and USD for the traffic under one mode (totals, not per call)."""

    calls: int
    uncached: float  # input tokens at list price
    cached: float  # input tokens read from the cache
    written: float  # input tokens written to the cache (Anthropic)
    output: int
    usd: float


def bill(calls: list[Call], mode: Mode, table: PriceTable, model: str, output: int | None) -> Bill:
    """``output``: tokens of every reply (None: each call's modelled reply)."""
    price = table.require(model)
    anthropic = model.startswith("claude")
    factor = 1.0 if mode.delivery == "realtime" else table.delivery_factor(mode.delivery)
    chosen = [c for c in calls if c.to_llm or not mode.cascade]
    uncached = cached = written = 0.0
    replies = sum(c.output if output is None else output for c in chosen)
    for call in chosen:
        prefix = call.prefix_long if mode.examples else call.prefix_short
        cacheable = _cacheable(prefix, price, anthropic)
        read = mode.hits * cacheable
        write = (1 - mode.hits) * cacheable if anthropic and mode.hits else 0.0
        cached, written = cached + read, written + write
        uncached += prefix + call.user - read - write
    usd = (
        uncached * price.input
        + cached * price.cached_input
        + written * price.cache_write
        + replies * price.output
    ) / PER
    return Bill(len(chosen), uncached, cached, written, replies, usd * factor)


def _cacheable(prefix: int, price: ModelPrice, anthropic: bool) -> int:
    """Tokens of the prefix the provider caches: Anthropic the whole marked block, OpenAI
    1,024 + k*128; none below the model's minimum."""
    if anthropic:
        return prefix if prefix >= price.cache_min_tokens else 0
    return cached_prefix_tokens(prefix, price.cache_min_tokens)


def modes(hits: float, shipped: bool) -> list[Mode]:
    """``shipped``: whether the default prompt carries the examples for this model (auto)."""
    return [
        Mode("realtime (baseline)", examples=shipped, hits=0.0, delivery="realtime"),
        Mode("realtime, examples off", examples=False, hits=0.0, delivery="realtime"),
        Mode("realtime + cached prefix", examples=shipped, hits=hits, delivery="realtime"),
        Mode("cached, the other prompt", examples=not shipped, hits=hits, delivery="realtime"),
        Mode("flex + cached prefix", examples=shipped, hits=hits, delivery="flex"),
        Mode("batch", examples=shipped, hits=0.0, delivery="batch"),
        Mode("batch + cache + cascade", shipped, hits=hits, delivery="batch", cascade=True),
    ]


def rule(price: ModelPrice, model: str, short: int, long: int) -> str:
    """When caching pays for ``model``, from the price table."""
    if model.startswith("claude"):
        if long < price.cache_min_tokens:
            return (
                f"the prefix ({long}) is below {model}'s cache minimum "
                f"({price.cache_min_tokens}): no breakpoint, no examples (auto)"
            )
        n = next(n for n in range(2, 100) if breakpoint_pays(price, n))
        return f"the cache breakpoint pays from {n} calls per 5 minutes (auto marks it then)"
    even = break_even_hit_rate(price, short, long)
    if even is not None:
        return f"the examples pay above a cache hit rate of {even:.0%}"
    if short >= price.cache_min_tokens:
        margin = short / price.cache_min_tokens - 1
        return (
            f"the prefix without examples is cached too ({margin:.0%} past the minimum by the "
            "chars/4 estimate); the examples add their tokens at the cached price"
        )
    return "the examples never pay (the prefix stays below the cache minimum)"


def report(calls: list[Call], verdicts: int, args: argparse.Namespace) -> None:
    table = PriceTable.load()
    price = table.require(args.model)
    mean = lambda f: sum(f(c) for c in calls) / len(calls)  # noqa: E731
    short, long = round(mean(lambda c: c.prefix_short)), round(mean(lambda c: c.prefix_long))
    output = (
        f"{args.output_tokens} (fixed)"
        if args.output_tokens is not None
        else f"{mean(lambda c: c.output):.0f} (modelled; {mean(lambda c: c.unbounded):.0f} uncut)"
    )
    print(
        f"traffic {args.traffic.name}: {verdicts} verdicts, {len(calls)} judge calls "
        f"({sum(c.to_llm for c in calls)} of them handed on by the cascade's offline tier); "
        f"model {args.model}"
    )
    print(
        f"tokens a call: prefix {short} (examples off) / {long} (on), user "
        f"{mean(lambda c: c.user):.0f}, output {output}; hit rate {args.hit_rate:.0%}"
    )
    print(rule(price, args.model, short, long))
    shipped = use_examples("auto", price, short, long)
    print(f"shipped prompt (examples: auto): examples {'on' if shipped else 'off'}")
    per_k = 1_000 / verdicts
    print(
        f"\n{'mode':<26}{'calls':>7}{'input':>10}{'cached':>10}{'written':>9}{'output':>9}"
        f"{'USD/1k':>9}{'vs realtime':>13}{'vs ex. off':>12}"
    )
    bills = [
        (m, bill(calls, m, table, args.model, args.output_tokens))
        for m in modes(args.hit_rate, shipped)
    ]
    base, short_cold = bills[0][1].usd, bills[1][1].usd
    for mode, b in bills:
        note = "  (no flex tier: n/a)" if mode.delivery == "flex" and not price.flex else ""
        print(
            f"{mode.name:<26}{b.calls * per_k:>7.0f}{b.uncached * per_k:>10.0f}"
            f"{b.cached * per_k:>10.0f}{b.written * per_k:>9.0f}{b.output * per_k:>9.0f}"
            f"{b.usd * per_k:>9.4f}{b.usd / base:>12.2f}x{b.usd / short_cold:>11.2f}x{note}"
        )
    print(
        "\nrealtime = the default prompt, no cache hits; ex. off = the shortest prompt, no cache "
        "hits; tokens are per 1,000 verdicts (input = billed at list price)"
    )


# --------------------------------------------------------------------------- verdict cache


USAGE = Usage(input_tokens=1_400, output_tokens=250)
CONTEXT = ("Our return policy allows returns within 30 days of delivery. " * 64)[:4_000]


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


async def verdict_cache(args: argparse.Namespace) -> None:
    """The verdict cache and sampling on a duplicate-heavy stream, through ``Guard`` and the
    budget stack with an in-process fake judge reporting 1,400 in / 250 out tokens a call."""
    requests = stream(args.n, args.repeat, args.seed)
    rate = args.sample_rate
    configs = [
        ("no cache (baseline)", BudgetSettings(cache_size=0)),
        ("cache", BudgetSettings()),
        (f"sampling {rate:g}", BudgetSettings(cache_size=0, sample_rate=rate)),
        (f"cache + sampling {rate:g}", BudgetSettings(sample_rate=rate)),
    ]
    print(f"\n{args.n} messages, {args.repeat:.0%} repeats, model {args.model}, 1400 in / 250 out")
    print(
        f"{'configuration':<26}{'calls':>8}{'cached':>8}{'skipped':>8}{'USD/1k':>10}{'vs base':>9}"
    )
    table = PriceTable.load()
    base = None
    for name, budget in configs:
        settings = JudgeSettings(provider="fake", model=args.model, budget=budget)  # type: ignore[arg-type]
        fake = FakeJudge(model=args.model, usage=USAGE)
        guard = Guard(
            build_budgeted_judge(fake, budget, price=table.cost), settings, price=table.cost
        )
        verdicts = [await guard.judge(r) for r in requests]
        await guard.aclose()
        spend = sum(v.cost_usd for v in verdicts)
        base = base or spend
        skipped = sum(v.label is Label.SKIPPED for v in verdicts)
        cached = sum(v.judge.cached for v in verdicts)
        print(
            f"{name:<26}{fake.calls:>8}{cached:>8}{skipped:>8}"
            f"{spend / len(verdicts) * 1000:>10.4f}{spend / base:>8.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traffic", type=Path, default=TRAFFIC)
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--hit-rate", type=float, default=0.95, help="steady-traffic cache hits")
    parser.add_argument(
        "--output-tokens", type=int, default=None, help="fixed reply tokens (default: modelled)"
    )
    parser.add_argument("--verdict-cache", action="store_true", help="also run the stream bench")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeat", type=float, default=0.5, help="fraction of repeats")
    parser.add_argument("--sample-rate", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = quality.load(args.traffic)
    report(asyncio.run(render(rows)), len(rows), args)
    if args.verdict_cache:
        asyncio.run(verdict_cache(args))
    print(f"\n({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
