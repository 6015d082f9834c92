"""Backend results that also say whether the input was cut at the model's window.

:class:`guard.detect.backend.PairBackend` and :class:`~guard.detect.backend.SpanBackend` return
bare scores and spans. A backend that knows what its tokenizer cut (the ONNX backend) also
implements :class:`ReportsPairCuts` / :class:`ReportsSpanCuts`; for the others the judge
estimates the cuts from its own token counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from guard.detect.backend import Span, SpanInput


@dataclass(frozen=True)
class PairScore:
    """P(supported) of one pair, and whether the pair was cut to fit the window."""

    p: float
    cut: bool


@dataclass(frozen=True)
class SpanResult:
    """The unsupported spans of one answer, and whether its input was cut to fit."""

    spans: tuple[Span, ...]
    cut: bool


@runtime_checkable
class ReportsPairCuts(Protocol):
    async def score_pairs_marked(self, pairs: Sequence[tuple[str, str]]) -> list[PairScore]: ...


@runtime_checkable
class ReportsSpanCuts(Protocol):
    async def spans_marked(self, items: Sequence[SpanInput]) -> list[SpanResult]: ...
