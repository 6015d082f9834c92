"""The strict structured output a judge must return. The explanation comes first, so the judge
reasons before it scores."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ClaimAssessment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim: str = Field(description="One factual statement from the output, as written.")
    reason: str = Field(description="Why the evidence does or does not support it.")
    evidence_quote: str | None = Field(
        description="An exact, verbatim quote from the evidence that supports the claim, or null."
    )
    supported: bool


class Scale5Assessment(BaseModel):
    """1 = mostly unsupported ... 5 = fully grounded."""

    model_config = ConfigDict(extra="forbid")

    explanation: str
    claims: list[ClaimAssessment]
    score: Literal[1, 2, 3, 4, 5]


class BinaryAssessment(BaseModel):
    """grounded = every factual statement is supported by the evidence."""

    model_config = ConfigDict(extra="forbid")

    explanation: str
    claims: list[ClaimAssessment]
    grounded: bool


Assessment = Scale5Assessment | BinaryAssessment
