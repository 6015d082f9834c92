"""Assemble the judge the settings ask for, in one place: provider judge, cascade, fallback,
prices, retries, every budget layer, and the :class:`~guard.engine.Guard` around them.

Every entry point (``groundguard run``, ``serve``, ``check``, ``replay``, ``demo``) builds its
judge with :func:`build_guard`. Kept apart from :mod:`guard.budgets` (which
:mod:`guard.settings` imports) because it needs the provider factory, which imports the settings.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING

from guard.budgets.clock import Clock, SystemClock
from guard.budgets.judge import BudgetedJudge, build_budgeted_judge
from guard.budgets.settings import BudgetSettings, FleetMode
from guard.engine import Guard
from guard.errors import ConfigError
from guard.learning.build import make_learner
from guard.prepare import wordsearch
from guard.providers.base import Judge
from guard.providers.factory import llm_model, llm_provider, make_batcher, make_pricer
from guard.providers.flex import check_flex_has_a_judge
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings
from guard.tiers.build import build_cascade, build_tier
from guard.tiers.kinds import kind_of
from guard.tracing import traced

if TYPE_CHECKING:
    from guard.batch.journal import BatchJournal
    from guard.budgets.shared import SharedBudget
    from guard.learning.learner import Learner

NO_RETRY = RetryPolicy(max_retries=0)


def build_guard(
    settings: JudgeSettings,
    environ: Mapping[str, str],
    *,
    journal: BatchJournal | None = None,
    learner: Learner | None = None,
) -> Guard:
    """The whole judge of ``settings``: the provider inside its budget layers (sampling, cache,
    cost budget, breaker, rate limits, concurrency, retries), priced. An unknown model price or
    a missing API key is a :class:`ConfigError` here, before any message is read.

    ``delivery: batch`` puts a :class:`~guard.batch.judge.BatchingJudge` in the provider's place
    (inside every budget layer), recording its batches in ``journal`` (the runtime's durable
    one; in memory when None); the guard's ``batcher`` is it, for the runtime's counters.

    ``judge.cascade.learn`` decides the screens with ``learner`` (the runtime's, which it shares
    between replicas), else with one of :func:`~guard.learning.build.make_learner`'s."""
    check_native(environ)
    price = make_pricer(settings)
    if learner is None:
        learner = make_learner(settings)
    batcher = make_batcher(settings, environ, journal=journal)
    judge = make_budgeted_judge(settings, environ, batcher=batcher, learner=learner)
    return Guard(judge, settings, price=price, batcher=batcher, learner=learner)


REQUIRE_NATIVE = "GROUNDGUARD_REQUIRE_NATIVE"


def check_native(environ: Mapping[str, str]) -> None:
    """With ``GROUNDGUARD_REQUIRE_NATIVE=1`` (the image sets it; so does CI) a missing native
    word search is a :class:`ConfigError`: there it means a broken build, not a slower scan."""
    if environ.get(REQUIRE_NATIVE) == "1" and not wordsearch.NATIVE:
        raise ConfigError(
            REQUIRE_NATIVE,
            "the native word search (groundguard_native) is not installed",
            "install groundguard-native (scripts/bootstrap builds it with a Rust toolchain; "
            "the image installs it), or unset GROUNDGUARD_REQUIRE_NATIVE to use pyahocorasick",
        )


def make_budgeted_judge(
    settings: JudgeSettings,
    environ: Mapping[str, str],
    *,
    retry: RetryPolicy | None = None,
    clock: Clock | None = None,
    batcher: Judge | None = None,
    learner: Learner | None = None,
) -> BudgetedJudge:
    """The judge of ``settings`` inside every layer of ``settings.budget``.

    Retries move out of the provider into the budget stack, beneath the concurrency bound and
    the rate limiter, so a 429 pauses every caller rather than each retrying on its own.
    ``retry`` defaults to ``settings.max_retries`` with the default backoff. Unknown prices
    (for the judge's model and the fallback model) are a :class:`ConfigError` here, at start-up.
    ``batcher`` replaces the provider judge (``delivery: batch``).
    """
    price = make_pricer(settings)
    check_fallback(settings)  # before any client is made, so a bad setting leaks none
    check_flex_has_a_judge(settings.delivery, llm_model(settings))
    tiers = settings.tier_list()
    last = kind_of(tiers[-1]).tier
    judge = traced(batcher or build_tier(tiers[-1], settings, environ, retry=NO_RETRY).judge, last)
    screen = None
    if len(tiers) > 1:  # the tiers before the last spend no budget: they screen first
        screen = functools.partial(build_cascade, settings, environ, learner=learner)
    fallback = make_fallback(settings, environ)
    return build_budgeted_judge(
        judge,
        settings.budget,
        price=price,
        fallback=fallback,
        retry=retry or RetryPolicy(max_retries=settings.max_retries),
        clock=clock,
        screen=screen,
        shared=make_shared(settings.budget, clock or SystemClock()),
    )


def make_shared(budget: BudgetSettings, clock: Clock) -> SharedBudget | None:
    """The Redis backend of ``fleet: redis`` (no connection is made until first used)."""
    if budget.fleet is not FleetMode.REDIS or budget.redis_url is None:
        return None
    from guard.budgets.shared import SharedBudget

    return SharedBudget.from_url(
        budget.redis_url.get_secret_value(),
        prefix=budget.redis_prefix,
        timeout_s=budget.redis_timeout_s,
        retry_s=budget.redis_retry_s,
        clock=clock,
    )


def make_judge(
    settings: JudgeSettings,
    environ: Mapping[str, str],
    *,
    retry: RetryPolicy | None = None,
    learner: Learner | None = None,
) -> Judge:
    """The judge of ``settings.tier_list()`` without budget layers: its one tier, or the
    cascade of them. :class:`ConfigError` when a key or setting is missing. ``retry``
    overrides the retry policy of LLM judges (tests shrink its delays)."""
    tiers = settings.tier_list()
    last = build_tier(tiers[-1], settings, environ, retry=retry).judge
    if len(tiers) == 1:
        return last
    return build_cascade(settings, environ, last, learner=learner)


def make_fallback(settings: JudgeSettings, environ: Mapping[str, str]) -> Judge | None:
    """The judge for the ``fallback`` budget policy: the offline judge, or the same provider
    with ``fallback_model`` (its price checked now). None when no fallback is configured."""
    budget = settings.budget
    if budget.fallback_to_offline:
        from guard.offline import OfflineJudge

        return traced(OfflineJudge(settings), "offline")
    cheaper = check_fallback(settings)
    if cheaper is None:
        return None
    # the last tier with the cheaper model (not behind the rate limiter: it retries itself)
    return build_tier(cheaper.tier_list()[-1], cheaper, environ).judge


def check_fallback(settings: JudgeSettings) -> JudgeSettings | None:
    """The settings of the fallback model's judge, checked (LLM provider, known price)."""
    model = settings.budget.fallback_model
    if model is None:
        return None
    if llm_provider(settings) is None:
        raise ConfigError(
            "budget.fallback_model",
            f"the {settings.tier_list()[-1].kind} judge has no cheaper model",
            "use fallback_to_offline, or an LLM provider as the last tier",
        )
    cheaper = settings.model_copy(update={"model": model})
    make_pricer(cheaper)
    return cheaper
