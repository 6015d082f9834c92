"""``judge.delivery: batch``: the real SDKs' batch endpoints against FakeLLMServer.

Verdicts come from OpenAI Files + Batches (chat and Responses) and Anthropic Message Batches,
are the verdicts realtime gives, cost half, and are never submitted twice; failed and expired
items follow ``failure_policy``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from guard.assembly import build_guard
from guard.batch.items import ItemRef, custom_id
from guard.batch.journal import JournalError, MemoryJournal, SubmittedBatch
from guard.engine import Guard
from guard.models import JudgeRequest, Label, Verdict
from guard.settings import JudgeSettings
from guard.testing import FakeLLMServer
from guard.testing.fake_api import Fault
from guard.testing.fake_batches import ITEM_ERROR_MARKER, ITEM_EXPIRE_MARKER
from guard.testing.fake_server import marker_verdict
from tests.unit.fakekafka import until

CONTEXT = ["Our return policy allows returns within 30 days."]
GOOD = "You can return items within 30 days."
BAD = "You can return items within 90 days. HALLUCINATED"
ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
KINDS: dict[str, dict[str, Any]] = {
    "openai-chat": {"provider": "openai"},
    "openai-responses": {"provider": "openai", "openai_api": "responses"},
    "anthropic": {"provider": "anthropic", "model": "claude-haiku-4-5"},
}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(verdict=marker_verdict, batch_delay_s=0.2) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: FakeLLMServer) -> None:
    server.reset_stats()
    server.batches.delay_s = 0.2


def settings(
    server: FakeLLMServer, kind: str, delivery: str = "batch", **batch: Any
) -> JudgeSettings:
    overrides = KINDS[kind]
    url = (
        server.anthropic_base_url
        if overrides["provider"] == "anthropic"
        else server.openai_base_url
    )
    return JudgeSettings(
        base_url=url,
        timeout_s=5.0,
        delivery=delivery,
        batch={"max_items": 10, "max_wait_s": 0.3, "poll_interval_s": 0.05, **batch},
        **overrides,
    )


async def judge_all(guard: Guard, outputs: list[str], stream: str = "t-0") -> list[Verdict]:
    async def one(position: int, output: str) -> Verdict:
        distinct = f"{output} Message {position}."  # the verdict cache would merge equal ones
        request = JudgeRequest(output=distinct, context=CONTEXT)
        return await guard.judge(request, item=ItemRef(stream, position))

    try:
        return await asyncio.gather(*(one(i, o) for i, o in enumerate(outputs)))
    finally:
        await guard.aclose()


async def until_submitted(guard: Guard, batches: int) -> None:
    """Wait (bounded) until the guard's batcher has submitted ``batches`` batches."""
    assert guard.batcher is not None
    for _ in range(200):
        if guard.batcher.stats().submitted >= batches:
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"{guard.batcher.stats()}")


async def until_journaled(journal: MemoryJournal) -> None:
    """Wait (bounded) until ``journal`` records a submitted batch (its provider id known)."""
    await until(lambda: any(b.batch_id for b in journal.batches()), "the batch journaled")


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_batch_verdicts_match_realtime_at_half_the_price(
    server: FakeLLMServer, kind: str
) -> None:
    outputs = [GOOD, BAD, GOOD, BAD, GOOD]
    batched = await judge_all(build_guard(settings(server, kind), ENV), outputs)
    stats = server.stats()
    realtime = await judge_all(build_guard(settings(server, kind, "realtime"), ENV), outputs)
    assert [v.label for v in batched] == [
        Label.PASS,
        Label.FAIL,
        Label.PASS,
        Label.FAIL,
        Label.PASS,
    ]
    assert [v.label for v in batched] == [v.label for v in realtime]
    assert [v.score for v in batched] == [v.score for v in realtime]
    assert stats["batch"]["batches_created"] == 1
    assert stats["batch"]["items_submitted"] == 5
    assert stats["batch"]["items_duplicated"] == []
    for b, r in zip(batched, realtime, strict=True):
        assert b.usage.service_tier == "batch"  # the verdict says how it was billed
        assert r.usage.service_tier != "batch"
        assert b.usage.model_copy(update={"service_tier": None}) == r.usage.model_copy(
            update={"service_tier": None}
        )
        assert b.cost_usd == pytest.approx(r.cost_usd / 2)
        assert b.cost_usd > 0


