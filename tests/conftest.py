"""Fixtures shared by every tier: a real redis-server for ``judge.budget.fleet: redis``; the
hypothesis profile (no per-example deadline)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.redisserver import RedisServer, redis_binary

# Property tests assert behaviour, never speed: hypothesis's per-example deadline (200 ms) is a
# timed assertion that fails on a loaded machine (seen: 336 ms under a parallel build).
settings.register_profile("groundguard", deadline=None)
settings.load_profile("groundguard")


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
