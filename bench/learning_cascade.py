"""The learning cascade on labelled streams: how much of each stream the screens decide, and
how right they are, learning from an always-right LLM (a fake answering from the labels).

Each set's rows stream once, in a shuffled order (several seeds: the spread is printed),
through ``judge.tiers: [offline, fake]`` with ``judge.cascade.learn`` on and no verdict cache,
starting from the shipped table and from an empty state. ``halueval-noise`` is HaluEval with
coin-flip labels: a stream on which no basis is reliable. Printed per set and start: the LLM
share per quarter of the stream and over its second half, the accuracy of locally decided
messages, and the cascade's accuracy (the LLM alone is right on every row here).

    .venv/bin/python bench/learning_cascade.py [--seeds 5] [--sets halueval realistic-dev ...]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guard import Guard, JudgeSettings
from guard.assembly import make_judge
from guard.case import PreparedCase
from guard.decide.assessment import Assessment, BinaryAssessment, Scale5Assessment
from guard.learning.build import make_learner
from guard.models import JudgeRequest, ScoringMode
from guard.offline.quality import load

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "halueval": ROOT / "bench" / "data" / "halueval-qa-dev.jsonl",
    "halueval-noise": ROOT / "bench" / "data" / "halueval-qa-dev.jsonl",
    "realistic-dev": ROOT / "bench" / "data" / "realistic-dev.jsonl",
    "realistic-holdout": ROOT / "bench" / "data" / "realistic-holdout.jsonl",
    "realistic-holdout-2": ROOT / "bench" / "data" / "realistic-holdout-2.jsonl",
}


@dataclass(frozen=True)
class Run:
    llm_share_by_quarter: list[float]
    llm_share_second_half: float
    local: int
    local_right: int
    accuracy: float

    @property
    def local_accuracy(self) -> float:
        return self.local_right / self.local if self.local else float("nan")


def settings_for(seed: str) -> JudgeSettings:
    return JudgeSettings.model_validate(
        {
            "tiers": [{"kind": "offline"}, {"kind": "fake"}],
            "cascade": {"learn": True, "seed": seed},
        }
    )


async def stream(rows: list[dict[str, Any]], seed: str) -> Run:
    labels = {str(r["id"]): not bool(r["hallucinated"]) for r in rows}  # True: grounded

    def oracle(case: PreparedCase) -> Assessment:
        grounded = labels[case.request_id]
        if case.mode is ScoringMode.BINARY:
            return BinaryAssessment(explanation="oracle", claims=[], grounded=grounded)
        return Scale5Assessment(explanation="oracle", claims=[], score=5 if grounded else 1)

    from guard.testing import FakeJudge
    from guard.tiers.cascade import CascadeJudge

    settings = settings_for(seed)
    learner = make_learner(settings)
    judge = make_judge(settings, {}, learner=learner)
    assert isinstance(judge, CascadeJudge)
    judge.last = type(judge.last)(judge.last.name, judge.last.kind, FakeJudge(oracle))
    guard = Guard(judge, settings, learner=learner)
    to_llm: list[bool] = []
    local = local_right = right = 0
    for row in rows:
        request = JudgeRequest.model_validate({**row, "id": str(row["id"])})
        verdict = await guard.judge(request)
        by_llm = verdict.judge.tier_name == "fake"
        to_llm.append(by_llm)
        correct = (verdict.hallucinated is False) == labels[str(row["id"])]
        right += correct
        if not by_llm and verdict.judge.tier != "none":
            local += 1
            local_right += correct
    n = len(rows)
    quarters = [to_llm[i * n // 4 : (i + 1) * n // 4] for i in range(4)]
    half = to_llm[n // 2 :]
    return Run(
        [sum(q) / len(q) for q in quarters if q],
        sum(half) / len(half),
        local,
        local_right,
        right / n,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="shuffled orders per set")
    parser.add_argument("--sets", nargs="*", default=list(SETS), choices=list(SETS))
    args = parser.parse_args()
    print("set                  start    LLM share by quarter     2nd half  local  local acc  acc")
    for name in args.sets:
        path = SETS[name]
        if not path.exists():
            print(f"{name:20s} (missing: {path})")
            continue
        rows = [r for r in load(path) if "hallucinated" in r]
        if name.endswith("-noise"):  # no basis is reliable: the labels are coin flips
            flip = random.Random(12345)
            rows = [{**r, "hallucinated": flip.random() < 0.5} for r in rows]
        for start in ("shipped", "empty"):
            runs = []
            for seed in range(args.seeds):
                order = rows[:]
                random.Random(seed).shuffle(order)
                runs.append(asyncio.run(stream(order, start)))
            quarters = [statistics.mean(r.llm_share_by_quarter[i] for r in runs) for i in range(4)]
            halves = [r.llm_share_second_half for r in runs]
            locals_ = [r.local_accuracy for r in runs if r.local]
            accs = [r.accuracy for r in runs]
            print(
                f"{name:20s} {start:8s} "
                + " ".join(f"{q:.2f}" for q in quarters)
                + f"   {statistics.mean(halves):.2f} [{min(halves):.2f}-{max(halves):.2f}]"
                + f"  {statistics.mean(r.local for r in runs):5.0f}"
                + (
                    f"  {statistics.mean(locals_):.3f} [{min(locals_):.3f}-{max(locals_):.3f}]"
                    if locals_
                    else "  -"
                )
                + f"  {statistics.mean(accs):.3f} [{min(accs):.3f}-{max(accs):.3f}]"
                + f"  (n={len(rows)})"
            )


if __name__ == "__main__":
    main()
