"""Cost of the judge core's own work per request: parse + prepare (sanitize, render, fit,
injection scan), and the prompt build, without any judge call: typical and large requests, the
realistic dev set and a pool of realistic 1-4 KB requests (bench/harness.py::realistic_pool);
last, the offline judge's decision on 1,000 such requests once prepared (its checks alone, in
the "parse+prepare" column: the offline tier's own cost per request).

Not a test: it prints figures. Times are CPU time (``time.process_time``), the least of
``--rounds`` rounds, so other processes on a loaded machine inflate them less than wall time.
``--against DIR`` measures another checkout (its ``guard`` package, e.g. ``git worktree add
/tmp/base main``) with this same script in alternating subprocesses and prints the ratio
(other / this) per row: a before/after in the same run.

    .venv/bin/python bench/prepare.py
    .venv/bin/python bench/prepare.py --repeat 5000
    .venv/bin/python bench/prepare.py --against /tmp/base --rounds 5
    .venv/bin/python bench/prepare.py --native-estimate   # what a native scan would buy
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from harness import realistic_pool

from guard import Guard, JudgeSettings, PreparedCase
from guard.offline import OfflineJudge
from guard.prepare.injection import Fence
from guard.prepare.sanitize import sanitize
from guard.providers.prompts import build_prompt
from guard.testing import FakeJudge

SENTENCE = "Our return policy allows returns within 30 days of delivery for a full refund. "
REALISTIC = Path(__file__).parent / "data" / "realistic-dev.jsonl"
REALISTIC_ROW = "realistic dev set (mean)"
POOL_ROW = "realistic pool, 1-4 KB (mean)"
POOL_SIZE = 200  # requests of bench/harness.py's realistic_pool, as the service benches send
OFFLINE_ROW = "offline judge's decision, 1-4 KB"
OFFLINE_POOL = 1000  # as bench/memory.py's drain: more documents than the passage cache holds


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


def per_call_us(fn: Callable[[], object], repeat: int, rounds: int) -> float:
    """The least CPU time of one call over ``rounds`` rounds of ``repeat`` calls."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(repeat):
            fn()
        best = min(best, (time.process_time() - started) / repeat)
    return best * 1e6


