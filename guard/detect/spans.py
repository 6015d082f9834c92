"""Reading a case with a span model: which stretches of the answer no evidence supports.

The answer is read in windows of whole sentences of at most half the model's window; the
evidence in chunks that fit beside the longest answer window and the prompt. Each answer window
is read against each chunk, and a character is unsupported only when *every* chunk flags it
(one chunk that supports it is enough, as for pair models). Each unsupported span is an
unsupported claim; each sentence that no span touches is a supported one. The grounded
probability is 1 - the highest P(unsupported) of a span (1.0 when none is flagged: a span model
says only where it flags).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from guard.case import PreparedCase
from guard.decide.assessment import ClaimAssessment
from guard.detect.backend import Span, SpanBackend, SpanInput
from guard.detect.batching import MicroBatcher
from guard.detect.chunking import (
    Sentence,
    TokenCounter,
    TokenOffsets,
    evidence_chunks,
    sentences,
    token_starts,
    tokens_in,
    windows,
)
from guard.detect.prompts import span_prompt
from guard.detect.reading import Reading, bounded, clip, probability
from guard.detect.results import ReportsSpanCuts, SpanResult
from guard.detect.settings import DetectorSpec
from guard.errors import JudgeError, MalformedJudgeOutput
from guard.offload import off_loop

PROMPT_MARGIN = 0.9  # of the room left for evidence: the passages' labels take the rest


@dataclass(frozen=True)
class SpanPlan:
    """The inputs of one case: each answer window against each evidence prompt."""

    output: str
    windows: tuple[Sentence, ...]
    prompts: tuple[str, ...]
    question: str | None

    @property
    def items(self) -> list[SpanInput]:
        return [SpanInput(p, self.question, w.text) for w in self.windows for p in self.prompts]


class SpanReader:
    """Reads cases with a span backend, its calls shared by concurrent cases (a batcher)."""

    def __init__(
        self,
        backend: SpanBackend,
        spec: DetectorSpec,
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
        self.spec = spec
        self.count = count
        self.offsets = offsets  # one tokenizer call for all passages, when the backend has it
        self.overhead = overhead  # special tokens of one input
        self.max_inputs = max_inputs
        self.timeout_s = timeout_s
        self.batcher = MicroBatcher[SpanInput, SpanResult](
            self._run,
            max_batch=batch_size,
            max_wait_s=batch_wait_s,
            max_in_flight=in_flight,
            name=f"detector {backend.name}",
        )

    def plan(self, case: PreparedCase) -> SpanPlan:
        window = self.backend.max_length
        passages = [p.text for p in case.passages] or [case.evidence]
        starts = token_starts(self.offsets, [case.output, *passages]) if self.offsets else None
        own = starts[0] if starts else None
        answer = tuple(windows(case.output, window // 2, self.count, own))
        longest = max((self._tokens(w, own) for w in answer), default=0)
        frame = self.count(span_prompt(self.spec, [], case.question)) + self.overhead
        budget = max(int((window - frame - longest) * PROMPT_MARGIN), window // 4)
        chunks = evidence_chunks(passages, budget, self.count, starts[1:] if starts else None)
        texts = [[passages[r.passage][r.start : r.end] for r in c.runs] for c in chunks]
        prompts = tuple(span_prompt(self.spec, t, case.question) for t in texts)
        if len(answer) * len(prompts) > self.max_inputs:
            raise JudgeError(
                f"detector: {len(answer)} answer windows x {len(prompts)} evidence chunks is "
                f"over max_inputs {self.max_inputs}; raise it, or judge shorter outputs"
            )
        return SpanPlan(case.output, answer, prompts, case.question)

    def _tokens(self, window: Sentence, starts: list[int] | None) -> int:
        if starts is None:
            return self.count(window.text)
        return tokens_in(starts, window.start, window.end)

    async def read_case(self, case: PreparedCase) -> Reading:
        """The case's reading; its plan (tokenizing) made off the event loop when long."""
        plan = await off_loop(len(case.output) + len(case.evidence), self.plan, case)
        return await self.read(plan)

    async def read(self, plan: SpanPlan) -> Reading:
        if not plan.windows:
            return Reading(1.0, (), 0, 0, "no sentence to judge")
        if not plan.prompts:  # no evidence text: the whole answer is unsupported
            whole = [Span(w.start, w.end, 1.0) for w in plan.windows]
            return Reading(0.0, _claims(plan.output, whole), 0, 0, "no evidence text to read")
        results = await self.batcher.submit(plan.items)
        width = len(plan.prompts)
        flagged: list[Span] = []
        for i, w in enumerate(plan.windows):
            row = results[i * width : (i + 1) * width]
            flagged += [_shift(s, w.start) for s in common([list(r.spans) for r in row])]
        worst = max((s.p_unsupported for s in flagged), default=0.0)
        return Reading(
            1.0 - worst,
            _claims(plan.output, flagged),
            len(results),
            sum(r.cut for r in results),
            _finding(plan.output, flagged),
        )

    async def _run(self, items: Sequence[SpanInput]) -> list[SpanResult]:
        what = f"detector {self.backend.name}"
        if isinstance(self.backend, ReportsSpanCuts):
            marked = await bounded(self.backend.spans_marked(items), self.timeout_s, what)
        else:
            found = await bounded(self.backend.unsupported_spans(items), self.timeout_s, what)
            marked = [
                SpanResult(tuple(s), self._would_cut(i)) for s, i in zip(found, items, strict=False)
            ]
        return [_checked(r, item, what) for r, item in zip(marked, items, strict=False)]

    def _would_cut(self, item: SpanInput) -> bool:
        size = self.count(item.context) + self.count(item.answer) + self.overhead
        return size > self.backend.max_length

    async def aclose(self) -> None:
        await self.batcher.aclose()


