"""Quality and speed of the offline judge on a labelled JSONL file, next to a word-overlap baseline.

    .venv/bin/python bench/offline_quality.py [path] [--rounds N]

Each row has ``question``, ``context``, ``output`` and ``hallucinated`` (default path:
../shared/data/halueval-qa-dev.jsonl). The offline judge runs through the full ``Guard`` +
``replay`` path, as ``groundguard replay`` does. The baseline is plain word overlap: the share of
the output's lower-cased non-stop words found in the context, failing below a threshold; it is
shown at 0.5 and at its best threshold on this very file (an optimistic upper bound).
Positive class: hallucinated.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guard.engine import Guard
from guard.offline import OfflineJudge
from guard.replay import Confusion, replay
from guard.settings import JudgeSettings

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "data" / "halueval-qa-dev.jsonl"
_STOP = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "and", "or", "is", "are",
    "was", "were", "be", "been", "it", "its", "this", "that", "as", "from", "his", "her", "their",
    "which", "who", "what",
})


def overlap(output: str, context: str) -> float:
    words = [w for w in re.findall(r"\w+", output.lower()) if w not in _STOP]
    have = set(re.findall(r"\w+", context.lower()))
    return sum(w in have for w in words) / len(words) if words else 1.0


def confusion(predicted: list[bool], labels: list[bool]) -> Confusion:
    pairs = list(zip(predicted, labels, strict=True))
    return Confusion(tp=sum(p and y for p, y in pairs), fp=sum(p and not y for p, y in pairs),
                     tn=sum(not p and not y for p, y in pairs),
                     fn=sum(not p and y for p, y in pairs))


def line(name: str, c: Confusion, rows_per_s: float | None = None) -> str:
    def f(v: float | None) -> str:
        return "  n/a " if v is None else f"{v:.4f}"
    speed = f"  {rows_per_s:>9.0f}" if rows_per_s is not None else ""
    return (f"{name:<34}{f(c.balanced_accuracy):>8}{f(c.precision):>10}{f(c.recall):>8}"
            f"{f(c.tnr):>8}   tp={c.tp} fp={c.fp} tn={c.tn} fn={c.fn}{speed}")


async def offline_run(lines: list[str]) -> tuple[Confusion, float, list[dict[str, Any]]]:
    guard = Guard(OfflineJudge(JudgeSettings()), JudgeSettings())
    out = io.StringIO()
    started = time.perf_counter()
    summary = await replay(guard, lines, out, concurrency=1, label_field="hallucinated")
    elapsed = time.perf_counter() - started
    assert summary.confusion is not None
    verdicts = [json.loads(x) for x in out.getvalue().splitlines()]
    return summary.confusion, len(lines) / elapsed, verdicts


def cascade_share(verdicts: list[dict[str, Any]], labels: list[bool],
                  threshold: float) -> str:
    """How much a cascade at ``threshold`` would leave to the offline judge, and how well the
    offline judge does on that part."""
    kept = [(bool(v["hallucinated"]), y) for v, y in zip(verdicts, labels, strict=True)
            if (v["confidence"] or 0.0) >= threshold]
    c = confusion([p for p, _ in kept], [y for _, y in kept]) if kept else Confusion()
    ba = "n/a" if c.balanced_accuracy is None else f"{c.balanced_accuracy:.4f}"
    acc = "n/a" if c.accuracy is None else f"{c.accuracy:.4f}"
    return (f"cascade at confidence {threshold:.2f}: offline decides {len(kept)}/{len(labels)} "
            f"({len(kept) / len(labels):.0%}); on those, accuracy {acc}, balanced accuracy {ba}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--rounds", type=int, default=3, help="timed passes; best one shown")
    args = parser.parse_args()
    lines = [x for x in args.path.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = [json.loads(x) for x in lines]
    labels = [bool(r["hallucinated"]) for r in rows]
    runs = [asyncio.run(offline_run(lines)) for _ in range(max(1, args.rounds))]
    offline, speed, verdicts = runs[0][0], max(s for _, s, _ in runs), runs[0][2]
    started = time.perf_counter()
    scores = [overlap(r["output"], r["context"]) for r in rows]
    base_speed = len(rows) / (time.perf_counter() - started)
    fixed = confusion([s < 0.5 for s in scores], labels)
    best_t, best = max(((t / 100, confusion([s < t / 100 for s in scores], labels))
                        for t in range(5, 100, 5)),
                       key=lambda tc: tc[1].balanced_accuracy or 0.0)
    print(f"{args.path.name}: {len(rows)} rows, {sum(labels)} hallucinated")
    print(f"{'judge':<34}{'bal.acc':>8}{'precision':>10}{'recall':>8}{'TNR':>8}   counts"
          f"{'':>24}rows/s")
    print(line("offline judge (Guard + replay)", offline, speed))
    print(line("word overlap, threshold 0.50", fixed, base_speed))
    print(line(f"word overlap, best threshold {best_t:.2f}", best))
    for threshold in (0.7, 0.8, 0.9):
        print(cascade_share(verdicts, labels, threshold))
    return 0


if __name__ == "__main__":
    sys.exit(main())
