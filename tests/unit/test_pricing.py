"""The price table: bundled data, user overrides, dated model ids, unknown models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog.testing

from guard.errors import ConfigError
from guard.models import Usage
from guard.providers.pricing import PriceTable, base_model

MILLION = 1_000_000


@pytest.mark.parametrize(
    ("model", "price_in", "price_out"),
    [
        ("gpt-4o-mini", 0.15, 0.60),
        ("gpt-4o", 2.50, 10.00),
        ("gpt-4.1-nano", 0.10, 0.40),
        ("gpt-4.1-mini", 0.40, 1.60),
        ("claude-haiku-4-5", 1.00, 5.00),
        ("claude-sonnet-4", 3.00, 15.00),
    ],
)
def test_bundled_list_prices(model: str, price_in: float, price_out: float) -> None:
    table = PriceTable.load()
    assert table.cost(model, Usage(input_tokens=MILLION)) == pytest.approx(price_in)
    assert table.cost(model, Usage(output_tokens=MILLION)) == pytest.approx(price_out)


def test_cached_tokens_are_billed_at_the_cached_price() -> None:
    table = PriceTable.load()
    usage = Usage(input_tokens=2 * MILLION, cached_tokens=MILLION, output_tokens=0)
    assert table.cost("gpt-4o-mini", usage) == pytest.approx(0.15 + 0.075)


@pytest.mark.parametrize(
    ("dated", "base"),
    [
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("gpt-4o", "gpt-4o"),
    ],
)
def test_dated_model_ids_resolve_to_their_base(dated: str, base: str) -> None:
    assert base_model(dated) == base
    table = PriceTable.load()
    assert table.require(dated) == table.require(base)


def test_unknown_model_is_a_config_error_naming_the_fix() -> None:
    with pytest.raises(ConfigError) as err:
        PriceTable.load().require("my-finetune")
    assert err.value.field == "judge.model"
    assert "judge.price_file" in err.value.fix


def test_zero_usage_costs_nothing_even_for_unknown_models() -> None:
    assert PriceTable.load().cost("offline-rules", Usage()) == 0.0


def test_extra_price_file_adds_and_overrides(tmp_path: Path) -> None:
    extra = tmp_path / "prices.json"
    extra.write_text(
        json.dumps(
            {
                "models": {
                    "llama-3.1-8b": {"input": 0.02, "output": 0.05},
                    "gpt-4o-mini": {"input": 1.0, "output": 2.0, "cached_input": 0.5},
                }
            }
        )
    )
    table = PriceTable.load(extra)
    assert table.cost(
        "llama-3.1-8b", Usage(input_tokens=MILLION, cached_tokens=MILLION)
    ) == pytest.approx(0.02)  # cached price defaults to the input price
    assert table.cost("gpt-4o-mini", Usage(output_tokens=MILLION)) == pytest.approx(2.0)
    assert table.require("gpt-4o").input == 2.50


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        json.dumps({"nomodels": {}}),
        json.dumps({"models": {"m": {"input": 1}}}),
        json.dumps({"models": {"m": {"input": -1, "output": 1}}}),
        # NaN or infinite prices would make every window refuse (or never refuse) calls
        '{"models": {"m": {"input": NaN, "output": 1}}}',
        '{"models": {"m": {"input": 1, "output": Infinity}}}',
        '{"models": {"m": {"input": 1, "output": 1, "cached_input": NaN}}}',
        # a delivery factor must be a finite, non-negative share of list price
        json.dumps({"models": {}, "delivery_factor": {"flex": "half"}}),
        json.dumps({"models": {}, "delivery_factor": {"batch": -0.5}}),
        json.dumps({"models": {}, "delivery_factor": [0.5]}),
        '{"models": {}, "delivery_factor": {"flex": NaN}}',
    ],
)
def test_bad_price_files_are_config_errors(tmp_path: Path, content: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as err:
        PriceTable.load(path)
    assert err.value.field == "judge.price_file"


def test_missing_price_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        PriceTable.load(tmp_path / "absent.json")


def test_cache_writes_are_billed_at_the_cache_write_price() -> None:
    """Anthropic: a 5-minute cache write costs 1.25x input; reads 0.1x."""
    table = PriceTable.load()
    usage = Usage(input_tokens=3 * MILLION, cached_tokens=MILLION, cache_write_tokens=MILLION)
    assert table.cost("claude-sonnet-4", usage) == pytest.approx(3.00 + 0.30 + 3.75)


def test_openai_models_bill_no_cache_write_premium() -> None:
    price = PriceTable.load().require("gpt-4o-mini")
    assert price.cache_write == price.input


@pytest.mark.parametrize(("tier", "factor"), [("flex", 0.5), ("default", 1.0), (None, 1.0)])
def test_flex_calls_cost_batch_prices(tier: str | None, factor: float) -> None:
    """Flex is billed at batch prices (delivery_factor.flex)."""
    table = PriceTable.load()
    usage = Usage(input_tokens=MILLION, cached_tokens=MILLION // 2, output_tokens=MILLION)
    listed = table.cost("gpt-5-mini", usage)
    tiered = table.cost("gpt-5-mini", usage.model_copy(update={"service_tier": tier}))
    assert tiered == pytest.approx(factor * listed)
    assert table.delivery_factor("batch") == 0.5


def test_cached_and_written_tokens_never_exceed_the_input() -> None:
    """Inconsistent usage (more cached than input) is clamped, never billed below zero."""
    table = PriceTable.load()
    usage = Usage(input_tokens=100, cached_tokens=300, cache_write_tokens=300)
    assert table.cost("claude-sonnet-4", usage) == pytest.approx(100 * 0.30 / MILLION)


def test_flex_and_cache_minimum_come_from_the_table() -> None:
    table = PriceTable.load()
    assert table.require("gpt-5-mini").flex
    assert not table.require("gpt-4o-mini").flex
    assert table.require("claude-haiku-4-5").cache_min_tokens == 4096
    assert table.require("gpt-4o-mini").cache_min_tokens == 1024


@pytest.mark.parametrize(("tier", "factor"), [("batch", 0.5), ("flex", 0.5)])
def test_batch_and_flex_usage_is_priced_at_its_delivery_factor(tier: str, factor: float) -> None:
    """The verdict's usage says how it was billed, and the price follows from it alone."""
    table = PriceTable.load()
    usage = Usage(input_tokens=MILLION, output_tokens=MILLION, service_tier=tier)  # type: ignore[arg-type]
    assert table.cost("gpt-4o-mini", usage) == pytest.approx(factor * (0.15 + 0.60))


def test_priority_calls_cost_the_models_priority_price(tmp_path: Path) -> None:
    extra = tmp_path / "prices.json"
    extra.write_text(
        '{"models": {"gpt-4o": {"input": 2.5, "output": 10, "cached_input": 1.25,'
        ' "priority": {"input": 4.25, "output": 17, "cached_input": 2.125}}}}'
    )
    usage = Usage(input_tokens=MILLION, output_tokens=MILLION, service_tier="priority")
    assert PriceTable.load(extra).cost("gpt-4o", usage) == pytest.approx(4.25 + 17)


def test_an_unpriced_priority_call_costs_list_price_and_says_so() -> None:
    usage = Usage(input_tokens=MILLION, output_tokens=MILLION, service_tier="priority")
    with structlog.testing.capture_logs() as logs:
        cost = PriceTable.load().cost("gpt-4.1-nano", usage)
        PriceTable.load().cost("gpt-4.1-nano", usage)
    assert cost == pytest.approx(0.10 + 0.40)
    warned = [e for e in logs if e["event"] == "judge.tier_unpriced"]
    assert len(warned) == 1  # once per model
    assert warned[0]["model"] == "gpt-4.1-nano"
