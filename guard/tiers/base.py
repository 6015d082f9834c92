"""What every tier's settings share: a name and the decision bounds."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from guard.settings_model import SettingsModel


class TierBase(SettingsModel):
    """A tier of ``judge.tiers``. The kind's own settings subclass this and add ``kind``."""

    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="The tier's name in verdicts and metrics (default: its kind).",
    )
    pass_at: float = Field(
        default=0.9,
        ge=0.0,
        le=1.0,
        description="Decide pass when the tier's grounded probability is at or above this "
        "(not the last tier; the last tier always decides).",
    )
    fail_at: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="Decide fail when the tier's grounded probability is at or below this "
        "(not the last tier).",
    )

    @model_validator(mode="after")
    def _bounds_in_order(self) -> Self:
        if self.fail_at >= self.pass_at:
            raise ValueError(
                f"fail_at {self.fail_at} must be below pass_at {self.pass_at}: a probability "
                "between them hands the message on to the next tier"
            )
        return self
