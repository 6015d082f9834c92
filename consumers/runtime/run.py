"""Running the service as a process: the judge built from the settings when none is given,
SIGTERM/SIGINT handled, the judge closed at the end."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping

from consumers.runtime.batchstate import KafkaBatchJournal, batch_journal
from consumers.runtime.learning import KafkaLearning
from consumers.runtime.service import GuardService
from consumers.runtime.stats import ServiceStats
from consumers.settings import ServiceSettings
from consumers.signals import stop_on_signals
from guard.assembly import build_guard
from guard.boundary import GuardCore
from guard.learning.build import make_learner
from guard.learning.learner import Learner
from guard.models import Verdict


async def run_service(
    settings: ServiceSettings,
    guard: GuardCore | None = None,
    *,
    stop: asyncio.Event | None = None,
    environ: Mapping[str, str] | None = None,
    on_start: Callable[[GuardService], None] | None = None,
    on_verdict: Callable[[Verdict], None] | None = None,
    stats: ServiceStats | None = None,
    journal: KafkaBatchJournal | None = None,
) -> None:
    """Run the service until ``stop`` is set (or SIGTERM/SIGINT when no event is given).

    Without ``guard``, one is built from ``settings.judge`` (API keys from ``environ``, default
    ``os.environ``) and closed at the end. ``on_start(service)`` is called before it starts;
    ``on_verdict(verdict)`` after each verdict is delivered; ``stats`` is the
    :class:`ServiceStats` to keep (for metrics and health endpoints). ``journal`` is the batch
    journal ``guard`` was built with (:func:`~consumers.runtime.batchstate.batch_journal`);
    without ``guard`` it is made here.
    """
    own_guard = guard is None
    if guard is None:
        journal = batch_journal(settings)
        env = environ if environ is not None else os.environ
        learner = make_learner(settings.judge, origin=settings.instance_id)
        guard = build_guard(settings.judge, env, journal=journal, learner=learner)
    learner = getattr(guard, "learner", None)  # judge.cascade.learn: shared on the topics
    learning = KafkaLearning(settings, learner) if isinstance(learner, Learner) else None
    event = stop or asyncio.Event()
    service = GuardService(
        settings,
        guard,
        stop=event,
        on_verdict=on_verdict,
        stats=stats,
        journal=journal,
        learning=learning,
    )
    remove_handlers = (
        stop_on_signals(event, log_event="service.signal") if stop is None else (lambda: None)
    )
    try:
        if on_start is not None:
            on_start(service)
        await service.run()
    finally:
        remove_handlers()
        if own_guard:
            await guard.aclose()
