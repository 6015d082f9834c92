"""A library's repeated log lines, bounded: the same line at most once per window.

aiokafka logs an error each time it looks for a topic that is gone ("Topic ver-... not found in
cluster metadata"), many times a second for as long as the topic stays gone: a deleted output
topic once made the service write 113,815 lines before it stopped, burying the one line that
said why. :class:`RepeatedLines` lets the first of a kind through, then at most one per
``window_s`` seconds, which says how many like it were held back. A line is of a kind by its
logger and its text; only library loggers are bounded (the project's own lines carry their
context and are already bounded per message). At most ``MAX_KINDS`` kinds are remembered (the
oldest forgotten first), so the filter's memory is bounded whatever a library logs.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

REPEAT_WINDOW_S = 10.0
MAX_KINDS = 512
OWN_LOGGERS = ("consumers", "guard", "groundguard")
_TEXT_CHARS = 300  # of a line's text that tells its kind


@dataclass
class _Kind:
    shown_at: float
    held_back: int = 0


class RepeatedLines(logging.Filter):
    """Handler filter: a library's line shown at most once per ``window_s`` per kind."""

    def __init__(
        self, window_s: float = REPEAT_WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self._window_s, self._clock = window_s, clock
        self._kinds: OrderedDict[tuple[str, str], _Kind] = OrderedDict()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith(OWN_LOGGERS) or record.levelno < logging.WARNING:
            return True
        try:
            text = record.getMessage()[:_TEXT_CHARS]
        except Exception:  # a library's bad format arguments: let the handler report it
            return True
        key, now = (record.name, text), self._clock()
        kind = self._kinds.get(key)
        if kind is None:
            self._kinds[key] = _Kind(now)
            if len(self._kinds) > MAX_KINDS:
                self._kinds.popitem(last=False)
            return True
        self._kinds.move_to_end(key)
        if now - kind.shown_at < self._window_s:
            kind.held_back += 1
            return False
        if kind.held_back:
            record.msg = (
                f"{record.getMessage()} ({kind.held_back} more like it in the last "
                f"{now - kind.shown_at:.0f} s, not shown)"
            )
            record.args = None
        kind.shown_at, kind.held_back = now, 0
        return True
