"""The strict structured output a judge must return. The explanation comes first, so the judge
reasons before it scores."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ClaimAssessment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim: str = Field(description="One factual statement, in the output's words, cut to the fact.")
    evidence_quote: str | None = Field(
        description="The shortest exact, verbatim span of the evidence that supports it, or null."
    )
    supported: bool
    reason: str = Field(description='Unsupported: what the evidence lacks (short). Supported: "".')


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
