"""Which offset of a partition may be committed when its messages finish out of order.

Messages of one partition are judged concurrently and finish in any order. The committed offset
(the next offset a restarted consumer reads) may only move past a contiguous run of finished
messages: it is the lowest unfinished offset, or one past the last tracked offset when nothing is
unfinished. Offsets need not be contiguous (compaction, transaction markers leave gaps).
"""

from __future__ import annotations

from collections import deque


class OffsetTracker:
    """Tracks the offsets of one partition from fetch to finish.

    ``start(offset)`` when a message is taken (offsets strictly increasing), ``finish(offset)``
    when all its outputs are acknowledged; :attr:`committable` is the offset to commit.
    """

    __slots__ = ("_committed", "_done", "_frontier", "_next", "_pending")

    def __init__(self, committed: int | None = None) -> None:
        self._pending: deque[int] = deque()  # started offsets not yet passed by the frontier
        self._done: set[int] = set()  # finished offsets still behind an unfinished one
        self._next: int | None = committed  # one past the last started offset
        self._frontier: int | None = committed  # lowest unfinished offset (or _next)
        self._committed: int | None = committed

    def start(self, offset: int) -> None:
        if self._next is not None and offset < self._next:
            raise ValueError(f"offset {offset} started out of order (next is {self._next})")
        self._pending.append(offset)
        self._next = offset + 1
        if self._frontier is None or len(self._pending) == 1:
            self._frontier = offset

    def finish(self, offset: int) -> None:
        """Mark ``offset`` finished; the frontier advances over every finished head offset."""
        if offset in self._done or not self._pending or offset < self._pending[0]:
            return  # unknown or already passed: finishing twice is harmless
        self._done.add(offset)
        while self._pending and self._pending[0] in self._done:
            self._done.discard(self._pending.popleft())
        self._frontier = self._pending[0] if self._pending else self._next

    @property
    def committable(self) -> int | None:
        """The offset to commit now, or ``None`` when it is not ahead of the last commit."""
        if self._frontier is None:
            return None
        if self._committed is not None and self._frontier <= self._committed:
            return None
        return self._frontier

    @property
    def next_offset(self) -> int | None:
        """One past the last started offset (the committed offset before any start)."""
        return self._next

    @property
    def frontier(self) -> int | None:
        """The lowest unfinished offset (one past the last started when none is unfinished)."""
        return self._frontier

    def mark_committed(self, offset: int) -> None:
        if self._committed is None or offset > self._committed:
            self._committed = offset

    @property
    def committed(self) -> int | None:
        return self._committed

    @property
    def outstanding(self) -> int:
        """Messages started and not yet passed by the frontier (unfinished or behind a gap)."""
        return len(self._pending)

    @property
    def unfinished(self) -> int:
        return len(self._pending) - len(self._done)

    def finished_beyond(self) -> list[int]:
        """Finished offsets behind an unfinished one (above the frontier), in order."""
        return sorted(self._done)

    def is_finished(self, offset: int) -> bool:
        """Whether ``offset`` is finished (behind the frontier, or finished beyond a gap)."""
        if self._frontier is not None and offset < self._frontier:
            return True
        return offset in self._done


# --------------------------------------------------------------------------- commit metadata
# Messages finished beyond an unfinished one are recorded in the commit's metadata, so a
# restarted consumer skips them instead of judging them again (the idea of Confluent's Parallel
# Consumer). Format: ``gg1:`` then comma-separated runs ``start`` or ``start+count`` (hex,
# relative to the committed offset). Runs that do not fit ``limit`` characters are left out:
# those messages are only judged again, never lost.

METADATA_PREFIX = "gg1:"
METADATA_LIMIT = 3900  # the broker's offset.metadata.max.bytes defaults to 4096
MAX_DECODED = 1 << 20  # more finished offsets than this in metadata is not ours: ignore it


def _runs(offsets: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for offset in offsets:
        if runs and runs[-1][0] + runs[-1][1] == offset:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((offset, 1))
    return runs


def encode_finished(base: int, offsets: list[int], *, limit: int = METADATA_LIMIT) -> str:
    """Commit metadata for the finished ``offsets`` (all above ``base``); "" when none."""
    parts: list[str] = []
    size = len(METADATA_PREFIX)
    for start, count in _runs(sorted(o for o in offsets if o > base)):
        part = f"{start - base:x}" if count == 1 else f"{start - base:x}+{count:x}"
        if size + len(part) + 1 > limit:
            break
        parts.append(part)
        size += len(part) + 1
    return METADATA_PREFIX + ",".join(parts) if parts else ""


def decode_finished(base: int, metadata: str | None) -> set[int]:
    """The finished offsets recorded by :func:`encode_finished`; empty for anything else."""
    if not metadata or not metadata.startswith(METADATA_PREFIX):
        return set()
    finished: set[int] = set()
    try:
        for part in filter(None, metadata[len(METADATA_PREFIX) :].split(",")):
            start_text, _, count_text = part.partition("+")
            start, count = int(start_text, 16), int(count_text or "1", 16)
            if start <= 0 or count <= 0 or len(finished) + count > MAX_DECODED:
                return set()
            finished.update(range(base + start, base + start + count))
    except ValueError:
        return set()
    return finished
