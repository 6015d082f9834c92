"""A library's repeated lines are bounded (a deleted topic once logged 113,815 lines)."""

from __future__ import annotations

import io
import logging

from hypothesis import given
from hypothesis import strategies as st

from consumers.logging import configure_logging, reset_logging
from consumers.repeats import MAX_KINDS, RepeatedLines


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(
    text: str, name: str = "aiokafka.cluster", level: int = logging.ERROR
) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, "Topic %s not found", (text,), None)


def test_a_repeated_line_is_shown_once_per_window_with_the_count_held_back() -> None:
    clock = Clock()
    lines = RepeatedLines(window_s=10, clock=clock)
    shown = []
    for step in range(3000):  # 30 s of a line every 10 ms
        clock.now = step * 0.01
        rec = record("ver-1")
        if lines.filter(rec):
            shown.append(rec.getMessage())
    assert len(shown) == 3
    assert shown[0] == "Topic ver-1 not found"
    assert shown[1].startswith("Topic ver-1 not found (999 more like it in the last 10 s")


def test_each_kind_counts_apart_and_own_lines_and_info_are_never_held() -> None:
    clock = Clock()
    lines = RepeatedLines(window_s=10, clock=clock)
    assert lines.filter(record("a"))
    assert lines.filter(record("b"))
    assert not lines.filter(record("a"))
    for _ in range(5):
        assert lines.filter(record("a", name="consumers.publisher"))
        assert lines.filter(record("a", level=logging.INFO))


@given(st.lists(st.text(max_size=20), max_size=2000))
def test_memory_is_bounded_whatever_is_logged(texts: list[str]) -> None:
    lines = RepeatedLines(window_s=10, clock=Clock())
    for text in texts:
        lines.filter(record(text))
    assert len(lines._kinds) <= MAX_KINDS


def test_the_service_logging_bounds_aiokafkas_repeats() -> None:
    stream = io.StringIO()
    configure_logging(log_format="json", stream=stream, startup_grace_s=0)
    try:
        log = logging.getLogger("aiokafka.cluster")
        for _ in range(10_000):
            log.error("Topic %s not found in cluster metadata", "ver-2")
    finally:
        reset_logging()
    assert stream.getvalue().count("not found in cluster metadata") == 1
