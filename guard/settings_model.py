"""The base of every settings model: unknown keys are refused, values are frozen, numbers are
finite, and ``true``/``false`` is never read as a number (pydantic's lax mode takes ``true``
for 1, so ``concurrency: true`` would have meant one call at a time).

Bounds shared by the models: :data:`MAX_DURATION_S` caps every duration (``asyncio`` cannot
wait ``1e300`` seconds, and no wait of groundguard should outlast a month), :data:`INT32_MAX`
every value that reaches a 32-bit field of the Kafka protocol.
"""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

MAX_DURATION_S = 30 * 86_400.0  # 30 days: the longest duration any setting may be
INT32_MAX = 2**31 - 1  # Kafka's INT32 fields: fetch sizes, timeouts in ms, partitions
INT16_MAX = 2**15 - 1  # Kafka's INT16 fields: a topic's replication factor
BOOL_IS_NO_NUMBER = "true or false is not a number: give a number"


def takes_bool(annotation: Any) -> bool:
    """Whether a field of type ``annotation`` may hold a boolean."""
    if annotation is bool or annotation is Any:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return any(takes_bool(arg) for arg in get_args(annotation))
    return False


def refuse_bool(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    """``value`` unchanged, unless it is a boolean given to a field that holds none."""
    field = model.model_fields.get(info.field_name or "")
    if isinstance(value, bool) and field is not None and not takes_bool(field.annotation):
        raise ValueError(BOOL_IS_NO_NUMBER)
    return value


class SettingsModel(BaseModel):
    """A section of the settings: see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        return refuse_bool(cls, value, info)
