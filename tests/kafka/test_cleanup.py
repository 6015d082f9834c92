"""The suite leaves a broker it was given as it found it (tests/kafka/cleanup.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.kafka.cleanup import (
    delete_created_topics,
    delete_topics,
    list_topics,
    made_by_the_suite,
    to_delete,
)
from tests.kafka.kafkautil import create_topics, unique


async def test_the_topics_the_tests_made_are_deleted_and_others_kept(kafka_bootstrap: str) -> None:
    theirs = f"orders.{unique('x')[-10:]}-{'k' * 3}"  # someone's topic, there before the session
    ours = [unique("req"), unique("ver"), f"demo-{unique('d')[-8:]}.verdicts"]
    await create_topics(kafka_bootstrap, {theirs: 1})
    before = await list_topics(kafka_bootstrap)
    other_made_meanwhile = f"payments.events.{'z' * 4}"
    await create_topics(kafka_bootstrap, {**dict.fromkeys(ours, 1), other_made_meanwhile: 1})
    deleted = await delete_created_topics(kafka_bootstrap, before)
    assert set(ours) <= set(deleted)
    assert theirs not in deleted
    assert other_made_meanwhile not in deleted
    left = await list_topics(kafka_bootstrap)
    assert theirs in left
    assert other_made_meanwhile in left
    assert not set(ours) & left
    await delete_topics(kafka_bootstrap, [theirs, other_made_meanwhile])


def test_internal_and_plain_names_are_never_the_suites() -> None:
    assert not made_by_the_suite("__consumer_offsets")
    assert not made_by_the_suite("rag.responses")
    assert not made_by_the_suite("guard.verdicts")
    assert made_by_the_suite(unique("qua"))
    assert made_by_the_suite("demo-1a2b3c4d.dlq")


@given(st.sets(st.text(alphabet="abcdef0123456789.-_", min_size=1, max_size=30)), st.data())
def test_only_new_topics_are_ever_chosen(before: set[str], data: st.DataObject) -> None:
    after = before | data.draw(st.sets(st.text(alphabet="abcdef0123456789.-_", max_size=30)))
    chosen = to_delete(before, after)
    assert not set(chosen) & before
    assert all(made_by_the_suite(t) for t in chosen)
