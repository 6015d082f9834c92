"""Where submitted batches are remembered, so that no item is ever submitted twice.

A batch is recorded twice: before it is submitted, as an *intent* (its items and a ``key`` of
our own, no provider id yet), and once the provider accepted it, with the provider's
``batch_id``. The provider batch is tagged with the key where the provider allows it, so a
process that died between the two finds its intent when it comes back and adopts the batch the
provider holds instead of submitting the items again (:class:`~guard.batch.judge.BatchingJudge`).

:class:`BatchJournal` is the port; :class:`MemoryJournal` keeps one process's batches (the CLI,
tests). The Kafka runtime's journal (``consumers/runtime/batchstate.py``) writes each
:class:`SubmittedBatch` to a compacted topic before the input offsets move past its messages,
and reads a partition's batches back when it is assigned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from guard.batch.items import ItemRef
from guard.errors import GuardError


class JournalError(GuardError):
    """The batch journal could not be written or read (the runtime's Kafka journal)."""

    kind = "batch_journal"


@dataclass(frozen=True)
class SubmittedBatch:
    """One provider batch: its id (None: an intent, not known to be submitted yet), each item's
    ``custom_id`` with the position it judges, and our own ``key`` for it."""

    provider: str
    batch_id: str | None
    items: tuple[tuple[str, ItemRef | None], ...]  # (custom_id, where it comes from)
    submitted_at: float  # epoch seconds (of the intent: the provider's batch is not older)
    key: str = ""  # ours, the same in the intent and the submitted record; "": the batch id
    size: int = 0  # items in the whole provider batch (a record may hold one partition's); 0: ?

    @property
    def custom_ids(self) -> tuple[str, ...]:
        return tuple(cid for cid, _ in self.items)

    @property
    def ident(self) -> str:
        """What the journal files it under: the key, the same before and after submission."""
        return self.key or self.batch_id or ""

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "batch_id": self.batch_id,
            "key": self.key,
            "size": self.size,
            "submitted_at": self.submitted_at,
            "items": [
                [cid, None if ref is None else [ref.stream, ref.position]]
                for cid, ref in self.items
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SubmittedBatch:
        items = tuple(
            (str(cid), None if ref is None else ItemRef(str(ref[0]), int(ref[1])))
            for cid, ref in data["items"]
        )
        batch_id = data["batch_id"]
        return cls(
            str(data["provider"]),
            None if batch_id is None else str(batch_id),
            items,
            float(data["submitted_at"]),
            str(data.get("key") or ""),
            int(data.get("size") or 0),
        )


class BatchJournal(Protocol):
    """Remembers submitted batches (durably, in the runtime)."""

    def find(self, custom_id: str) -> SubmittedBatch | None:
        """The batch that holds ``custom_id``, if one was submitted."""
        ...

    async def record(self, batch: SubmittedBatch) -> None:
        """Remember ``batch``; returns once it is stored (durably, where that applies)."""
        ...


class MemoryJournal:
    """A :class:`BatchJournal` in this process's memory."""

    def __init__(self) -> None:
        self._by_item: dict[str, SubmittedBatch] = {}

    def find(self, custom_id: str) -> SubmittedBatch | None:
        return self._by_item.get(custom_id)

    def remember(self, batch: SubmittedBatch) -> None:
        for cid in batch.custom_ids:
            self._by_item[cid] = batch

    def batches(self) -> list[SubmittedBatch]:
        return list({b.ident: b for b in self._by_item.values()}.values())

    def forget(self, ident: str) -> None:
        for cid in [c for c, b in self._by_item.items() if b.ident == ident]:
            del self._by_item[cid]

    def settle(self, floors: Mapping[str, int]) -> int:
        """Forget the batches none of whose items can come round again: each item from a
        stream of ``floors`` is below its floor (the stream's committed position), and items
        from other streams (not this process's) or from none keep nothing. Returns how many
        batches were forgotten."""

        def done(ref: ItemRef | None) -> bool:
            return ref is None or ref.stream not in floors or ref.position < floors[ref.stream]

        settled = {b.ident for b in self._by_item.values() if all(done(r) for _, r in b.items)}
        for cid in [c for c, b in self._by_item.items() if b.ident in settled]:
            del self._by_item[cid]
        return len(settled)

    async def record(self, batch: SubmittedBatch) -> None:
        self.remember(batch)