async def test_a_full_batch_is_submitted_at_once_and_the_rest_after_max_wait(
    server: FakeLLMServer,
) -> None:
    guard = build_guard(settings(server, "openai-chat", max_items=3, max_wait_s=1.0), ENV)
    verdicts = await judge_all(guard, [GOOD] * 7)
    assert all(v.label is Label.PASS for v in verdicts)
    assert server.stats()["batch"]["batches_created"] == 3  # 3 + 3 full, 1 after max_wait_s
    assert server.stats()["batch"]["items_submitted"] == 7


@pytest.mark.parametrize("kind", ["openai-chat", "anthropic"])
@pytest.mark.parametrize("marker", [ITEM_ERROR_MARKER, ITEM_EXPIRE_MARKER])
async def test_failed_and_expired_items_are_judged_in_realtime(
    server: FakeLLMServer, kind: str, marker: str
) -> None:
    outputs = [GOOD, f"{GOOD} {marker}", GOOD]
    verdicts = await judge_all(build_guard(settings(server, kind), ENV), outputs)
    assert [v.label for v in verdicts] == [Label.PASS] * 3
    by_path = server.stats()["by_path"]
    realtime_calls = sum(n for p, n in by_path.items() if p.endswith(("/completions", "/messages")))
    assert realtime_calls == 1  # only the failed item, once
    assert verdicts[1].cost_usd == pytest.approx(2 * verdicts[0].cost_usd, rel=0.3)


@pytest.mark.parametrize(
    ("marker", "reason"),
    [(ITEM_ERROR_MARKER, "batch_item_failed"), (ITEM_EXPIRE_MARKER, "batch_item_expired")],
)
async def test_failure_policy_error_gives_error_verdicts(
    server: FakeLLMServer, marker: str, reason: str
) -> None:
    s = settings(server, "anthropic", failure_policy="error")
    verdicts = await judge_all(build_guard(s, ENV), [GOOD, f"{BAD} {marker}"])
    assert verdicts[0].label is Label.PASS
    assert (verdicts[1].label, verdicts[1].reason) == (Label.ERROR, reason)
    assert not any(p.endswith("/messages") for p in server.stats()["by_path"])


async def test_an_item_submitted_before_is_awaited_not_submitted_again(
    server: FakeLLMServer,
) -> None:
    """A second process given the first one's journal (as the Kafka runtime gives the next owner
    of a partition) polls the batch instead of submitting its items again."""
    server.batches.delay_s = 2.0
    first = build_guard(settings(server, "openai-chat"), ENV)
    assert first.batcher is not None

    async def submit_then_stop() -> None:
        task = asyncio.ensure_future(judge_all(first, [GOOD, BAD]))
        await until_submitted(first, 1)
        await until_journaled(first.batcher.journal)  # type: ignore[arg-type]
        task.cancel()  # the process dies while the batch runs
        with pytest.raises(asyncio.CancelledError):
            await task

    await submit_then_stop()
    second = build_guard(settings(server, "openai-chat"), ENV, journal=first.batcher.journal)
    assert second.batcher is not None
    verdicts = await judge_all(second, [GOOD, BAD])
    assert [v.label for v in verdicts] == [Label.PASS, Label.FAIL]
    assert server.stats()["batch"]["items_submitted"] == 2
    assert server.stats()["batch"]["batches_created"] == 1