def measure(repeat: int, rounds: int) -> dict[str, tuple[float, float]]:
    """``{row: (parse+prepare us, prompt us)}`` for every request kind."""
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    chat = Guard(FakeJudge(), JudgeSettings(provider="fake", context_field="messages"))
    rows: dict[str, tuple[float, float]] = {}
    for name, payload in payloads().items():
        g = chat if "conversation" in name else guard
        times = repeat if len(payload) < 10_000 else max(1, repeat // 20)
        prep = per_call_us(lambda g=g, p=payload: g.prepare(g.parse(p)), times, rounds)
        case = g.prepare(g.parse(payload))
        assert isinstance(case, PreparedCase)
        prompt = per_call_us(lambda c=case: build_prompt(c, Fence.new()), times, rounds)
        rows[name] = (prep, prompt)
    lines = [line.encode() for line in REALISTIC.read_text().splitlines() if line.strip()]

    def prepare_all() -> None:
        for line in lines:
            guard.prepare(guard.parse(line))

    per_set = per_call_us(prepare_all, max(1, repeat // 200), rounds)
    rows[REALISTIC_ROW] = (per_set / len(lines), float("nan"))
    pool = [orjson.dumps(request) for request in realistic_pool(POOL_SIZE)]

    def prepare_pool() -> None:
        for payload in pool:
            guard.prepare(guard.parse(payload))

    per_pool = per_call_us(prepare_pool, max(1, repeat // 200), rounds)
    rows[POOL_ROW] = (per_pool / len(pool), float("nan"))
    # the offline judge's checks on prepared cases (not part of parse+prepare): its decision
    offline = OfflineJudge()
    cases = [guard.prepare(guard.parse(orjson.dumps(r))) for r in realistic_pool(OFFLINE_POOL)]

    def decide_all() -> None:
        for case in cases:
            assert isinstance(case, PreparedCase)
            offline.decide(case)

    rows[OFFLINE_ROW] = (per_call_us(decide_all, 1, rounds) / len(cases), float("nan"))
    return rows


def native_estimate(repeat: int, rounds: int) -> None:
    """The realistic pool's parse+prepare with the injection scan's per-character stages made
    free one after the other (each result looked up by its text, about what one native pass of
    ~1 ns a character would cost), then the whole scan: what a native hot path would buy."""
    from guard.prepare import encodings, injection

    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    pool = [orjson.dumps(request) for request in realistic_pool(POOL_SIZE)]

    def prepare_pool() -> None:
        for payload in pool:
            guard.prepare(guard.parse(payload))

    def per_request() -> float:
        return per_call_us(prepare_pool, max(1, repeat // 200), rounds) / len(pool)

    print(f"{'realistic pool, 1-4 KB (CPU us)':45} {per_request():>7.0f} us  as is")
    stages = (
        (injection, "_occurrences", "+ the word search (Aho-Corasick) free"),
        (injection, "_lowered", "+ lowercasing free"),
        (injection, "skeleton", "+ the skeleton free"),
        (encodings, "hidden", "+ the encodings' decoders and gates free"),
    )
    for module, name, label in stages:
        setattr(module, name, functools.cache(getattr(module, name)))
        print(f"{label:45} {per_request():>7.0f} us")
    # the bound: a native scanner as fast as no scan at all (findings aside)
    from guard import engine

    engine.scan_request = lambda *_args: []  # type: ignore[assignment]
    print(f"{'+ the whole injection scan free':45} {per_request():>7.0f} us")


def _other(directory: str, repeat: int, rounds: int) -> dict[str, tuple[float, float]]:
    """The rows measured with the ``guard`` package of checkout ``directory``."""
    env = {**os.environ, "PYTHONPATH": str(Path(directory).resolve())}
    argv = [sys.executable, __file__, "--json", "--repeat", str(repeat), "--rounds", str(rounds)]
    done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    return {k: (v[0], v[1]) for k, v in json.loads(done.stdout).items()}


def _best(a: dict[str, tuple[float, float]], b: dict[str, tuple[float, float]]) -> dict:
    return {k: (min(a[k][0], b[k][0]), min(a[k][1], b[k][1])) for k in a}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", metavar="DIR", help="another checkout to compare with")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--native-estimate",
        action="store_true",
        help="the realistic pool with the scan's per-character stages made free in turn",
    )
    args = parser.parse_args()
    if args.native_estimate:
        native_estimate(args.repeat, args.rounds)
        return
    if args.json:
        print(json.dumps(measure(args.repeat, args.rounds)))
        return
    if args.against:  # alternate: other, this, other, this (load drifts; keep each one's best)
        here = Path(__file__).resolve().parent.parent
        other = _other(args.against, args.repeat, args.rounds)
        rows = _other(str(here), args.repeat, args.rounds)
        other = _best(other, _other(args.against, args.repeat, args.rounds))
        rows = _best(rows, _other(str(here), args.repeat, args.rounds))
        print(f"{'request (CPU us)':32} {'parse+prepare':>14} {'against':>10} {'ratio':>7}")
        for name, (prep, _) in rows.items():
            theirs = other[name][0]
            print(f"{name:32} {prep:>11.0f} us {theirs:>7.0f} us {theirs / prep:>6.2f}x")
        return
    print(f"{'request (CPU us)':32} {'parse+prepare':>14} {'+ prompt':>10}")
    for name, (prep, prompt) in measure(args.repeat, args.rounds).items():
        shown = "" if prompt != prompt else f"{prompt:>7.0f} us"  # NaN: no single prompt
        print(f"{name:32} {prep:>11.0f} us {shown:>10}")
    texts = (("ASCII", SENTENCE * 12_500), ("non-ASCII", "Возврат — “30 дней”. " * 50_000))
    for label, text in texts:
        seconds = per_call_us(lambda t=text: sanitize(t), 5, 1) / 1e6
        print(f"sanitize {label}: {len(text) / seconds / 1e6:.1f} M chars/s")


if __name__ == "__main__":
    main()
