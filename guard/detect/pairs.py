"""Reading a case with a pair model: every sentence of the output against every evidence chunk.

The chunks are sized so that a chunk, the longest sentence and the model's template fit the
window (at least a quarter of it goes to the chunk, so a huge sentence cannot starve the
evidence: such pairs are cut, and the reading says how many). A sentence is supported when
its best chunk's P(supported) is at least :data:`SUPPORTED_AT`; the output's grounded
probability is the weakest sentence's (:func:`guard.detect.chunking.grounded_p`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from guard.case import PreparedCase
from guard.decide.assessment import ClaimAssessment
from guard.detect.backend import PairBackend
from guard.detect.batching import MicroBatcher
from guard.detect.chunking import (
    Chunk,
    Sentence,
    TokenCounter,
    TokenOffsets,
    best_chunk,
    evidence_chunks,
    sentences,
    token_starts,
    tokens_in,
)
from guard.detect.reading import Reading, bounded, clip, probability
from guard.detect.results import PairScore, ReportsPairCuts
from guard.errors import JudgeError
from guard.offload import off_loop

SUPPORTED_AT = 0.5  # a sentence is supported at this P(supported) of its best chunk or above


@dataclass(frozen=True)
class PairPlan:
    """The pairs of one case: each sentence against each chunk, sentence by sentence."""

    sentences: tuple[Sentence, ...]
    chunks: tuple[Chunk, ...]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(c.text, s.text) for s in self.sentences for c in self.chunks]


class PairReader:
    """Reads cases with a pair backend, its calls shared by concurrent cases (a batcher)."""

    def __init__(
        self,
        backend: PairBackend,
        *,
        count: TokenCounter,
        offsets: TokenOffsets | None = None,
        overhead: int,
        max_inputs: int,
        batch_size: int,
        batch_wait_s: float,
        timeout_s: float,
        in_flight: int = 1,
    ) -> None:
        self.backend = backend
        self.count = count
        self.offsets = offsets  # one tokenizer call for all passages, when the backend has it
        self.overhead = overhead  # template and special tokens of one pair
        self.max_inputs = max_inputs
        self.timeout_s = timeout_s
        self.batcher = MicroBatcher[tuple[str, str], PairScore](
            self._run,
            max_batch=batch_size,
            max_wait_s=batch_wait_s,
            max_in_flight=in_flight,
            name=f"detector {backend.name}",
        )

    def plan(self, case: PreparedCase) -> PairPlan:
        passages = [p.text for p in case.passages] or [case.evidence]
        starts = token_starts(self.offsets, [case.output, *passages]) if self.offsets else None
        said = tuple(sentences(case.output))
        longest = max((self._tokens(s, starts) for s in said), default=0)
        window = self.backend.max_length
        budget = max(window - self.overhead - longest, window // 4)
        chunks = evidence_chunks(passages, budget, self.count, starts[1:] if starts else None)
        plan = PairPlan(said, tuple(chunks))
        if len(said) * len(plan.chunks) > self.max_inputs:
            raise JudgeError(
                f"detector: {len(said)} sentences x {len(plan.chunks)} evidence chunks is over "
                f"max_inputs {self.max_inputs}; raise it, or judge shorter outputs"
            )
        return plan

    def _tokens(self, sentence: Sentence, starts: list[list[int]] | None) -> int:
        if starts is None:
            return self.count(sentence.text)
        return tokens_in(starts[0], sentence.start, sentence.end)

    async def read_case(self, case: PreparedCase) -> Reading:
        """The case's reading; its plan (tokenizing) made off the event loop when long."""
        plan = await off_loop(len(case.output) + len(case.evidence), self.plan, case)
        return await self.read(plan)

    async def read(self, plan: PairPlan) -> Reading:
        if not plan.sentences:
            return Reading(1.0, (), 0, 0, "no sentence to judge")
        if not plan.chunks:
            return _unread(plan.sentences)
        scores = await self.batcher.submit(plan.pairs)
        width = len(plan.chunks)
        rows = [scores[i * width : (i + 1) * width] for i in range(len(plan.sentences))]
        claims = [_claim(s, row, plan.chunks) for s, row in zip(plan.sentences, rows, strict=True)]
        weakest = min(range(len(rows)), key=lambda i: best_chunk([x.p for x in rows[i]]).p)
        p = best_chunk([x.p for x in rows[weakest]]).p
        finding = f'weakest sentence "{clip(plan.sentences[weakest].text)}" (p={p:.2f})'
        return Reading(p, tuple(claims), len(scores), sum(s.cut for s in scores), finding)

    async def _run(self, pairs: Sequence[tuple[str, str]]) -> list[PairScore]:
        what = f"detector {self.backend.name}"
        if isinstance(self.backend, ReportsPairCuts):
            marked = await bounded(self.backend.score_pairs_marked(pairs), self.timeout_s, what)
            return [PairScore(probability(s.p, what), s.cut) for s in marked]
        scores = await bounded(self.backend.score_pairs(pairs), self.timeout_s, what)
        return [
            PairScore(probability(p, what), self._would_cut(pair))
            for p, pair in zip(scores, pairs, strict=False)
        ]

    def _would_cut(self, pair: tuple[str, str]) -> bool:
        """A backend that does not say: whether the pair is over the window by our count."""
        return self.count(pair[0]) + self.count(pair[1]) + self.overhead > self.backend.max_length

    async def aclose(self) -> None:
        await self.batcher.aclose()


def _unread(said: Sequence[Sentence]) -> Reading:
    """No evidence text to read: every sentence unsupported (never a pass)."""
    claims = tuple(
        ClaimAssessment(claim=s.text, evidence_quote=None, supported=False, reason="no evidence")
        for s in said
    )
    return Reading(0.0, claims, 0, 0, "no evidence text to read")


def _claim(
    sentence: Sentence, row: Sequence[PairScore], chunks: Sequence[Chunk]
) -> ClaimAssessment:
    best = best_chunk([x.p for x in row])
    if best.p >= SUPPORTED_AT:
        return ClaimAssessment(
            claim=sentence.text, evidence_quote=chunks[best.chunk].quote, supported=True, reason=""
        )
    return ClaimAssessment(
        claim=sentence.text,
        evidence_quote=None,
        supported=False,
        reason=f"no evidence chunk supports it (best p={best.p:.2f})",
    )
