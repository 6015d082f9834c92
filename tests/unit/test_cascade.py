"""The cascade: the offline verdict stands when confident; otherwise the LLM decides."""

from __future__ import annotations

import pytest

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.decide.assessment import Scale5Assessment
from guard.errors import ConfigError, JudgeTimeout
from guard.models import JudgeRequest, Label
from guard.offline import OfflineJudge
from guard.offline.calibration import Calibration, Tally
from guard.testing import FakeJudge
from guard.tiers.cascade import CascadeJudge

RETURNS = "Our return policy allows returns within 30 days."
LLM_SAYS_GROUNDED = Scale5Assessment(explanation="llm: grounded", claims=[], score=5)


# A fixed table, so these tests check the routing, not the bundled calibration's figures.
TABLE = Calibration(
    {"fail:number_contradicted": Tally(99, 100), "undecided:partial": Tally(50, 100)}
)


def offline_judge() -> OfflineJudge:
    return OfflineJudge(calibration=TABLE)


def case(output: str) -> PreparedCase:
    prepared = Guard(offline_judge(), JudgeSettings()).prepare(
        JudgeRequest(output=output, context=RETURNS)
    )
    assert isinstance(prepared, PreparedCase)
    return prepared


async def offline_confidence(output: str) -> float:
    outcome = await offline_judge().assess(case(output))
    assert outcome.confidence is not None
    return outcome.confidence


CONFIDENT = "You can return items within 90 days."  # a number conflict: very sure
UNSURE = "Returns are possible for a while."  # vague: low support, middling confidence


async def test_the_examples_span_the_threshold() -> None:
    assert await offline_confidence(CONFIDENT) >= 0.9
    assert await offline_confidence(UNSURE) < 0.9


async def test_a_confident_offline_verdict_stands_and_the_llm_is_not_called() -> None:
    llm = FakeJudge([LLM_SAYS_GROUNDED])
    cascade = CascadeJudge.two_tier(offline_judge(), llm, confidence=0.9)
    outcome = await cascade.assess(case(CONFIDENT))
    assert outcome.tier == "offline"
    assert outcome.provider == "offline"
    assert llm.calls == 0
    assert (cascade.decided["offline"], cascade.decided["llm"]) == (1, 0)


async def test_an_unsure_offline_verdict_goes_to_the_llm_which_decides() -> None:
    llm = FakeJudge([LLM_SAYS_GROUNDED])
    cascade = CascadeJudge.two_tier(offline_judge(), llm, confidence=0.9)
    outcome = await cascade.assess(case(UNSURE))
    assert outcome.tier == "llm"
    assert outcome.provider == "fake"
    assert outcome.assessment == LLM_SAYS_GROUNDED
    assert llm.calls == 1
    assert outcome.confidence == await offline_confidence(UNSURE)
    assert (cascade.decided["offline"], cascade.decided["llm"]) == (0, 1)


async def test_counters_add_up_over_a_mix_of_cases() -> None:
    llm = FakeJudge([LLM_SAYS_GROUNDED])
    cascade = CascadeJudge.two_tier(offline_judge(), llm, confidence=0.9)
    outputs = [CONFIDENT, UNSURE, CONFIDENT, UNSURE, UNSURE]
    tiers = [(await cascade.assess(case(o))).tier for o in outputs]
    assert cascade.decided["offline"] == tiers.count("offline") == 2
    assert cascade.decided["llm"] == tiers.count("llm") == llm.calls == 3


async def test_threshold_zero_never_asks_the_llm_and_one_always_does() -> None:
    never = CascadeJudge.two_tier(offline_judge(), FakeJudge(), confidence=0.0)
    always = CascadeJudge.two_tier(offline_judge(), FakeJudge(), confidence=1.0)
    assert (await never.assess(case(UNSURE))).tier == "offline"
    assert (await always.assess(case(CONFIDENT))).tier == "llm"


async def test_an_llm_error_propagates_and_is_not_counted_as_a_decision() -> None:
    cascade = CascadeJudge.two_tier(
        offline_judge(), FakeJudge([JudgeTimeout("slow")]), confidence=0.9
    )
    with pytest.raises(JudgeTimeout):
        await cascade.assess(case(UNSURE))
    assert (cascade.decided["offline"], cascade.decided["llm"]) == (0, 0)


async def test_the_verdict_says_which_tier_decided() -> None:
    settings = JudgeSettings()
    cascade = CascadeJudge.two_tier(offline_judge(), FakeJudge([LLM_SAYS_GROUNDED]), confidence=0.9)
    guard = Guard(cascade, settings)
    confident = await guard.judge_payload({"output": CONFIDENT, "context": RETURNS})
    unsure = await guard.judge_payload({"output": UNSURE, "context": RETURNS})
    assert (confident.judge.tier, confident.label) == ("offline", Label.FAIL)
    assert (unsure.judge.tier, unsure.label) == ("llm", Label.PASS)


def test_a_confidence_outside_zero_to_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        CascadeJudge.two_tier(offline_judge(), FakeJudge(), confidence=1.5)
