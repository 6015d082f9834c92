"""Batch delivery's parsers and bookkeeping: item ids, journal records (as stored in the
compacted topic and read back), provider result files, and the batch gauges in metrics, the
progress line and readiness."""

from __future__ import annotations

import dataclasses
import re

import orjson
import pytest
from aiokafka.structs import TopicPartition
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from consumers.health import readiness
from consumers.metrics import Metrics
from consumers.runtime.batchstate import (
    KafkaBatchJournal,
    _apply,
    _by_partition,
    batch_journal,
    partition_of,
    stream_of,
)
from consumers.runtime.service import GuardService
from consumers.runtime.stats import PartitionStats, ServiceStats
from consumers.settings import ServiceSettings
from guard.assembly import build_guard
from guard.batch.api import ItemFailure
from guard.batch.items import ItemRef, custom_id
from guard.batch.journal import MemoryJournal, SubmittedBatch
from guard.batch.judge import BatchingJudge, BatchStats
from guard.case import PreparedCase
from guard.engine import Guard
from guard.errors import ConfigError, JudgeUnavailable, MalformedJudgeOutput
from guard.models import JudgeRequest
from guard.providers.openai_batch import _read_lines
from guard.settings import BatchSettings, JudgeSettings
from guard.testing import FakeJudge

CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
topics = st.text(min_size=1, max_size=249)
refs = st.builds(
    ItemRef,
    st.builds(stream_of, topics, st.integers(0, 10_000)),
    st.integers(0, 2**63 - 1),
)
batches = st.builds(
    SubmittedBatch,
    st.sampled_from(["openai", "anthropic"]),
    st.none() | st.text(min_size=1, max_size=80),  # None: an intent, not submitted yet
    st.lists(st.tuples(st.text(max_size=64), st.none() | refs), max_size=20).map(tuple),
    st.floats(0, 4e9),
    st.text(min_size=1, max_size=40),
    st.integers(0, 100_000),
)


@given(refs, st.integers(1, 16))
def test_custom_ids_are_what_both_providers_accept_and_the_same_on_every_replica(
    ref: ItemRef, window: int
) -> None:
    cid = custom_id(ref, window)
    assert CUSTOM_ID.fullmatch(cid)
    assert cid == custom_id(ItemRef(ref.stream, ref.position), window)
    assert cid != custom_id(ItemRef(ref.stream, ref.position + 1), window)
    assert CUSTOM_ID.fullmatch(custom_id(None, window))


@given(topics, st.integers(0, 10_000))
def test_a_stream_name_gives_its_partition_back(topic: str, partition: int) -> None:
    assert partition_of(ItemRef(stream_of(topic, partition), 0)) == partition


@given(batches)
def test_a_journal_record_reads_back_as_the_batch_it_stored(batch: SubmittedBatch) -> None:
    latest: dict[tuple[int, str], SubmittedBatch] = {}
    _apply(latest, 3, batch.ident.encode(), orjson.dumps(batch.to_json()))
    assert latest == {(3, batch.ident): batch}
    submitted = dataclasses.replace(batch, batch_id="batch_1")  # the same key, superseding
    _apply(latest, 3, batch.ident.encode(), orjson.dumps(submitted.to_json()))
    assert latest == {(3, batch.ident): submitted}
    _apply(latest, 3, batch.ident.encode(), None)  # a tombstone deletes it
    assert latest == {}


@given(st.binary(max_size=300), st.none() | st.binary(max_size=300))
def test_a_journal_record_that_is_not_a_batch_is_skipped(key: bytes, value: bytes | None) -> None:
    latest: dict[tuple[int, str], SubmittedBatch] = {}
    _apply(latest, 0, key, value)  # never raises
    assert all(isinstance(b, SubmittedBatch) for b in latest.values())


def test_a_batch_is_stored_once_per_input_partition_it_covers() -> None:
    items = (
        ("a", ItemRef(stream_of("rag.responses", 0), 5)),
        ("b", ItemRef(stream_of("rag.responses", 2), 7)),
        ("c", ItemRef(stream_of("rag.responses", 0), 6)),
        ("d", None),  # from no stream: nothing to resume
    )
    parts = _by_partition(SubmittedBatch("openai", "batch_1", items, 1.0))
    assert {p: b.custom_ids for p, b in parts.items()} == {0: ("a", "c"), 2: ("b",)}
    assert {b.batch_id for b in parts.values()} == {"batch_1"}


