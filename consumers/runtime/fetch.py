"""Fetching: ``getmany`` with the errors that must not stop the service.

A batch that cannot be decoded (corrupt, or compressed with a codec that is not installed) is
fetched again by aiokafka from the same position, so its partition holds at that offset (its lag
grows) while the others are served; the fetcher waits a delay that doubles per error, up to
``FETCH_ERROR_BACKOFF_MAX_S``, and starts over after ``FETCH_ERROR_RESET_S`` without one, so a
batch that always fails does not spin. Stopping would only crash-loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import structlog
from aiokafka.errors import CorruptRecordException, KafkaError, UnsupportedCodecError

from consumers.runtime.kafka import Consumer, Records

log = structlog.get_logger("consumers.service")
UNDECODABLE_FETCH = (CorruptRecordException, UnsupportedCodecError)
FETCH_ERROR_BACKOFF_S = 0.5
FETCH_ERROR_BACKOFF_MAX_S = 10.0
FETCH_ERROR_RESET_S = 60.0


class Fetcher:
    def __init__(self, consumer: Consumer, stop: asyncio.Event, poll_ms: int) -> None:
        self._consumer = consumer
        self._stop = stop
        self._poll_ms = poll_ms
        self._errors = 0  # consecutive undecodable fetches
        self._error_at = 0.0

    async def fetch(self, timeout_ms: int | None = None) -> Records:
        """The next records, waiting at most ``timeout_ms`` (default ``poll_ms``) for them; {}
        after a retriable error (non-retriable ones raise)."""
        try:
            return await self._consumer.getmany(self._poll_ms if timeout_ms is None else timeout_ms)
        except UNDECODABLE_FETCH as exc:
            await self._undecodable(exc)
            return {}
        except KafkaError as exc:
            if not exc.retriable:
                raise
            log.warning("fetch.retry", error=repr(exc))
            await asyncio.sleep(self._poll_ms / 1000)
            return {}

    async def _undecodable(self, exc: KafkaError) -> None:
        now = time.monotonic()
        if now - self._error_at > FETCH_ERROR_RESET_S:
            self._errors = 0
        self._error_at = now
        delay = min(FETCH_ERROR_BACKOFF_MAX_S, FETCH_ERROR_BACKOFF_S * 2**self._errors)
        self._errors += 1
        log.error(
            "fetch.undecodable",
            error=type(exc).__name__,
            detail=str(exc),
            consecutive=self._errors,
            retry_in_s=delay,
            action="the partition holds at this offset; install the codec or check the "
            "broker's log segment",
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), delay)
