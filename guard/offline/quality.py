"""How good the offline judge is on labelled rows: alone, calibrated, and as a cascade's screen.

Rows are JSON objects of the request format plus ``hallucinated`` (the label) and, optionally,
``category``. Used by ``bench/offline_quality.py`` (prints the figures),
``bench/calibrate_offline.py`` (rebuilds the calibration table) and the quality-floor tests.
The cascade is measured for real: :class:`guard.tiers.cascade.CascadeJudge` with the offline
judge in front of a :class:`guard.testing.FakeJudge` that answers from the labels (an
always-right LLM).
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from guard.case import PreparedCase
from guard.decide.assessment import Assessment, BinaryAssessment, Scale5Assessment
from guard.engine import Guard
from guard.models import JudgeRequest, ScoringMode
from guard.offline.calibration import FOLDS, Calibration, Tally
from guard.offline.judge import Decision, OfflineJudge, decide
from guard.offline.registry import RULES
from guard.offline.rules import ClaimResult
from guard.offline.status import off_rules
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from guard.tiers.cascade import CascadeJudge

BUCKETS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)


@dataclass(frozen=True)
class Judged:
    """One labelled row and the offline decision on it."""

    id: str
    category: str
    hallucinated: bool
    decision: Decision

    @property
    def flagged(self) -> bool:
        return self.decision.label == "fail"

    @property
    def right(self) -> bool:
        return self.flagged == self.hallucinated


def load(path: Path) -> list[dict[str, Any]]:
    """The labelled rows of a JSONL file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def judge_rows(
    rows: Iterable[dict[str, Any]],
    judge: OfflineJudge | None = None,
    settings: JudgeSettings | None = None,
) -> list[Judged]:
    """The offline decision on every row, prepared as the engine prepares a request."""
    settings = settings or JudgeSettings()
    table = judge.calibration if judge is not None else OfflineJudge(settings).calibration
    skip = off_rules(RULES, table)  # as the judge runs: without the rules the table turns off
    return [c.judged(table) for c in check_rows(rows, settings, skip=skip)]


@dataclass(frozen=True)
class Checked:
    """One labelled row and its per-claim results, before any calibration table decides it."""

    id: str
    category: str
    hallucinated: bool
    results: tuple[ClaimResult, ...]
    truncated: bool

    def judged(self, table: Calibration, *, vetted: bool = True) -> Judged:
        """The decision ``table`` makes on the row; ``vetted=False``: every rule decides, its
        status aside (how a rule's record is counted, see :func:`fit`)."""
        return Judged(
            self.id,
            self.category,
            self.hallucinated,
            decide(list(self.results), table, truncated=self.truncated, vetted=vetted),
        )


def check_rows(
    rows: Iterable[dict[str, Any]],
    settings: JudgeSettings | None = None,
    *,
    skip: frozenset[str] = frozenset(),
) -> list[Checked]:
    """The per-claim results on every row (the calibration-free half of the judge), every
    rule running but those in ``skip`` (the calibration counts every rule's record)."""
    settings = settings or JudgeSettings()
    judge = OfflineJudge(settings, calibration=Calibration({}))
    judge.skip = skip
    guard = Guard(judge, settings)
    checked: list[Checked] = []
    for number, row in enumerate(rows):
        case = guard.prepare(JudgeRequest.model_validate({"id": str(number), **row}))
        if not isinstance(case, PreparedCase):
            continue
        checked.append(
            Checked(
                str(row.get("id", number)),
                str(row.get("category", "all")),
                bool(row["hallucinated"]),
                tuple(judge.check(case)),
                judge.too_long(case),
            )
        )
    return checked


def fit(sets: dict[str, list[Checked]]) -> Calibration:
    """The table these rows earn. Two passes: the first with an empty table, the second with
    the first's, since the table picks which failing claim decides an answer. Every rule
    decides in both, its status aside: a rule's record is how often it was right when it
    fired, so an ``annotate`` rule gathers the evidence that can make it ``active``."""
    first = {
        name: tallies([c.judged(Calibration({}), vetted=False) for c in rows])
        for name, rows in sets.items()
    }
    table = Calibration.combine(first)
    second = {
        name: tallies([c.judged(table, vetted=False) for c in rows]) for name, rows in sets.items()
    }
    return Calibration.combine(
        {name: Calibration({**first[name].tallies, **second[name].tallies}) for name in sets}
    )


def fold_of(checked: Checked, by_category: bool) -> str:
    """A row's fold: its category, or (without categories) one of ``FOLDS`` groups of its
    question, so that a question's right and wrong answers stay in one fold."""
    if by_category:
        return checked.category
    digits = "".join(ch if ch.isdigit() else " " for ch in checked.id).split()
    return str(int(digits[0]) % FOLDS) if digits else str(hash(checked.id) % FOLDS)


