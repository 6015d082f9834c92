"""Every judge kind a tier may be, in one place: its settings, how it is built, and whether it
calls a paid LLM.

Adding a judge kind touches this module only: write its settings (a :class:`TierBase` with a
``kind`` literal), add them to :data:`TierSettings` and add a :class:`JudgeKind` to
:data:`KINDS` (the two are checked against each other by the tests, and the chart's schema
against both). Builders import their judge lazily, so reading settings never imports ONNX
Runtime or an SDK.

An LLM kind (``llm=True``: ``openai``, ``anthropic``, and the ``fake`` that stands in for one)
is the last tier only: every budget layer (rate limits, cost, breaker, cache, retries, batch
delivery) sits around that one judge, and its model, endpoint and key are the ``judge``
section's own (``judge.model``, ``judge.base_url``, ``judge.api_key``). The tiers before it
are screens: they run first, spend no budget, and hand on what they are not sure of.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from guard import defaults
from guard.detect.settings import DetectorTier
from guard.specialist.settings import SpecialistTier
from guard.tiers.base import TierBase

if TYPE_CHECKING:
    from guard.providers.base import Judge, TierKind
    from guard.retry import RetryPolicy
    from guard.settings import JudgeSettings


class OfflineTier(TierBase):
    """The offline rules (:mod:`guard.offline`): deterministic, no network. Its grounded
    probability is the calibrated confidence of a pass, or one minus that of a fail."""

    kind: Literal["offline"]
    pass_at: float = Field(
        default=defaults.DEFAULT_CASCADE_CONFIDENCE,
        ge=0.0,
        le=1.0,
        description="Decide pass when the offline judge passes with at least this confidence.",
    )
    fail_at: float = Field(
        default=round(1.0 - defaults.DEFAULT_CASCADE_CONFIDENCE, 6),
        ge=0.0,
        le=1.0,
        description="Decide fail when the offline judge fails with a grounded probability at "
        "or below this (1 - its confidence in the fail).",
    )


class OpenAITier(TierBase):
    """The OpenAI judge (or any OpenAI-compatible endpoint at ``judge.base_url``)."""

    kind: Literal["openai"]


class AnthropicTier(TierBase):
    """The Anthropic judge."""

    kind: Literal["anthropic"]


class FakeTier(TierBase):
    """The shipped fake judge (:mod:`guard.testing.fake_judge`), for users' own tests."""

    kind: Literal["fake"]


def _kind(value: Any) -> str | None:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) else None


TierSettings = Annotated[
    Annotated[OfflineTier, Tag("offline")]
    | Annotated[OpenAITier, Tag("openai")]
    | Annotated[AnthropicTier, Tag("anthropic")]
    | Annotated[FakeTier, Tag("fake")]
    | Annotated[SpecialistTier, Tag("specialist")]
    | Annotated[DetectorTier, Tag("detector")],
    Discriminator(
        _kind,
        custom_error_type="unknown_judge_kind",
        custom_error_message="kind must be one of the judge kinds: offline, detector, "
        "specialist, openai, anthropic, fake",
    ),
]
"""One tier of ``judge.tiers``: its ``kind`` says which settings apply."""

Build = Callable[[Any, "JudgeSettings", Mapping[str, str], "RetryPolicy | None"], "Judge"]


@dataclass(frozen=True)
class JudgeKind:
    """A judge kind: its settings model, its builder, and what it is."""

    settings: type[TierBase]
    build: Build
    tier: TierKind
    llm: bool  # a paid LLM: the last tier only, inside every budget layer


def _offline(tier: OfflineTier, settings: JudgeSettings, *_: object) -> Judge:
    from guard.offline import OfflineJudge

    return OfflineJudge(settings)


def _llm(
    tier: OpenAITier | AnthropicTier,
    settings: JudgeSettings,
    environ: Mapping[str, str],
    retry: RetryPolicy | None,
) -> Judge:
    from guard.providers.factory import make_llm_judge

    return make_llm_judge(settings, environ, retry=retry)


def _fake(tier: FakeTier, settings: JudgeSettings, *_: object) -> Judge:
    from guard.testing.fake_judge import FakeJudge

    return FakeJudge(latency_s=settings.fake_latency_s)


def _detector(tier: DetectorTier, *_: object) -> Judge:
    from guard.detect.judge import build_detector

    return build_detector(tier)


def _specialist(
    tier: SpecialistTier, settings: JudgeSettings, environ: Mapping[str, str], *_: object
) -> Judge:
    from guard.specialist.judge import build_specialist

    return build_specialist(tier, environ)


KINDS: dict[str, JudgeKind] = {
    "offline": JudgeKind(OfflineTier, _offline, tier="offline", llm=False),
    "detector": JudgeKind(DetectorTier, _detector, tier="detector", llm=False),
    "specialist": JudgeKind(SpecialistTier, _specialist, tier="specialist", llm=False),
    "openai": JudgeKind(OpenAITier, _llm, tier="llm", llm=True),
    "anthropic": JudgeKind(AnthropicTier, _llm, tier="llm", llm=True),
    "fake": JudgeKind(FakeTier, _fake, tier="llm", llm=True),
}


def kind_of(tier: TierBase) -> JudgeKind:
    """The registry entry of ``tier``'s settings."""
    return KINDS[getattr(tier, "kind")]  # noqa: B009 -- every TierSettings member has a kind
