"""SpecialistTier settings and build_specialist: required fields, bounds, the key's sources."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from guard.errors import ConfigError
from guard.specialist.judge import SpecialistJudge, build_specialist
from guard.specialist.settings import SpecialistTier

BASE: dict[str, Any] = {
    "kind": "specialist",
    "format": "lynx",
    "base_url": "http://127.0.0.1:9/v1",
    "model": "PatronusAI/Llama-3-Patronus-Lynx-8B-Instruct",
}


def tier(**changes: Any) -> SpecialistTier:
    return SpecialistTier.model_validate({**BASE, **changes})


def test_defaults() -> None:
    t = tier()
    assert (t.timeout_s, t.max_retries, t.max_tokens, t.use_logprobs) == (30.0, 2, None, True)
    assert (t.pass_at, t.fail_at, t.granite_risk_via) == (0.9, 0.1, "chat_template_kwargs")


@pytest.mark.parametrize(
    ("fmt", "tokens"), [("lynx", 1024), ("granite_guardian", 20), ("minicheck", 4)]
)
def test_max_tokens_defaults_per_format_unless_set(fmt: str, tokens: int) -> None:
    assert tier(format=fmt).reply_tokens() == tokens
    assert tier(format=fmt, max_tokens=7).reply_tokens() == 7


@pytest.mark.parametrize("missing", ["kind", "format", "base_url", "model"])
def test_kind_format_base_url_and_model_are_required(missing: str) -> None:
    values = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ValidationError):
        SpecialistTier.model_validate(values)


@pytest.mark.parametrize(
    "changes",
    [
        {"kind": "llm"},
        {"format": "selfcheck"},
        {"base_url": ""},
        {"timeout_s": 0},
        {"timeout_s": True},
        {"max_tokens": 0},
        {"max_retries": 11},
        {"max_in_flight": 0},
        {"max_sentences": 0},
        {"granite_risk_via": "header"},
        {"unknown": 1},
    ],
)
def test_invalid_values_are_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        tier(**changes)


def test_every_field_has_a_description() -> None:
    missing = [n for n, f in SpecialistTier.model_fields.items() if not f.description]
    assert missing == []


def test_the_key_is_never_shown() -> None:
    assert "sk-secret" not in repr(tier(api_key="sk-secret-123456"))


async def test_build_makes_a_judge_named_by_format_and_model() -> None:
    judge = build_specialist(tier(format="minicheck", model="bespoke"), {})
    assert isinstance(judge, SpecialistJudge)
    assert (judge.provider, judge.model) == ("specialist:minicheck", "bespoke")
    await judge.aclose()


async def test_the_key_comes_from_the_setting_before_the_environment() -> None:
    judge = build_specialist(tier(api_key="from-settings", api_key_env="KEY"), {"KEY": "env"})
    assert isinstance(judge, SpecialistJudge)
    assert judge._client.api_key == "from-settings"
    await judge.aclose()
    judge = build_specialist(tier(api_key_env="KEY"), {"KEY": " from-env \n"})
    assert isinstance(judge, SpecialistJudge)
    assert judge._client.api_key == "from-env"
    await judge.aclose()


def test_a_named_variable_that_is_unset_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        build_specialist(tier(name="lynx-8b", api_key_env="LYNX_KEY"), {})
    assert caught.value.field == "tiers.lynx-8b.api_key_env"
    assert "LYNX_KEY" in caught.value.fix


def test_a_key_that_cannot_go_in_a_header_is_a_config_error_that_does_not_show_it() -> None:
    with pytest.raises(ConfigError) as caught:
        build_specialist(tier(api_key="sk-abc\u00a0def"), {})
    assert "sk-abc" not in str(caught.value)


def test_a_base_url_that_is_not_http_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        build_specialist(tier(base_url="vllm:8000/v1"), {})
