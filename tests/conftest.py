"""Fixtures shared by every tier: a real redis-server for ``judge.budget.fleet: redis``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.redisserver import RedisServer, redis_binary


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One redis-server for the session (free loopback port, no persistence). Tests that use it
    take their own key prefix; a test that stops it uses ``own_redis`` instead."""
    server = RedisServer(redis_binary())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A redis-server of this test's own, which it may stop and start (an outage)."""
    server = RedisServer(redis_binary())
    server.start()
    yield server
    server.stop()
