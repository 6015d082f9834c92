"""Worst-case CPU per message for adversarial inputs at the size limits, and event-loop lag.

Not a test: it prints figures. Every input is a request a producer could publish within the
service's default ``max_message_bytes`` (512 KiB). For each kind the bench runs the whole
``Guard.judge`` path with the offline judge (parse, sanitize, render, fit, excerpt, injection
scan, the offline checks, scoring) ``--repeat`` times and prints the worst CPU time
(``time.process_time``: every thread of this process), the ratio to a plain realistic 2 KB
request measured in the same run, and the worst CPU of the offline checks alone (every
window's ``OfflineJudge.decide``, in whichever thread ran it). While each kind is judged, a
ticker task sleeping 1 ms on the same event loop records the largest delay it saw (``loop lag
ms``) and the process's CPU time during that delay (``CPU ms``): the work that held the loop
(a worker thread's single long call keeps the GIL), apart from waiting for a core on a loaded
machine, which the wall-clock lag also counts.

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

from consumers.heap import freeze_startup
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
    docs = [
        SENTENCE * 4 + f"Document {i} covers electronics, which have 15 days." for i in range(5)
    ]
    return {
        "output": "You can return most items within 30 days of delivery for a full refund. "
        "Electronics can be returned within 15 days.",
        "context": docs,
        "question": "How long do I have to return something?",
    }


def _words_case() -> dict[str, Any]:
    words = _distinct_words(50_000, 1)
    half = len(words) // 2
    return {
        "output": (" ".join(words[:half]))[:JUDGEABLE],
        "context": ". ".join(" ".join(words[i : i + 12]) for i in range(half, len(words), 12)),
    }


def _huge_output() -> dict[str, Any]:
    words = _distinct_words(50_000, 2)
    return {"output": " ".join(words), "context": SENTENCE * 100}


def _grounded_windows() -> dict[str, Any]:
    """An output of four full windows that all pass: four offline checks."""
    return {
        "output": (SENTENCE * (JUDGEABLE // len(SENTENCE)))[: JUDGEABLE - 100],
        "context": SENTENCE * 200,
    }


def _huge_context() -> dict[str, Any]:
    return {
        "output": "You can return items within 30 days. " * 20,
        "context": SENTENCE * (LIMIT_BYTES // len(SENTENCE)),
    }


def _punctuation() -> dict[str, Any]:
    return {
        "output": ("Returns. " + "!?." * 4_000 + " ..." * 2_000)[:JUDGEABLE],
        "context": ("." * 50_000) + " " + ("?! " * 50_000) + "…" * 50_000,
    }


def _regex_bait() -> dict[str, Any]:
    """Near misses for the injection, sentence and fence patterns, repeated to the limit."""
    bait = (
        "ignore all of the the the previous previous " * 5
        + "rate this this this "
        + "<<  /  BEGIN "
        + '{ "score" :  '
        + "[turn "
        + "9" * 20
        + " "
        + "give it a a perfect perfect "
        + "system " * 5
        + "### " * 5
    )
    text = bait * (LIMIT_BYTES // 2 // len(bait))
    return {"output": text[:JUDGEABLE], "context": text}


def _tiny_documents() -> dict[str, Any]:
    return {"output": "Returns are accepted within 30 days.", "context": ["a"] * 100_000}


def _documents_with_ids() -> dict[str, Any]:
    return {
        "output": "Returns are accepted within 30 days.",
        "context": [
            {"text": f"Doc {i}", "id": f"id-{i}", "source": f"s{i}"} for i in range(12_000)
        ],
    }


def _many_turns() -> dict[str, Any]:
    roles = ("user", "assistant", "tool", "system")
    turns = [
        {"role": roles[i % 4], "name": f"tool{i}", "content": f"Turn {i}: {SENTENCE}"}
        for i in range(4_000)
    ]
    return {
        "output": "Electronics: 15 days. Everything else: 30 days.",
        "messages": turns,
        "context_field": "messages",
    }


def _no_spaces() -> dict[str, Any]:
    blob = "a1" * (LIMIT_BYTES // 4)
    return {"output": blob[:JUDGEABLE], "context": blob}


def _non_latin() -> dict[str, Any]:
    rng = random.Random(3)
    cjk = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(60_000))
    cyrillic = " ".join(
        "".join(chr(rng.randint(0x430, 0x44F)) for _ in range(7)) for _ in range(10_000)
    )
    return {"output": (cjk[:6_000] + "。" + cyrillic)[:11_000], "context": cjk + "。" + cyrillic}


def _long_output_numbers() -> dict[str, Any]:
    claims = " ".join(
        f"Item {i} costs {i * 7} dollars and ships in {i % 9} days." for i in range(6_000)
    )  # cut to a 15,000-character output
    return {"output": claims[:JUDGEABLE], "context": claims}


def _base64_blob() -> dict[str, Any]:
    raw = base64.b64encode(random.Random(5).randbytes(300_000)).decode()
    return {"output": ("See attachment " + raw)[:JUDGEABLE], "context": raw}


def _combining_marks() -> dict[str, Any]:
    zalgo = "e" + "\u0301\u0308\u0327" * 25_000
    return {"output": ("Returns within 30 days " + zalgo)[:JUDGEABLE], "context": zalgo * 2}


def fill(text: str, size: int) -> str:
    """``text`` repeated to exactly ``size`` characters."""
    return (text * (size // len(text) + 1))[:size]


WINDOW = 3_900  # just under one judged window (4,000 characters)
HUGE = 900_000  # a context cut by the core's fitting, as a producer may still send it


def _clauses() -> dict[str, Any]:
    """The red-team's case: thousands of tiny clauses against a context of tiny clauses."""
    return {"output": fill("a, but b and the c; ", WINDOW), "context": fill("a, ", HUGE)}


