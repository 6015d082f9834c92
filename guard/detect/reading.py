"""What a detector reading of one case gives the judge, and the bound on a backend call."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from guard.decide.assessment import ClaimAssessment
from guard.errors import JudgeTimeout, MalformedJudgeOutput

T = TypeVar("T")


@dataclass(frozen=True)
class Reading:
    """The output's grounded probability, its claims, and how much was cut at the window."""

    grounded_p: float
    claims: tuple[ClaimAssessment, ...]
    inputs: int  # model inputs read (pairs, or span inputs)
    cut: int  # of them, cut to fit the model's window
    finding: str  # what decided, in a few words, for the explanation


async def bounded(call: Awaitable[T], timeout_s: float, what: str) -> T:
    """``call``, or ``JudgeTimeout`` after ``timeout_s``."""
    try:
        async with asyncio.timeout(timeout_s):
            return await call
    except TimeoutError as exc:
        raise JudgeTimeout(f"{what}: no answer within {timeout_s:g} s") from exc


def probability(value: float, what: str) -> float:
    """``value`` when it is a probability, else ``MalformedJudgeOutput``."""
    if not (isinstance(value, float | int) and math.isfinite(value) and 0.0 <= value <= 1.0):
        raise MalformedJudgeOutput(f"{what}: {value!r} is not a probability")
    return float(value)


def clip(text: str, limit: int = 80) -> str:
    """``text`` for an explanation: at most ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
