"""The typed skip reason (:mod:`guard.skips`): written in the verdict as the text it always
was, and read back from any verdict by its cause."""

from __future__ import annotations

import pytest

from guard.errors import JudgementSkipped
from guard.models import Label
from guard.skips import SkipCause, SkipReason, skip_reason
from tests.unit.test_codec_routing import _verdict


@pytest.mark.parametrize(
    ("reason", "text"),
    [
        (SkipReason.not_sampled(), "not_sampled"),
        (SkipReason.budget_exhausted("day"), "budget_exhausted:day"),
    ],
)
def test_a_skip_reason_is_written_as_its_text_and_read_back(reason: SkipReason, text: str) -> None:
    assert str(reason) == str(JudgementSkipped(reason)) == text
    assert SkipReason.parse(text) == reason
    assert skip_reason(_verdict(Label.SKIPPED, text)) == reason


def test_only_the_sampling_cause_is_sampled_out() -> None:
    assert SkipReason.not_sampled().sampled_out
    assert not SkipReason.budget_exhausted("minute").sampled_out
    assert SkipReason.budget_exhausted("minute").cause is SkipCause.BUDGET_EXHAUSTED


@pytest.mark.parametrize(
    ("label", "reason"),
    [
        (Label.SKIPPED, "sampled_out"),  # a prefix the routing once matched: nothing writes it
        (Label.SKIPPED, "sampling"),
        (Label.SKIPPED, None),
        (Label.ERROR, "budget_exhausted:day"),  # not a skip, whatever its reason says
        (Label.PASS, None),
    ],
)
def test_a_reason_no_layer_writes_or_a_verdict_not_skipped_has_no_skip_reason(
    label: Label, reason: str | None
) -> None:
    assert skip_reason(_verdict(label, reason)) is None
