"""Hold and release: an answer judged span by span while it streams, released only as far as
its spans are judged not to fail.

Each span is judged, as soon as it completes, on a request whose output is **the answer so far**
(every span before it and the span itself), so a span is read in the context of what it follows
("It is not." after "Refunds take 30 days."), and the last span's verdict, on the whole answer,
is the final verdict. Span judgements run concurrently with generation and with each other (at
most ``max_in_flight`` per answer; the rest wait, generation does not), and are applied in order:
text is released up to the end of the last span of an unbroken run of spans that did not fail.

Release modes (:class:`Release`):

* ``verified`` (default): as above;
* ``final``: nothing is released until every span is judged (a failing span still stops the
  answer as soon as it is judged);
* ``immediate``: every delta is released as it arrives and spans are judged after: monitoring
  only, nothing is stopped (the verdicts say ``release: immediate``).

A span whose verdict *blocks* (``blocks(verdict)``: a fail, and by default an undecided verdict)
stops the answer: nothing of it or after it is released, pending judgements are cancelled, and
the last event is :class:`Stopped` with the verdict and how far the answer was released. An
answer judged whole ends with :class:`Finished`; an upstream that broke off with
:class:`Aborted`. Non-text items of the stream (tool calls, usage) are :meth:`mark`-ed at their
place in the text and released with the text before them (:class:`Marked`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum

import structlog

from guard.models import JudgeRequest, Verdict
from guard.stream.spans import DEFAULT_MAX_SPAN_CHARS, SpanSplitter

log = structlog.get_logger("guard.stream")

SpanJudge = Callable[[JudgeRequest], Awaitable[Verdict]]
DEFAULT_MAX_SPANS_IN_FLIGHT = 4
DEFAULT_MAX_ANSWER_CHARS = 200_000
TOO_LONG = "answer_too_long"
JUDGE_RAISED = "judge_raised"


class Release(StrEnum):
    VERIFIED = "verified"
    FINAL = "final"
    IMMEDIATE = "immediate"


@dataclass(frozen=True)
class Text:
    """Text released to the client."""

    text: str


@dataclass(frozen=True)
class Marked:
    """A non-text item of the stream, released in its place."""

    item: object


@dataclass(frozen=True)
class Stopped:
    """The answer was stopped at a blocking span: ``released`` characters reached the client,
    the span that blocked starts at ``at``."""

    verdict: Verdict
    released: int
    at: int
    span: int


@dataclass(frozen=True)
class Finished:
    """The whole answer was judged (``verdict`` None: it had no span to judge)."""

    verdict: Verdict | None
    released: int


@dataclass(frozen=True)
class Aborted:
    """The upstream broke off (``reason``); ``released`` characters reached the client."""

    reason: str
    released: int


StreamEvent = Text | Marked | Stopped | Finished | Aborted


@dataclass
class _Span:
    start: int
    end: int
    verdict: Verdict | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)


@dataclass
class HoldAndRelease:
    """One answer's hold and release over ``judge``; ``base`` is the request (evidence, id)
    every span's request is made from, its output replaced by the answer so far."""

    base: JudgeRequest
    judge: SpanJudge
    blocks: Callable[[Verdict], bool]
    release: Release = Release.VERIFIED
    max_in_flight: int = DEFAULT_MAX_SPANS_IN_FLIGHT
    max_span_chars: int = DEFAULT_MAX_SPAN_CHARS
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS

    def __post_init__(self) -> None:
        self._splitter = SpanSplitter(self.max_span_chars)
        self._pieces: list[str] = []  # the completed spans' text
        self._size = 0  # characters in _pieces
        self._spans: list[_Span] = []
        self._marks: list[tuple[int, object]] = []  # (position, item), not yet released
        self._released = 0
        self._applied = 0  # spans whose verdict is applied
        self._finished = False
        self._done = False
        self._slots = asyncio.Semaphore(self.max_in_flight)
        # unbounded, but each event is a delta or a span of an answer of at most
        # max_answer_chars: the bound on what one answer holds
        self._events: asyncio.Queue[StreamEvent] = asyncio.Queue()

    # ------------------------------------------------------------------ input

    def add(self, delta: str) -> None:
        """Text from the upstream: spans it completes are sent to the judge."""
        if self._done or not delta:
            return
        if self._size + len(self._splitter.tail) + len(delta) > self.max_answer_chars:
            self.abort(TOO_LONG)
            return
        if self.release is Release.IMMEDIATE:
            self._emit(Text(delta))
        for span in self._splitter.feed(delta):
            self._judge_span(span)
        if self.release is Release.IMMEDIATE:
            self._released = self._size + len(self._splitter.tail)
            self._release_marks()

    def mark(self, item: object) -> None:
        """A non-text item at the current end of the text."""
        if self._done:
            return
        self._marks.append((self._size + len(self._splitter.tail), item))
        self._release_marks()  # those at the released end (before any text, say) go at once

    def finish(self) -> None:
        """The upstream ended: the tail is the last span (whitespace alone joins the span
        before it), and the final verdict is awaited."""
        if self._done or self._finished:
            return
        tail, self._splitter.tail = self._splitter.tail, ""
        if tail.strip() or not self._spans:
            if tail:
                self._judge_span(tail)
        else:
            self._pieces.append(tail)
            self._size += len(tail)
            self._spans[-1].end = self._size
        self._finished = True
        if self.release is Release.IMMEDIATE:  # stream first: the client is not kept waiting
            self._release_marks(everything=True)
            self._events.put_nowait(Finished(None, self._released))
            self._done = True
            return
        self._advance()

    def abort(self, reason: str) -> None:
        """The upstream broke off: nothing more is released."""
        if not self._done:
            self._end(Aborted(reason, self._released))

    # ------------------------------------------------------------------ output

    @property
    def released(self) -> int:
        return self._released

    @property
    def text(self) -> str:
        return "".join(self._pieces) + self._splitter.tail

    @property
    def spans(self) -> int:
        """The spans cut so far (each sent to the judge)."""
        return len(self._spans)

    @property
    def verdicts(self) -> list[Verdict]:
        """The span verdicts in, in span order (a gap once a span is still being judged)."""
        return [s.verdict for s in self._spans if s.verdict is not None]

    def span_bounds(self, index: int) -> tuple[int, int]:
        """Where span ``index`` starts and ends in the answer (characters)."""
        span = self._spans[index]
        return span.start, span.end

    @property
    def applied(self) -> list[tuple[int, int, Verdict]]:
        """The spans whose verdict is applied, in order: (start, end, verdict)."""
        return [(s.start, s.end, s.verdict) for s in self._spans[: self._applied] if s.verdict]

    async def events(self) -> AsyncIterator[StreamEvent]:
        """What to send the client, in order, up to the last event (stopped, finished,
        aborted)."""
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, Stopped | Finished | Aborted):
                return

    async def settled(self) -> Verdict | None:
        """The final verdict once every span is judged (``immediate``: after the client's
        stream ended); None when the answer had no span or a judgement was cancelled."""
        tasks = [s.task for s in self._spans if s.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        return self._spans[-1].verdict if self._spans else None

    async def aclose(self) -> None:
        """Cancel the judgements still running (the client left, or the answer ended)."""
        self._done = True
        tasks = [s.task for s in self._spans if s.task is not None and not s.task.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ------------------------------------------------------------------ inside

    def _judge_span(self, span: str) -> None:
        start = self._size
        self._pieces.append(span)
        self._size += len(span)
        entry = _Span(start, self._size)
        request = self.base.model_copy(
            update={"output": "".join(self._pieces), "id": f"{self.base.id}.{len(self._spans)}"}
        )
        self._spans.append(entry)
        entry.task = asyncio.create_task(self._judged(entry, request))

    async def _judged(self, entry: _Span, request: JudgeRequest) -> None:
        try:
            async with self._slots:
                entry.verdict = await self.judge(request)
        except Exception:  # a judge that breaks its contract (it returns error verdicts)
            log.exception("stream.judge_raised", request_id=self.base.id)
            self.abort(JUDGE_RAISED)
            return
        self._advance()

    def _advance(self) -> None:
        """Apply the verdicts that arrived, in span order."""
        while not self._done and self._applied < len(self._spans):
            span = self._spans[self._applied]
            if span.verdict is None:
                return
            if self.release is not Release.IMMEDIATE and self.blocks(span.verdict):
                self._end(Stopped(span.verdict, self._released, span.start, self._applied))
                return
            self._applied += 1
            if self.release is Release.VERIFIED:
                self._release_to(span.end)
        if self._finished and not self._done:
            self._release_to(self._size)  # every span passed: the whitespace after the last too
            self._release_marks(everything=True)
            last = self._spans[-1].verdict if self._spans else None
            self._end(Finished(last, self._released))

    def _release_to(self, end: int) -> None:
        """Release the text up to ``end``, each mark in its place within it."""
        text = "".join(self._pieces)
        while self._marks and self._marks[0][0] <= end:
            at, item = self._marks.pop(0)
            if at > self._released:
                self._emit(Text(text[self._released : at]))
                self._released = at
            self._emit(Marked(item))
        if end > self._released:
            self._emit(Text(text[self._released : end]))
            self._released = end

    def _release_marks(self, *, everything: bool = False) -> None:
        while self._marks and (everything or self._marks[0][0] <= self._released):
            self._emit(Marked(self._marks.pop(0)[1]))

    def _emit(self, event: StreamEvent) -> None:
        self._events.put_nowait(event)

    def _end(self, event: StreamEvent) -> None:
        self._done = True
        self._emit(event)
        for span in self._spans:
            if span.task is not None and not span.task.done():
                span.task.cancel()
