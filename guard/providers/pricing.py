"""Token prices, kept as data (``guard/data/prices.json``) that users can extend or override.

Prices are USD per million tokens. ``Usage.input_tokens`` counts every input token, cached ones
included; ``Usage.cached_tokens`` of them are billed at the cached-input price (a cache read) and
``Usage.cache_write_tokens`` at the cache-write price (Anthropic: 1.25x input for the 5-minute
cache; OpenAI charges no write, so it defaults to the input price). The tier that billed a call
is ``Usage.service_tier``: ``flex`` and ``batch`` cost ``delivery_factor["flex"]`` and
``delivery_factor["batch"]`` of all that (0.5: OpenAI bills flex at batch prices, both batch APIs
take 50% off); ``priority`` (OpenAI's priority processing, above list price) costs the model's
``priority`` entry (its own input, output and cached_input), and where the table has none, list
price with a warning (``judge.tier_unpriced``, once per model): the cost then undercounts. Per
model, ``flex`` says whether it offers the flex tier and ``cache_min_tokens`` is the shortest
prefix the provider caches.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import structlog

from guard import defaults
from guard.errors import ConfigError
from guard.models import Usage

_FIELD = "judge.model"
_FIX = "add it to a price file given by judge.price_file (see guard/data/prices.json)"
_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")
_PER = 1_000_000
_DISCOUNTED_TIERS = frozenset({"flex", "batch"})  # priced by delivery_factor
log = structlog.get_logger("guard.pricing")
_unpriced_warned: set[str] = set()  # models warned of an unpriced priority call


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float
    cache_write: float = 0.0
    flex: bool = False
    cache_min_tokens: int = defaults.CACHE_MIN_TOKENS
    priority: ModelPrice | None = None  # OpenAI's priority processing tier, when priced

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> ModelPrice:
        price_in = float(entry["input"])
        tier = entry.get("priority")
        price = cls(
            input=price_in,
            output=float(entry["output"]),
            cached_input=float(entry.get("cached_input", price_in)),
            cache_write=float(entry.get("cache_write", price_in)),
            flex=bool(entry.get("flex", False)),
            cache_min_tokens=int(entry.get("cache_min_tokens", defaults.CACHE_MIN_TOKENS)),
            priority=None if tier is None else cls.from_entry(tier),
        )
        if not all(
            _share(p) for p in (price.input, price.output, price.cached_input, price.cache_write)
        ):
            raise ValueError("prices must be finite and not negative")
        return price


def base_model(model: str) -> str:
    """``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``; ``claude-x-20250514`` -> ``claude-x``."""
    return _DATE_SUFFIX.sub("", model)


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, ModelPrice]
    delivery_factors: Mapping[str, float] = field(default_factory=dict)

    def delivery_factor(self, delivery: str) -> float:
        """The price of ``delivery`` (``batch``) as a share of realtime (``delivery_factor``
        in the price file; 1 when not given)."""
        return self.delivery_factors.get(delivery, 1.0)

    @classmethod
    def load(cls, extra: Path | None = None) -> PriceTable:
        """The bundled prices, updated by the entries of ``extra`` (same format) if given."""
        bundled = json.loads(
            resources.files("guard").joinpath("data/prices.json").read_text("utf-8")
        )
        prices = dict(_parse(bundled, "guard/data/prices.json"))
        factors = _factors(bundled, "guard/data/prices.json")
        if extra is not None:
            doc = _read_extra(extra)
            prices.update(_parse(doc, str(extra)))
            factors.update(_factors(doc, str(extra)))
        return cls(prices, factors)

    def lookup(self, model: str) -> ModelPrice | None:
        """The price of ``model`` or of its undated base model; None when unknown."""
        return self.prices.get(model) or self.prices.get(base_model(model))

    def require(self, model: str) -> ModelPrice:
        """The price of ``model``; :class:`ConfigError` when there is none."""
        price = self.lookup(model)
        if price is None:
            raise ConfigError(_FIELD, f"no price known for model {model!r}", _FIX)
        return price

    def cost(self, model: str, usage: Usage) -> float:
        """USD for ``usage`` on ``model``. Free when nothing was used (offline judges)."""
        if not (usage.input_tokens or usage.output_tokens):
            return 0.0
        price = self._tier_price(model, usage.service_tier)
        cached = min(usage.cached_tokens, usage.input_tokens)
        written = min(usage.cache_write_tokens, usage.input_tokens - cached)
        list_usd = (
            (usage.input_tokens - cached - written) * price.input
            + cached * price.cached_input
            + written * price.cache_write
            + usage.output_tokens * price.output
        ) / _PER
        return list_usd * self.tier_factor(usage.service_tier)

    def tier_factor(self, service_tier: str | None) -> float:
        """The share of its tier's prices a call served by ``service_tier`` costs: the
        ``delivery_factor`` of ``flex`` and ``batch``, else 1."""
        return self.delivery_factor(service_tier) if service_tier in _DISCOUNTED_TIERS else 1.0

    def _tier_price(self, model: str, service_tier: str | None) -> ModelPrice:
        """The prices of ``model`` at ``service_tier``: its priority entry for ``priority``
        (list price, warned once, when it has none), else its list prices."""
        price = self.require(model)
        if service_tier != "priority":
            return price
        if price.priority is not None:
            return price.priority
        if model not in _unpriced_warned:
            _unpriced_warned.add(model)
            log.warning(
                "judge.tier_unpriced",
                model=model,
                service_tier=service_tier,
                fix='add a "priority" price to the model in judge.price_file; '
                "until then cost_usd counts list price, below what the tier bills",
            )
        return price


def _share(value: float) -> bool:
    """A usable price or price factor: finite and not negative (JSON allows NaN, Infinity)."""
    return math.isfinite(value) and value >= 0


def _factors(doc: Any, origin: str) -> dict[str, float]:
    """The ``delivery_factor`` map of a price file: finite, non-negative shares of list price."""
    found = doc.get("delivery_factor", {}) if isinstance(doc, dict) else {}
    try:
        if not isinstance(found, dict):
            raise TypeError("delivery_factor is not an object")
        factors = {str(k): float(v) for k, v in found.items()}
        if not all(_share(v) for v in factors.values()):
            raise ValueError("factors must be finite and not negative")
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            "judge.price_file",
            f"{origin} has a bad delivery_factor: {exc}",
            'use {"delivery_factor": {"batch": 0.5, "flex": 0.5}}',
        ) from exc
    return factors


def _read_extra(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            "judge.price_file",
            f"cannot read {path}: {exc}",
            "give a readable JSON file shaped like guard/data/prices.json",
        ) from exc


def _parse(doc: Any, origin: str) -> dict[str, ModelPrice]:
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, dict):
        raise ConfigError(
            "judge.price_file",
            f"{origin} has no 'models' object",
            'use {"models": {"<model>": {"input": .., "output": ..}}}',
        )
    try:
        return {name: ModelPrice.from_entry(entry) for name, entry in models.items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            "judge.price_file",
            f"{origin} has a bad price entry: {exc}",
            "give input and output (and optionally cached_input, cache_write) as "
            "non-negative USD per million tokens",
        ) from exc
