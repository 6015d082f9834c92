"""Agreement counts per (tier, basis, direction), from many writers.

Each replica is the only writer of its own counts (``own``), published whole (not as deltas)
so a compacted topic keeps the latest value per replica and key; the counts a basis earns are
the seed's, plus this replica's, plus every peer's: a counter per writer, summed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Direction = Literal["pass", "fail"]


@dataclass(frozen=True, order=True)
class Key:
    tier: str
    basis: str
    direction: Direction


@dataclass(frozen=True)
class Count:
    """How many labels a basis got, and how many agreed with its reading."""

    agree: float
    total: float

    def __add__(self, other: Count) -> Count:
        return Count(self.agree + other.agree, self.total + other.total)

    @property
    def share(self) -> float:
        return self.agree / self.total if self.total else 0.0


ZERO = Count(0.0, 0.0)


class Ledger:
    """The counts of ``origin`` (this replica), its peers', and the seed, bounded to
    ``max_keys`` keys per writer (a key beyond is not counted: ``overflow`` says how often)."""

    def __init__(self, origin: str, *, max_keys: int = 4096) -> None:
        self.origin = origin
        self.max_keys = max_keys
        self.seed: dict[Key, Count] = {}
        self.own: dict[Key, Count] = {}
        self.peers: dict[str, dict[Key, Count]] = {}
        self.dirty: set[Key] = set()
        self.overflow = 0

    def count(self, key: Key) -> Count:
        total = self.seed.get(key, ZERO) + self.own.get(key, ZERO)
        for counts in self.peers.values():
            total = total + counts.get(key, ZERO)
        return total

    def add(self, key: Key, agree: float, total: float) -> None:
        """Add to this replica's count of ``key`` (negative to take back a label)."""
        if key not in self.own and len(self.own) >= self.max_keys:
            self.overflow += 1
            return
        now = self.own.get(key, ZERO) + Count(agree, total)
        self.own[key] = Count(max(0.0, now.agree), max(0.0, now.total))
        self.dirty.add(key)

    def put(self, origin: str, key: Key, count: Count) -> None:
        """A writer's published count of ``key``: a peer's replaces what it said before; this
        replica's own (read back after a restart) is taken when it is ahead of what is here."""
        if origin == self.origin:
            if count.total >= self.own.get(key, ZERO).total:
                self.own[key] = count
            return
        counts = self.peers.setdefault(origin, {})
        if key in counts or len(counts) < self.max_keys:
            counts[key] = count
        else:
            self.overflow += 1

    def take_dirty(self) -> list[tuple[Key, Count]]:
        """This replica's counts changed since the last call (to publish)."""
        out = [(key, self.own[key]) for key in sorted(self.dirty) if key in self.own]
        self.dirty.clear()
        return out

    def all_keys(self) -> Iterator[Key]:
        seen = set(self.seed) | set(self.own)
        for counts in self.peers.values():
            seen |= set(counts)
        yield from sorted(seen)
