"""Sampling: deterministic by id or key, close to the configured rate, skipped verdicts say
why."""

from __future__ import annotations

import pytest

from guard.budgets import BudgetSettings, build_budgeted_judge, is_sampled
from guard.engine import Guard
from guard.errors import JudgementSkipped
from guard.models import JudgeRequest, Label
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from tests.unit.budget_helpers import EVIDENCE, GROUNDED, case, flat_price


def test_sampling_is_deterministic_and_close_to_the_rate() -> None:
    """10,000 ids at rate 0.25: the same choice every time, and 25% +- 1.5% sampled."""
    ids = [f"msg-{i}" for i in range(10_000)]
    first = [is_sampled(i, 0.25) for i in ids]
    assert first == [is_sampled(i, 0.25) for i in ids]
    assert sum(first) / len(ids) == pytest.approx(0.25, abs=0.015)


def test_a_lower_rate_samples_a_subset_of_a_higher_one() -> None:
    """Lowering the rate only drops messages; none newly sampled (stable under changes)."""
    ids = [f"msg-{i}" for i in range(2_000)]
    low = {i for i in ids if is_sampled(i, 0.1)}
    high = {i for i in ids if is_sampled(i, 0.5)}
    assert low <= high


async def test_unsampled_requests_raise_not_sampled_and_make_no_call() -> None:
    """At rate 0 no judge call is made; each request is skipped as not_sampled."""
    fake = FakeJudge([GROUNDED])
    judge = build_budgeted_judge(fake, BudgetSettings(sample_rate=0.0), price=flat_price(0.01))
    with pytest.raises(JudgementSkipped, match="not_sampled"):
        await judge.assess(case(1))
    assert fake.calls == 0
    assert judge.stats().unsampled == 1


async def test_sampling_by_key_follows_the_message_key() -> None:
    """With sample_key=key, messages sharing a key are all sampled or all skipped."""
    judge = build_budgeted_judge(
        FakeJudge([GROUNDED]),
        BudgetSettings(sample_rate=0.5, sample_key="key"),  # type: ignore[arg-type]
        price=flat_price(0.01),
    )
    for key in ("user-1", "user-2", "user-3", "user-4"):
        outcomes = []
        for n in range(5):
            try:
                outcomes.append((await judge.assess(case(f"{key}-{n}", key=key))) is not None)
            except JudgementSkipped:
                outcomes.append(False)
        assert outcomes == [is_sampled(key, 0.5)] * 5


async def test_guard_turns_unsampled_into_a_skipped_verdict() -> None:
    """Through the Guard an unsampled request gets a `skipped` verdict, reason not_sampled."""
    settings = JudgeSettings(budget=BudgetSettings(sample_rate=0.0))
    guard = Guard(
        build_budgeted_judge(FakeJudge(), settings.budget, price=flat_price(0.01)), settings
    )
    verdict = await guard.judge(JudgeRequest(id="x", output="Hi.", context=EVIDENCE))
    assert (verdict.label, verdict.reason) == (Label.SKIPPED, "not_sampled")


async def test_sampling_by_key_follows_the_stream_key_given_to_the_guard() -> None:
    """With ``sample_key: key`` the message key decides, whatever the request ids are."""
    from guard.assembly import make_budgeted_judge
    from guard.engine import Guard
    from guard.models import JudgeRequest, Label
    from guard.settings import JudgeSettings

    settings = JudgeSettings.model_validate(
        {"provider": "fake", "budget": {"sample_rate": 0.5, "sample_key": "key"}}
    )
    guard = Guard(make_budgeted_judge(settings, {}), settings)
    labels: dict[str, set[Label]] = {}
    for key in (f"user-{n}" for n in range(40)):
        for request_id in ("a", "b", "c"):
            request = JudgeRequest(id=f"{key}-{request_id}", output="Paris", context="Paris.")
            verdict = await guard.judge(request, message_key=key)
            labels.setdefault(key, set()).add(verdict.label)
    await guard.aclose()
    assert all(len(seen) == 1 for seen in labels.values())
    skipped = sum(1 for seen in labels.values() if seen == {Label.SKIPPED})
    assert 0 < skipped < 40