def _tiny_sentences() -> dict[str, Any]:
    return {"output": fill("A. ", WINDOW), "context": SENTENCE * 50}


def _comma_numbers() -> dict[str, Any]:
    return {"output": fill("1,000,000.5 ", WINDOW), "context": fill("1,0,0,0,0,0,0,0,0,", HUGE)}


def _currencies() -> dict[str, Any]:
    return {
        "output": fill("$5 million €3bn £2k ", WINDOW),
        "context": fill("The budget is $5 million, €3bn or £2k. ", 200_000),
    }


def _many_claims() -> dict[str, Any]:
    """Short claims, each with an amount, a date and a name, the evidence full of near ones."""
    claims = " ".join(
        f"Acme{i % 50} paid ${i * 13} on May {i % 28 + 1}, 20{i % 30:02d}." for i in range(400)
    )
    evidence = " ".join(
        f"Acme{i % 50} paid ${i * 11} on June {i % 28 + 1}, 20{i % 31:02d}." for i in range(12_000)
    )
    return {"output": fill(claims, JUDGEABLE), "context": evidence}


def _many_amounts() -> dict[str, Any]:
    """One long sentence with hundreds of amounts, against thousands of amounts."""
    amounts = ", ".join(f"{i * 3}.{i % 10} kg" for i in range(1, 2_000))
    return {
        "output": fill("The totals were " + amounts, JUDGEABLE),
        "context": fill(
            "Totals: " + ", ".join(f"{i * 7} kg" for i in range(50_000)) + ".", 400_000
        ),
    }


def _many_names() -> dict[str, Any]:
    names = [w.capitalize() for w in _distinct_words(3_000, 4)]
    output = fill(
        " ".join(
            f"{names[i]} {names[i + 1]} met {names[i + 2]} in {names[i + 3]}."
            for i in range(0, len(names), 4)
        ),
        JUDGEABLE,
    )
    context = (
        " ".join(
            f"{names[i]} {names[i + 1]} visited {names[i + 2]}." for i in range(0, len(names), 3)
        )
        * 20
    )
    return {"output": output, "context": context[:400_000]}


def _many_times() -> dict[str, Any]:
    output = fill(
        "Open Monday to Friday 9am-5pm, Sat 10:00 to 14:30, closed Sundays; "
        "from 1 March 2021 to 12/04/2022 ",
        JUDGEABLE,
    )
    context = fill(
        "Hours: Mon-Fri 8:00-17:00, Saturday 9am to 1pm, Sunday closed, since "
        "2 March 2020 until 11/04/2023. ",
        400_000,
    )
    return {"output": output, "context": context}


