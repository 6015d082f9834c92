"""``groundguard run``: screen a Kafka topic until SIGTERM/SIGINT (see
:mod:`consumers.runtime.service`).

Settings come from ``--config`` (YAML/JSON) and ``GROUNDGUARD_...`` environment variables. Exit
status: 0 after a clean stop, 1 when the broker is unreachable or a topic is missing at
``startup_timeout_s``, or an output could not be delivered, 2 for a bad setting (the field and the
fix are printed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiokafka.errors import KafkaError

from consumers import telemetry
from consumers.config import load_settings
from consumers.errors import ConsumerError, SettingsError
from consumers.heap import freeze_startup
from consumers.logging import get_logger
from consumers.runtime.batchstate import KafkaBatchJournal, batch_journal
from consumers.runtime.run import run_service
from consumers.runtime.stats import ServiceStats
from consumers.settings import ServiceSettings
from guard.assembly import build_guard
from guard.boundary import GuardCore
from guard.errors import ConfigError
from guard.learning.build import make_learner
from guard.learning.learner import Learner

if TYPE_CHECKING:
    from consumers.health import HealthServer
    from consumers.metrics import Metrics

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="screen a Kafka topic: judge every answer, publish verdicts",
        description="Join the consumer group, judge every RAG response on the requests topic, "
        "publish a verdict for each, quarantine failing ones, dead-letter malformed ones. "
        "Settings: --config FILE and GROUNDGUARD_... environment variables (these win).",
    )
    parser.add_argument("--config", type=Path, help="a YAML or JSON settings file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    environ = os.environ
    try:
        settings = load_settings(args.config, environ)
        telemetry.setup(environ)  # before the judge: its spans are built in (off: nothing)
        journal = batch_journal(settings)
        learner = make_learner(settings.judge, origin=settings.instance_id)
        guard = build_guard(settings.judge, environ, journal=journal, learner=learner)
    except (SettingsError, ConfigError) as exc:
        print(f"groundguard run: bad setting {exc}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging(settings)
    freeze_startup()  # full collections no longer walk start-up's objects (a latency tail)
    try:
        asyncio.run(_serve(settings, guard, environ, journal))
    except (ConsumerError, KafkaError, OSError) as exc:
        print(
            f"groundguard run: {exc!r}"
            if isinstance(exc, KafkaError)
            else f"groundguard run: {exc}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    except Exception as exc:  # a bug: its traceback is in the log (message.crashed)
        print(f"groundguard run: stopped by an internal error: {exc!r}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        telemetry.shutdown()  # what is buffered is sent
    return EXIT_OK


async def _serve(
    settings: ServiceSettings,
    guard: GuardCore,
    environ: Mapping[str, str],
    journal: KafkaBatchJournal | None,
) -> None:
    stats = ServiceStats()
    server = metrics = None
    progress = asyncio.create_task(log_progress(stats, guard, settings.log.progress_interval_s))
    try:
        server, metrics = await _start_health(settings, stats, guard)  # OSError: port in use
        await run_service(
            settings,
            guard,
            environ=environ,
            stats=stats,
            journal=journal,
            on_verdict=metrics.observe_verdict if metrics else None,
        )
    finally:
        progress.cancel()
        await guard.aclose()
        if server is not None:
            await server.close()


async def log_progress(stats: ServiceStats, guard: GuardCore, interval_s: float) -> None:
    """Every ``interval_s``: one ``service.progress`` line with the counters, the lag, and the
    judge's spend so far and budget left (when the judge is the budgeted one)."""
    if interval_s <= 0:
        return
    log = get_logger("consumers.progress")
    while True:
        await asyncio.sleep(interval_s)
        budget = guard.budget_stats()
        fields = stats.summary() | (budget.fields() if budget is not None else {})
        log.info("service.progress", **{k.replace(".", "_"): v for k, v in fields.items()})


async def _start_health(
    settings: ServiceSettings, stats: ServiceStats, guard: GuardCore
) -> tuple[HealthServer | None, Metrics | None]:
    if not settings.metrics.enabled:
        return None, None
    from consumers.health import HealthServer
    from consumers.metrics import Metrics

    learner = getattr(guard, "learner", None)
    metrics = Metrics(
        stats,
        judge_stats=guard.budget_stats,
        learner=learner if isinstance(learner, Learner) else None,
    )
    server = HealthServer(
        metrics=metrics,
        stats=stats,
        host=settings.metrics.host,
        port=settings.metrics.port,
        stall_after_s=settings.metrics.stall_after_s,
    )
    await server.start()
    return server, metrics


def configure_logging(settings: ServiceSettings) -> None:
    from consumers.logging import configure_logging

    configure_logging(
        log_format=settings.log.format,  # type: ignore[arg-type]
        level=settings.log.level.lower(),
        debug_payloads=settings.log.debug_payloads,
        startup_grace_s=settings.startup_timeout_s,
    )
