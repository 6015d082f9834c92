"""The command line's progress line: redrawn in place on a terminal, absent elsewhere."""

from __future__ import annotations

import io

from consumers.cli.terminal import CLEAR_LINE, StatusLine


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _draw(stream: io.StringIO, *, enabled: bool = True) -> str:
    line = StatusLine(stream, enabled=enabled)
    line.show("1/3")
    line.note("line 2: invalid_json")
    line.show("3/3")
    line.close()
    return stream.getvalue()


def test_on_a_terminal_progress_is_redrawn_and_notes_stay() -> None:
    assert _draw(_Terminal()) == (
        f"{CLEAR_LINE}1/3{CLEAR_LINE}line 2: invalid_json\n{CLEAR_LINE}3/3\n"
    )


def test_on_a_pipe_or_when_disabled_only_notes_are_written_without_escape_codes() -> None:
    assert _draw(io.StringIO()) == "line 2: invalid_json\n"
    assert _draw(_Terminal(), enabled=False) == "line 2: invalid_json\n"
