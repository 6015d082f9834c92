"""Cost of the judge core's own work per request: parse + prepare (sanitize, render, fit,
injection scan), and the prompt build, without any judge call.

Not a test: it prints figures.

    .venv/bin/python bench/prepare.py
    .venv/bin/python bench/prepare.py --repeat 5000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import orjson

from guard import Guard, JudgeSettings, PreparedCase
from guard.prepare.injection import Fence
from guard.prepare.sanitize import sanitize
from guard.providers.prompts import build_prompt
from guard.testing import FakeJudge

SENTENCE = "Our return policy allows returns within 30 days of delivery for a full refund. "


def payloads() -> dict[str, bytes]:
    """Typical and large requests, as a producer would publish them."""
    docs = [SENTENCE * 3 + f"Document {i}." for i in range(5)]
    return {
        "typical (5 docs, ~1.3 KB)": orjson.dumps(
            {
                "output": "You can return items within 30 days.",
                "context": docs,
                "question": "How long do I have?",
            }
        ),
        "large (1 doc, 100 KB)": orjson.dumps(
            {"output": "You can return items within 30 days.", "context": SENTENCE * 1250}
        ),
        "many docs (500 docs, 120 KB)": orjson.dumps(
            {"output": "You can return items within 30 days.", "context": docs * 100}
        ),
        "conversation (20 turns)": orjson.dumps(
            {
                "output": "Electronics: 15 days.",
                "messages": [
                    {
                        "role": ("user", "assistant", "tool")[i % 3],
                        "name": "lookup",
                        "content": SENTENCE,
                    }
                    for i in range(20)
                ],
            }
        ),
    }


def per_call_us(fn: Callable[[], object], repeat: int) -> float:
    fn()
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - started) / repeat * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1000)
    args = parser.parse_args()
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    chat = Guard(FakeJudge(), JudgeSettings(provider="fake", context_field="messages"))
    print(f"{'request':32} {'parse+prepare':>14} {'+ prompt':>10}")
    for name, payload in payloads().items():
        g = chat if "conversation" in name else guard
        repeat = args.repeat if len(payload) < 10_000 else max(1, args.repeat // 20)
        prep = per_call_us(lambda g=g, p=payload: g.prepare(g.parse(p)), repeat)
        case = g.prepare(g.parse(payload))
        assert isinstance(case, PreparedCase)
        prompt = per_call_us(lambda c=case: build_prompt(c, Fence.new()), repeat)
        print(f"{name:32} {prep:>11.0f} us {prompt:>7.0f} us")
    texts = (("ASCII", SENTENCE * 12_500), ("non-ASCII", "Возврат — “30 дней”. " * 50_000))
    for label, text in texts:
        seconds = per_call_us(lambda t=text: sanitize(t), 5) / 1e6
        print(f"sanitize {label}: {len(text) / seconds / 1e6:.1f} M chars/s")


if __name__ == "__main__":
    main()
