"""Exceptions of the Kafka runtime.

Hierarchy::

    ConsumerError              root of every error raised by ``consumers``
    ├── SettingsError          a service setting is invalid (names the field and the fix)
    ├── BrokerUnavailable      the broker could not be reached within the start-up deadline
    ├── TopicsMissing          a topic the service reads or writes did not exist by the deadline
    ├── PublishFailed          an output record was not acknowledged by the broker
    ├── FetchStopped           the consumer's background fetch ended: no record would come again
    └── ClientClosed           a ScreeningClient was used before start or after close
"""

from __future__ import annotations


class ConsumerError(Exception):
    """Root of every error raised by the Kafka runtime."""


class SettingsError(ConsumerError):
    def __init__(self, field: str, problem: str, fix: str) -> None:
        self.field = field
        super().__init__(f"{field}: {problem} (fix: {fix})")


class BrokerUnavailable(ConsumerError):
    pass


class TopicsMissing(ConsumerError):
    def __init__(self, topics: list[str], fix: str, waited_s: float) -> None:
        self.topics = topics
        names = ", ".join(topics)
        noun = "topic" if len(topics) == 1 else "topics"
        super().__init__(
            f"{noun} {names} still missing after {waited_s:.0f}s (startup_timeout_s); {fix}"
        )


class PublishFailed(ConsumerError):
    pass


class FetchStopped(ConsumerError):
    pass


class ClientClosed(ConsumerError):
    pass
