"""Confidence that means probability: a lower bound on how often each kind of offline decision
was right on labelled answers it was not fitted on.

Every offline verdict has a ``basis``: its label and the rule that decided it
("fail:number_contradicted", "pass:verbatim", "undecided"). The bundled table
``guard/data/offline_calibration.json`` counts, for each labelled dev set and each basis, how
many answers got it and how many of those were right, *out of fold*: ``bench/calibrate_offline.py``
decides each answer with a table fitted on the other answers only (leave one category out of a
set with categories, one of ``FOLDS`` folds of one without), so a rule that is right only on
the answers it was tuned on shows there. The confidence of a basis is the Wilson lower bound
(``Z`` standard errors) of that accuracy, so a basis seen a few times is not trusted, or the
lower bound (``SET_Z``) on a set with at least ``MIN_SET_ROWS`` answers of it where that is
lower: a rule that is right on copied answers but wrong on paraphrases is not trusted
on either. A basis seen fewer than ``MIN_TRUSTED`` times says at most ``FEW_CAP`` and one never
seen 0.5. Weak bases (low lexical overlap) are capped below any sensible cascade threshold; an
undecided answer is 0.5 (the offline tier does not know), whatever the table says: its
accuracy would only be the base rate of the data it was counted on.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

Z = 1.645  # one-sided 95 %: the confidence is below the true accuracy 19 times in 20
SET_Z = 1.0  # one standard error on each set's own count (a set holds few answers of a rule)
FOLDS = 10
MIN_SET_ROWS = 5  # a set speaks for a basis once it has this many answers of it
MIN_TRUSTED = 8  # answers of a basis, over all sets, before it may stand alone in a cascade
FEW_CAP = 0.75  # the most a basis seen fewer times may say: below the default threshold
UNSEEN = 0.5
WEAK_CAP = 0.6
UNDECIDED = 0.5
WEAK_BASES = frozenset({"fail:unsupported_addition"})
TABLE = "data/offline_calibration.json"


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


@dataclass(frozen=True)
class Calibration:
    """Basis -> tally (over all sets), per-set tallies, and the confidence each earns."""

    tallies: dict[str, Tally]
    sets: dict[str, dict[str, Tally]] = field(default_factory=dict)

    def confidence(self, basis: str) -> float:
        pooled = self.tallies.get(basis, Tally(0, 0))
        seen = [
            t[basis] for t in self.sets.values() if basis in t and t[basis].total >= MIN_SET_ROWS
        ]
        value = min([lower_bound(pooled), *(lower_bound(t, SET_Z) for t in seen)])
        if pooled.total < MIN_TRUSTED:
            value = min(value, FEW_CAP)  # a rule seen a few times is never trusted alone
        if basis.startswith("undecided"):
            return UNDECIDED  # not a decision: its accuracy is the data's base rate
        if basis in WEAK_BASES:
            value = min(value, WEAK_CAP)
        return round(value, 3)

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
                old = total.get(basis, Tally(0, 0))
                total[basis] = Tally(old.correct + t.correct, old.total + t.total)
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
            "bound": f"Wilson lower bound, z = {Z}, of out-of-fold accuracy",
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
