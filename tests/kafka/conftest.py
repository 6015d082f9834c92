from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kafka.broker import FixedBroker, ScriptBroker, provide_broker


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptBroker | FixedBroker]:
    """The session's broker (see tests/kafka/broker.py for where it comes from)."""
    broker = provide_broker(tmp_path_factory.mktemp("kafka"))
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_broker: ScriptBroker | FixedBroker) -> str:
    return kafka_broker.bootstrap


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/kafka needs the broker."""
    for item in items:
        if "tests/kafka/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.kafka)
