"""Start-up: topics created or waited for, and the output limits read, each retried while the
broker does not answer, until ``startup_timeout_s`` (then :class:`BrokerUnavailable`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog
from aiokafka.errors import KafkaConnectionError, KafkaError

from consumers.errors import BrokerUnavailable
from consumers.runtime.fitting import OutputLimits
from consumers.runtime.kafka import Broker
from consumers.runtime.stats import ServiceStats
from consumers.runtime.topics import fitted_limits
from consumers.settings import ServiceSettings

log = structlog.get_logger("consumers.service")
_T = TypeVar("_T")
RETRY_S = 1.0


async def with_deadline(
    settings: ServiceSettings, start: Callable[[], Awaitable[_T]], what: str
) -> _T:
    """``start()``, retried while the broker cannot be reached, for ``startup_timeout_s``."""
    deadline = time.monotonic() + settings.startup_timeout_s
    while True:
        try:
            return await start()
        except KafkaConnectionError as exc:
            if time.monotonic() >= deadline:
                raise BrokerUnavailable(
                    f"could not {what}: {settings.bootstrap_servers} did not answer "
                    f"within {settings.startup_timeout_s:.0f}s ({exc})"
                ) from exc
            log.warning("broker.unreachable", action=what, error=str(exc))
            await asyncio.sleep(RETRY_S)


async def prepare(
    settings: ServiceSettings, broker: Broker, stats: ServiceStats, stop: asyncio.Event
) -> tuple[OutputLimits, int] | None:
    """Topics ready; the output topics' limits and the producer's batch size. None when
    ``stop`` is set while waiting for topics."""
    deadline = time.monotonic() + settings.startup_timeout_s
    if settings.create_topics:
        await with_deadline(settings, broker.create_topics, "create topics")

    def waiting(reason: str | None) -> None:
        stats.waiting_for = reason

    async def topics_exist() -> bool:
        return await broker.topics_exist(deadline=deadline, stop=stop, on_missing=waiting)

    if not await with_deadline(settings, topics_exist, "look up topics"):
        return None
    return await with_deadline(
        settings, lambda: _fit_to_topics(settings, broker), "read the output topics' limits"
    )


async def _fit_to_topics(settings: ServiceSettings, broker: Broker) -> tuple[OutputLimits, int]:
    """Fit outputs and batches below the output topics' ``max.message.bytes``; without the
    permission to describe topics, keep the settings."""
    try:
        limits = await broker.output_limits()
    except KafkaConnectionError:
        raise  # retried until the start-up deadline
    except KafkaError as exc:
        log.warning(
            "topics.limits_unknown",
            error=repr(exc),
            action="outputs fitted to max_output_bytes only",
        )
        return OutputLimits(settings.max_output_bytes), settings.kafka.max_batch_size
    return fitted_limits(settings, limits)
