"""A partition's buffered count: each message held counts once, however it is held."""

from __future__ import annotations

from aiokafka.structs import TopicPartition

from consumers.runtime.envelope import OutRecord
from consumers.runtime.intake import Partition, Staged
from consumers.runtime.kinds import OutputKind


def staged(offset: int) -> Staged:
    out = OutRecord(
        topic="verdicts", value=b"%d" % offset, key=None, headers=[], kind=OutputKind.VERDICT
    )
    return Staged([out], lambda detail: out, size=len(out.value))


def test_a_message_staged_beyond_an_unfinished_one_counts_once() -> None:
    part = Partition(TopicPartition("requests", 0))
    for offset in (0, 1, 2):
        part.tracker.start(offset)
    part.tracker.finish(1)  # exactly-once: finished and staged behind the unfinished offset 0
    part.ready[1] = staged(1)
    assert part.buffered == 3  # 0 in flight, 1 staged, 2 in flight
    part.tracker.finish(0)  # the frontier passes 0 and 1; 1 stays staged until the transaction
    part.ready[0] = staged(0)
    assert part.buffered == 3
    del part.ready[0], part.ready[1]  # published by the transaction
    assert part.buffered == 1
