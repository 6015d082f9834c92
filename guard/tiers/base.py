"""What every tier's settings share: a name and the decision bounds."""

from __future__ import annotations

from pydantic import Field

from guard.settings_model import SettingsModel


class TierBase(SettingsModel):
    """A tier of ``judge.tiers``. The kind's own settings subclass this and add ``kind``.

    A tier that is not the last decides pass when its own reading is a pass and its grounded
    probability is at or above ``pass_at``, fail when its reading is a fail and the probability
    is at or below ``fail_at``; otherwise (or when it errs) the next tier judges. The bounds are
    read in the direction of the tier's own reading, so no pair of bounds can turn a fail into a
    pass.
    """

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
        description="Decide pass when the tier reads a pass with a grounded probability at or "
        "above this (not the last tier: the last tier always decides).",
    )
    fail_at: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="Decide fail when the tier reads a fail with a grounded probability at or "
        "below this (not the last tier).",
    )

    @property
    def tier_name(self) -> str:
        """The name verdicts and metrics give this tier: ``name``, else the kind."""
        kind: str = getattr(self, "kind", "tier")
        return self.name or kind