def test_memory_journal_finds_forgets_and_lists() -> None:
    journal = MemoryJournal()
    batch = SubmittedBatch("anthropic", "b1", (("x", None), ("y", None)), 1.0)
    journal.remember(batch)
    assert journal.find("y") == batch
    assert journal.batches() == [batch]
    journal.forget("b1")
    assert journal.find("x") is None


def test_the_journal_forgets_batches_once_their_messages_are_committed() -> None:
    """A long-lived assignment must not keep every batch ever submitted in memory."""
    journal = KafkaBatchJournal(ServiceSettings())
    p0, p1 = TopicPartition("rag.responses", 0), TopicPartition("rag.responses", 1)
    old = SubmittedBatch("openai", "old", (("a", ItemRef(stream_of(*p0), 3)),), 1.0)
    mixed = SubmittedBatch(
        "openai",
        "mixed",
        (("b", ItemRef(stream_of(*p0), 4)), ("c", ItemRef(stream_of(*p1), 9))),
        1.0,
    )
    for batch in (old, mixed):
        journal._memory.remember(batch)
    journal.settle({p0: 5, p1: None})  # p1 never committed: its item may come round again
    assert journal.find("a") is None
    assert journal.find("c") == mixed
    journal.settle({p0: 5, p1: 10})
    assert journal.find("b") is None
    assert journal.find("c") is None
    journal._memory.remember(mixed)
    journal.settle({p0: 5})  # p1 is no longer owned: its next owner reads the topic
    assert journal.find("b") is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["custom_id", "response", "error", "status_code", "body", "code"]),
            inner,
        )
    ),
    max_leaves=12,
)


@given(
    st.binary(max_size=300)
    | st.lists(json_values, max_size=4).map(
        lambda values: b"\n".join(orjson.dumps(v) for v in values)
    )
)
def test_a_provider_result_file_parses_or_says_it_is_malformed(content: bytes) -> None:
    try:
        results = _read_lines(content)
    except MalformedJudgeOutput:
        return
    assert all(isinstance(k, str) for k in results)


def test_result_lines_become_answers_failures_and_expiries() -> None:
    lines = [
        {"custom_id": "ok", "response": {"status_code": 200, "body": {"id": "x"}}, "error": None},
        {"custom_id": "late", "response": None, "error": {"code": "batch_expired", "message": "m"}},
        {"custom_id": "bad", "response": {"status_code": 500, "body": {"error": "boom"}}},
    ]
    results = _read_lines(b"\n".join(orjson.dumps(line) for line in lines))
    assert results["ok"] == {"id": "x"}
    assert results["late"] == ItemFailure("expired", "m")
    assert isinstance(results["bad"], ItemFailure)
    assert results["bad"].kind == "errored"


BATCH = BatchStats(
    open_items=3,
    submitted=2,
    completed=1,
    polling=1,
    items_waiting=9,
    oldest_item_age_s=42.5,
    failed_items=1,
    last_poll=10.0,
)


def test_batch_gauges_are_in_metrics_the_progress_line_and_readiness() -> None:
    stats = ServiceStats(started=True, batch=BATCH)
    stats.partitions["t-0"] = PartitionStats(committed=0, highwater=9, outstanding=9)
    families = {
        s.name: s.value
        for f in text_string_to_metric_families(Metrics(stats).render().decode())
        for s in f.samples
    }
    assert families["groundguard_batch_items_waiting"] == 9
    assert families["groundguard_batch_oldest_item_age_seconds"] == pytest.approx(42.5)
    assert families["groundguard_batches_submitted_total"] == 2
    assert families["groundguard_batches_open"] == 1
    summary = stats.summary()
    assert (summary["batch.items_waiting"], summary["batch.oldest_item_age_s"]) == (9, 42)
    health = readiness(stats, stall_after_s=120, now=stats.last_progress + 1)
    assert health.ok
    assert health.detail["batch_items_waiting"] == 9


