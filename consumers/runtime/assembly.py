"""Streamed answers put back together: the deltas of each response in ``seq`` order.

Deltas (:class:`consumers.records.DeltaRecord`) arrive in any order and may repeat: the Kafka
producer of a streaming service retries, and a restart re-reads what was not committed. The
:class:`Assembler` keeps one :class:`OpenResponse` per response id and hands back, for every delta
taken, the deltas that became contiguous (``ready``, in ``seq`` order); a ``seq`` seen before is
dropped (``duplicate``), a delta of a response closed a moment ago is dropped (``late``), a
missing ``seq`` is waited for. A response is complete once every ``seq`` up to the one marked
``final`` is in.

Bounds: at most ``max_open`` responses and ``max_open_bytes`` of their text (UTF-8) are held;
:meth:`Assembler.over_bounds` names the responses to evict, oldest (lowest first offset) first,
the one that holds back the commit the most. :meth:`Assembler.expired` names the responses whose
next delta did not come within ``timeout_s`` of their last. Evicting and expiring are the
caller's (:mod:`consumers.runtime.streams`), which gives each such response a verdict saying
why: nothing here is dropped silently.

No Kafka and no asyncio here: offsets are numbers carried along, ``now`` is passed in.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

Key = tuple[Hashable, str]
DUPLICATE = "duplicate"
LATE = "late"


@dataclass(frozen=True)
class Delta:
    """One delta as read: which response, where in it, its text, whether it is the last, the
    offset of its record and (``seq`` 0) the request fields it carries."""

    response_id: str
    seq: int
    text: str
    final: bool = False
    offset: int = 0
    fields: dict[str, Any] | None = None


@dataclass
class OpenResponse:
    """A response being assembled. ``offsets``: every record taken for it (duplicates
    included), finished together once it is closed; ``decided``: its final verdict is out
    (a span failed before the end), so later text is counted in ``seq`` but not kept."""

    key: Key  # (partition, response id): where its deltas are read
    response_id: str
    first_offset: int
    last_seen: float
    offsets: list[int] = field(default_factory=list)
    pending: dict[int, Delta] = field(default_factory=dict)  # beyond a gap
    next_seq: int = 0
    final_seq: int | None = None
    size: int = 0  # UTF-8 bytes of text held
    decided: bool = False

    @property
    def complete(self) -> bool:
        return self.final_seq is not None and self.next_seq > self.final_seq

    def missing(self) -> str:
        """What it waits for, in words (for a timeout's verdict)."""
        end = "the final delta" if self.final_seq is None else f"up to seq {self.final_seq}"
        return f"{self.next_seq} deltas in order, waiting for seq {self.next_seq} ({end})"


@dataclass(frozen=True)
class Taken:
    """What one delta did: its response (None when dropped), the deltas now in order, why it
    was dropped, and whether it opened the response."""

    response: OpenResponse | None
    ready: list[Delta]
    dropped: str | None = None
    opened: bool = False


class Assembler:
    """The open responses of one replica (see the module docstring)."""

    def __init__(
        self, *, max_open: int, max_open_bytes: int, timeout_s: float, closed_memory: int
    ) -> None:
        self.max_open = max_open
        self.max_open_bytes = max_open_bytes
        self.timeout_s = timeout_s
        self.closed_memory = closed_memory
        self.open: dict[Key, OpenResponse] = {}
        self.bytes = 0
        self._closed: OrderedDict[Key, None] = OrderedDict()  # recently closed, oldest first

    def take(self, where: Hashable, delta: Delta, now: float) -> Taken:
        """Take ``delta`` read from ``where`` (a partition): its response is keyed by both."""
        key: Key = (where, delta.response_id)
        if key in self._closed:
            return Taken(None, [], LATE)
        response = self.open.get(key)
        opened = response is None
        if response is None:
            response = OpenResponse(key, delta.response_id, delta.offset, now)
            self.open[key] = response
        response.offsets.append(delta.offset)
        response.last_seen = now
        if delta.seq < response.next_seq or delta.seq in response.pending:
            return Taken(response, [], DUPLICATE, opened)
        if delta.final and (response.final_seq is None or delta.seq < response.final_seq):
            response.final_seq = delta.seq
        if response.final_seq is not None and delta.seq > response.final_seq:
            return Taken(response, [], DUPLICATE, opened)  # beyond the end: nothing to add
        response.pending[delta.seq] = delta
        self._hold(response, _size(delta))
        ready = []
        while response.next_seq in response.pending:
            ready.append(response.pending.pop(response.next_seq))
            response.next_seq += 1
        return Taken(response, ready, None, opened)

    def decided(self, response: OpenResponse) -> None:
        """Its verdict is out: its text is no longer held (later deltas only count)."""
        response.decided = True
        if self.open.get(response.key) is response:  # a closed one holds nothing already
            self._hold(response, -response.size)
        response.pending = {seq: _bare(d) for seq, d in response.pending.items()}

    def close(self, response: OpenResponse) -> None:
        """Forget ``response``; its late deltas are dropped while it is remembered."""
        if self.open.pop(response.key, None) is None:
            return
        self._hold(response, -response.size)
        self._closed[response.key] = None
        while len(self._closed) > self.closed_memory:
            self._closed.popitem(last=False)

    def drop(self, where: Hashable) -> list[OpenResponse]:
        """Forget the responses read from ``where`` (a partition handed over), not remembering
        them as closed: its next owner assembles them again."""
        gone = [r for r in self.open.values() if r.key[0] == where]
        for response in gone:
            del self.open[response.key]
            self._hold(response, -response.size)
        self._closed = OrderedDict((k, None) for k in self._closed if k[0] != where)
        return gone

    def over_bounds(self) -> list[OpenResponse]:
        """The responses to evict so that count and bytes are within their bounds, oldest
        first (the lowest first offset holds the commit back the most)."""
        count, size = len(self.open), self.bytes
        if count <= self.max_open and size <= self.max_open_bytes:
            return []
        evict = []
        for response in sorted(self.open.values(), key=lambda r: r.first_offset):
            if count <= self.max_open and size <= self.max_open_bytes:
                break
            evict.append(response)
            count, size = count - 1, size - response.size
        return evict

    def expired(self, now: float) -> list[OpenResponse]:
        """The incomplete responses whose last delta came ``timeout_s`` or more ago."""
        limit = now - self.timeout_s
        return [r for r in self.open.values() if not r.complete and r.last_seen <= limit]

    def _hold(self, response: OpenResponse, size: int) -> None:
        if response.decided and size > 0:
            return
        response.size += size
        self.bytes += size


def _size(delta: Delta) -> int:
    return len(delta.text.encode("utf-8", "surrogatepass"))


def _bare(delta: Delta) -> Delta:
    return Delta(delta.response_id, delta.seq, "", delta.final, delta.offset)
