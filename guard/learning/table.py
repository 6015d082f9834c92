"""The learner's state as a table: what ``groundguard calibration`` prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from guard.learning.learner import Learner


@dataclass(frozen=True)
class Row:
    tier: str
    basis: str
    direction: str
    count: float  # labels (the seed's, scaled, included)
    agreement: float
    bound: float  # the Wilson lower bound of the agreement
    local: bool  # whether the basis decides locally now

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def rows(learner: Learner) -> list[Row]:
    """One row per key the learner holds, most labels first within each tier."""
    out = []
    for key in learner.ledger.all_keys():
        count = learner.ledger.count(key)
        out.append(
            Row(
                key.tier,
                key.basis,
                key.direction,
                round(count.total, 2),
                round(count.share, 4),
                round(learner.bound(key), 4),
                learner.trusted(key),
            )
        )
    return sorted(out, key=lambda r: (r.tier, -r.count, r.basis, r.direction))


def render(table: list[Row]) -> str:
    """``table`` as aligned text."""
    head = ("tier", "basis", "direction", "count", "agreement", "bound", "local")
    lines = [
        (r.tier, r.basis, r.direction, f"{r.count:g}", f"{r.agreement:.3f}", f"{r.bound:.3f}",
         "yes" if r.local else "no")
        for r in table
    ]  # fmt: skip
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)]
    text = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    text += [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    ]
    return "\n".join(text)
