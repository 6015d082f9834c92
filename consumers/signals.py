"""SIGTERM/SIGINT set an event: how ``run`` and ``serve`` learn to stop gracefully."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

import structlog


def stop_on_signals(event: asyncio.Event, *, log_event: str) -> Callable[[], None]:
    """Set ``event`` on SIGTERM or SIGINT (logging ``log_event`` with the signal's name);
    returns the function that removes the handlers again."""
    loop = asyncio.get_running_loop()
    log = structlog.get_logger("consumers.signals")
    installed: list[signal.Signals] = []

    def on_signal(sig: signal.Signals) -> None:
        log.info(log_event, signal=sig.name)
        event.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)

    def remove() -> None:
        for sig in installed:
            loop.remove_signal_handler(sig)

    return remove