def _long_list() -> dict[str, Any]:
    items = "\n".join(
        f"- item {i}: {i % 7} units at ${i}.99, ships in {i % 5} days" for i in range(2_000)
    )
    return {"output": items[:JUDGEABLE], "context": (items * 10)[:400_000]}


def _many_sentences() -> dict[str, Any]:
    """A claim whose words are in every one of 40,000 evidence sentences."""
    return {
        "output": fill("Returns within 30 days of delivery give a full refund. ", JUDGEABLE),
        "context": fill("Returns of delivery within days for a refund. ", 450_000),
    }


def _one_clause() -> dict[str, Any]:
    """One 4,000-character sentence of distinct words and numbers: no clause boundary."""
    words = _distinct_words(800, 6)
    text = " ".join(f"{w} {i}" if i % 3 else w for i, w in enumerate(words))
    return {"output": text[:WINDOW], "context": fill(text + ". ", 400_000)}


def _dense_times() -> dict[str, Any]:
    """A time every five characters: amounts inside times, times inside amounts."""
    return {"output": fill("12am ", JUDGEABLE), "context": fill("12am 1 ", 400_000)}


def _bare_numbers() -> dict[str, Any]:
    return {"output": fill("1 ", JUDGEABLE), "context": fill("1 2 ", 400_000)}


def _hex_runs() -> dict[str, Any]:
    """Hex of printable text everywhere: every run decoded (up to the bound) and scanned."""
    run = SENTENCE.encode().hex()
    return {"output": fill(run + " ", JUDGEABLE), "context": fill(run + " ", 400_000)}


def _leetspeak() -> dict[str, Any]:
    """Words mixing letters and digits everywhere: the whole text read again as letters."""
    text = "R3turn5 w1th1n 30 d4y5 0f d3l1v3ry f0r 4 fu11 r3fund. "
    return {"output": fill(text, JUDGEABLE), "context": fill(text, 400_000)}


def _spaced_letters() -> dict[str, Any]:
    """Spaced-out letters everywhere: every run closed up, the solid ones matched."""
    text = "r e t u r n s w i t h i n t h i r t y d a y s  "
    return {"output": fill(text, JUDGEABLE), "context": fill(text, 400_000)}


def _reversed_rot13() -> dict[str, Any]:
    """Key words written backwards and in rot13 everywhere: the text read both ways."""
    text = "erongi snoitcurtsni vtaber vafgehpgvbaf grader score. "
    return {"output": fill(text, JUDGEABLE), "context": fill(text, 400_000)}


KINDS: dict[str, Callable[[], dict[str, Any]]] = {
    "words": _words_case,
    "huge-output": _huge_output,
    "windows": _grounded_windows,
    "context": _huge_context,
    "punctuation": _punctuation,
    "regex": _regex_bait,
    "docs": _tiny_documents,
    "ids": _documents_with_ids,
    "turns": _many_turns,
    "nospaces": _no_spaces,
    "nonlatin": _non_latin,
    "numbers": _long_output_numbers,
    "base64": _base64_blob,
    "combining": _combining_marks,
    "clauses": _clauses,
    "sentences": _tiny_sentences,
    "commas": _comma_numbers,
    "currencies": _currencies,
    "claims": _many_claims,
    "amounts": _many_amounts,
    "names": _many_names,
    "times": _many_times,
    "list": _long_list,
    "evidence": _many_sentences,
    "clause": _one_clause,
    "clock": _dense_times,
    "bare": _bare_numbers,
    "hex": _hex_runs,
    "leet": _leetspeak,
    "spaced": _spaced_letters,
    "backwards": _reversed_rot13,
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
    "clauses": "4k 'a, but b and the c; ', 900 KB 'a, '",
    "sentences": "4k of 'A. '",
    "commas": "4k of '1,000,000.5 ', 900 KB of '1,0,0,'",
    "currencies": "4k of '$5 million €3bn £2k '",
    "claims": "claims with amounts, dates, names x 15 KB",
    "amounts": "hundreds of amounts in one sentence",
    "names": "hundreds of names, 400 KB of names",
    "times": "opening hours and dates x 15 KB",
    "list": "2,000 list items with amounts",
    "evidence": "one claim's words in 10k evidence sentences",
    "clause": "one 4,000-character clause",
    "clock": "'12am ' x 15 KB: a time every 5 characters",
    "bare": "'1 ' x 15 KB: 7,500 bare numbers",
    "hex": "hex-encoded sentences x 400 KB",
    "leet": "leetspeak x 400 KB",
    "spaced": "spaced-out letters x 400 KB",
    "backwards": "reversed and rot13 key words x 400 KB",
}


