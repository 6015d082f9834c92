"""What a detector backend does, whatever runs the model (ONNX Runtime in process, TEI, vLLM).

Two model shapes (see :mod:`guard.detect.presets`):

* a **pair classifier** reads (premise, hypothesis) -- an evidence chunk and one sentence of
  the output -- and gives the probability that the premise supports the hypothesis;
* a **span detector** reads (context, question, answer) and labels the answer's tokens; its
  unsupported spans come back as character offsets into the answer.

Backends raise :class:`guard.errors.JudgeError` subclasses (``JudgeUnavailable``,
``JudgeTimeout``, ``MalformedJudgeOutput``) when they cannot answer; never a made-up score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Span:
    """An unsupported stretch of the answer: ``answer[start:end]``, with the model's
    probability that it is unsupported."""

    start: int
    end: int
    p_unsupported: float


@dataclass(frozen=True)
class SpanInput:
    context: str
    question: str | None
    answer: str


class PairBackend(Protocol):
    """Scores (premise, hypothesis) pairs: P(supported) in [0, 1] for each, in order."""

    name: str  # "onnx", "tei", "vllm_score", "vllm_classify" (for verdicts and errors)
    max_length: int  # the model's window in tokens (premise and hypothesis together)

    async def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...

    async def aclose(self) -> None: ...


class SpanBackend(Protocol):
    """Finds the unsupported spans of each answer, in order."""

    name: str  # "onnx", "vllm_pooling"
    max_length: int

    async def unsupported_spans(self, items: Sequence[SpanInput]) -> list[list[Span]]: ...

    async def aclose(self) -> None: ...
