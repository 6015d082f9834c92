"""The cascade spends budget only on what the offline judge hands on to the LLM."""

from __future__ import annotations

from guard.assembly import make_budgeted_judge
from guard.budgets.judge import BudgetedJudge
from guard.engine import Guard
from guard.models import JudgeRequest, Label
from guard.settings import JudgeSettings
from guard.testing.fake_server import FakeLLMServer, marker_verdict

POLICY = (
    "Our return policy allows returns within 30 days. Refunds are approved by Maria Lopez "
    "in the Leeds office."
)
OFFICES = ("Bristol", "Paris", "Madrid", "Berlin", "Dublin")


async def test_offline_decisions_spend_no_rate_limit_and_confident_ones_never_call_the_llm() -> (
    None
):
    with FakeLLMServer(verdict=marker_verdict) as llm:
        settings = JudgeSettings.model_validate(
            {
                "provider": "cascade",
                "base_url": llm.openai_base_url,
                "api_key": "test",
                # the bundled table states a missing name 0.65 (8 of 8 on realistic answers)
                "cascade_confidence": 0.6,
                "budget": {"rpm": 1, "max_rate_wait_s": 0.2, "cache_size": 0},
            }
        )
        budgeted = make_budgeted_judge(settings, {})
        guard = Guard(budgeted, settings)
        confident = [
            await guard.judge(
                JudgeRequest(
                    id=f"c{i}",
                    context=POLICY,
                    output=f"Refunds are approved by Maria Lopez in the {OFFICES[i % 5]} office.",
                )
            )
            for i in range(20)
        ]
        handed_on = await guard.judge(
            JudgeRequest(id="u", context=POLICY, output="You can return items within 30 days.")
        )
        stats = budgeted.stats()
        await guard.aclose()
    assert isinstance(budgeted, BudgetedJudge)
    assert {(v.label, v.judge.tier) for v in confident} == {(Label.FAIL, "offline")}
    assert (handed_on.label, handed_on.judge.tier) == (Label.PASS, "llm")
    assert stats.provider_calls == 1
    assert llm.stats()["requests_total"] == 1