async def test_a_caller_that_gives_up_before_submission_is_not_billed(
    server: FakeLLMServer,
) -> None:
    guard = build_guard(settings(server, "openai-chat", max_wait_s=1.0), ENV)
    left = asyncio.ensure_future(judge_all(guard, [GOOD], stream="gone"))
    batcher = guard.batcher
    assert batcher is not None
    await until(lambda: batcher.stats().open_items == 1, "the item gathered")
    left.cancel()
    with pytest.raises(asyncio.CancelledError):
        await left
    again = build_guard(settings(server, "openai-chat", max_wait_s=0.05), ENV)
    assert [v.label for v in await judge_all(again, [GOOD])] == [Label.PASS]
    assert server.stats()["batch"]["items_submitted"] == 1


async def test_a_batch_resumed_from_per_partition_records_serves_every_partition(
    server: FakeLLMServer,
) -> None:
    """The Kafka journal stores a batch once per input partition; a successor that reads both
    partitions' records gets every item's result from the one provider batch (regression: the
    items of the partition read second were taken as expired and judged again in realtime)."""
    server.batches.delay_s = 2.0
    first = build_guard(settings(server, "openai-chat"), ENV)
    assert first.batcher is not None

    async def one(stream: str) -> Verdict:
        request = JudgeRequest(output=f"{GOOD} ({stream})", context=CONTEXT)
        return await first.judge(request, item=ItemRef(stream, 0))

    running = asyncio.gather(one("t-0"), one("t-1"))
    await until_submitted(first, 1)
    await until_journaled(first.batcher.journal)  # type: ignore[arg-type]
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    (batch,) = first.batcher.journal.batches()  # type: ignore[attr-defined]
    await first.aclose()
    journal = MemoryJournal()
    for item in batch.items:  # one record per partition, as the Kafka journal reads them back
        journal.remember(
            SubmittedBatch(batch.provider, batch.batch_id, (item,), batch.submitted_at)
        )
    second = build_guard(settings(server, "openai-chat"), ENV, journal=journal)
    assert second.batcher is not None

    async def again(stream: str) -> Verdict:
        request = JudgeRequest(output=f"{GOOD} ({stream})", context=CONTEXT)
        return await second.judge(request, item=ItemRef(stream, 0))

    verdicts = await asyncio.gather(again("t-0"), again("t-1"))
    await second.aclose()
    assert [v.label for v in verdicts] == [Label.PASS, Label.PASS]
    assert server.stats()["batch"]["items_submitted"] == 2
    assert not any(p.endswith("/chat/completions") for p in server.stats()["by_path"])


class _IntentOnlyJournal(MemoryJournal):
    """What survives a process killed between the provider accepting a batch and the journal
    storing its id: the intent record only (storing the submitted one fails)."""

    async def record(self, batch: SubmittedBatch) -> None:
        if batch.batch_id is not None:
            raise JournalError("the process died before this record was stored")
        await super().record(batch)


@pytest.mark.parametrize(
    ("kind", "listing_fails"),
    [("openai-chat", False), ("anthropic", False), ("openai-chat", True)],
)
async def test_a_batch_whose_id_was_never_journaled_is_adopted_not_submitted_again(
    server: FakeLLMServer, kind: str, listing_fails: bool
) -> None:
    """Submission is idempotent: the successor finds the journaled intent, finds the provider's
    batch (OpenAI by the key in its metadata, Anthropic by the items' custom_ids in its
    results) and polls it; the provider sees every item once. A transient error listing the
    batches is retried."""
    server.batches.delay_s = 1.0
    journal = _IntentOnlyJournal()
    first = build_guard(settings(server, kind), ENV, journal=journal)
    assert first.batcher is not None
    task = asyncio.ensure_future(judge_all(first, [GOOD, BAD, GOOD]))
    await until_submitted(first, 1)
    task.cancel()  # the process dies while the batch runs
    with pytest.raises(asyncio.CancelledError):
        await task
    (intent,) = journal.batches()
    assert intent.batch_id is None
    if listing_fails:
        server.inject(Fault("server_error", path="/v1/batches"), times=2)
    other = await unrelated_anthropic_batch(server) if kind == "anthropic" else None
    second = build_guard(settings(server, kind), ENV, journal=journal)
    assert second.batcher is not None
    verdicts = await judge_all(second, [GOOD, BAD, GOOD])
    assert [v.label for v in verdicts] == [Label.PASS, Label.FAIL, Label.PASS]
    assert all(v.usage.service_tier == "batch" for v in verdicts)
    unrelated = 0 if other is None else 1
    assert server.stats()["batch"]["batches_created"] == 1 + unrelated
    assert server.stats()["batch"]["items_submitted"] == 3 + unrelated
    assert server.stats()["batch"]["items_duplicated"] == []
    assert server.stats()["faults"] == ({"server_error": 2} if listing_fails else {})
    if other is not None:  # created since the intent, but of another size: never awaited
        assert server.stats()["by_path"].get(f"/v1/messages/batches/{other}/results", 0) == 0


