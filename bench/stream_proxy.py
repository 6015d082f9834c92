"""The streaming proxy's latency: time to the first released token and to the end of the answer,
through ``serve``'s proxy and straight from the upstream, with the same client.

Usage::

    .venv/bin/python bench/stream_proxy.py                     # 20 answers per setup
    .venv/bin/python bench/stream_proxy.py --runs 50 --token-ms 20 --judge-ms 300

One :class:`~guard.testing.fake_upstream.FakeUpstream` streams a grounded answer of
``--sentences`` sentences word by word, ``--token-ms`` apart (its own thread and event loop).
One ``openai.AsyncOpenAI`` client per setup, kept alive across its answers (the SDK's pattern),
streams ``--runs`` answers, one after another, from:

* ``direct``: the upstream itself;
* ``offline``: ``serve``'s proxy (in this process, ``release: verified``) judging each span
  with the offline judge;
* ``llm-300ms``: the same with a judge that takes ``--judge-ms`` per span (the fake judge with
  latency, standing in for an LLM judge), spans judged concurrently with generation.

For each: p50 and p99 of the time to the first content token and to the end of the stream, and
the ratios to ``direct``. ``first span`` is when the first span was complete on the direct
stream (its end and the next token: the earliest a verified release can be); ``added`` is the
proxy's first token past it, the judge's share of the hold. The goal of issue 25: the offline
judge adds at most 20 ms p99 to the first token, and a pipelined per-span LLM judge adds about
one judge latency to the end, not one per span.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openai
import structlog

from consumers.asgi import AsgiServer
from consumers.serve.app import build_app
from consumers.serve.service import make_api
from consumers.settings import ServiceSettings
from guard.assembly import build_guard
from guard.boundary import GuardCore
from guard.decide.assessment import Scale5Assessment
from guard.engine import Guard
from guard.settings import JudgeSettings
from guard.stream.spans import SpanSplitter
from guard.testing import FakeJudge
from guard.testing.fake_upstream import FakeUpstream

EVIDENCE = (
    "Returns are accepted within 30 days of delivery. The Premium plan costs $12,000 a month. "
    "Support is open from 9 am to 5 pm on weekdays. Refunds are issued to the original card. "
    "Shipping to Canada takes 5 business days. Gift cards never expire."
)
SENTENCES = [
    "Returns are accepted within 30 days of delivery.",
    "The Premium plan costs $12,000 a month.",
    "Support is open from 9 am to 5 pm on weekdays.",
    "Refunds are issued to the original card.",
    "Shipping to Canada takes 5 business days.",
    "Gift cards never expire.",
]
QUESTION = [{"role": "user", "content": "Tell me about returns, plans and support."}]


@dataclass
class Timings:
    first: list[float] = field(default_factory=list)
    end: list[float] = field(default_factory=list)
    first_span: list[float] = field(default_factory=list)


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


async def measure(base_url: str, runs: int) -> Timings:
    timings = Timings()
    async with openai.AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0) as client:
        for n in range(runs + 1):  # the first warms the connection and is not counted
            started = time.perf_counter()
            first = span = None
            splitter = SpanSplitter()
            stream = await client.chat.completions.create(
                model="m",
                messages=QUESTION,
                stream=True,
                extra_body={"groundguard_context": EVIDENCE},
            )
            async for chunk in stream:
                text = chunk.choices[0].delta.content if chunk.choices else None
                if text:
                    now = time.perf_counter() - started
                    first = now if first is None else first
                    if span is None and splitter.feed(text):
                        span = now
            if n:
                timings.first.append(first or 0.0)
                timings.end.append(time.perf_counter() - started)
                timings.first_span.append(span or 0.0)
    return timings


async def through_proxy(upstream: FakeUpstream, guard: GuardCore, runs: int) -> Timings:
    settings = ServiceSettings.model_validate(
        {"serve": {"proxy": {"upstream_url": upstream.openai_base_url}}}
    )
    api, ready = make_api(settings, guard, None)
    api.state.started = True
    server = AsgiServer(build_app(api, ready=ready), host="127.0.0.1", port=0)
    await server.start()
    try:
        return await measure(f"http://127.0.0.1:{server.port}/v1", runs)
    finally:
        await server.close()
        if api.proxy is not None:
            await api.proxy.aclose()
        await guard.aclose()


def slow_judge(ms: float) -> Guard:
    grounded = Scale5Assessment(explanation="bench", claims=[], score=5)
    return Guard(FakeJudge([grounded], latency_s=ms / 1000), JudgeSettings(provider="fake"))


def report(name: str, t: Timings, direct: Timings) -> None:
    first50, first99, end50, end99 = (
        p(t.first, 0.5),
        p(t.first, 0.99),
        p(t.end, 0.5),
        p(t.end, 0.99),
    )
    ratio_first = first50 / max(p(direct.first, 0.5), 1e-6)
    ratio_end = end50 / max(p(direct.end, 0.5), 1e-6)
    print(
        f"{name:10} first token p50 {first50:7.1f} ms p99 {first99:7.1f} ms (x{ratio_first:6.1f})"
        f" | end p50 {end50:7.1f} ms p99 {end99:7.1f} ms (x{ratio_end:4.2f},"
        f" +{end50 - p(direct.end, 0.5):6.1f} ms)"
        + (
            f" | past the first span p50 {first50 - p(direct.first_span, 0.5):+6.1f} ms"
            f" p99 {first99 - p(direct.first_span, 0.99):+6.1f} ms"
            if name != "direct"
            else f" | first span p50 {p(t.first_span, 0.5):6.1f} ms"
        )
    )


async def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--token-ms", type=float, default=20.0)
    parser.add_argument("--judge-ms", type=float, default=300.0)
    parser.add_argument("--sentences", type=int, default=6)
    args = parser.parse_args()
    answer = " ".join((SENTENCES * 4)[: args.sentences])
    with FakeUpstream(answer=answer, token_delay_s=args.token_ms / 1000) as upstream:
        direct = await measure(upstream.openai_base_url, args.runs)
        offline = await through_proxy(
            upstream, build_guard(JudgeSettings(provider="offline"), os.environ), args.runs
        )
        llm = await through_proxy(upstream, slow_judge(args.judge_ms), args.runs)
    words = len(answer.split())
    print(
        f"{args.runs} answers per setup: {args.sentences} sentences, {words} tokens "
        f"{args.token_ms:g} ms apart; judge {args.judge_ms:g} ms per span; release verified"
    )
    report("direct", direct, direct)
    report("offline", offline, direct)
    report(f"llm-{args.judge_ms:g}ms", llm, direct)


if __name__ == "__main__":
    asyncio.run(main())
