"""Confidence that means probability: a lower bound on how often each kind of offline decision
was right on labelled answers it was not fitted on, on the worst data source that shows it.

Every offline verdict has a ``basis``: its label and the rule that decided it
("fail:number_contradicted", "pass:verbatim", "undecided"). The bundled table
``guard/data/offline_calibration.json`` counts, for each labelled dev set and each basis, how
many answers got it and how many of those were right, *out of fold*: ``bench/calibrate_offline.py``
decides each answer with a table fitted on the other answers only (leave one category out of a
set with categories, one of ``FOLDS`` folds of one without), so a rule that is right only on
the answers it was tuned on shows there.

A rule reliable on one kind of data can be unreliable on another (on HaluEval a correct answer
copies its context, so "a name the evidence lacks" is nearly always a hallucination; in a
summary it is often a paraphrase). So the confidence is robust to the source, not pooled:

- Sets are grouped into *sources* by their file name up to the first "-" (``halueval-qa-dev``
  is source ``halueval``; ``realistic-dev`` and ``realistic-holdout`` are source ``realistic``).
- On each source where the basis was decided at least ``MIN_SOURCE_ROWS`` times, and on all
  sources pooled, the bound is the Wilson lower bound at ``Z`` (one-sided 95 %) of the count
  with a uniform prior (one right and one wrong pseudo-answer added: a rule that fires a few
  times is shrunk towards a coin flip). The confidence is the minimum of those bounds.
- When the table has several sources and the basis was seen enough on only one of them, it says
  at most ``ONE_SOURCE_CAP`` (below the default threshold): nothing shows an unseen kind of data
  would support more. A basis seen fewer than ``MIN_TRUSTED`` times in all says at most
  ``FEW_CAP`` too, and one never seen 0.5.

Weak bases (low lexical overlap) are capped below any sensible cascade threshold; an undecided
answer is 0.5 (the offline tier does not know), whatever the table says: its accuracy would only
be the base rate of the data it was counted on.

The same record sets each rule's *status* (:meth:`Calibration.status`): ``active`` (it decides)
once its bound says it is right more often than wrong (at least ``ACTIVE_BOUND``: 5 of 5 right
on one source is 0.55, 4 of 4 0.50, 3 of 3 0.44); ``off`` when it was wrong more often than right
(its finding is dropped); else ``annotate``: its finding is reported in the verdict and decides
nothing. A rule the table has never seen (a new rule) is ``annotate``: it earns ``active`` from
its out-of-fold record, counted with every rule deciding (``vetted=False`` in
:func:`guard.offline.judge.decide`), so a rule gains evidence while it only annotates.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any, Literal

from guard.offline.registry import WEAK_KEYS

Z = 1.645  # one-sided 95 %: the confidence is below the true accuracy 19 times in 20
PRIOR = (1, 2)  # pseudo-answers (right, total) added before bounding: a uniform prior
FOLDS = 10
MIN_SOURCE_ROWS = 5  # a source speaks for a basis once it has this many answers of it
MIN_TRUSTED = 8  # answers of a basis, over all sets, before it may stand alone in a cascade
FEW_CAP = 0.75  # the most a basis seen fewer times may say: below the default threshold
ONE_SOURCE_CAP = FEW_CAP  # the most a basis seen on one source of several may say
UNSEEN = 0.5
WEAK_CAP = 0.6
UNDECIDED = 0.5
WEAK_BASES = WEAK_KEYS  # the keys of the registry's weak rules
TABLE = "data/offline_calibration.json"
ACTIVE_BOUND = 0.5  # a rule decides once its bound says it is right more often than wrong

Status = Literal["active", "annotate", "off"]
STATUSES: tuple[Status, ...] = ("active", "annotate", "off")


@dataclass(frozen=True)
class Tally:
    """How often a basis was right on the labelled dev answers."""

    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else UNSEEN


def lower_bound(tally: Tally, z: float = Z) -> float:
    """The Wilson score lower bound of the tally's accuracy (0.5 for an empty tally): 8 of 8
    right is 0.75, 27 of 27 0.91, 22 of 24 0.76 (at ``Z``)."""
    n = tally.total
    if not n:
        return UNSEEN
    p = tally.correct / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    spread = z * math.sqrt((p * (1 - p) + z2 / (4 * n)) / n)
    return max(0.0, (centre - spread) / (1 + z2 / n))


def add(a: Tally, b: Tally) -> Tally:
    return Tally(a.correct + b.correct, a.total + b.total)


def shrunk(tally: Tally) -> Tally:
    """The tally with the uniform prior's pseudo-answers: 8 of 8 becomes 9 of 10."""
    return add(tally, Tally(*PRIOR))


