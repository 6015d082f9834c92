"""The service fails fast and cleanly when no broker answers."""

from __future__ import annotations

import pytest

from consumers.config import load_settings
from consumers.errors import BrokerUnavailable
from consumers.runtime.service import GuardService
from guard.engine import Guard
from guard.testing import FakeJudge


async def test_an_unreachable_broker_raises_broker_unavailable_after_the_startup_deadline() -> None:
    """Nothing listens on 127.0.0.1:1: start-up retries until ``startup_timeout_s``, then
    raises :class:`BrokerUnavailable` naming the servers, with every client closed."""
    settings = load_settings(
        None, {"GROUNDGUARD_BOOTSTRAP_SERVERS": "127.0.0.1:1", "GROUNDGUARD_STARTUP_TIMEOUT_S": "1"}
    )
    service = GuardService(settings, Guard(FakeJudge(), settings.judge))
    with pytest.raises(BrokerUnavailable, match=r"127\.0\.0\.1:1"):
        await service.run()
    assert service.stats.started is False
