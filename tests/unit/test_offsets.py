"""The offset tracker: the committed offset only moves past a contiguous run of finished
messages, whatever order they finish in."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from consumers.runtime.offsets import OffsetTracker, decode_finished, encode_finished


class TestOffsetTracker:
    def test_nothing_to_commit_before_any_message(self) -> None:
        assert OffsetTracker().committable is None

    def test_an_unfinished_message_holds_the_commit_at_its_offset(self) -> None:
        tracker = OffsetTracker()
        for offset in (10, 11, 12):
            tracker.start(offset)
        tracker.finish(11)
        tracker.finish(12)
        assert tracker.committable == 10
        assert tracker.outstanding == 3
        assert tracker.unfinished == 1

    def test_finishing_the_gap_moves_the_commit_past_everything_finished(self) -> None:
        tracker = OffsetTracker()
        for offset in (10, 11, 12):
            tracker.start(offset)
        tracker.finish(12)
        tracker.finish(11)
        tracker.finish(10)
        assert tracker.committable == 13
        assert tracker.outstanding == 0

    def test_offset_gaps_from_compaction_are_skipped(self) -> None:
        tracker = OffsetTracker()
        for offset in (3, 7, 20):
            tracker.start(offset)
        tracker.finish(3)
        assert tracker.committable == 7
        tracker.finish(20)
        tracker.finish(7)
        assert tracker.committable == 21

    def test_a_committed_offset_is_not_offered_again(self) -> None:
        tracker = OffsetTracker()
        tracker.start(0)
        tracker.finish(0)
        tracker.mark_committed(1)
        assert tracker.committable is None
        tracker.start(1)
        assert tracker.committable is None  # 1 is unfinished, and 1 is already committed
        tracker.finish(1)
        assert tracker.committable == 2

    def test_starting_from_a_known_committed_offset(self) -> None:
        tracker = OffsetTracker(committed=100)
        assert tracker.committable is None
        tracker.start(100)
        tracker.finish(100)
        assert tracker.committable == 101

    def test_finishing_twice_or_an_unknown_offset_is_harmless(self) -> None:
        tracker = OffsetTracker()
        tracker.start(5)
        tracker.start(6)
        tracker.finish(6)
        tracker.finish(6)
        tracker.finish(99)
        tracker.finish(1)
        assert tracker.committable == 5
        tracker.finish(5)
        tracker.finish(5)
        assert tracker.committable == 7

    def test_offsets_must_be_started_in_order(self) -> None:
        tracker = OffsetTracker()
        tracker.start(5)
        with pytest.raises(ValueError, match="out of order"):
            tracker.start(5)

    def test_is_finished_covers_offsets_behind_the_frontier_and_beyond_a_gap(self) -> None:
        tracker = OffsetTracker()
        for offset in range(4):
            tracker.start(offset)
        tracker.finish(0)
        tracker.finish(2)
        assert [tracker.is_finished(o) for o in range(4)] == [True, False, True, False]


@given(
    st.lists(st.integers(min_value=1, max_value=5), min_size=1, max_size=60),
    st.randoms(use_true_random=False),
    st.integers(min_value=0, max_value=60),
)
def test_committable_is_always_the_lowest_unfinished_offset(
    steps: list[int], rnd: random.Random, finished_count: int
) -> None:
    """For any offsets (with gaps) finished in any order, the committable offset is the lowest
    unfinished offset, or one past the last when all finished, and never passes an unfinished
    message."""
    offsets, current = [], 0
    for step in steps:
        current += step
        offsets.append(current)
    tracker = OffsetTracker()
    for offset in offsets:
        tracker.start(offset)
    order = offsets[:]
    rnd.shuffle(order)
    finished: set[int] = set()
    for offset in order[:finished_count]:
        tracker.finish(offset)
        finished.add(offset)
        unfinished = [o for o in offsets if o not in finished]
        expected = unfinished[0] if unfinished else offsets[-1] + 1
        assert tracker.committable == expected
        assert all(o in finished for o in offsets if o < expected)
        assert tracker.unfinished == len(unfinished)


class TestCommitMetadata:
    def test_finished_offsets_beyond_the_commit_round_trip_as_runs(self) -> None:
        finished = [11, 12, 13, 15, 40]
        metadata = encode_finished(10, finished)
        assert metadata == "gg1:1+3,5,1e"
        assert decode_finished(10, metadata) == set(finished)

    def test_nothing_finished_beyond_gives_empty_metadata(self) -> None:
        assert encode_finished(10, []) == ""
        assert decode_finished(10, "") == set()

    @pytest.mark.parametrize(
        "metadata", ["", "other-tool:1,2", "gg1:zz", "gg1:0", "gg1:1+0", "gg1:1+fffffffff", None]
    )
    def test_foreign_or_broken_metadata_skips_nothing(self, metadata: str | None) -> None:
        assert decode_finished(10, metadata) == set()

    def test_metadata_beyond_the_limit_keeps_the_nearest_offsets(self) -> None:
        finished = list(range(2, 20_000, 2))  # no runs: one entry each
        metadata = encode_finished(0, finished, limit=200)
        assert len(metadata) <= 200
        kept = decode_finished(0, metadata)
        assert kept
        assert kept == set(finished[: len(kept)])

    def test_the_tracker_reports_what_finished_beyond_its_frontier(self) -> None:
        tracker = OffsetTracker()
        for offset in range(5):
            tracker.start(offset)
        for offset in (1, 3, 4):
            tracker.finish(offset)
        assert tracker.committable == 0
        assert tracker.finished_beyond() == [1, 3, 4]


@given(
    st.integers(min_value=0, max_value=10**12),
    st.sets(st.integers(min_value=1, max_value=5000), max_size=300),
)
def test_commit_metadata_round_trips_any_finished_set(base: int, deltas: set[int]) -> None:
    finished = {base + d for d in deltas}
    assert decode_finished(base, encode_finished(base, sorted(finished))) == finished
