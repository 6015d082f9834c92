"""make_judge / make_pricer: the judge and pricing the settings ask for."""

from __future__ import annotations

from typing import Any

import pytest

from guard.assembly import make_judge
from guard.errors import ConfigError
from guard.models import Usage
from guard.offline import OfflineJudge
from guard.providers.anthropic import AnthropicJudge
from guard.providers.factory import cascade_llm_provider, llm_model, make_pricer
from guard.providers.openai import OpenAIJudge
from guard.settings import JudgeSettings, Provider
from guard.testing import FakeJudge
from guard.tiers.cascade import CascadeJudge

ENV = {"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}


@pytest.mark.parametrize(
    ("provider", "cls"),
    [
        (Provider.OPENAI, OpenAIJudge),
        (Provider.ANTHROPIC, AnthropicJudge),
        (Provider.OFFLINE, OfflineJudge),
        (Provider.FAKE, FakeJudge),
        (Provider.CASCADE, CascadeJudge),
    ],
)
async def test_each_provider_builds_its_judge(provider: Provider, cls: type[Any]) -> None:
    judge = make_judge(JudgeSettings(provider=provider), ENV)
    try:
        assert isinstance(judge, cls)
    finally:
        await judge.aclose()


def test_anthropic_gets_its_own_default_model() -> None:
    assert llm_model(JudgeSettings(provider=Provider.ANTHROPIC)) == "claude-haiku-4-5"
    assert (
        llm_model(JudgeSettings(provider=Provider.ANTHROPIC, model="claude-sonnet-4"))
        == "claude-sonnet-4"
    )
    assert llm_model(JudgeSettings(provider=Provider.OFFLINE)) is None


@pytest.mark.parametrize(
    ("provider", "var"),
    [
        (Provider.OPENAI, "OPENAI_API_KEY"),
        (Provider.ANTHROPIC, "ANTHROPIC_API_KEY"),
        (Provider.CASCADE, "OPENAI_API_KEY"),
    ],
)
def test_missing_key_is_a_config_error_naming_the_variable(provider: Provider, var: str) -> None:
    with pytest.raises(ConfigError) as err:
        make_judge(JudgeSettings(provider=provider), {})
    assert var in str(err.value)


def test_cascade_llm_is_openai_unless_told_otherwise() -> None:
    assert cascade_llm_provider(JudgeSettings(provider=Provider.CASCADE)) is Provider.OPENAI
    assert (
        cascade_llm_provider(JudgeSettings(provider=Provider.CASCADE, model="claude-sonnet-4"))
        is Provider.ANTHROPIC
    )
    assert (
        cascade_llm_provider(
            JudgeSettings(provider=Provider.CASCADE, cascade_provider=Provider.ANTHROPIC)
        )
        is Provider.ANTHROPIC
    )
    with pytest.raises(ConfigError):
        cascade_llm_provider(
            JudgeSettings(provider=Provider.CASCADE, cascade_provider=Provider.OFFLINE)
        )


def test_pricer_refuses_an_unpriced_api_model_at_startup() -> None:
    with pytest.raises(ConfigError) as err:
        make_pricer(JudgeSettings(provider=Provider.OPENAI, model="gpt-unknown"))
    assert err.value.field == "judge.model"


def test_pricer_prices_calls_and_treats_unpriced_local_models_as_free() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    price = make_pricer(JudgeSettings(provider=Provider.OPENAI))
    assert price("gpt-4o-mini", usage) == pytest.approx(0.75)
    local = make_pricer(
        JudgeSettings(
            provider=Provider.OPENAI, model="qwen2.5", base_url="http://127.0.0.1:8000/v1"
        )
    )
    assert local("qwen2.5", usage) == 0.0
    assert make_pricer(JudgeSettings(provider=Provider.FAKE))("fake-judge", usage) == 0.0


def test_connection_pool_keeps_one_idle_connection_per_call_in_flight() -> None:
    from guard.providers._common import connection_limits

    small = connection_limits(JudgeSettings.model_validate({"budget": {"max_in_flight": 8}}))
    assert (small.max_connections, small.max_keepalive_connections) == (1000, 100)
    big = connection_limits(JudgeSettings.model_validate({"budget": {"max_in_flight": 2000}}))
    assert (big.max_connections, big.max_keepalive_connections) == (2000, 2000)
