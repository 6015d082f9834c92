"""The cascade of tiers (judge.tiers): settings, the registry, routing, and old configurations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from guard import Guard, JudgeSettings
from guard.assembly import make_budgeted_judge, make_judge
from guard.case import PreparedCase
from guard.decide.assessment import BinaryAssessment, Scale5Assessment
from guard.errors import ConfigError, JudgeTimeout, JudgeUnavailable
from guard.models import JudgeRequest, Label, ScoringMode
from guard.offline import OfflineJudge
from guard.providers.base import JudgeOutcome
from guard.settings import Provider
from guard.testing import FakeJudge
from guard.tiers.cascade import CascadeJudge, Tier
from guard.tiers.kinds import KINDS, TierSettings

ROOT = Path(__file__).resolve().parents[2]
ENV = {"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}
CONTEXT = "Our return policy allows returns within 30 days."


class Reading:
    """A screen that reads every case with a fixed grounded probability (or raises)."""

    provider = "reading"

    def __init__(self, p: float | None, *, model: str = "reading", error: Exception | None = None):
        self.p, self.model, self.error, self.calls = p, model, error, 0

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        self.calls += 1
        if self.error is not None:
            raise self.error
        assert self.p is not None
        raw = 1 + round(4 * self.p)
        assessment = Scale5Assessment(explanation=f"p={self.p}", claims=[], score=raw)  # type: ignore[arg-type]
        return JudgeOutcome(
            assessment, self.provider, self.model, tier="detector", grounded_p=self.p
        )

    async def aclose(self) -> None:
        return None


def a_case(mode: ScoringMode = ScoringMode.SCALE5) -> PreparedCase:
    settings = JudgeSettings(mode=mode)
    prepared = Guard(OfflineJudge(), settings).prepare(
        JudgeRequest(output="Returns are accepted for 30 days.", context=CONTEXT)
    )
    assert isinstance(prepared, PreparedCase)
    return prepared


LLM_GROUNDED = Scale5Assessment(explanation="llm: grounded", claims=[], score=5)
LLM_UNGROUNDED = Scale5Assessment(explanation="llm: not grounded", claims=[], score=1)


def cascade(*screens: tuple[str, Reading, float, float], llm: FakeJudge) -> CascadeJudge:
    tiers = [
        Tier(name, "detector", judge, pass_at=up, fail_at=down) for name, judge, up, down in screens
    ]
    return CascadeJudge(tiers, Tier("llm", "llm", llm))


# --------------------------------------------------------------------------- routing


async def test_a_sure_pass_in_the_first_tier_decides_and_nothing_after_it_runs() -> None:
    second, llm = Reading(0.5), FakeJudge([LLM_UNGROUNDED])
    judge = cascade(("a", Reading(0.95), 0.9, 0.1), ("b", second, 0.9, 0.1), llm=llm)
    outcome = await judge.assess(a_case())
    assert (outcome.tier_name, outcome.tier, outcome.grounded_p) == ("a", "detector", 0.95)
    assert second.calls == 0
    assert llm.calls == 0
    assert [(t.name, t.decided) for t in outcome.tier_scores] == [("a", True)]
    assert judge.decided == {"a": 1}


async def test_an_unsure_tier_hands_on_and_the_next_one_decides_a_fail() -> None:
    llm = FakeJudge([LLM_GROUNDED])
    judge = cascade(("a", Reading(0.6), 0.9, 0.1), ("b", Reading(0.05), 0.9, 0.1), llm=llm)
    outcome = await judge.assess(a_case())
    assert outcome.tier_name == "b"
    assert llm.calls == 0
    assert [(t.name, t.grounded_p, t.decided) for t in outcome.tier_scores] == [
        ("a", 0.6, False),
        ("b", 0.05, True),
    ]


async def test_the_last_tier_always_decides_and_every_reading_is_kept() -> None:
    llm = FakeJudge([LLM_UNGROUNDED])
    judge = cascade(("a", Reading(0.6), 0.9, 0.1), ("b", Reading(0.4), 0.9, 0.1), llm=llm)
    outcome = await judge.assess(a_case())
    assert (outcome.tier_name, outcome.tier, outcome.provider) == ("llm", "llm", "fake")
    assert outcome.grounded_p == 0.0
    assert [t.decided for t in outcome.tier_scores] == [False, False, True]
    assert judge.decided == {"llm": 1}


async def test_a_failing_screen_hands_on_and_says_why_never_a_pass() -> None:
    llm = FakeJudge([LLM_UNGROUNDED])
    down = Reading(None, error=JudgeUnavailable("detector server refused the connection"))
    judge = cascade(("det", down, 0.0, 0.0), llm=llm)  # bounds that would decide anything read
    outcome = await judge.assess(a_case())
    assert outcome.tier_name == "llm"
    assert llm.calls == 1
    first = outcome.tier_scores[0]
    assert (first.name, first.grounded_p, first.decided, first.error) == (
        "det",
        None,
        False,
        "judge_unavailable",
    )


async def test_the_last_tiers_error_is_the_messages() -> None:
    judge = cascade(("a", Reading(0.5), 0.9, 0.1), llm=FakeJudge([JudgeTimeout("slow")]))
    with pytest.raises(JudgeTimeout):
        await judge.assess(a_case())
    assert sum(judge.decided.values()) == 0


async def test_bounds_are_read_in_the_direction_of_the_tiers_reading() -> None:
    """pass_at 0 would decide every pass, yet a fail reading (p 0.2) is never passed by it;
    fail_at 1 would decide every fail, yet a pass reading (p 0.8) is never failed by it."""
    llm = FakeJudge([LLM_GROUNDED])
    passes_all = cascade(("a", Reading(0.2), 0.0, 0.0), llm=llm)
    outcome = await passes_all.assess(a_case())
    assert outcome.tier_name == "llm"
    fails_all = cascade(("a", Reading(0.8), 1.0, 1.0), llm=FakeJudge([LLM_UNGROUNDED]))
    assert (await fails_all.assess(a_case())).tier_name == "llm"


async def test_a_guards_verdict_names_the_deciding_tier_and_every_reading() -> None:
    judge = cascade(("a", Reading(0.6), 0.9, 0.1), ("b", Reading(0.97), 0.9, 0.1), llm=FakeJudge())
    verdict = await Guard(judge, JudgeSettings()).judge(
        JudgeRequest(output="Returns are accepted for 30 days.", context=CONTEXT)
    )
    assert verdict.label is Label.PASS
    assert (verdict.judge.tier, verdict.judge.tier_name) == ("detector", "b")
    assert [(t.name, t.kind, t.grounded_p, t.decided) for t in verdict.judge.tiers] == [
        ("a", "detector", 0.6, False),
        ("b", "detector", 0.97, True),
    ]


async def test_in_binary_mode_a_readings_label_sets_its_direction() -> None:
    class Binary(Reading):
        async def assess(self, case: PreparedCase) -> JudgeOutcome:
            return JudgeOutcome(
                BinaryAssessment(explanation="no", claims=[], grounded=False), "b", "b"
            )

    judge = cascade(("a", Binary(None), 0.9, 0.1), llm=FakeJudge())
    outcome = await judge.assess(a_case(ScoringMode.BINARY))
    assert (outcome.tier_name, outcome.grounded_p) == ("a", 0.0)  # its score read as p


def test_a_bound_outside_zero_and_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="pass_at"):
        Tier("a", "detector", FakeJudge(), pass_at=1.5)


# --------------------------------------------------------------------------- settings


def settings(**fields: Any) -> JudgeSettings:
    return JudgeSettings.model_validate(fields)


def test_tiers_parse_each_kind_with_its_own_settings() -> None:
    judge = settings(
        tiers=[{"kind": "offline", "pass_at": 0.95, "fail_at": 0.02}, {"kind": "openai"}]
    )
    offline, llm = judge.tier_list()
    assert (offline.kind, offline.pass_at, offline.fail_at, offline.tier_name) == (
        "offline",
        0.95,
        0.02,
        "offline",
    )
    assert llm.kind == "openai"


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"tiers": [{"kind": "openai"}, {"kind": "offline"}]}, "can only be the last tier"),
        ({"tiers": [{"kind": "offline"}, {"kind": "offline"}]}, "tier names must differ"),
        ({"tiers": [{"kind": "offline"}], "provider": "cascade"}, "cannot be given with tiers"),
        ({"tiers": [{"kind": "offline"}], "cascade_confidence": 0.7}, "cannot be given"),
        ({"tiers": [{"kind": "gpt"}]}, "kind must be one of the judge kinds"),
        ({"tiers": [{"pass_at": 0.9}]}, "kind must be one of the judge kinds"),
        ({"tiers": []}, "at least 1 item"),
        ({"tiers": [{"kind": "offline", "pass_at": 2}]}, "less than or equal to 1"),
        ({"tiers": [{"kind": "offline", "model": "x"}]}, "Extra inputs are not permitted"),
    ],
)
def test_a_bad_tier_list_is_refused_with_the_reason(fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        settings(**fields)


def test_two_tiers_of_one_kind_may_run_under_their_own_names() -> None:
    judge = settings(
        tiers=[{"kind": "offline", "name": "strict", "pass_at": 0.99}, {"kind": "offline"}]
    )
    assert [t.tier_name for t in judge.tier_list()] == ["strict", "offline"]


@pytest.mark.parametrize(
    ("fields", "kinds"),
    [
        ({}, ["offline"]),
        ({"provider": "openai"}, ["openai"]),
        ({"provider": "anthropic"}, ["anthropic"]),
        ({"provider": "fake"}, ["fake"]),
        ({"provider": "cascade"}, ["offline", "openai"]),
        ({"provider": "cascade", "cascade_provider": "anthropic"}, ["offline", "anthropic"]),
        ({"provider": "cascade", "model": "claude-haiku-4-5"}, ["offline", "anthropic"]),
    ],
)
def test_old_configurations_are_the_tier_lists_they_always_meant(
    fields: dict[str, Any], kinds: list[str]
) -> None:
    assert [t.kind for t in settings(**fields).tier_list()] == kinds


def test_the_old_cascade_confidence_becomes_the_offline_tiers_bounds_with_a_note() -> None:
    judge = settings(provider="cascade", cascade_confidence=0.7)
    offline = judge.tier_list()[0]
    assert (offline.pass_at, offline.fail_at) == (0.7, 1.0 - 0.7)
    (note,) = judge.deprecations()
    assert "judge.tiers" in note
    assert "pass_at: 0.7" in note
    assert settings(tiers=[{"kind": "offline"}, {"kind": "openai"}]).deprecations() == []


def test_a_cascade_on_a_provider_that_is_no_llm_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="cascade_provider"):
        settings(provider="cascade", cascade_provider="offline").tier_list()


# --------------------------------------------------------------------------- assembly


async def test_make_judge_builds_the_tiers_and_the_last_one_decides() -> None:
    judge = make_judge(
        settings(tiers=[{"kind": "offline", "pass_at": 1.0, "fail_at": 0.0}, {"kind": "fake"}]), ENV
    )
    assert isinstance(judge, CascadeJudge)
    assert [t.name for t in judge.screens] == ["offline"]
    assert judge.last.name == "fake"
    verdict = await Guard(judge, JudgeSettings()).judge(
        JudgeRequest(output="Returns are accepted within 30 days.", context=CONTEXT)
    )
    assert verdict.judge.tier_name == "fake"
    assert [t.name for t in verdict.judge.tiers] == ["offline", "fake"]
    await judge.aclose()


async def test_one_tier_is_that_judge_alone() -> None:
    judge = make_judge(settings(tiers=[{"kind": "offline"}]), ENV)
    assert isinstance(judge, OfflineJudge)


async def test_the_tiers_screen_before_the_budgeted_last_tier() -> None:
    judged = settings(tiers=[{"kind": "offline"}, {"kind": "openai"}])
    budgeted = make_budgeted_judge(judged, ENV)
    assert isinstance(budgeted.screen, CascadeJudge)
    assert budgeted.screen.last.kind == "llm"
    await budgeted.aclose()


def test_an_offline_tier_alone_is_the_offline_judge() -> None:
    judge = make_judge(settings(tiers=[{"kind": "offline", "pass_at": 0.6, "fail_at": 0.3}]), ENV)
    assert isinstance(judge, OfflineJudge)


def test_a_fallback_model_needs_an_llm_last_tier() -> None:
    with pytest.raises(ConfigError, match="no cheaper model"):
        make_budgeted_judge(
            settings(
                tiers=[{"kind": "offline"}],
                budget={"on_budget_exhausted": "fallback", "fallback_model": "gpt-4o-mini"},
            ),
            ENV,
        )


# --------------------------------------------------------------------------- one registry


def test_every_registered_kind_is_in_the_settings_union_and_back() -> None:
    (union, _discriminator) = get_args(TierSettings)
    members = {get_args(member)[0] for member in get_args(union)}
    assert members == {kind.settings for kind in KINDS.values()}
    for name, kind in KINDS.items():
        assert kind.settings.model_fields["kind"].annotation.__args__ == (name,)  # type: ignore[union-attr]


def test_the_charts_schema_names_every_kind_and_provider() -> None:
    schema = json.loads((ROOT / "helm" / "groundguard" / "values.schema.json").read_text())
    judge = schema["properties"]["config"]["properties"]["judge"]["properties"]
    assert judge["provider"]["enum"] == [p.value for p in Provider]
    assert set(judge["tiers"]["items"]["properties"]["kind"]["enum"]) == set(KINDS)


async def test_metrics_count_each_tiers_readings_by_outcome() -> None:
    from consumers.metrics import Metrics

    down = Reading(None, error=JudgeUnavailable("down"))
    judge = cascade(("det", down, 0.9, 0.1), ("spec", Reading(0.5), 0.9, 0.1), llm=FakeJudge())
    verdict = await Guard(judge, JudgeSettings()).judge(
        JudgeRequest(output="Returns are accepted for 30 days.", context=CONTEXT)
    )
    metrics = Metrics()
    metrics.observe_verdict(verdict)
    text = metrics.render().decode()
    for name, kind, outcome in (
        ("det", "detector", "error"),
        ("spec", "detector", "handed_on"),
        ("llm", "llm", "decided"),
    ):
        labels = f'kind="{kind}",outcome="{outcome}",tier_name="{name}"'
        line = f"groundguard_tier_readings_total{{{labels}}}"
        assert f"{line} 1.0" in text


async def test_the_terminal_shows_each_tiers_reading() -> None:
    from consumers.cli.terminal import render_verdict

    down = Reading(None, error=JudgeTimeout("slow"))
    judge = cascade(("det", down, 0.9, 0.1), ("spec", Reading(0.5), 0.9, 0.1), llm=FakeJudge())
    verdict = await Guard(judge, JudgeSettings()).judge(
        JudgeRequest(output="Returns are accepted for 30 days.", context=CONTEXT)
    )
    line = render_verdict(verdict).splitlines()[-1]
    assert line == "tiers: det error judge_timeout -> spec p=0.50 handed on -> llm p=0.00 decided"


def test_an_unproven_claim_the_offline_tier_passed_is_not_shown_as_supported() -> None:
    """Issue 28: "supported" printed beside "why: not verified"."""
    from consumers.cli.terminal import render_verdict
    from guard.models import ClaimVerdict, Cut, JudgeInfo, Truncation, Verdict

    cut = Cut(original_chars=1, kept_chars=1, truncated=False)
    verdict = Verdict(
        request_id="r",
        label=Label.PASS,
        score=0.75,
        threshold=0.5,
        mode=ScoringMode.SCALE5,
        source="context",
        truncation=Truncation(context=cut, output=cut),
        judge=JudgeInfo(provider="offline", model="offline-v2", prompt_version="v"),
        claims=[
            ClaimVerdict(claim="The total is $150.", supported=True, reason="not verified: x"),
            ClaimVerdict(claim="It ships free.", supported=True, reason=""),
        ],
    )
    text = render_verdict(verdict)
    assert "  unproven    The total is $150." in text
    assert "  supported   It ships free." in text


async def test_a_verdict_no_judge_scored_says_so_not_raw_none() -> None:
    """Issue 28: "raw None" on a no_evidence fail."""
    from consumers.cli.terminal import render_verdict

    verdict = await Guard(OfflineJudge(), JudgeSettings()).judge(
        JudgeRequest(output="Returns within 30 days.", context="")
    )
    first = render_verdict(verdict).splitlines()[0]
    assert first == "FAIL  score 0.00 (no judge, scale5, pass at >= 0.5)"
