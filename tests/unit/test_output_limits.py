"""Each output topic has its own limit (issue 29): a dead-letter or quarantine topic with a small
``max.message.bytes`` lowers the limit of its own records only, never where a verdict goes."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from consumers.runtime.envelope import OutRecord
from consumers.runtime.fitting import record_size
from consumers.runtime.message import Pipeline
from consumers.runtime.topics import BATCH_OVERHEAD, fitted_limits
from tests.unit.test_codec_routing import Record
from tests.unit.test_poison_pipeline import GUARD, LIMIT, SETTINGS, handle, request

TOPICS = SETTINGS.topics


def pipeline(**limits: int) -> Pipeline:
    """The pipeline with the topics' ``max.message.bytes`` as the broker would report them."""
    broker = {getattr(TOPICS, name): size for name, size in limits.items()}
    fitted, _ = fitted_limits(SETTINGS, broker)
    return Pipeline(SETTINGS, GUARD.parse, output_limits=fitted)


def kinds(outputs: list[OutRecord]) -> list[str]:
    return sorted(out.kind for out in outputs)


WRONG = "The Eiffel Tower is in Rome, built in 1923."


def failing() -> bytes:
    return request(output=WRONG)


class TestFittedLimits:
    def test_each_topic_keeps_its_own_limit_and_the_others_the_setting(self) -> None:
        limits, batch = fitted_limits(SETTINGS, {TOPICS.dlq: 1000, TOPICS.verdicts: 10_000_000})
        assert limits.of(TOPICS.dlq) == 1000 - BATCH_OVERHEAD
        assert limits.of(TOPICS.verdicts) == LIMIT
        assert limits.of(TOPICS.quarantine) == LIMIT
        assert limits.of("a-reply-topic") == LIMIT
        assert batch <= 1000 - BATCH_OVERHEAD  # a batch of dead letters fits their topic


class TestASmallOutputTopicChangesOnlyItsOwnRecords:
    def test_a_small_dead_letter_topic_leaves_verdicts_where_they_go(self) -> None:
        outputs = handle(Record(request()), pipeline(dlq=1000))
        assert kinds(outputs) == ["approved", "verdict"]

    def test_a_small_quarantine_topic_keeps_the_failing_answers_verdict(self) -> None:
        outputs = handle(Record(failing()), pipeline(quarantine=1200))
        assert "verdict" in kinds(outputs)
        assert [out.kind for out in outputs if out.topic == TOPICS.verdicts] == ["verdict"]

    def test_a_dead_letter_for_a_small_topic_fits_it_with_reason_and_coordinates(self) -> None:
        outputs = handle(Record(b"{" + b"x" * 50_000, offset=7), pipeline(dlq=1000))
        [letter] = outputs
        assert letter.kind == "dead_letter"
        assert record_size(letter) <= 1000 - BATCH_OVERHEAD
        assert b'"invalid_json"' in letter.value
        assert b'"offset":7' in letter.value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    limits=st.fixed_dictionaries(
        {},
        optional={
            name: st.integers(min_value=900, max_value=400_000)
            for name in ("verdicts", "quarantine", "dlq", "approved")
        },
    ),
    fails=st.booleans(),
    blob=st.integers(min_value=0, max_value=150_000),
)
def test_every_record_fits_its_topic_and_a_verdict_that_fits_is_never_displaced(
    limits: dict[str, int], fails: bool, blob: int
) -> None:
    """Whatever the other topics' limits, every output fits its own topic's, and the verdict
    record is published whenever it fits the verdicts topic (so the outputs of the same message
    with only the verdicts' limit give the same verdict)."""
    fields: dict[str, Any] = {"metadata": {"blob": "m" * blob}}
    record = Record(request(**fields, **({"output": WRONG} if fails else {})))
    chosen = pipeline(**limits)
    outputs = handle(record, chosen)
    for out in outputs:
        assert record_size(out) <= chosen.limits.of(out.topic)
    only_verdicts = {k: v for k, v in limits.items() if k == "verdicts"}
    alone = handle(record, pipeline(**only_verdicts))
    assert ("verdict" in kinds(outputs)) == ("verdict" in kinds(alone))
