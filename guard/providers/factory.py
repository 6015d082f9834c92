"""Build the LLM judge (and its pricing) that the settings ask for.

Which judge a provider name means (LLM, offline, cascade, the test fake) is decided above, in
:func:`guard.assembly.make_judge`; this module knows only the LLM providers.

The environment is passed in explicitly (the CLI or service entry point hands over
``os.environ``); the core never reads it itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from guard.errors import ConfigError
from guard.models import Usage
from guard.providers.base import Judge
from guard.providers.credentials import resolve_api_key
from guard.providers.pricing import PriceTable
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings, Provider

if TYPE_CHECKING:
    from guard.batch.api import BatchAPI
    from guard.batch.journal import BatchJournal
    from guard.batch.judge import BatchingJudge

LLM_PROVIDERS = (Provider.OPENAI.value, Provider.ANTHROPIC.value)


def llm_provider(settings: JudgeSettings) -> Provider | None:
    """The LLM provider of the settings' last tier (None: the last tier is no LLM)."""
    kind = settings.tier_list()[-1].kind
    return Provider(kind) if kind in LLM_PROVIDERS else None


def make_llm_judge(
    settings: JudgeSettings, environ: Mapping[str, str], *, retry: RetryPolicy | None = None
) -> Judge:
    """The LLM judge of ``settings``: its last tier's (openai or anthropic)."""
    provider = llm_provider(settings)
    if provider is None:
        raise ConfigError(
            "judge.provider",
            f"{settings.tier_list()[-1].kind} is not an LLM provider",
            "use openai, anthropic or cascade (or an openai or anthropic last tier)",
        )
    return _llm_judge(settings, provider, environ, retry)


def cascade_llm_provider(settings: JudgeSettings) -> Provider:
    """The LLM behind a ``provider: cascade``: ``cascade_provider``, or Anthropic for a
    ``claude-*`` model without a ``base_url``."""
    return Provider(settings.model_copy(update={"provider": Provider.CASCADE}).tier_list()[-1].kind)


def check_credentials(settings: JudgeSettings, environ: Mapping[str, str]) -> None:
    """A :class:`ConfigError` now when the judge's LLM (the cascade's too) has no usable key:
    for callers that must find out before any side effect (``demo`` creating topics)."""
    provider = llm_provider(settings)
    if provider is not None:
        resolve_api_key(settings, environ, provider)


def _llm_judge(
    settings: JudgeSettings,
    provider: Provider,
    environ: Mapping[str, str],
    retry: RetryPolicy | None,
) -> Judge:
    key = resolve_api_key(settings, environ, provider)
    model = llm_model(settings) or settings.model
    price = PriceTable.load(settings.price_file).lookup(model)  # cache and flex rules
    if provider is Provider.ANTHROPIC:
        from guard.providers.anthropic import AnthropicJudge

        return AnthropicJudge(settings, key, retry=retry, price=price)
    from guard.providers.openai import OpenAIJudge

    return OpenAIJudge(settings, key, retry=retry, price=price)


def llm_model(settings: JudgeSettings) -> str | None:
    """The model the settings' LLM judge calls (None: no LLM is called)."""
    provider = llm_provider(settings)
    if provider is None:
        return None
    if provider is Provider.ANTHROPIC:
        from guard.providers.anthropic import anthropic_model

        return anthropic_model(settings)
    return settings.model


def make_pricer(settings: JudgeSettings) -> Callable[[str, Usage], float]:
    """``price(model, usage) -> USD`` for the settings' judge, checked at startup.

    The OpenAI and Anthropic APIs need a known price for the judge's model (:class:`ConfigError`
    naming ``judge.price_file`` otherwise). A self-hosted OpenAI-compatible endpoint
    (``base_url``) bills no tokens: its unknown models cost 0 unless a price file names them.
    Models without a price that were not checked here (the fake and offline judges) cost 0.
    """
    table = PriceTable.load(settings.price_file)
    self_hosted = settings.base_url is not None
    model = llm_model(settings)
    if model is not None and not self_hosted:
        table.require(model)

    def price(model: str, usage: Usage) -> float:
        return table.cost(model, usage) if table.lookup(model) is not None else 0.0

    return price


def make_batcher(
    settings: JudgeSettings, environ: Mapping[str, str], *, journal: BatchJournal | None = None
) -> BatchingJudge | None:
    """The batching judge of ``delivery: batch`` over the settings' LLM provider (its realtime
    judge answers failed items), recording its batches in ``journal`` (in memory when None);
    None for other deliveries or judges without an LLM."""
    if settings.delivery != "batch":
        return None
    if llm_model(settings) is None:
        raise ConfigError(
            "judge.delivery",
            f"batch delivery needs an LLM judge; the {settings.tier_list()[-1].kind} judge "
            "makes no calls",
            "use provider openai, anthropic or cascade, or delivery realtime",
        )
    from guard.batch.judge import BatchingJudge
    from guard.providers.anthropic import AnthropicJudge
    from guard.providers.openai import OpenAIJudge

    realtime = make_llm_judge(settings, environ)
    api: BatchAPI
    if isinstance(realtime, AnthropicJudge):
        from guard.providers.anthropic_batch import AnthropicBatchAPI

        api = AnthropicBatchAPI(realtime)
    else:
        assert isinstance(realtime, OpenAIJudge)
        from guard.providers.openai_batch import OpenAIBatchAPI

        api = OpenAIBatchAPI(realtime)
    return BatchingJudge(api, settings.batch, realtime, journal=journal)
