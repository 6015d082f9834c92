"""The learner: which readings may decide locally, and the labels that teach it."""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from guard.learning.ledger import Count, Direction, Key, Ledger
from guard.learning.settings import CascadeSettings

Z = 1.645  # one-sided 95 %: the bound is below the true agreement 19 times in 20
SEED_CAP = 40.0  # the most labels one basis of the shipped table weighs: never trusted on it alone


def wilson_lower(count: Count, z: float = Z) -> float:
    """The Wilson score lower bound of ``count``'s agreement (0 for no labels): all of 52
    agreeing is 0.950, 100 of 100 0.974, 95 of 100 0.901."""
    n = count.total
    if n <= 0:
        return 0.0
    p = min(1.0, count.agree / n)
    z2 = z * z
    centre = p + z2 / (2 * n)
    spread = z * math.sqrt(max(0.0, p * (1 - p) + z2 / (4 * n)) / n)
    return max(0.0, (centre - spread) / (1 + z2 / n))


def audit_pick(request_id: str, share: float) -> bool:
    """Whether ``request_id`` falls in the audited share (a stable hash: replays agree)."""
    if share <= 0.0:
        return False
    digest = hashlib.blake2b(request_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64 < share


def bucket(p: float) -> str:
    """The score bucket a reading without a rule rests on: p0.0 .. p0.9 (p 1.0 is p0.9)."""
    return f"p{min(9, max(0, math.floor(p * 10))) / 10:.1f}"


@dataclass(frozen=True)
class Seen:
    """A message's readings, kept for a reviewer's later label: the keys, who labelled them
    (``llm``, ``reviewer`` or None when decided locally), and with which label."""

    keys: tuple[Key, ...]
    label: Direction | None
    source: str | None


class Learner:
    """Decides which (tier, basis, direction) may decide locally, and learns from labels."""

    def __init__(self, settings: CascadeSettings, ledger: Ledger) -> None:
        self.settings = settings
        self.ledger = ledger
        self.recent: OrderedDict[str, Seen] = OrderedDict()
        self.unmatched_labels = 0
        self.labels = 0

    def bound(self, key: Key) -> float:
        return wilson_lower(self.ledger.count(key))

    def trusted(self, key: Key) -> bool:
        count = self.ledger.count(key)
        return (
            count.total >= self.settings.min_count
            and wilson_lower(count) >= self.settings.target_agreement
        )

    def audit(self, request_id: str) -> bool:
        return audit_pick(request_id, self.settings.audit_share)

    def observe(
        self, request_id: str, keys: Iterable[Key], label: Direction | None, source: str = "llm"
    ) -> None:
        """A message's readings and the label they get (None: decided locally, no label)."""
        keys = tuple(keys)
        if label is not None:
            for key in keys:
                self.ledger.add(key, 1.0 if key.direction == label else 0.0, 1.0)
        self._remember(request_id, Seen(keys, label, source if label else None))

    def relabel(self, request_id: str, label: Direction, source: str = "reviewer") -> bool:
        """A reviewer's label of an earlier message: it replaces the LLM's (whose counts are
        taken back) and counts ``reviewer_weight`` times. False when the message is unknown
        (counted in ``unmatched_labels``; nothing else happens)."""
        self.labels += 1
        seen = self.recent.get(request_id)
        if seen is None:
            self.unmatched_labels += 1
            return False
        weight = self.settings.reviewer_weight
        for key in seen.keys:
            if seen.label is not None:
                old = 1.0 if seen.source == "llm" else weight
                self.ledger.add(key, -(old if key.direction == seen.label else 0.0), -old)
            self.ledger.add(key, weight if key.direction == label else 0.0, weight)
        self._remember(request_id, Seen(seen.keys, label, source))
        return True

    def _remember(self, request_id: str, seen: Seen) -> None:
        if self.settings.max_recent <= 0:
            return
        self.recent[request_id] = seen
        self.recent.move_to_end(request_id)
        while len(self.recent) > self.settings.max_recent:
            self.recent.popitem(last=False)


def direction_of(basis: str) -> Direction:
    return "fail" if basis.startswith("fail") else "pass"


def seed_offline(ledger: Ledger, tier: str, tallies: dict[str, tuple[int, int]]) -> None:
    """The shipped table's out-of-fold counts of an offline tier as the starting state, each
    basis scaled down to at most ``SEED_CAP`` labels (the user's traffic soon outweighs it)."""
    for basis, (correct, total) in tallies.items():
        if total <= 0:
            continue
        scale = min(1.0, SEED_CAP / total)
        key = Key(tier, basis, direction_of(basis))
        ledger.seed[key] = Count(correct * scale, total * scale)
