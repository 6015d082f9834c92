"""The service's topics at start: create them when the operator allows it (``create_topics``),
and read the output topics' ``max.message.bytes`` (:func:`output_limits`), so outputs are
fitted to what the broker accepts rather than refused by it: aiokafka's idempotent producer
cannot send to a partition again after the broker refused one of its batches
(``OutOfOrderSequenceNumber``), so a refusal would stop the service on every restart."""

from __future__ import annotations

import structlog
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from consumers.settings import ServiceSettings

log = structlog.get_logger("consumers.topics")
MAX_MESSAGE_BYTES = "max.message.bytes"
BATCH_OVERHEAD = 128  # a record batch's header (61 bytes) and one record's framing, rounded up


def wanted_topics(settings: ServiceSettings) -> list[str]:
    return [settings.topics.requests, *settings.topics.outputs()]


def _admin(settings: ServiceSettings) -> AIOKafkaAdminClient:
    return AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers,
                               client_id=f"{settings.client_id}-admin",
                               request_timeout_ms=settings.kafka.request_timeout_ms,
                               **settings.security.client_kwargs())


async def output_limits(settings: ServiceSettings) -> dict[str, int]:
    """Each output topic's ``max.message.bytes`` as the broker reports it (topics it cannot
    describe, e.g. missing ones, are left out)."""
    admin = _admin(settings)
    await admin.start()
    try:
        responses = await admin.describe_configs([
            ConfigResource(ConfigResourceType.TOPIC, name, {MAX_MESSAGE_BYTES: None})
            for name in settings.topics.outputs()])
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


async def _create(admin: AIOKafkaAdminClient, settings: ServiceSettings,
                  names: list[str]) -> None:
    topics = [NewTopic(name, settings.topic_partitions, settings.topic_replication)
              for name in names]
    try:
        await admin.create_topics(topics)
    except TopicAlreadyExistsError:
        pass  # another replica created it first
    except KafkaError as exc:
        log.error("topics.create_failed", topics=names, error=str(exc))
        raise
    log.info("topics.created", topics=names, partitions=settings.topic_partitions,
             replication=settings.topic_replication)
