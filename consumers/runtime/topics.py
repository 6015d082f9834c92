"""The service's topics at start: created when the operator allows it (``create_topics``),
otherwise waited for until ``startup_timeout_s``, with one clear line naming what is missing and
how to create it (not aiokafka's error line ten times a second). The output topics'
``max.message.bytes`` is read (:func:`output_limits`) so outputs are fitted to what the broker
accepts rather than refused by it: aiokafka's idempotent producer cannot send to a partition
again after the broker refused one of its batches (``OutOfOrderSequenceNumber``), so a refusal
would stop the service on every restart."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import structlog
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from consumers.errors import TopicsMissing
from consumers.runtime.fitting import OutputLimits
from consumers.settings import ServiceSettings

log = structlog.get_logger("consumers.topics")
TOPIC_CHECK_INTERVAL_S = 1.0  # how often a missing topic is looked for again
MISSING_TOPIC_LOG_EVERY_S = 30.0  # the topics.missing line is repeated at most this often
MAX_MESSAGE_BYTES = "max.message.bytes"
BATCH_OVERHEAD = 128  # a record batch's header (61 bytes) and one record's framing, rounded up
MIN_BATCH_BYTES = 256  # the smallest producer batch size (a larger record travels alone)


def wanted_topics(settings: ServiceSettings) -> list[str]:
    return [*settings.topics.inputs(), *settings.topics.outputs()]


def _admin(settings: ServiceSettings) -> AIOKafkaAdminClient:
    return AIOKafkaAdminClient(
        bootstrap_servers=settings.bootstrap_servers,
        client_id=f"{settings.client_id}-admin",
        request_timeout_ms=settings.kafka.request_timeout_ms,
        **settings.security.client_kwargs(),
    )


async def output_limits(settings: ServiceSettings) -> dict[str, int]:
    """Each output topic's ``max.message.bytes`` as the broker reports it (topics it cannot
    describe, e.g. missing ones, are left out)."""
    admin = _admin(settings)
    try:
        await admin.start()
        responses = await admin.describe_configs(
            [
                ConfigResource(ConfigResourceType.TOPIC, name, {MAX_MESSAGE_BYTES: None})
                for name in settings.topics.outputs()
            ]
        )
    finally:
        await admin.close()
    limits: dict[str, int] = {}
    for response in responses:
        for error, _, _, name, configs in response.resources:
            for config in configs if error == 0 else []:
                if config[0] == MAX_MESSAGE_BYTES and str(config[1]).isdigit():
                    limits[name] = int(config[1])
    return limits


async def ensure_topics(settings: ServiceSettings) -> list[str]:
    """Create the missing topics; return the names created. Existing topics are left alone."""
    admin = _admin(settings)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [name for name in wanted_topics(settings) if name not in existing]
        if missing:
            await _create(admin, settings, missing)
    finally:
        await admin.close()
    return missing


async def _create(admin: AIOKafkaAdminClient, settings: ServiceSettings, names: list[str]) -> None:
    topics = [
        NewTopic(name, settings.topic_partitions, settings.topic_replication) for name in names
    ]
    try:
        await admin.create_topics(topics)
    except TopicAlreadyExistsError:
        pass  # another replica created it first
    except KafkaError as exc:
        log.error("topics.create_failed", topics=names, error=str(exc))
        raise
    log.info(
        "topics.created",
        topics=names,
        partitions=settings.topic_partitions,
        replication=settings.topic_replication,
    )


def creation_fix(settings: ServiceSettings, missing: list[str]) -> str:
    """How to create ``missing``: the exact kafka-topics commands, or the setting that does it."""
    commands = "; ".join(
        f"kafka-topics.sh --bootstrap-server {settings.bootstrap_servers} --create --topic "
        f"{name} --partitions {settings.topic_partitions} --replication-factor "
        f"{settings.topic_replication}"
        for name in missing
    )
    it = "it" if len(missing) == 1 else "them"
    return (
        f"create {it}: {commands}; or set create_topics: true "
        f"(GROUNDGUARD_CREATE_TOPICS=true) so groundguard creates {it} at start. If {it} "
        "exist, this client may not see them: check the names and the principal's Describe "
        "ACL"
    )


async def wait_for_topics(
    settings: ServiceSettings,
    *,
    deadline: float,
    stop: asyncio.Event,
    on_missing: Callable[[str | None], None],
) -> bool:
    """Return True once every topic the service uses exists, False if ``stop`` is set first.

    While some are missing, ``on_missing`` gets a one-line reason (None once they exist) and
    ``topics.missing`` is logged once, then at most every ``MISSING_TOPIC_LOG_EVERY_S``. At
    ``deadline`` (a :func:`time.monotonic` time) :class:`TopicsMissing` is raised."""
    admin = _admin(settings)
    started, logged_at = time.monotonic(), None
    try:
        await admin.start()
        while not stop.is_set():
            existing = set(await admin.list_topics())
            missing = [name for name in wanted_topics(settings) if name not in existing]
            if not missing:
                on_missing(None)
                return True
            fix, now = creation_fix(settings, missing), time.monotonic()
            on_missing(f"waiting for missing topic(s) {', '.join(missing)}")
            if now >= deadline:
                raise TopicsMissing(missing, fix, now - started)
            if logged_at is None or now - logged_at >= MISSING_TOPIC_LOG_EVERY_S:
                log.error(
                    "topics.missing",
                    topics=missing,
                    fix=fix,
                    gives_up_in_s=round(deadline - now, 1),
                )
                logged_at = now
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), min(TOPIC_CHECK_INTERVAL_S, deadline - now))
        return False
    finally:
        await admin.close()


def fitted_limits(settings: ServiceSettings, limits: dict[str, int]) -> tuple[OutputLimits, int]:
    """Each output topic's limit and the producer's batch size, lowered below the output topics'
    ``max.message.bytes`` (``limits``) so the broker never refuses a record for its size. Each
    topic keeps its own limit: a small dead-letter topic lowers the dead letters' limit, not the
    verdicts'. The batch size is the producer's, for every topic: the smallest room (a record
    larger than the batch size travels in a batch of its own, so this costs batching, not
    records)."""
    room = {name: limit - BATCH_OVERHEAD for name, limit in limits.items()}
    lowered = {
        name: max(1, min(settings.max_output_bytes, size))
        for name, size in room.items()
        if size < settings.max_output_bytes
    }
    if lowered:
        log.warning(
            "outputs.limit_lowered",
            max_output_bytes=settings.max_output_bytes,
            limits=lowered,
            topics=limits,
            action="raise the topics' max.message.bytes or lower max_output_bytes",
        )
    batch = max(MIN_BATCH_BYTES, min([settings.kafka.max_batch_size, *room.values()]))
    return OutputLimits(settings.max_output_bytes, lowered), batch
