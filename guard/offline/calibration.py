"""Confidence that means probability: the share of past decisions of each kind that were right.

Every offline verdict has a ``basis``: its label and the rule that decided it
("fail:number_contradicted", "pass:verbatim", "undecided"). The bundled table
``guard/data/offline_calibration.json`` counts, for each labelled dev set and each basis, how
many answers got it and how many of those were right; ``bench/calibrate_offline.py`` rebuilds
it. The confidence of a basis is that accuracy, shrunk toward one half by ``PRIOR_WEIGHT``
pseudo-counts so a basis seen a few times is not trusted, and taken on the set where it is
lowest (among the pooled count and the sets with at least ``MIN_SET_ROWS`` answers of it): a
rule that is right on copied answers but wrong on paraphrases is not trusted on either. A
basis seen fewer than ``MIN_TRUSTED`` times says at most ``FEW_CAP`` and one never seen 0.5.
Weak bases (low lexical overlap) are capped below any sensible cascade threshold; an undecided
answer is 0.5 (the offline tier does not know), whatever the table says: its accuracy would
only be the base rate of the data it was counted on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

PRIOR_WEIGHT = 2.0
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


def shrunk(tally: Tally) -> float:
    return (tally.correct + PRIOR_WEIGHT * UNSEEN) / (tally.total + PRIOR_WEIGHT)


@dataclass(frozen=True)
class Calibration:
    """Basis -> tally (over all sets), per-set tallies, and the confidence each earns."""

    tallies: dict[str, Tally]
    sets: dict[str, dict[str, Tally]] = field(default_factory=dict)

    def confidence(self, basis: str) -> float:
        pooled = self.tallies.get(basis, Tally(0, 0))
        seen = [t[basis] for t in self.sets.values()
                if basis in t and t[basis].total >= MIN_SET_ROWS]
        value = min(shrunk(t) for t in [pooled, *seen])
        if pooled.total < MIN_TRUSTED:
            value = min(value, FEW_CAP)  # a rule seen a few times is never trusted alone
        if basis.startswith("undecided"):
            return UNDECIDED  # not a decision: its accuracy is the data's base rate
        if basis in WEAK_BASES:
            value = min(value, WEAK_CAP)
        return round(value, 3)

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
        return cls.combine({name: cls({str(k): Tally(int(v["correct"]), int(v["total"]))
                                       for k, v in bases.items()})
                            for name, bases in sets.items()})

    def to_json(self) -> dict[str, Any]:
        return {"prior_weight": PRIOR_WEIGHT,
                "confidence": {k: self.confidence(k) for k in sorted(self.tallies)},
                "sets": {name: {k: {"correct": t.correct, "total": t.total}
                                for k, t in sorted(tallies.items())}
                         for name, tallies in self.sets.items()}}


@lru_cache(maxsize=1)
def bundled() -> Calibration:
    """The table shipped with groundguard (empty, so every basis is 0.5, when it is missing)."""
    try:
        text = resources.files("guard").joinpath(TABLE).read_text("utf-8")
    except FileNotFoundError:
        return Calibration({})
    return Calibration.from_json(json.loads(text))
