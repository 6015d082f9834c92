from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kafka.broker import FixedBroker, ScriptBroker, free_port, provide_broker
from tests.kafka.cleanup import delete_created_topics, list_topics


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptBroker | FixedBroker]:
    """The session's broker (see tests/kafka/broker.py for where it comes from). A broker the
    suite was given (``KAFKA_BOOTSTRAP_SERVERS``) is left without the topics the tests made
    (tests/kafka/cleanup.py); one the suite started is stopped."""
    broker = provide_broker(tmp_path_factory.mktemp("kafka"))
    given = isinstance(broker, FixedBroker) and broker.handle is None
    keep = os.environ.get("KAFKA_KEEP_TEST_TOPICS") == "1"
    before = asyncio.run(list_topics(broker.bootstrap)) if given and not keep else None
    yield broker
    if before is not None:
        deleted = asyncio.run(delete_created_topics(broker.bootstrap, before))
        print(f"\ntests/kafka: deleted the {len(deleted)} topics the tests made there")
    broker.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_broker: ScriptBroker | FixedBroker) -> str:
    return kafka_broker.bootstrap


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[ScriptBroker]:
    """A broker of this test's own (restarting the session's broker would disturb others)."""
    if shutil.which("java") is None:
        pytest.skip("a broker of its own needs Java (scripts/kafka)")
    broker = ScriptBroker(tmp_path / "kafka", free_port())
    broker.start(fresh=True)
    try:
        yield broker
    finally:
        broker.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/kafka needs the broker."""
    for item in items:
        if "tests/kafka/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.kafka)