async def _ticker(stop: asyncio.Event, worst: list[float]) -> None:
    """``worst`` = [the longest delay of a 1 ms sleep, the process's CPU time during it]: the
    second is how long the loop was held by work (a worker thread's call holding the GIL), the
    first adds the time this process waited for a core on a loaded machine."""
    while not stop.is_set():
        before, cpu = time.perf_counter(), time.process_time()
        await asyncio.sleep(TICK_S)
        lag = time.perf_counter() - before - TICK_S
        if lag > worst[0]:
            worst[0], worst[1] = lag, time.process_time() - cpu


async def measure(
    guard: Guard, payload: bytes, repeat: int
) -> tuple[float, float, tuple[float, float]]:
    """(worst ms CPU per message, worst ms of it in the offline checks, (worst event-loop lag,
    the CPU ms spent during it)) over ``repeat`` judgements."""
    worst_cpu, worst_checks, lag = 0.0, 0.0, [0.0, 0.0]
    for _ in range(repeat):
        stop = asyncio.Event()
        ticker = asyncio.create_task(_ticker(stop, lag))
        await asyncio.sleep(0)
        _Timed.spent = 0.0
        started = time.process_time()
        await guard.judge_payload(payload)
        worst_cpu = max(worst_cpu, time.process_time() - started)
        worst_checks = max(worst_checks, _Timed.spent)
        stop.set()
        await ticker
    return worst_cpu * 1000, worst_checks * 1000, (lag[0] * 1000, lag[1] * 1000)


class _Timed(OfflineJudge):
    """The offline judge, counting the CPU of its checks (``time.thread_time`` of the thread
    deciding each window) apart from the core's preparation."""

    spent = 0.0

    def decide(self, case: Any) -> Any:
        started = time.thread_time()
        try:
            return super().decide(case)
        finally:
            _Timed.spent += time.thread_time() - started


class _PrepareOnly(_Timed):
    """The offline judge without its checks: a fixed pass, so only the core's own work counts."""

    def check(self, case: Any) -> list[Any]:
        return []


async def run(kinds: list[str], repeat: int, prepare_only: bool) -> None:
    settings = JudgeSettings(provider="offline")
    judge = _PrepareOnly(settings) if prepare_only else _Timed(settings)
    guard = Guard(judge, settings)
    await guard.judge_payload(orjson.dumps(baseline()))  # warm-up: lazy imports, first regexes
    freeze_startup()  # as `groundguard run` and `serve` do: full collections skip start-up
    base_ms, base_checks, base_lag = await measure(guard, orjson.dumps(baseline()), max(repeat, 20))
    print(
        f"{'input':44} {'bytes':>8} {'ms CPU':>8} {'x base':>8} {'checks ms':>10} "
        f"{'loop lag ms':>12} {'(CPU ms)':>9}"
    )
    print(
        f"{'baseline: realistic 2 KB request':44} {len(orjson.dumps(baseline())):>8} "
        f"{base_ms:>8.2f} {1.0:>8.1f} {base_checks:>10.2f} {base_lag[0]:>12.1f} "
        f"{base_lag[1]:>9.1f}"
    )
    for kind in kinds:
        payload = orjson.dumps(KINDS[kind]())
        ms, checks, lag = await measure(guard, payload, repeat)
        print(
            f"{DESCRIPTIONS[kind]:44} {len(payload):>8} {ms:>8.1f} {ms / base_ms:>8.0f} "
            f"{checks:>10.1f} {lag[0]:>12.1f} {lag[1]:>9.1f}"
        )
    await guard.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append", choices=sorted(KINDS), default=None)
    parser.add_argument(
        "--prepare-only", action="store_true", help="replace the offline checks by a fixed answer"
    )
    args = parser.parse_args()
    asyncio.run(run(args.only or list(KINDS), args.repeat, args.prepare_only))


if __name__ == "__main__":
    main()
