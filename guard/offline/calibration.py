"""Confidence that means probability: the share of past decisions of each kind that were right.

Every offline verdict has a ``basis``: its label and the rule that decided it
("fail:number_contradicted", "pass:verbatim", "undecided"). The bundled table
``guard/data/offline_calibration.json`` counts, for each basis, how many labelled dev answers
got it and how many of those were right; ``bench/calibrate_offline.py`` rebuilds it. The
confidence of a basis is that accuracy, shrunk toward one half by ``PRIOR_WEIGHT`` pseudo-counts
so a basis seen a few times is not trusted, and a basis never seen is 0.5. Weak bases (low
lexical overlap) and undecided answers are capped below any sensible cascade threshold: they
are never confident, whatever the table says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

PRIOR_WEIGHT = 4.0
UNSEEN = 0.5
WEAK_CAP = 0.6
UNDECIDED_CAP = 0.5
WEAK_BASES = frozenset({"fail:low_support"})
TABLE = "data/offline_calibration.json"


@dataclass(frozen=True)
class Tally:
    """How often a basis was right on the labelled dev answers."""

    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else UNSEEN


@dataclass(frozen=True)
class Calibration:
    """Basis -> tally, and the confidence each tally earns."""

    tallies: dict[str, Tally]

    def confidence(self, basis: str) -> float:
        tally = self.tallies.get(basis, Tally(0, 0))
        value = (tally.correct + PRIOR_WEIGHT * UNSEEN) / (tally.total + PRIOR_WEIGHT)
        if basis.startswith("undecided"):
            value = min(value, UNDECIDED_CAP)
        elif basis in WEAK_BASES:
            value = min(value, WEAK_CAP)
        return round(value, 3)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Calibration:
        bases = data.get("bases", {})
        if not isinstance(bases, dict):
            raise ValueError("calibration table: 'bases' must be an object")
        return cls({str(k): Tally(int(v["correct"]), int(v["total"])) for k, v in bases.items()})

    def to_json(self, source: str) -> dict[str, object]:
        return {"source": source, "prior_weight": PRIOR_WEIGHT,
                "bases": {k: {"correct": t.correct, "total": t.total,
                              "confidence": self.confidence(k)}
                          for k, t in sorted(self.tallies.items())}}


@lru_cache(maxsize=1)
def bundled() -> Calibration:
    """The table shipped with groundguard (empty, so every basis is 0.5, when it is missing)."""
    try:
        text = resources.files("guard").joinpath(TABLE).read_text("utf-8")
    except FileNotFoundError:
        return Calibration({})
    return Calibration.from_json(json.loads(text))
