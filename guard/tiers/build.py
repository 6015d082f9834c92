"""Build the tiers the ``judge`` settings ask for (judges from :data:`guard.tiers.kinds.KINDS`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from guard.providers.base import Judge
from guard.tiers.cascade import CascadeJudge, Tier
from guard.tiers.kinds import TierSettings, kind_of
from guard.tracing import traced

if TYPE_CHECKING:
    from guard.learning.learner import Learner
    from guard.retry import RetryPolicy
    from guard.settings import JudgeSettings


def build_tier(
    tier: TierSettings,
    settings: JudgeSettings,
    environ: Mapping[str, str],
    *,
    retry: RetryPolicy | None = None,
    judge: Judge | None = None,
) -> Tier:
    """The built ``tier`` (``judge`` in its place when given: the budgeted last tier)."""
    kind = kind_of(tier)
    if judge is not None:
        return Tier(tier.tier_name, kind.tier, judge, pass_at=tier.pass_at, fail_at=tier.fail_at)
    built = traced(kind.build(tier, settings, environ, retry), kind.tier)
    return Tier(tier.tier_name, kind.tier, built, pass_at=tier.pass_at, fail_at=tier.fail_at)


def build_cascade(
    settings: JudgeSettings,
    environ: Mapping[str, str],
    last: Judge,
    *,
    learner: Learner | None = None,
) -> CascadeJudge:
    """The cascade of ``settings.tier_list()``, its screens built here, ``last`` (built by the
    caller, inside its budget layers or not) as the last tier; ``learner`` decides for the
    screens (the learning cascade) when given."""
    tiers = settings.tier_list()
    screens: list[Tier] = []
    try:
        for tier in tiers[:-1]:
            screens.append(build_tier(tier, settings, environ))
    except BaseException:
        for built in screens:  # a later tier's bad setting leaks no earlier tier's client
            _close_soon(built.judge)
        raise
    last_tier = build_tier(tiers[-1], settings, environ, judge=last)
    return CascadeJudge(screens, last_tier, learner=learner)


_CLOSING: set[asyncio.Task[None]] = set()


def _close_soon(judge: Judge) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(judge.aclose())
    else:
        task = loop.create_task(judge.aclose())
        _CLOSING.add(task)
        task.add_done_callback(_CLOSING.discard)
