"""Closing a consumer during a broker outage: aiokafka's ``Fetcher.close`` cancels its fetch
tasks and awaits each; one sleeping in its retry backoff lets its ``CancelledError`` out, which
ended the stop half way (seen flaky in the exactly-once outage test, where it replaced the
service's ``PublishFailed``). The close is finished; a cancel of the caller still propagates."""

from __future__ import annotations

import asyncio

import pytest

from consumers.runtime.kafka import KafkaConsumer


async def _fetch_answered() -> None:
    """A fetch task waiting for a broker answer: aiokafka catches its cancellation."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        return


async def _fetch_in_backoff() -> None:
    """A fetch task sleeping in its retry backoff after a KafkaError: the cancel escapes."""
    await asyncio.sleep(3600)


class _Fetcher:
    def __init__(self) -> None:
        self._pending_tasks = [
            asyncio.create_task(_fetch_in_backoff()),
            asyncio.create_task(_fetch_answered()),
        ]

    async def close(self) -> None:  # aiokafka's loop, as it is
        for task in self._pending_tasks:
            task.cancel()
            await task


class _Client:
    closed = False

    async def close(self) -> None:
        self.closed = True


class _Consumer:
    def __init__(self) -> None:
        self._fetcher = _Fetcher()
        self._client = _Client()

    async def stop(self) -> None:  # AIOKafkaConsumer.stop, without the coordinator
        await self._fetcher.close()
        await self._client.close()


async def test_an_escaped_fetch_cancellation_does_not_end_the_close_half_way() -> None:
    inner = _Consumer()
    await asyncio.sleep(0)  # the fetch tasks start
    await asyncio.wait_for(KafkaConsumer(inner).stop(), timeout=5)  # type: ignore[arg-type]
    assert inner._client.closed
    assert all(task.done() for task in inner._fetcher._pending_tasks)


async def test_a_cancel_of_the_caller_still_cancels_the_stop() -> None:
    class _Slow(_Consumer):
        async def stop(self) -> None:
            await asyncio.sleep(3600)

    stopping = asyncio.create_task(KafkaConsumer(_Slow()).stop())  # type: ignore[arg-type]
    await asyncio.sleep(0)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