@pytest.mark.parametrize("provider", ["offline", "fake"])
def test_batch_delivery_without_an_llm_judge_is_a_config_error(provider: str) -> None:
    with pytest.raises(ConfigError, match=r"judge\.delivery"):
        build_guard(JudgeSettings(provider=provider, delivery="batch"), {})


def test_service_settings_refuse_batch_waits_readiness_would_call_a_stall() -> None:
    judge = {"provider": "openai", "delivery": "batch", "batch": {"poll_interval_s": 300}}
    with pytest.raises(ValidationError, match=r"metrics\.stall_after_s"):
        ServiceSettings.model_validate({"judge": judge})
    with pytest.raises(ValidationError, match=r"topics\.batch_state"):
        ServiceSettings.model_validate(
            {"judge": {**judge, "batch": {}}, "topics": {"batch_state": "guard.verdicts"}}
        )
    ok = ServiceSettings.model_validate({"judge": {**judge, "batch": {}}})
    assert ok.topics.batch_state == "guard.batches"


class _RefusingBatchAPI:
    """A batch API that records each item's ``custom_id`` and refuses every submission."""

    provider, model = "openai", "gpt-4o-mini"

    def __init__(self) -> None:
        self.ids: list[str] = []

    def prompt(self, case: PreparedCase) -> None:
        return None

    def request(self, custom_id: str, prompt: object) -> dict[str, object]:
        self.ids.append(custom_id)
        return {}

    async def submit(self, requests: list[dict[str, object]], key: str) -> str:
        raise JudgeUnavailable("batch endpoint down")


async def test_a_batch_items_id_is_made_of_the_stream_position_given_to_judge() -> None:
    """``Guard.judge(request, item=ref)`` carries the stream position on the prepared case to
    the batching judge, whose item ``custom_id`` is derived from it (the same on every
    replica); a request judged from no stream gets a fresh id."""
    api = _RefusingBatchAPI()
    batcher = BatchingJudge(api, BatchSettings(max_items=1), FakeJudge())  # type: ignore[arg-type]
    guard = Guard(batcher, JudgeSettings(), batcher=batcher)
    request = JudgeRequest(output="Paris.", context="Paris is in France.")
    ref = ItemRef(stream_of("requests", 3), 41)
    verdict = await guard.judge(request, item=ref)
    await guard.judge(request)
    assert verdict.reason == "judge_unavailable"  # the refused submission, as an error verdict
    assert api.ids[0] == custom_id(ref, 1)
    assert api.ids[1] != custom_id(ref, 1)
    assert api.ids[1].startswith("r")


def batch_settings() -> ServiceSettings:
    judge = {"provider": "openai", "api_key": "test", "delivery": "batch"}
    return ServiceSettings.model_validate({"judge": judge})


async def test_the_service_and_the_batcher_share_the_journal_given_to_both() -> None:
    """The edge makes the durable journal of ``delivery: batch`` and gives it to the guard's
    batcher (when it is built) and to the service (which starts it and reads it at
    assignment): nothing sets it on the batcher afterwards."""
    s = batch_settings()
    journal = batch_journal(s)
    assert isinstance(journal, KafkaBatchJournal)
    guard = build_guard(s.judge, {}, journal=journal)
    assert guard.batcher is not None
    assert guard.batcher.journal is journal
    service = GuardService(s, guard, journal=journal)
    assert service._journal is journal
    await guard.aclose()


async def test_a_batcher_with_another_journal_than_the_services_is_refused() -> None:
    """A service whose guard's batcher records in another journal (or one only in memory)
    would lose its batches at a handover: refused when the service is made."""
    s = batch_settings()
    guard = build_guard(s.judge, {})  # its batcher journals in memory
    with pytest.raises(ValueError, match="journal"):
        GuardService(s, guard, journal=batch_journal(s))
    with pytest.raises(ValueError, match="journal"):
        GuardService(s, guard)
    await guard.aclose()


def test_only_batch_delivery_has_a_journal() -> None:
    assert batch_journal(ServiceSettings()) is None