async def unrelated_anthropic_batch(server: FakeLLMServer) -> str:
    """A one-item message batch of another client."""
    client = anthropic.AsyncAnthropic(base_url=server.anthropic_base_url, api_key="sk-other")
    params: Any = {
        "model": "claude-haiku-4-5",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hello"}],
    }
    try:
        batch = await client.messages.batches.create(
            requests=[{"custom_id": "other-1", "params": params}]
        )
    finally:
        await client.close()
    return batch.id


async def test_an_intent_the_provider_never_got_is_submitted(server: FakeLLMServer) -> None:
    """A process that died after journaling the intent but before the provider accepted the
    batch: nothing to adopt, so the items are submitted (once)."""
    journal = MemoryJournal()
    cids = tuple((custom_id(ItemRef("t-0", i), 1), ItemRef("t-0", i)) for i in range(2))
    await journal.record(SubmittedBatch("openai", None, cids, time.time(), "lost-intent"))
    guard = build_guard(settings(server, "openai-chat"), ENV, journal=journal)
    assert guard.batcher is not None
    verdicts = await judge_all(guard, [GOOD, BAD])
    assert [v.label for v in verdicts] == [Label.PASS, Label.FAIL]
    assert server.stats()["batch"]["batches_created"] == 1
    assert server.stats()["batch"]["items_submitted"] == 2
    resubmitted = journal.find(cids[0][0])  # the intent was looked for, then superseded
    assert resubmitted is not None
    assert resubmitted.batch_id is not None
    assert resubmitted.key != "lost-intent"


async def test_a_handed_over_partitions_batch_is_no_longer_polled(server: FakeLLMServer) -> None:
    """Revoked partitions: their callers stop waiting, and a batch whose every caller was
    handed over stops being polled (its next owner polls it); one still awaited by a kept
    partition goes on."""
    server.batches.delay_s = 600.0  # held running
    guard = build_guard(settings(server, "openai-chat"), ENV)
    batcher = guard.batcher
    assert batcher is not None

    async def one(stream: str) -> Verdict:
        request = JudgeRequest(output=f"{GOOD} ({stream})", context=CONTEXT)
        return await guard.judge(request, item=ItemRef(stream, 0))

    kept, gone = asyncio.ensure_future(one("t-0")), asyncio.ensure_future(one("t-1"))
    try:
        await until_submitted(guard, 1)
        await until(lambda: server.stats()["batch"]["polls"] >= 2, "polled a few times")
        pollers = set(batcher._pollers.values())
        batcher.release({"t-1"})
        await until(gone.done, "t-1's caller released")
        assert gone.cancelled()
        assert not kept.done()
        assert batcher.stats().polling == 1  # t-0 still waits for it
        assert not any(p.done() for p in pollers)
        batcher.release({"t-0"})
        await until(kept.done, "t-0's caller released")
        assert kept.cancelled()
        assert batcher.stats().polling == 0
        await asyncio.wait(pollers, timeout=10)  # it ends, cancelled: nothing polls it any more
        assert all(p.cancelled() for p in pollers)
    finally:
        await guard.aclose()
