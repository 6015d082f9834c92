"""Server-sent events read from bytes that arrive split anywhere: inside a UTF-8 sequence,
inside a line, inside a number.

:class:`SseReader` keeps an incremental UTF-8 decoder (a sequence split across two reads is
decoded whole when its last byte arrives) and the unfinished line; each blank line dispatches
an :class:`SseEvent` (``event`` name, ``data`` lines joined by ``\\n``), as the WHATWG
event-stream rules say. Comment lines (``:``) and ``id`` / ``retry`` fields are ignored. A line
longer than ``max_line_chars`` is a :class:`ValueError` (an upstream that never ends a line
would otherwise grow the buffer without bound).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field

MAX_LINE_CHARS = 4 * 1024 * 1024


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


@dataclass
class SseReader:
    """Feed bytes with :meth:`feed`; it returns the events they complete."""

    max_line_chars: int = MAX_LINE_CHARS
    _decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace")
    )
    _line: str = ""
    _event: str = ""
    _data: list[str] = field(default_factory=list)
    _after_cr: bool = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        text = self._decoder.decode(chunk)
        if self._after_cr and text.startswith("\n"):  # the \n of a \r\n split across reads
            text = text[1:]
        if text:
            self._after_cr = text.endswith("\r")
        events: list[SseEvent] = []
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        lines[0] = self._line + lines[0]
        self._line = lines.pop()
        if len(self._line) > self.max_line_chars:
            raise ValueError(f"an event-stream line longer than {self.max_line_chars} characters")
        for line in lines:
            event = self._line_done(line)
            if event is not None:
                events.append(event)
        return events

    def _line_done(self, line: str) -> SseEvent | None:
        if not line:
            if not self._data and not self._event:
                return None
            event = SseEvent(self._event or "message", "\n".join(self._data))
            self._event, self._data = "", []
            return event
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None


def sse_bytes(data: str, event: str | None = None) -> bytes:
    """One event as it goes on the wire."""
    head = f"event: {event}\n" if event else ""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{lines}\n".encode()
