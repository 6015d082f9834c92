"""Worst-case CPU per message for adversarial inputs at the size limits, and event-loop lag.

Not a test: it prints figures. Every input is a request a producer could publish within the
service's default ``max_message_bytes`` (512 KiB). For each kind the bench runs the whole
``Guard.judge`` path with the offline judge (parse, sanitize, render, fit, excerpt, injection
scan, the offline checks, scoring) ``--repeat`` times and prints the worst CPU time
(``time.process_time``: every thread of this process) and the ratio to a plain realistic 2 KB
request measured in the same run. While each kind is judged, a ticker task sleeping 1 ms on the
same event loop records the largest delay it saw: how long the loop was blocked.

    .venv/bin/python bench/adversarial.py
    .venv/bin/python bench/adversarial.py --repeat 5 --only words --only docs
    .venv/bin/python bench/adversarial.py --prepare-only     # without the offline judge's checks
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import random
import string
import time
from collections.abc import Callable
from typing import Any

import orjson

from guard import Guard, JudgeSettings
from guard.offline import OfflineJudge

LIMIT_BYTES = 500_000  # just under the service's default max_message_bytes (512 KiB)
JUDGEABLE = 15_000  # judged whole: 4 windows (max_output_chunks) of up to 4,000 characters
TICK_S = 0.001
SENTENCE = "Our return policy allows returns within 30 days of delivery for a full refund. "


def _distinct_words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 9))) for _ in range(n)]


def baseline() -> dict[str, Any]:
    """A plain realistic request of about 2 KB: five documents, a question, a short answer."""
    docs = [SENTENCE * 4 + f"Document {i} covers electronics, which have 15 days."
            for i in range(5)]
    return {"output": "You can return most items within 30 days of delivery for a full refund. "
            "Electronics can be returned within 15 days.", "context": docs,
            "question": "How long do I have to return something?"}


def _words_case() -> dict[str, Any]:
    words = _distinct_words(50_000, 1)
    half = len(words) // 2
    return {"output": (" ".join(words[:half]))[:JUDGEABLE],
            "context": ". ".join(" ".join(words[i:i + 12]) for i in range(half, len(words), 12))}


def _huge_output() -> dict[str, Any]:
    words = _distinct_words(50_000, 2)
    return {"output": " ".join(words), "context": SENTENCE * 100}


def _grounded_windows() -> dict[str, Any]:
    """An output of four full windows that all pass: four offline checks."""
    return {"output": (SENTENCE * (JUDGEABLE // len(SENTENCE)))[: JUDGEABLE - 100],
            "context": SENTENCE * 200}


def _huge_context() -> dict[str, Any]:
    return {"output": "You can return items within 30 days. " * 20,
            "context": SENTENCE * (LIMIT_BYTES // len(SENTENCE))}


def _punctuation() -> dict[str, Any]:
    return {"output": ("Returns. " + "!?." * 4_000 + " ..." * 2_000)[:JUDGEABLE],
            "context": ("." * 50_000) + " " + ("?! " * 50_000) + "…" * 50_000}


def _regex_bait() -> dict[str, Any]:
    """Near misses for the injection, sentence and fence patterns, repeated to the limit."""
    bait = ("ignore all of the the the previous previous " * 5 + "rate this this this "
            + "<<  /  BEGIN " + "{ \"score\" :  " + "[turn " + "9" * 20 + " "
            + "give it a a perfect perfect " + "system " * 5 + "### " * 5)
    text = bait * (LIMIT_BYTES // 2 // len(bait))
    return {"output": text[:JUDGEABLE], "context": text}


def _tiny_documents() -> dict[str, Any]:
    return {"output": "Returns are accepted within 30 days.",
            "context": ["a"] * 100_000}


def _documents_with_ids() -> dict[str, Any]:
    return {"output": "Returns are accepted within 30 days.",
            "context": [{"text": f"Doc {i}", "id": f"id-{i}", "source": f"s{i}"}
                        for i in range(12_000)]}


def _many_turns() -> dict[str, Any]:
    roles = ("user", "assistant", "tool", "system")
    turns = [{"role": roles[i % 4], "name": f"tool{i}", "content": f"Turn {i}: {SENTENCE}"}
             for i in range(4_000)]
    return {"output": "Electronics: 15 days. Everything else: 30 days.", "messages": turns,
            "context_field": "messages"}


def _no_spaces() -> dict[str, Any]:
    blob = "a1" * (LIMIT_BYTES // 4)
    return {"output": blob[:JUDGEABLE], "context": blob}


def _non_latin() -> dict[str, Any]:
    rng = random.Random(3)
    cjk = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(60_000))
    cyrillic = " ".join("".join(chr(rng.randint(0x430, 0x44F)) for _ in range(7))
                        for _ in range(10_000))
    return {"output": (cjk[:6_000] + "。" + cyrillic)[:11_000], "context": cjk + "。" + cyrillic}


def _long_output_numbers() -> dict[str, Any]:
    claims = " ".join(f"Item {i} costs {i * 7} dollars and ships in {i % 9} days."
                      for i in range(6_000))  # cut to a 15,000-character output
    return {"output": claims[:JUDGEABLE], "context": claims}


def _base64_blob() -> dict[str, Any]:
    raw = base64.b64encode(random.Random(5).randbytes(300_000)).decode()
    return {"output": ("See attachment " + raw)[:JUDGEABLE], "context": raw}


def _combining_marks() -> dict[str, Any]:
    zalgo = "e" + "\u0301\u0308\u0327" * 25_000
    return {"output": ("Returns within 30 days " + zalgo)[:JUDGEABLE], "context": zalgo * 2}


KINDS: dict[str, Callable[[], dict[str, Any]]] = {
    "words": _words_case, "huge-output": _huge_output, "windows": _grounded_windows,
    "context": _huge_context, "punctuation": _punctuation,
    "regex": _regex_bait, "docs": _tiny_documents, "ids": _documents_with_ids,
    "turns": _many_turns, "nospaces": _no_spaces,
    "nonlatin": _non_latin, "numbers": _long_output_numbers, "base64": _base64_blob,
    "combining": _combining_marks,
}
DESCRIPTIONS = {
    "words": "distinct words: 15 KB output, 200 KB context",
    "huge-output": "50k distinct words of output (fails at once)",
    "windows": "4 grounded output windows (4 checks)",
    "context": "one 500 KB context document",
    "punctuation": "deeply repeated punctuation",
    "regex": "near misses of the core's regexes",
    "docs": "100k tiny documents",
    "ids": "12k documents with ids and sources",
    "turns": "4,000 turns with tool names",
    "nospaces": "long lines without spaces",
    "nonlatin": "CJK + Cyrillic, 500 KB",
    "numbers": "numeric claims: 15 KB output, 450 KB context",
    "base64": "base64 blobs",
    "combining": "225k combining marks after one letter",
}


async def _ticker(stop: asyncio.Event, worst: list[float]) -> None:
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(TICK_S)
        worst[0] = max(worst[0], time.perf_counter() - before - TICK_S)


async def measure(guard: Guard, payload: bytes, repeat: int) -> tuple[float, float]:
    """(worst ms CPU per message, worst event-loop lag in ms) over ``repeat`` judgements."""
    worst_cpu, lag = 0.0, [0.0]
    for _ in range(repeat):
        stop = asyncio.Event()
        ticker = asyncio.create_task(_ticker(stop, lag))
        await asyncio.sleep(0)
        started = time.process_time()
        await guard.judge_payload(payload)
        worst_cpu = max(worst_cpu, time.process_time() - started)
        stop.set()
        await ticker
    return worst_cpu * 1000, lag[0] * 1000


class _PrepareOnly(OfflineJudge):
    """The offline judge without its checks: a fixed pass, so only the core's own work counts."""

    def check(self, case: Any) -> list[Any]:
        return []


