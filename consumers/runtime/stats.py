"""Counters the service keeps for metrics and health checks (read, never written, by them)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from consumers.runtime.kinds import OutputKind
from guard.batch.judge import BatchStats


@dataclass
class PartitionStats:
    committed: int | None = None
    highwater: int | None = None
    outstanding: int = 0
    paused: bool = False

    @property
    def lag(self) -> int | None:
        """Messages not yet committed (highwater minus committed offset)."""
        if self.highwater is None or self.committed is None:
            return None
        return max(0, self.highwater - self.committed)


@dataclass
class ServiceStats:
    """What the service has done so far. ``last_progress`` is a :func:`time.monotonic` time."""

    consumed: int = 0
    skipped_finished: int = 0  # finished before a restart (per commit metadata): not judged again
    verdicts: Counter[str] = field(default_factory=Counter)
    quarantined: int = 0
    approved: int = 0
    replies: int = 0  # request-reply: replies acknowledged
    replies_ignored: Counter[str] = field(default_factory=Counter)  # by reason (bad headers...)
    replies_dropped: Counter[str] = field(default_factory=Counter)  # by reason (unknown topic...)
    dead_lettered: Counter[str] = field(default_factory=Counter)
    releases: int = 0  # streamed answers: release events delivered
    stream_open: int = 0  # streamed answers being assembled
    stream_open_bytes: int = 0  # their text held
    stream_closed: Counter[str] = field(default_factory=Counter)  # by why: complete, timeout...
    stream_dropped: Counter[str] = field(default_factory=Counter)  # deltas: duplicate, late
    published: int = 0
    publish_retries: int = 0
    commits: int = 0
    transactions: int = 0
    in_flight: int = 0
    waiting: int = 0
    rebalances: int = 0
    pauses: int = 0
    peak_partition_buffered: int = 0
    buffered_bytes: int = 0  # input and output bytes held (ServiceSettings.max_buffered_bytes)
    peak_buffered_bytes: int = 0
    partitions: dict[str, PartitionStats] = field(default_factory=dict)
    started: bool = False
    ready: bool = False
    stopping: bool = False
    failed: str | None = None  # why the service is stopping on its own (e.g. fetching ended)
    intake_stopped: str | None = None
    waiting_for: str | None = None  # what start-up waits for (a missing topic), for /readyz
    last_progress: float = field(default_factory=time.monotonic)
    batch: BatchStats | None = None  # judge.delivery: batch (the batcher's gauges)

    @property
    def assigned(self) -> list[str]:
        return sorted(self.partitions)

    @property
    def dead_letters_total(self) -> int:
        return sum(self.dead_lettered.values())

    def hold(self, size: int) -> None:
        """``size`` more bytes held (see ``buffered_bytes``); :meth:`release` them once done."""
        self.buffered_bytes += size
        self.peak_buffered_bytes = max(self.peak_buffered_bytes, self.buffered_bytes)

    def release(self, size: int) -> None:
        self.buffered_bytes -= size

    def progressed(self) -> None:
        self.last_progress = time.monotonic()

    def delivered(self, outputs: Iterable[tuple[OutputKind, str]]) -> None:
        """Count one message's delivered records, given as (kind, tag) pairs."""
        for kind, tag in outputs:
            if kind is OutputKind.VERDICT:
                self.verdicts[tag] += 1
            elif kind is OutputKind.QUARANTINE:
                self.quarantined += 1
            elif kind is OutputKind.APPROVED:
                self.approved += 1
            elif kind is OutputKind.REPLY:
                self.replies += 1
            elif kind is OutputKind.RELEASE:
                self.releases += 1
            else:
                self.dead_lettered[tag] += 1
        self.progressed()

    def summary(self) -> dict[str, int | str]:
        """Flat counters for a log line."""
        lags = [p.lag for p in self.partitions.values() if p.lag is not None]
        out: dict[str, int | str] = {
            "consumed": self.consumed,
            "quarantined": self.quarantined,
            "dead_lettered": self.dead_letters_total,
            "in_flight": self.in_flight,
            "partitions": len(self.partitions),
            "lag": sum(lags),
            "paused": sum(1 for p in self.partitions.values() if p.paused),
        }
        out |= {f"verdicts.{label}": n for label, n in sorted(self.verdicts.items())}
        if self.intake_stopped:
            out["intake_stopped"] = self.intake_stopped
        if self.batch is not None:
            b = self.batch
            out |= {
                "batch.open_items": b.open_items,
                "batch.submitted": b.submitted,
                "batch.completed": b.completed,
                "batch.polling": b.polling,
                "batch.items_waiting": b.items_waiting,
                "batch.oldest_item_age_s": int(b.oldest_item_age_s),
                "batch.failed_items": b.failed_items,
            }
        return out
