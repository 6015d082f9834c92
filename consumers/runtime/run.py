"""Running the service as a process: the judge built from the settings when none is given,
SIGTERM/SIGINT handled, the judge closed at the end."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from consumers.runtime.service import GuardService
from consumers.runtime.stats import ServiceStats
from consumers.settings import ServiceSettings
from guard.assembly import build_guard
from guard.boundary import GuardCore
from guard.models import Verdict

log = structlog.get_logger("consumers.service")


async def run_service(
    settings: ServiceSettings,
    guard: GuardCore | None = None,
    *,
    stop: asyncio.Event | None = None,
    environ: Mapping[str, str] | None = None,
    on_start: Callable[[GuardService], None] | None = None,
    on_verdict: Callable[[Verdict], None] | None = None,
    stats: ServiceStats | None = None,
) -> None:
    """Run the service until ``stop`` is set (or SIGTERM/SIGINT when no event is given).

    Without ``guard``, one is built from ``settings.judge`` (API keys from ``environ``, default
    ``os.environ``) and closed at the end. ``on_start(service)`` is called before it starts;
    ``on_verdict(verdict)`` after each verdict is delivered; ``stats`` is the
    :class:`ServiceStats` to keep (for metrics and health endpoints).
    """
    own_guard = guard is None
    if guard is None:
        guard = build_guard(settings.judge, environ if environ is not None else os.environ)
    event = stop or asyncio.Event()
    service = GuardService(settings, guard, stop=event, on_verdict=on_verdict, stats=stats)
    remove_handlers = _install_signal_handlers(event) if stop is None else (lambda: None)
    try:
        if on_start is not None:
            on_start(service)
        await service.run()
    finally:
        remove_handlers()
        if own_guard:
            await guard.aclose()


def _install_signal_handlers(event: asyncio.Event) -> Any:
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, _on_signal, event, sig)
            installed.append(sig)

    def remove() -> None:
        for sig in installed:
            loop.remove_signal_handler(sig)

    return remove


def _on_signal(event: asyncio.Event, sig: signal.Signals) -> None:
    log.info("service.signal", signal=sig.name)
    event.set()
