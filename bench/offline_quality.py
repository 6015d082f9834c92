"""Quality of the offline judge on labelled JSONL files: alone, calibrated, and as a cascade.

    .venv/bin/python bench/offline_quality.py [path ...] [--cascade-confidence C] [--show N]

Default paths: bench/data/halueval-qa-dev.jsonl (HaluEval QA dev) and
bench/data/realistic-dev.jsonl. Each row is a request (question, context or messages, output)
plus ``hallucinated`` and, optionally, ``category``. For each file it prints the balanced
accuracy of the offline judge alone (undecided answers pass, as in offline-only mode), its wrong
decisions (share of decided answers and of rows), its accuracy per category, the reliability
table (stated confidence against observed accuracy per bucket) in sample, the decided answers by
shape (one claim or several), and cross-validated (with two or more files: each row decided by a
calibration table fitted without its fold, as bench/calibrate_offline.py fits it), the cascade
at the default ``cascade_confidence`` with an always-right LLM behind it (a fake judge answering
from the labels) and the share of rows sent to that LLM; then the speed of the offline checks on
worst-case 4,000-character inputs, as a ratio to a typical row. Positive class: hallucinated.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guard.case import PreparedCase
from guard.engine import Guard
from guard.models import JudgeRequest
from guard.offline import OfflineJudge, quality
from guard.settings import JudgeSettings

ROOT = Path(__file__).resolve().parents[1]
REALISTIC = ROOT / "bench" / "data" / "realistic-dev.jsonl"
# written by the dev set's author, never read by the rules' authors: calibration data only
CALIBRATION_ONLY = ROOT / "bench" / "data" / "realistic-holdout.jsonl"


def halueval_path() -> Path:
    """bench/data/halueval-qa-dev.jsonl (HaluEval QA rows, MIT: bench/data/README.md)."""
    return ROOT / "bench" / "data" / "halueval-qa-dev.jsonl"


def report(
    path: Path, threshold: float, show: int, cross: list[quality.Judged] | None = None
) -> None:
    rows = quality.load(path)
    started = time.perf_counter()
    judged = quality.judge_rows(rows)
    elapsed = time.perf_counter() - started
    positives = sum(j.hallucinated for j in judged)
    print(f"\n== {path.name}: {len(judged)} rows, {positives} hallucinated")
    print(
        f"offline alone (undecided passes): balanced accuracy "
        f"{quality.offline_accuracy(judged):.3f}; "
        f"{len(judged) / elapsed:.0f} rows/s ({1000 * elapsed / len(judged):.1f} ms/row)"
    )
    labels = Counter(j.decision.label for j in judged)
    decided = [j for j in judged if j.decision.label != "undecided"]
    wrong = sum(not j.right for j in decided)
    print(
        f"decisions: {labels['fail']} fail, {labels['pass']} pass, {labels['undecided']} "
        f"undecided; wrong decisions {wrong} ({wrong / max(len(decided), 1):.3f} of decided, "
        f"{wrong / len(judged):.3f} of rows)"
    )
    categories = quality.by_category(judged)
    if len(categories) > 1:
        print("per category (right/total):")
        for name, (right, total) in categories.items():
            mark = "  <- below half" if right * 2 < total else ""
            print(f"  {name:<24} {right:>3}/{total:<3} {right / total:.2f}{mark}")
    print("reliability of decided answers, in sample (the bundled table on its own rows):")
    reliability_table(judged, threshold)
    shape_table(judged)
    if cross is not None:
        print(
            "reliability of decided answers, cross-validated (each row decided by a table "
            "fitted without its fold):"
        )
        reliability_table(cross, threshold)
        oof = quality.cascade_with_oracle(cross, threshold)
        print(
            f"cross-validated: offline alone {quality.offline_accuracy(cross):.3f}; cascade "
            f"at {threshold:.2f} with an always-right LLM {oof.balanced_accuracy:.3f}, sent "
            f"to the LLM {oof.sent_to_llm}/{oof.total} ({oof.sent_to_llm / oof.total:.0%})"
        )
    result = quality.cascade(rows, threshold)
    print(
        f"cascade at {threshold:.2f} with an always-right LLM: balanced accuracy "
        f"{result.balanced_accuracy:.3f}; sent to the LLM {result.sent_to_llm}/{result.total} "
        f"({result.sent_to_llm / result.total:.0%})"
    )
    wrong = [j for j in judged if not j.right][:show]
    for j in wrong:
        print(
            f"  wrong: {j.id} [{j.category}] {j.decision.label} {j.decision.basis} "
            f"{j.decision.confidence:.2f}"
        )


def reliability_table(judged: list[quality.Judged], threshold: float) -> None:
    print(f"  {'bucket':<12}{'rows':>6}{'stated':>9}{'observed':>10}")
    for b in quality.reliability(judged):
        print(f"  {b.low:.1f}-{b.high:.1f}    {b.count:>6}{b.stated:>9.3f}{b.observed:>10.3f}")
    undecided, passed_right = quality.undecided_accuracy(judged)
    print(f"  undecided     {undecided:>6}    0.500{passed_right:>10.3f}   (passed unflagged)")
    decided = [
        j for j in judged if j.decision.confidence >= threshold and j.decision.label != "undecided"
    ]
    right = sum(j.right for j in decided)
    print(
        f"  decisions at confidence >= {threshold:.2f}: {len(decided)} "
        f"({len(decided) / len(judged):.0%}), {right / max(len(decided), 1):.3f} right"
    )


def shape_table(judged: list[quality.Judged]) -> None:
    """Decided answers by shape (one claim, as an extractive answer; several, as prose, lists,
    summaries): whether a rule's record on one shape says anything about the other."""
    for shape, several in (("one claim", False), ("several claims", True)):
        inside = [
            j
            for j in judged
            if j.decision.label != "undecided" and (len(j.decision.results) > 1) == several
        ]
        if inside:
            stated = sum(j.decision.confidence for j in inside) / len(inside)
            right = sum(j.right for j in inside) / len(inside)
            print(f"  {shape:<14}{len(inside):>4} decided, stated {stated:.3f}, right {right:.3f}")


