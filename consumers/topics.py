"""Create the service's topics at start, when the operator allows it (``create_topics``)."""

from __future__ import annotations

import structlog
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from consumers.settings import ServiceSettings

log = structlog.get_logger("consumers.topics")


def wanted_topics(settings: ServiceSettings) -> list[str]:
    return [settings.topics.requests, *settings.topics.outputs()]


async def ensure_topics(settings: ServiceSettings) -> list[str]:
    """Create the missing topics; return the names created. Existing topics are left alone."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers,
                                client_id=f"{settings.client_id}-admin",
                                request_timeout_ms=settings.kafka.request_timeout_ms,
                                **settings.security.client_kwargs())
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