def _checked(result: SpanResult, item: SpanInput, what: str) -> SpanResult:
    for span in result.spans:
        probability(span.p_unsupported, what)
        if not 0 <= span.start < span.end <= len(item.answer):
            raise MalformedJudgeOutput(f"{what}: span {span} is outside the answer")
    return result


def common(readings: Sequence[Sequence[Span]]) -> list[Span]:
    """The stretches every reading flags (sorted, disjoint spans each), with the lowest
    P(unsupported) of those that flag them."""
    if not readings:
        return []
    result = sorted(readings[0], key=lambda s: s.start)
    for other in readings[1:]:
        result = _intersect(result, sorted(other, key=lambda s: s.start))
    return result


def _intersect(a: list[Span], b: list[Span]) -> list[Span]:
    out: list[Span] = []
    i = j = 0
    while i < len(a) and j < len(b):
        start, end = max(a[i].start, b[j].start), min(a[i].end, b[j].end)
        if start < end:
            out.append(Span(start, end, min(a[i].p_unsupported, b[j].p_unsupported)))
        if a[i].end <= b[j].end:
            i += 1
        else:
            j += 1
    return out


def _shift(span: Span, by: int) -> Span:
    return Span(span.start + by, span.end + by, span.p_unsupported)


def _finding(output: str, flagged: Sequence[Span]) -> str:
    if not flagged:
        return "no unsupported span"
    surest = max(flagged, key=lambda s: s.p_unsupported)
    quoted = clip(output[surest.start : surest.end])
    return (
        f'{len(flagged)} unsupported span(s), the surest "{quoted}" (p={surest.p_unsupported:.2f})'
    )


def _claims(output: str, flagged: Sequence[Span]) -> tuple[ClaimAssessment, ...]:
    """One unsupported claim per span; one supported claim per sentence no span touches."""
    unsupported = [
        ClaimAssessment(
            claim=output[s.start : s.end],
            evidence_quote=None,
            supported=False,
            reason=f"the detector flags it as unsupported (p={s.p_unsupported:.2f})",
        )
        for s in flagged
    ]
    clean = [
        ClaimAssessment(claim=s.text, evidence_quote=None, supported=True, reason="")
        for s in sentences(output)
        if not any(f.start < s.end and s.start < f.end for f in flagged)
    ]
    return (*unsupported, *clean)
