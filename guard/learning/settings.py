"""``judge.cascade``: the learning cascade's settings."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from guard.settings_model import SettingsModel


class CascadeSettings(SettingsModel):
    """What the screen tiers may decide, learned from the LLM's verdicts and reviewers' labels."""

    learn: bool = Field(
        default=False,
        description="Learn what each screen tier may decide from the last tier's verdicts and "
        "reviewers' labels; the screens' pass_at/fail_at bounds are then not used (a basis "
        "decides while its agreement's lower bound reaches target_agreement).",
    )
    target_agreement: float = Field(
        default=0.95,
        gt=0.5,
        le=1.0,
        description="A basis decides locally while the Wilson lower bound (one-sided, z 1.645) "
        "of its agreement with the labels reaches this.",
    )
    min_count: int = Field(
        default=30,
        ge=1,
        le=1_000_000,
        description="Labels a basis needs before it may decide locally.",
    )
    audit_share: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="Share of locally decidable messages still sent to the last tier, to keep "
        "measuring (picked by request id, so a replay picks the same).",
    )
    seed: Literal["shipped", "empty"] = Field(
        default="shipped",
        description="The starting state: the shipped offline calibration table (each basis "
        "weighing at most 40 labels, so none decides on it alone) for offline tiers, or nothing.",
    )
    reviewer_weight: float = Field(
        default=10.0,
        ge=1.0,
        le=1000.0,
        description="How many labels a reviewer's label counts for (it also replaces the "
        "LLM's label of that message).",
    )
    max_bases: int = Field(
        default=4096,
        ge=16,
        le=1_000_000,
        description="Keys (tier, basis, direction) counted per replica; a key beyond is not "
        "counted (metric and calibration table say how many).",
    )
    max_recent: int = Field(
        default=100_000,
        ge=0,
        le=10_000_000,
        description="Recent messages whose readings are kept for a reviewer's later label.",
    )
    state_file: Path | None = Field(
        default=None,
        description="A local file of the counts (JSON lines) read at start and written at "
        "stop, for replay and check; the service shares them on topics.calibration instead.",
    )