def adversarial() -> dict[str, tuple[str, str]]:
    """4,000-character outputs and contexts built to be slow: runs of numbers, one repeated
    phrase, no spaces, many short sentences, many distinct words."""

    def cut(text: str) -> str:
        return text[:4000]

    return {
        "runs of numbers": (
            cut(" ".join(str(i) for i in range(1200))),
            cut(" ".join(str(i * 7) for i in range(1200))),
        ),
        "repeated words": (cut("the cat sat " * 400), cut("the cat sat on the mat " * 200)),
        "no spaces": ("a" * 4000, "b" * 4000),
        "many sentences": (
            cut("".join(f"Item {i} costs ${i}. " for i in range(400))),
            cut("".join(f"Thing {i} is red at {i % 24}:00. " for i in range(400))),
        ),
        "many words": (
            cut(" ".join(f"Word{i} alpha{i % 50}ing" for i in range(500))),
            cut(". ".join(f"alpha{i}ing beta{i} Gamma{i}" for i in range(400))),
        ),
    }


def speed(rounds: int = 5) -> None:
    """Milliseconds per check on worst-case inputs, against a typical realistic row."""
    settings = JudgeSettings()
    judge = OfflineJudge(settings)
    guard = Guard(judge, settings)

    def timed(output: str, context: str) -> float:
        times = []
        for n in range(rounds):  # a distinct output each round: no cache helps
            case = guard.prepare(JudgeRequest(output=output[:-1] + "xyzuv"[n], context=context))
            assert isinstance(case, PreparedCase)
            started = time.perf_counter()
            judge.decide(case)
            times.append(1000 * (time.perf_counter() - started))
        return statistics.median(times)

    row = quality.load(REALISTIC)[0]
    context = "\n\n".join(d["text"] if isinstance(d, dict) else d for d in row["context"])
    base = timed(row["output"], context)
    print(f"\n== speed of the offline checks (median of {rounds}, 4,000-character texts)")
    print(f"  {'typical realistic row':<24}{base:>8.1f} ms   1.0x")
    for name, (output, context) in adversarial().items():
        ms = timed(output, context)
        print(f"  {name:<24}{ms:>8.1f} ms {ms / base:>5.1f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument(
        "--cascade-confidence", type=float, default=JudgeSettings().cascade_confidence
    )
    parser.add_argument("--show", type=int, default=0, help="list this many wrong rows")
    parser.add_argument("--no-speed", action="store_true", help="skip the worst-case timings")
    args = parser.parse_args()
    paths = args.paths or [halueval_path(), REALISTIC]
    checked = {path.name: quality.check_rows(quality.load(path)) for path in paths}
    cross, _ = quality.cross_validated(checked) if len(paths) > 1 else ({}, None)
    for path in paths:
        report(path, args.cascade_confidence, args.show, cross.get(path.name))
    if not args.no_speed:
        speed()
    return 0


if __name__ == "__main__":
    sys.exit(main())