def robust_bound(pooled: Tally, per_source: list[Tally]) -> float:
    """The least of the shrunk Wilson bounds of the pooled tally and of each source's tally:
    a rule is stated no surer than the worst kind of data that shows it supports."""
    return min(lower_bound(shrunk(t)) for t in [pooled, *per_source])


def source_of(set_name: str) -> str:
    """A labelled set's data source: its file name up to the first "-" (or its stem)."""
    return set_name.split("-", 1)[0].removesuffix(".jsonl")


@dataclass(frozen=True)
class Calibration:
    """Basis -> tally (over all sets), per-set tallies, and the confidence each earns."""

    tallies: dict[str, Tally]
    sets: dict[str, dict[str, Tally]] = field(default_factory=dict)

    def confidence(self, basis: str) -> float:
        if basis.startswith("undecided"):
            return UNDECIDED  # not a decision: its accuracy is the data's base rate
        pooled = self.tallies.get(basis, Tally(0, 0))
        if not pooled.total:
            return UNSEEN
        counts = [t.get(basis, Tally(0, 0)) for t in self.sources.values()]
        enough = [t for t in counts if t.total >= MIN_SOURCE_ROWS]
        value = robust_bound(pooled, enough)
        if pooled.total < MIN_TRUSTED:
            value = min(value, FEW_CAP)  # a rule seen a few times is never trusted alone
        if len(counts) > 1 and len(enough) < 2:
            value = min(value, ONE_SOURCE_CAP)  # nothing shows another kind of data agrees
        if basis in WEAK_BASES:
            value = min(value, WEAK_CAP)
        return round(value, 3)

    @cached_property
    def sources(self) -> dict[str, dict[str, Tally]]:
        """Per data source (a set's name up to its first "-"), the summed tallies."""
        out: dict[str, dict[str, Tally]] = {}
        for name, tallies in self.sets.items():
            into = out.setdefault(source_of(name), {})
            for basis, t in tallies.items():
                into[basis] = add(into.get(basis, Tally(0, 0)), t)
        return out

    def status(self, basis: str) -> Status:
        """Whether the rule behind ``basis`` ("fail:X", "pass:X") decides (``active``), is only
        reported (``annotate``: too few answers to bound its precision above a coin flip, or
        never seen) or is dropped (``off``: wrong more often than right)."""
        if self.refuted(basis):
            return "off"
        if basis not in self.tallies:
            return "annotate"  # a new rule: nothing vouches for it yet
        return "active" if self.confidence(basis) >= ACTIVE_BOUND else "annotate"

    def refuted(self, basis: str) -> bool:
        """Whether the rule was wrong more often than right on labelled answers (a failure it
        finds then shows nothing)."""
        tally = self.tallies.get(basis)
        return tally is not None and tally.correct * 2 < tally.total

    @classmethod
    def combine(cls, sets: dict[str, Calibration]) -> Calibration:
        """One table from the tables of several labelled sets."""
        total: dict[str, Tally] = {}
        for table in sets.values():
            for basis, t in table.tallies.items():
                total[basis] = add(total.get(basis, Tally(0, 0)), t)
        return cls(total, {name: table.tallies for name, table in sets.items()})

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        sets = data.get("sets", {})
        if not isinstance(sets, dict):
            raise ValueError("calibration table: 'sets' must be an object")
        return cls.combine(
            {
                name: cls(
                    {str(k): Tally(int(v["correct"]), int(v["total"])) for k, v in bases.items()}
                )
                for name, bases in sets.items()
            }
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "bound": (
                f"least Wilson lower bound, z = {Z}, prior {PRIOR}, of out-of-fold accuracy over "
                f"sources with >= {MIN_SOURCE_ROWS} answers (one only: <= {ONE_SOURCE_CAP})"
            ),
            "confidence": {k: self.confidence(k) for k in sorted(self.tallies)},
            "sets": {
                name: {
                    k: {"correct": t.correct, "total": t.total} for k, t in sorted(tallies.items())
                }
                for name, tallies in self.sets.items()
            },
        }


@lru_cache(maxsize=1)
def bundled() -> Calibration:
    """The table shipped with groundguard (empty, so every basis is 0.5, when it is missing)."""
    try:
        text = resources.files("guard").joinpath(TABLE).read_text("utf-8")
    except FileNotFoundError:
        return Calibration({})
    return Calibration.from_json(json.loads(text))