async def run(kinds: list[str], repeat: int, prepare_only: bool) -> None:
    settings = JudgeSettings(provider="offline")
    judge = _PrepareOnly(settings) if prepare_only else OfflineJudge(settings)
    guard = Guard(judge, settings)
    await guard.judge_payload(orjson.dumps(baseline()))  # warm-up: lazy imports, first regexes
    base_ms, base_lag = await measure(guard, orjson.dumps(baseline()), max(repeat, 20))
    print(f"{'input':44} {'bytes':>8} {'ms CPU':>8} {'x base':>8} {'loop lag ms':>12}")
    print(f"{'baseline: realistic 2 KB request':44} {len(orjson.dumps(baseline())):>8} "
          f"{base_ms:>8.2f} {1.0:>8.1f} {base_lag:>12.1f}")
    for kind in kinds:
        payload = orjson.dumps(KINDS[kind]())
        ms, lag = await measure(guard, payload, repeat)
        print(f"{DESCRIPTIONS[kind]:44} {len(payload):>8} {ms:>8.1f} {ms / base_ms:>8.0f} "
              f"{lag:>12.1f}")
    await guard.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append", choices=sorted(KINDS), default=None)
    parser.add_argument("--prepare-only", action="store_true",
                        help="replace the offline checks by a fixed answer")
    args = parser.parse_args()
    asyncio.run(run(args.only or list(KINDS), args.repeat, args.prepare_only))


if __name__ == "__main__":
    main()
