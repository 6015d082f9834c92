"""The assembler of streamed answers over Kafka: any order and any repetition of a response's
deltas assembles the same text; a gap is waited for; a response silent too long expires; the
bounds on open responses name whom to evict, oldest first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from consumers.runtime.assembly import DUPLICATE, LATE, Assembler, Delta

PART = ("guard.deltas", 0)


def assembler(**bounds: float) -> Assembler:
    options = {"max_open": 100, "max_open_bytes": 1 << 20, "timeout_s": 10.0, "closed_memory": 10}
    options.update(bounds)
    return Assembler(**options)  # type: ignore[arg-type]


def deltas_of(pieces: list[str], rid: str = "r1") -> list[Delta]:
    last = len(pieces) - 1
    return [Delta(rid, seq, text, seq == last, seq) for seq, text in enumerate(pieces)]


def assemble(asm: Assembler, arrivals: list[Delta]) -> tuple[str, bool, int]:
    """The text in the order handed back, whether complete, and how many were dropped."""
    text, complete, dropped = [], False, 0
    for now, delta in enumerate(arrivals):
        taken = asm.take(PART, delta, float(now))
        text += [d.text for d in taken.ready]
        dropped += taken.dropped is not None
        complete = taken.response is not None and taken.response.complete
    return "".join(text), complete, dropped


pieces = st.lists(st.text(max_size=8), min_size=1, max_size=12)


class TestOrder:
    @given(pieces, st.data())
    def test_any_order_and_duplication_assembles_the_same_text(
        self, parts: list[str], data: st.DataObject
    ) -> None:
        """Deltas shuffled and repeated (a retrying producer, a re-read after a restart) hand
        back every delta once, in seq order: the text is the answer's, the response complete
        exactly when the last delta of the unbroken run arrives."""
        deltas = deltas_of(parts)
        repeats = data.draw(st.lists(st.sampled_from(deltas), max_size=10))
        arrivals = data.draw(st.permutations(deltas + repeats))
        asm = assembler()
        text, complete, dropped = assemble(asm, arrivals)
        assert text == "".join(parts)
        assert complete
        assert dropped == len(repeats)
        assert asm.open[(PART, "r1")].offsets.count(0) == 1 + repeats.count(deltas[0])

    @given(pieces, st.data())
    def test_a_gap_is_waited_for(self, parts: list[str], data: st.DataObject) -> None:
        """With one seq missing, nothing after it is handed back and the response is not
        complete; the missing delta, once it comes, releases the rest in order."""
        deltas = deltas_of([*parts, "end"])
        gap = data.draw(st.integers(0, len(deltas) - 1))
        others = data.draw(st.permutations([d for d in deltas if d.seq != gap]))
        asm = assembler()
        text, complete, _ = assemble(asm, others)
        assert text == "".join(d.text for d in deltas[:gap])
        assert not complete
        assert asm.open[(PART, "r1")].next_seq == gap
        taken = asm.take(PART, deltas[gap], 99.0)
        assert text + "".join(d.text for d in taken.ready) == "".join(parts) + "end"
        assert taken.response is not None
        assert taken.response.complete

    def test_responses_of_other_partitions_are_apart(self) -> None:
        asm = assembler()
        asm.take(("t", 0), Delta("r", 0, "a", True), 0.0)
        taken = asm.take(("t", 1), Delta("r", 0, "b"), 0.0)
        assert taken.opened
        assert taken.dropped is None
        assert len(asm.open) == 2


class TestClosing:
    def test_a_delta_after_its_response_closed_is_late(self) -> None:
        asm = assembler()
        taken = asm.take(PART, Delta("r1", 0, "Hi.", True), 0.0)
        assert taken.response is not None
        asm.close(taken.response)
        assert asm.take(PART, Delta("r1", 0, "Hi.", True), 1.0).dropped == LATE
        assert asm.open == {}
        assert asm.bytes == 0

    def test_a_silent_incomplete_response_expires_after_the_timeout(self) -> None:
        """Expiry counts from the last delta; a complete response (waiting for its judge)
        never expires."""
        asm = assembler(timeout_s=5.0)
        asm.take(PART, Delta("open", 0, "a"), 0.0)
        asm.take(PART, Delta("open", 2, "c", True), 3.0)  # seq 1 missing
        asm.take(PART, Delta("done", 0, "x", True), 0.0)
        assert asm.expired(7.9) == []
        assert [r.response_id for r in asm.expired(8.0)] == ["open"]
        assert "waiting for seq 1" in asm.expired(8.0)[0].missing()

    def test_duplicates_beyond_the_final_seq_are_dropped(self) -> None:
        asm = assembler()
        asm.take(PART, Delta("r", 1, "b", True, 1), 0.0)
        assert asm.take(PART, Delta("r", 2, "c", False, 2), 0.0).dropped == DUPLICATE

    def test_a_decided_response_holds_no_text(self) -> None:
        asm = assembler()
        taken = asm.take(PART, Delta("r", 0, "abc"), 0.0)
        asm.take(PART, Delta("r", 2, "def"), 0.0)
        assert taken.response is not None
        assert asm.bytes == 6
        asm.decided(taken.response)
        asm.take(PART, Delta("r", 1, "xyz"), 0.0)
        assert asm.bytes == 0
        assert taken.response.next_seq == 3


class TestBounds:
    @given(st.integers(1, 6), st.integers(0, 12))
    def test_count_bound_evicts_the_oldest(self, limit: int, opened: int) -> None:
        asm = assembler(max_open=limit)
        for n in range(opened):
            asm.take(PART, Delta(f"r{n}", 0, "x", False, n), 0.0)
            for response in asm.over_bounds():
                asm.close(response)
        kept = sorted(r.first_offset for r in asm.open.values())
        assert kept == list(range(max(0, opened - limit), opened))

    def test_byte_bound_evicts_oldest_first_until_within(self) -> None:
        asm = assembler(max_open_bytes=1024)
        for n in range(3):
            asm.take(PART, Delta(f"r{n}", 0, "é" * 200, False, n), 0.0)  # 400 bytes each
        evicted = asm.over_bounds()
        assert [r.response_id for r in evicted] == ["r0"]
        asm.close(evicted[0])
        assert asm.bytes == 800
        assert asm.over_bounds() == []

    def test_dropping_a_partition_forgets_it_without_remembering(self) -> None:
        asm = assembler()
        asm.take(("t", 0), Delta("r", 0, "a"), 0.0)
        asm.take(("t", 1), Delta("s", 0, "b"), 0.0)
        gone = asm.drop(("t", 0))
        assert [r.response_id for r in gone] == ["r"]
        assert asm.bytes == 1
        assert asm.take(("t", 0), Delta("r", 0, "a"), 0.0).opened