def cross_validated(sets: dict[str, list[Checked]]) -> tuple[dict[str, list[Judged]], Calibration]:
    """Every row decided by a table fitted without its fold (leave one category out of a set
    with categories, one of ``FOLDS`` folds of one without; the other sets are whole), as the
    judge decides (only rules that table makes ``active``), and the table of the out-of-fold
    records: how often each basis was right, every rule deciding, on rows it was not fitted
    on."""
    out: dict[str, list[Judged]] = {name: [] for name in sets}
    records: dict[str, list[Judged]] = {name: [] for name in sets}
    for name, rows in sets.items():
        by_category = len({c.category for c in rows}) > 1
        folds: dict[str, list[Checked]] = defaultdict(list)
        for c in rows:
            folds[fold_of(c, by_category)].append(c)
        for fold, held in folds.items():
            train = {
                other: ([c for c in rs if fold_of(c, by_category) != fold] if other == name else rs)
                for other, rs in sets.items()
            }
            table = fit(train)
            out[name] += [c.judged(table) for c in held]
            records[name] += [c.judged(table, vetted=False) for c in held]
    first = {
        name: tallies([c.judged(Calibration({}), vetted=False) for c in rows])
        for name, rows in sets.items()
    }
    table = Calibration.combine(
        {
            name: Calibration({**first[name].tallies, **tallies(records[name]).tallies})
            for name in sets
        }
    )
    return out, table


def cascade_with_oracle(judged: list[Judged], confidence: float) -> CascadeResult:
    """The cascade computed from decisions: an offline decision at ``confidence`` or above
    stands, every other row gets the label (an always-right LLM)."""
    asks = [j.decision.confidence < confidence or j.decision.label == "undecided" for j in judged]
    pairs = [
        (j.hallucinated if ask else j.flagged, j.hallucinated)
        for j, ask in zip(judged, asks, strict=True)
    ]
    return CascadeResult(balanced_accuracy(pairs), sum(asks), len(judged))


def balanced_accuracy(pairs: Iterable[tuple[bool, bool]]) -> float:
    """Mean of the true-positive and true-negative rates of (predicted, actual) pairs; a class
    missing from the rows counts as fully right."""
    tp = fn = tn = fp = 0
    for predicted, actual in pairs:
        if actual:
            tp, fn = tp + predicted, fn + (not predicted)
        else:
            tn, fp = tn + (not predicted), fp + predicted
    tpr = tp / (tp + fn) if tp + fn else 1.0
    tnr = tn / (tn + fp) if tn + fp else 1.0
    return (tpr + tnr) / 2


def offline_accuracy(judged: list[Judged]) -> float:
    return balanced_accuracy((j.flagged, j.hallucinated) for j in judged)


def by_category(judged: list[Judged]) -> dict[str, tuple[int, int]]:
    """Category -> (right, total)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for j in judged:
        counts[j.category][0] += j.right
        counts[j.category][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(counts.items())}


@dataclass(frozen=True)
class Bucket:
    low: float
    high: float
    count: int
    stated: float
    observed: float


def reliability(judged: list[Judged]) -> list[Bucket]:
    """Stated confidence against observed accuracy, per confidence bucket, for decided
    answers (undecided ones say 0.5, "not known": see :func:`undecided_accuracy`)."""
    judged = [j for j in judged if j.decision.label != "undecided"]
    buckets: list[Bucket] = []
    for low, high in pairwise(BUCKETS):
        inside = [j for j in judged if low <= j.decision.confidence < high]
        if inside:
            buckets.append(
                Bucket(
                    low,
                    min(high, 1.0),
                    len(inside),
                    sum(j.decision.confidence for j in inside) / len(inside),
                    sum(j.right for j in inside) / len(inside),
                )
            )
    return buckets


def undecided_accuracy(judged: list[Judged]) -> tuple[int, float]:
    """How many answers were undecided, and how often passing them was right."""
    open_ = [j for j in judged if j.decision.label == "undecided"]
    return len(open_), (sum(j.right for j in open_) / len(open_) if open_ else 1.0)


def tallies(judged: list[Judged]) -> Calibration:
    """The calibration table these decisions earn: per basis, how many were right."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for j in judged:
        counts[j.decision.basis][0] += j.right
        counts[j.decision.basis][1] += 1
    return Calibration({k: Tally(v[0], v[1]) for k, v in counts.items()})


@dataclass(frozen=True)
class CascadeResult:
    balanced_accuracy: float
    sent_to_llm: int
    total: int


def cascade(
    rows: list[dict[str, Any]], confidence: float, judge: OfflineJudge | None = None
) -> CascadeResult:
    """The cascade at ``confidence`` with an always-right LLM (a fake answering from labels)."""
    labels = {str(n): bool(r["hallucinated"]) for n, r in enumerate(rows)}

    def oracle(case: PreparedCase) -> Assessment:
        grounded = not labels[case.request_id]
        if case.mode is ScoringMode.BINARY:
            return BinaryAssessment(explanation="oracle", claims=[], grounded=grounded)
        return Scale5Assessment(explanation="oracle", claims=[], score=5 if grounded else 1)

    settings = JudgeSettings()
    llm = FakeJudge(oracle)
    guard = Guard(CascadeJudge.two_tier(judge or OfflineJudge(settings), llm, confidence), settings)

    async def run() -> list[tuple[bool, bool]]:
        pairs: list[tuple[bool, bool]] = []
        for number, row in enumerate(rows):
            request = JudgeRequest.model_validate({**row, "id": str(number)})
            verdict = await guard.judge(request)
            pairs.append((verdict.hallucinated is True, labels[str(number)]))
        return pairs

    pairs = asyncio.run(run())
    return CascadeResult(balanced_accuracy(pairs), llm.calls, len(rows))
