"""Hold and release under hostile splits: no unverified character reaches the client.

Answers with one wrong fact (a number, a name, a date, a negation) and a passing answer are
streamed through the real wire parsers (OpenAI chunks, Anthropic events) into
:class:`~guard.stream.release.HoldAndRelease`, judged by the offline judge, with the text cut
into deltas and the bytes cut into reads anywhere (inside a UTF-8 sequence, inside
``$12,000``), and random delays in the reads and the judge. Each release is checked the moment
it is made: every released character lies in a span whose judgement (on the answer up to the end
of that span) had already come back and did not block.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from consumers.serve.proxy.api import blocks
from consumers.serve.proxy.wire import AnthropicWire, End, OpenAIWire, Wire
from consumers.settings import Undecided
from guard.assembly import build_guard
from guard.engine import Guard
from guard.models import JudgeRequest, Label, Verdict
from guard.settings import JudgeSettings
from guard.stream.chat import chat_request
from guard.stream.release import (
    Aborted,
    Finished,
    HoldAndRelease,
    Release,
    Stopped,
    StreamEvent,
    Text,
)
from guard.stream.spans import SpanSplitter
from guard.stream.sse import SseReader
from guard.testing.fake_upstream import anthropic_events, openai_events

EVIDENCE = (
    "Returns are accepted within 30 days of delivery. The Premium plan costs $12,000 a month. "
    "Support at the café is run by Maria Lopez. The office opened on March 3, 2021. "
    "Refunds are issued to the original card."
)
PASSING = (
    "Returns are accepted within 30 days. The Premium plan costs $12,000 a month. "
    "Support at the café is run by Maria Lopez."
)
WRONG = {
    "number": ("The Premium plan costs $15,000 a month.", "$15,000"),
    "name": ("Support at the café is run by Carlos Diaz.", "Carlos"),
    "date": ("The office opened on June 9, 2019.", "June"),
    "negation": ("Refunds are not issued to the original card.", "not issued"),
}
FIRST = "Returns are accepted within 30 days. "
AFTER = " Anything else — café hours?"


def failing(kind: str) -> str:
    return FIRST + WRONG[kind][0] + AFTER


@pytest.fixture(scope="module")
def guard() -> Guard:
    return build_guard(JudgeSettings(provider="offline"), os.environ)


def base_request() -> JudgeRequest:
    body = {
        "messages": [{"role": "user", "content": "Tell me about the plan."}],
        "groundguard_context": EVIDENCE,
    }
    return chat_request(body, "openai", request_id="r")


@dataclass
class Recorder:
    """The judge, timed: the outputs whose verdict is back, and whether each blocked."""

    guard: Guard
    rng: random.Random
    max_delay_s: float = 0.0
    back: list[tuple[str, bool]] = field(default_factory=list)

    async def __call__(self, request: JudgeRequest) -> Verdict:
        verdict = await self.guard.judge(request)
        if self.max_delay_s:
            await asyncio.sleep(self.rng.uniform(0, self.max_delay_s))
        self.back.append((request.output, blocks(verdict, Undecided.BLOCK)))
        return verdict


class Checked(HoldAndRelease):
    """Checks every release as it is made against what the judge had answered by then."""

    recorder: Recorder
    shown: str = ""

    def _emit(self, event: StreamEvent) -> None:
        if isinstance(event, Text) and self.release is not Release.IMMEDIATE:
            self.shown += event.text
            passed = [out for out, blocked in self.recorder.back if not blocked]
            first_block = min(
                (len(out) for out, blocked in self.recorder.back if blocked), default=None
            )
            assert any(out.startswith(self.shown) for out in passed), (
                f"released before judged: {self.shown!r}"
            )
            if first_block is not None:
                # nothing of a blocking span: each judged output ends a span
                starts = [len(out) for out, _ in self.recorder.back if len(out) < first_block]
                assert len(self.shown) <= max(starts, default=0)
        super()._emit(event)


def cut(data: bytes | str, points: list[int]) -> list:
    marks = sorted({p % (len(data) + 1) for p in points} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(marks) if b > a]


async def stream(
    guard: Guard,
    answer: str,
    *,
    wire: Wire,
    deltas: list[int],
    reads: list[int],
    release: Release = Release.VERIFIED,
    seed: int = 0,
    max_delay_s: float = 0.0,
) -> tuple[Checked, list[StreamEvent]]:
    rng = random.Random(seed)
    recorder = Recorder(guard, rng, max_delay_s)
    engine = Checked(
        base_request(), recorder, lambda v: blocks(v, Undecided.BLOCK), release=release
    )
    engine.recorder = recorder
    tokens = cut(answer, deltas)
    build = openai_events if isinstance(wire, OpenAIWire) else anthropic_events
    raw = b"".join(data for data, _ in build(tokens, "m"))
    reader = SseReader()

    async def pump() -> None:
        for chunk in cut(raw, reads):
            if max_delay_s:
                await asyncio.sleep(rng.uniform(0, max_delay_s / 3))
            for event in reader.feed(chunk):
                for item in wire.read(event):
                    if isinstance(item, str):
                        engine.add(item)
                    elif isinstance(item, End):
                        engine.finish()
                    else:
                        engine.mark(item)

    async def collect() -> list[StreamEvent]:
        return [event async for event in engine.events()]

    task = asyncio.create_task(pump())
    reading = asyncio.create_task(collect())
    async with asyncio.timeout(30):
        await asyncio.wait([task, reading], return_when=asyncio.FIRST_EXCEPTION)
        await task  # a failed check inside the pump raises here
        events = await reading
    await engine.aclose()
    return engine, events


def released(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, Text))


WIRES = [OpenAIWire, AnthropicWire]


class TestFailingAnswers:
    """A wrong fact never reaches the client, wherever the stream is cut."""

    @pytest.mark.parametrize("kind", sorted(WRONG))
    @pytest.mark.parametrize("make", WIRES)
    def test_every_split_of_the_text_into_two_deltas_stops_before_the_wrong_span(
        self, guard: Guard, kind: str, make: type[OpenAIWire] | type[AnthropicWire]
    ) -> None:
        answer = failing(kind)
        for at in range(len(answer) + 1):
            _engine, events = asyncio.run(
                stream(guard, answer, wire=make("m"), deltas=[at], reads=[])
            )
            assert isinstance(events[-1], Stopped), (at, events[-1])
            assert released(events) == FIRST
            assert WRONG[kind][1] not in released(events)

    @pytest.mark.parametrize("make", WIRES)
    def test_every_split_of_the_bytes_into_two_reads_stops_before_the_wrong_span(
        self, guard: Guard, make: type[OpenAIWire] | type[AnthropicWire]
    ) -> None:
        answer = failing("number")
        size = len(b"".join(d for d, _ in openai_events([answer], "m")))
        for at in range(size + 1):  # inside the UTF-8 of "é" and "—" too
            _, events = asyncio.run(
                stream(guard, answer, wire=make("m"), deltas=[], reads=[at, at + 1])
            )
            assert isinstance(events[-1], Stopped)
            assert released(events) == FIRST

    @given(
        kind=st.sampled_from(sorted(WRONG)),
        wire=st.sampled_from(WIRES),
        deltas=st.lists(st.integers(0, 400), max_size=30),
        reads=st.lists(st.integers(0, 5000), max_size=60),
        release=st.sampled_from([Release.VERIFIED, Release.FINAL]),
        seed=st.integers(0, 2**16),
    )
    @settings(
        max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    def test_random_splits_and_delays_never_release_an_unjudged_or_failing_span(
        self,
        guard: Guard,
        kind: str,
        wire: type[OpenAIWire] | type[AnthropicWire],
        deltas: list[int],
        reads: list[int],
        release: Release,
        seed: int,
    ) -> None:
        answer = failing(kind)
        _, events = asyncio.run(
            stream(
                guard,
                answer,
                wire=wire("m"),
                deltas=deltas,
                reads=reads,
                release=release,
                seed=seed,
                max_delay_s=0.003,
            )
        )
        stop = events[-1]
        assert isinstance(stop, Stopped)
        assert stop.verdict.label is Label.FAIL
        assert WRONG[kind][1] not in released(events)
        assert released(events) == (FIRST if release is Release.VERIFIED else "")
        assert stop.released == len(released(events))

    def test_a_number_split_as_1_then_2_000_is_judged_whole(self, guard: Guard) -> None:
        answer = FIRST + "The Premium plan costs $12,000 a month."
        pieces = [FIRST + "The Premium plan costs $1", "2,000", " a month."]
        deltas = [len(pieces[0]), len(pieces[0]) + len(pieces[1])]
        engine, events = asyncio.run(
            stream(guard, answer, wire=OpenAIWire("m"), deltas=deltas, reads=[])
        )
        assert isinstance(events[-1], Finished)
        assert released(events) == answer
        assert all(not out.endswith("$1") for out, _ in engine.recorder.back)


class TestPassingAnswers:
    @given(
        wire=st.sampled_from(WIRES),
        deltas=st.lists(st.integers(0, 400), max_size=40),
        reads=st.lists(st.integers(0, 5000), max_size=80),
        release=st.sampled_from(list(Release)),
        seed=st.integers(0, 2**16),
    )
    @settings(
        max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    def test_a_passing_answer_is_released_whole_and_byte_identical(
        self,
        guard: Guard,
        wire: type[OpenAIWire] | type[AnthropicWire],
        deltas: list[int],
        reads: list[int],
        release: Release,
        seed: int,
    ) -> None:
        _engine, events = asyncio.run(
            stream(
                guard,
                PASSING,
                wire=wire("m"),
                deltas=deltas,
                reads=reads,
                release=release,
                seed=seed,
                max_delay_s=0.003,
            )
        )
        assert isinstance(events[-1], Finished)
        assert released(events).encode() == PASSING.encode()

    @pytest.mark.parametrize("release", [Release.VERIFIED, Release.FINAL])
    def test_whitespace_after_the_last_sentence_is_released_too(
        self, guard: Guard, release: Release
    ) -> None:
        answer = PASSING + "\n\n"
        _, events = asyncio.run(
            stream(
                guard,
                answer,
                wire=OpenAIWire("m"),
                deltas=[30, len(PASSING) + 1],
                reads=[],
                release=release,
            )
        )
        assert isinstance(events[-1], Finished)
        assert released(events) == answer

    def test_the_final_verdict_is_the_judgement_of_the_whole_answer(self, guard: Guard) -> None:
        engine, events = asyncio.run(
            stream(guard, PASSING, wire=OpenAIWire("m"), deltas=[5, 40, 90], reads=[])
        )
        last = events[-1]
        assert isinstance(last, Finished)
        assert last.verdict is not None
        assert last.verdict.label is Label.PASS
        assert max(len(out) for out, _ in engine.recorder.back) == len(PASSING)


class TestImmediate:
    def test_immediate_releases_a_failing_answer_whole_and_judges_after(self, guard: Guard) -> None:
        async def run() -> tuple[list[StreamEvent], Verdict | None]:
            recorder = Recorder(guard, random.Random(0))
            engine = HoldAndRelease(
                base_request(),
                recorder,
                lambda v: blocks(v, Undecided.BLOCK),
                release=Release.IMMEDIATE,
            )
            for token in cut(failing("date"), [7, 30, 50]):
                engine.add(token)
            engine.finish()
            events = [e async for e in engine.events()]
            return events, await engine.settled()

        events, verdict = asyncio.run(run())
        assert released(events) == failing("date")
        assert isinstance(events[-1], Finished)
        assert events[-1].verdict is None
        assert verdict is not None
        assert verdict.label is Label.FAIL


class TestSpans:
    @pytest.mark.parametrize(
        ("text", "spans"),
        [
            ("It costs $12,000. Then more. x", ["It costs $12,000. ", "Then more. "]),
            ("Dr. Smith e.g. says so. Ok. x", ["Dr. Smith e.g. says so. ", "Ok. "]),
            ("Pi is 3.14 roughly! Yes? No", ["Pi is 3.14 roughly! ", "Yes? "]),
            ("A list:\n- one\n- two", ["A list:\n", "- one\n"]),
            ("He said “stop.” Then left. x", ["He said “stop.” ", "Then left. "]),
            ("It costs $1", []),
        ],
    )
    def test_spans_end_at_sentence_ends_followed_by_whitespace(
        self, text: str, spans: list[str]
    ) -> None:
        splitter = SpanSplitter()
        found = [s for ch in text for s in splitter.feed(ch)]
        assert found == spans
        assert "".join(found) + splitter.tail == text

    @given(st.text(max_size=400), st.lists(st.integers(0, 400), max_size=20))
    def test_spans_and_tail_are_always_the_text_fed(self, text: str, points: list[int]) -> None:
        splitter = SpanSplitter(max_chars=60)
        spans = [s for piece in cut(text, points) for s in splitter.feed(piece)]
        assert "".join(spans) + splitter.tail == text
        assert all(len(s) <= 60 for s in spans)

    def test_a_run_without_an_end_is_cut_at_whitespace_within_the_bound(self) -> None:
        splitter = SpanSplitter(max_chars=50)
        spans = splitter.feed("word " * 30)
        assert spans
        assert all(len(s) <= 50 and s.endswith(" ") for s in spans)


def test_an_answer_past_its_bound_is_aborted(guard: Guard) -> None:
    async def run() -> list[StreamEvent]:
        engine = HoldAndRelease(
            base_request(), guard.judge, lambda v: blocks(v, Undecided.BLOCK), max_answer_chars=1000
        )
        engine.add("x" * 600)
        engine.add("y" * 600)
        events = [e async for e in engine.events()]
        await engine.aclose()
        return events

    events = asyncio.run(run())
    assert isinstance(events[-1], Aborted)
    assert events[-1].reason == "answer_too_long"


def test_a_reader_that_raises_ends_the_answer_at_once(guard: Guard) -> None:
    """It left the stream waiting for the upstream's timeout: a bug reading the upstream
    (here the wire's parser raising) ends the answer as ``proxy_error``, nothing more released."""
    from consumers.serve.proxy.api import PROXY_ERROR, _pump

    class Reply:
        async def aiter_bytes(self) -> Any:
            yield b'data: {"choices": [{"delta": {"content": "Returns are accepted"}}]}\n\n'

    class Broken(OpenAIWire):
        def read(self, event: Any) -> Any:
            raise KeyError("a bug")

    async def run() -> list[StreamEvent]:
        engine = HoldAndRelease(base_request(), guard.judge, lambda v: blocks(v, Undecided.BLOCK))
        await asyncio.wait_for(_pump(Reply(), Broken("m"), engine), 5)  # type: ignore[arg-type]
        events = [e async for e in engine.events()]
        await engine.aclose()
        return events

    events = asyncio.run(run())
    assert isinstance(events[-1], Aborted)
    assert events[-1].reason == PROXY_ERROR
    assert events[-1].released == 0
