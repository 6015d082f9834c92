"""Streamed answers over Kafka: deltas in, release events and one final verdict per answer out.

The path of one streamed answer (``docs/architecture.md``): a producer publishes each delta of
an answer as it streams (:class:`consumers.records.DeltaRecord`, keyed by ``response_id``) to
``topics.deltas``; the service consumes that topic beside the requests topic, in the same group,
through the same intake and commit policy. Each delta record is tracked like any message
(:class:`consumers.runtime.offsets.OffsetTracker`), but it is **finished only when its answer
is closed** (its final verdict delivered and its last delta in, or timed out, or evicted): the
lowest offset of any open answer bounds the partition's commit, so a SIGKILL loses nothing;
the deltas of open answers are read again and the answers assembled again.

:class:`Streams` puts each answer's deltas in order (:class:`consumers.runtime.assembly.Assembler`)
and feeds them to a :class:`guard.stream.release.HoldAndRelease`, which cuts spans
(:mod:`guard.stream.spans`) and judges each as it completes with the service's judge (under the
same ``concurrency`` slots as messages). A task per answer (its *driver*) turns what the engine
releases into release events (:class:`consumers.records.ReleaseRecord`, ``topics.releases``,
delivered with :meth:`CommitPolicy.note`: at once at-least-once, in the next transaction
exactly-once) and the engine's end into the final verdict (the verdicts topic, quarantine when
failing: :func:`consumers.runtime.routing.route_verdict`), delivered with the policy at the
answer's last offset taken (exactly-once: in the transaction that commits past its deltas).

A span that blocks decides the answer at once (its verdict is the final one); later deltas are
counted, not kept, until the last one. An answer that never finishes gets an ``error`` verdict,
reason ``stream_timeout``, ``stream.timeout_s`` after its last delta; one evicted by
``stream.max_open`` / ``stream.max_open_bytes`` gets reason ``stream_evicted`` (logged, counted
in ``groundguard_stream_responses_closed_total``). A delta that is not a valid
:class:`DeltaRecord` is dead-lettered alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import structlog
from pydantic import ValidationError

from consumers.blocking import blocks
from consumers.errors import PublishFailed
from consumers.records import DeltaRecord, ReleaseRecord, SourceCoordinates, SpanVerdict
from consumers.reply.failclosed import error_verdict
from consumers.runtime import deadletters, routing
from consumers.runtime.assembly import Assembler, Delta, OpenResponse
from consumers.runtime.codec import Decoded
from consumers.runtime.commits import CommitPolicy
from consumers.runtime.envelope import Origin, OutRecord, origin_of, tracing_headers
from consumers.runtime.fitting import fit_outputs
from consumers.runtime.intake import Partition, Record
from consumers.runtime.kinds import OutputKind
from consumers.runtime.message import Pipeline
from consumers.runtime.stats import ServiceStats
from consumers.settings import ServiceSettings
from guard import defaults
from guard.boundary import GuardCore
from guard.engine import describe_validation_error
from guard.errors import InvalidRequest
from guard.models import JudgeRequest, Verdict
from guard.stream.release import Aborted, Finished, HoldAndRelease, Stopped, Text

log = structlog.get_logger("consumers.streams")
STREAM_FIELDS = frozenset({"response_id", "seq", "delta", "final"})
TIMEOUT = "stream_timeout"
EVICTED = "stream_evicted"
COMPLETE = "complete"
SWEEP_INTERVAL_S = 0.5  # how often open answers are looked at for a timeout
ABORTS = {
    "answer_too_long": "the answer is longer than the span engine holds",
    "judge_raised": "the judge failed",
}


def _span(index: int, start: int, end: int, verdict: Verdict) -> SpanVerdict:
    return SpanVerdict(
        index=index,
        start=start,
        end=end,
        label=verdict.label,
        reason=verdict.reason,
        score=verdict.score,
    )


class _Left(Exception):
    """The answer is left undecided: intake stopped (see :meth:`Streams._stopped_by`)."""


@dataclass(eq=False)
class _Live:
    """One open answer: its assembly, partition, first record, engine and driver."""

    response: OpenResponse
    part: Partition
    origin: Origin  # its first record: the verdict's coordinates, key and tracing headers
    fields: dict[str, Any] = field(default_factory=dict)  # seq 0's request fields
    engine: HoldAndRelease | None = None
    driver: asyncio.Task[None] | None = None
    decided: bool = False  # its final verdict is being (or was) delivered
    delivered: bool = False  # ... and it was
    noted: int = 0  # span verdicts sent in release events so far
    staged_at: int | None = None  # the offset its verdict was delivered at
    closed: bool = False

    @property
    def response_id(self) -> str:
        return self.response.response_id


class Streams:
    """The streamed answers of one replica (see the module docstring). ``pipeline`` and
    ``policy`` are the service's, given at start (:meth:`started`)."""

    def __init__(
        self,
        settings: ServiceSettings,
        guard: GuardCore,
        stats: ServiceStats,
        slots: asyncio.Semaphore,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        s = settings.stream
        self.settings = settings
        self.guard = guard
        self.stats = stats
        self._slots = slots
        self._clock = clock
        self.assembler = Assembler(
            max_open=s.max_open,
            max_open_bytes=s.max_open_bytes,
            timeout_s=s.timeout_s,
            closed_memory=defaults.DEFAULT_STREAM_CLOSED_MEMORY,
        )
        self._live: dict[object, _Live] = {}
        self._swept = clock()
        self.pipeline: Pipeline | None = None
        self.policy: CommitPolicy | None = None

    def started(self, pipeline: Pipeline, policy: CommitPolicy) -> None:
        self.pipeline, self.policy = pipeline, policy

    def streamed(self, record: Record) -> bool:
        return bool(record.topic == self.settings.topics.deltas)

    # ------------------------------------------------------------------ deltas in

    async def take(self, part: Partition, record: Record) -> None:
        """One delta record: assembled into its answer (or dead-lettered, or dropped)."""
        try:
            origin = origin_of(record)
        except Exception as exc:  # the record itself is unusable
            source = SourceCoordinates(
                topic=record.topic, partition=record.partition, offset=record.offset
            )
            await self._letter(part, record.offset, self._pipe.failed(source, "decoding", exc))
            return
        delta = self._read(origin)
        if isinstance(delta, OutRecord):
            await self._letter(part, record.offset, delta)
            return
        taken = self.assembler.take(part.tp, delta, self._clock())
        self.stats.progressed()  # an answer moving on is progress, before any verdict
        if taken.dropped is not None:
            self.stats.stream_dropped[taken.dropped] += 1
        if taken.response is None:  # late: its answer was closed
            part.tracker.finish(record.offset)
            return
        live = self._live.get(taken.response.key)
        if live is None:
            live = self._live[taken.response.key] = _Live(taken.response, part, origin)
        for ready in taken.ready:
            self._feed(live, ready)
        if live.response.complete and live.delivered:
            self._close(live, COMPLETE)
            self._finish(live)
        await self._bound()
        self._gauges()

    def _read(self, origin: Origin) -> Delta | OutRecord:
        """The delta, or its dead letter."""
        size, limit = len(origin.value or b""), self.settings.max_message_bytes
        if size > limit:
            return self._dead(origin, "oversized", f"{size} bytes (max_message_bytes {limit})")
        try:
            raw = orjson.loads(origin.value or b"")
        except orjson.JSONDecodeError as exc:
            return self._dead(origin, "invalid_json", str(exc))
        if not isinstance(raw, dict):
            return self._dead(origin, "not_an_object", "a delta is a JSON object")
        try:
            record = DeltaRecord.model_validate(raw)
        except ValidationError as exc:
            return self._dead(origin, "invalid_request", describe_validation_error(exc))
        fields = {k: v for k, v in raw.items() if k not in STREAM_FIELDS}
        offset = origin.source.offset
        return Delta(
            record.response_id,
            record.seq,
            record.delta,
            record.final,
            offset,
            fields if record.seq == 0 else None,
        )

    def _dead(self, origin: Origin, reason: str, detail: str) -> OutRecord:
        return self._pipe.dead_letter(deadletters.build(origin, reason, detail), origin)

    async def _letter(self, part: Partition, offset: int, letter: OutRecord) -> None:
        origin = SourceCoordinates(topic=part.tp.topic, partition=part.tp.partition, offset=offset)
        delivered = await self._policy.deliver(part, offset, [letter], self._pipe.refused(origin))
        part.tracker.finish(offset)
        self.stats.delivered([(out.kind, out.tag) for out in delivered])

    def _feed(self, live: _Live, delta: Delta) -> None:
        """The next delta in order, to the engine (started at seq 0)."""
        if live.decided:
            return
        if delta.seq == 0:
            live.fields = delta.fields or {}
            if not self._start(live):
                return
        assert live.engine is not None
        live.engine.add(delta.text)
        if delta.final:
            live.engine.finish()

    def _start(self, live: _Live) -> bool:
        """The answer's engine and driver, from seq 0's request fields; an invalid request
        decides the answer at once."""
        s = self.settings.stream
        try:
            base = self.guard.parse({**live.fields, "output": "", "id": live.response_id})
        except InvalidRequest as exc:
            verdict = self._error(live, "invalid_request", str(exc))
            self._drive(live, self._decide(live, verdict))
            return False
        key = live.response_id  # sampling by key samples the answer, not each span

        live.engine = HoldAndRelease(
            base,
            lambda request: self._judge(request, key),
            lambda verdict: blocks(verdict, s.undecided),
            max_in_flight=s.max_spans_in_flight,
            max_span_chars=s.max_span_chars,
        )
        self._drive(live, self._run(live, live.engine))
        return True

    def _stopped_by(self, verdict: Verdict | None) -> bool:
        """Whether ``verdict`` is the judge's error that stopped intake (quota, credentials):
        it says nothing of the answer, which is left undecided (its deltas are read again
        after the partition's rewind, :meth:`rewound`), as a message is."""
        reason = self.guard.intake_stop_reason
        error = verdict.error if verdict is not None else None
        return reason is not None and error is not None and error.kind == reason

    def _drive(self, live: _Live, work: Any) -> None:
        live.driver = asyncio.create_task(work)

    async def _judge(self, request: JudgeRequest, key: str) -> Verdict:
        async with self._slots:
            self.stats.in_flight += 1
            try:
                return await self.guard.judge(request, message_key=key)
            finally:
                self.stats.in_flight -= 1

    # ------------------------------------------------------------------ out

    async def _run(self, live: _Live, engine: HoldAndRelease) -> None:
        """The driver: release events as the engine releases, then the final verdict."""
        try:
            verdict = await self._follow(live, engine)
            await self._decide(live, verdict)
        except PublishFailed:
            return  # the policy stopped the service; the answer is read again after a restart
        except _Left:
            log.info("stream.left", response_id=live.response_id, reason="intake_stopped")
        except Exception as exc:  # a bug here must not leave the answer without a verdict
            log.exception("stream.driver_failed", response_id=live.response_id)
            with contextlib.suppress(Exception):
                await self._decide(live, self._error(live, "internal_error", repr(exc)))
        finally:
            await engine.aclose()

    async def _follow(self, live: _Live, engine: HoldAndRelease) -> Verdict:
        async for event in engine.events():
            if isinstance(event, Stopped | Finished) and self._stopped_by(event.verdict):
                raise _Left  # the judge's account, not the answer: left for after the rewind
            if isinstance(event, Text):
                await self._note(live, engine, stopped=False, final=False)
            elif isinstance(event, Stopped):
                start, end = engine.span_bounds(event.span)
                stopper = _span(event.span, start, end, event.verdict)
                await self._note(live, engine, stopped=True, final=True, stopper=stopper)
                return event.verdict
            elif isinstance(event, Finished):
                await self._note(live, engine, stopped=False, final=True)
                if event.verdict is not None:
                    return event.verdict
                whole = engine.base.model_copy(update={"output": engine.text})
                return await self._judge(whole, live.response_id)
            elif isinstance(event, Aborted):
                await self._note(live, engine, stopped=True, final=True)
                return self._error(live, event.reason, ABORTS.get(event.reason, event.reason))
        raise RuntimeError("the engine ended without a last event")

    async def _note(
        self,
        live: _Live,
        engine: HoldAndRelease,
        *,
        stopped: bool,
        final: bool,
        stopper: SpanVerdict | None = None,
    ) -> None:
        """One release event: how far the answer is released, and the spans applied since the
        last event (and the span that stopped it)."""
        applied = engine.applied
        spans = [
            _span(n, start, end, verdict)
            for n, (start, end, verdict) in enumerate(applied)
            if n >= live.noted
        ]
        live.noted = len(applied)
        spans += [stopper] if stopper is not None else []
        record = ReleaseRecord(
            response_id=live.response_id,
            released_up_to=engine.released,
            spans=spans,
            stopped=stopped,
            final=final,
        )
        headers = [
            ("groundguard-request-id", live.response_id.encode()),
            ("content-type", b"application/json"),
            *tracing_headers(live.origin.headers),
        ]
        tag = "stopped" if stopped else "released"
        out = OutRecord(
            self.settings.topics.releases,
            live.origin.key,
            record.model_dump_json().encode(),
            headers,
            OutputKind.RELEASE,
            tag,
        )
        await self._policy.note(live.part, [out], self._pipe.refused(live.origin))
        self.stats.delivered([(OutputKind.RELEASE, tag)])

    async def _decide(self, live: _Live, verdict: Verdict) -> None:
        """Deliver the answer's one final verdict (at its first offset); close it when its
        last delta is in."""
        if live.decided:
            return
        live.decided = True
        self.assembler.decided(live.response)
        verdict = verdict.model_copy(update={"request_id": live.response_id})
        text = live.engine.text if live.engine is not None else ""
        outputs = self._records(live, verdict, text)
        origin = self._assembled(live, text)
        # staged (exactly-once) at its last record taken so far: the transaction that
        # publishes it commits past every delta of the answer, none is read again
        live.staged_at = max(live.response.offsets)
        delivered = await self._policy.deliver(
            live.part, live.staged_at, outputs, self._pipe.refused(origin)
        )
        live.delivered = True
        self.stats.delivered([(out.kind, out.tag) for out in delivered])
        log.debug(
            "stream.verdict",
            response_id=live.response_id,
            label=verdict.label.value,
            reason=verdict.reason,
            released=live.engine.released if live.engine is not None else 0,
            answer_chars=len(text),
        )
        if live.closed:  # timed out or evicted while it was being delivered
            self._finish(live)
        elif live.response.complete:
            self._close(live, COMPLETE)
            self._finish(live)

    def _records(self, live: _Live, verdict: Verdict, text: str) -> list[OutRecord]:
        origin = self._assembled(live, text)
        request = JudgeRequest(output=text, id=live.response_id)
        routed = routing.route_verdict(
            Decoded(request, origin),
            verdict,
            topics=self.settings.topics,
            policy=self.settings.failure_policy,
            key=origin.key,
        )
        return fit_outputs(routed, self._pipe.limits, self._pipe.refused(origin))

    @staticmethod
    def _assembled(live: _Live, text: str) -> Origin:
        """The answer as one request (the quarantine's payload): seq 0's fields, the id and
        the assembled text, at the coordinates of its first record."""
        value = orjson.dumps({**live.fields, "response_id": live.response_id, "output": text})
        first = live.origin
        return Origin(first.source, first.key, value, first.headers)

    def _error(self, live: _Live, kind: str, message: str) -> Verdict:
        judge = self.settings.judge
        text = live.engine.text if live.engine is not None else ""
        return error_verdict(
            live.response_id,
            kind,
            message,
            judge=self.guard.judge_info,
            retriable=kind == TIMEOUT,
            output_chars=len(text),
            source=judge.context_field,
            threshold=judge.threshold,
            mode=judge.mode,
        )

    # ------------------------------------------------------------------ closing

    def _close(self, live: _Live, why: str) -> None:
        """Forget the answer (its late deltas are dropped); its offsets are finished by
        :meth:`_finish` once its verdict is delivered."""
        if live.closed:
            return
        live.closed = True
        self.assembler.close(live.response)
        self._live.pop(live.response.key, None)
        self.stats.stream_closed[why] += 1

    def _finish(self, live: _Live) -> None:
        """Finish every offset of the answer; exactly-once, its staged verdict moves to the
        last of them (deltas may have come after it was staged), so the transaction that
        publishes it marks every delta of the answer finished, even when the commit metadata
        can list only part of the finished offsets (it lists the lowest)."""
        last, ready = max(live.response.offsets), live.part.ready
        if live.staged_at is not None and live.staged_at != last and live.staged_at in ready:
            ready[last] = ready.pop(live.staged_at)
        for offset in live.response.offsets:
            live.part.tracker.finish(offset)
        self._gauges()

    async def _bound(self) -> None:
        """Evict the oldest answers past ``stream.max_open`` / ``max_open_bytes``."""
        for response in self.assembler.over_bounds():
            live = self._live.get(response.key)
            if live is None:
                continue
            log.warning(
                "stream.evicted",
                response_id=live.response_id,
                open=len(self.assembler.open),
                open_bytes=self.assembler.bytes,
                action="an error verdict, reason stream_evicted",
            )
            self._end(live, EVICTED, "evicted: more answers open than stream.max_open(_bytes)")

    def sweep(self) -> None:
        """Close the answers silent for ``stream.timeout_s`` (called by the service's loop)."""
        now = self._clock()
        if now - self._swept < SWEEP_INTERVAL_S or self.guard.intake_stop_reason is not None:
            return  # while intake is stopped, nothing arrives: silence is not the answer's
        self._swept = now
        for response in self.assembler.expired(now):
            live = self._live.get(response.key)
            if live is not None:
                log.warning(
                    "stream.timed_out", response_id=live.response_id, waiting=response.missing()
                )
                self._end(
                    live,
                    TIMEOUT,
                    f"no delta for {self.assembler.timeout_s:g}s; {response.missing()}",
                )

    def _end(self, live: _Live, why: str, message: str) -> None:
        """Close the answer now, and in a task of its partition deliver its verdict (unless it
        has one) and finish its offsets."""
        self._close(live, why)
        task = asyncio.create_task(self._ended(live, why, message))
        live.part.tasks.add(task)
        task.add_done_callback(live.part.tasks.discard)

    async def _ended(self, live: _Live, why: str, message: str) -> None:
        if live.decided:
            if live.delivered:
                self._finish(live)
            return  # else _decide finishes it once delivered
        if live.driver is not None and live.driver is not asyncio.current_task():
            live.driver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await live.driver
        if live.engine is not None:
            await live.engine.aclose()
        try:
            await self._decide(live, self._error(live, why, message))
        except PublishFailed:
            return

    # ------------------------------------------------------------------ handover

    async def settle(self, parts: list[Partition], timeout_s: float) -> None:
        """Before ``parts`` are handed over or the service stops: answers whose last delta
        is in get ``timeout_s`` to be judged and delivered; the others are dropped undecided
        (their deltas are read again by the next owner)."""
        tps = {part.tp for part in parts}
        lives = [live for live in self._live.values() if live.part.tp in tps]
        judging = {
            live.driver
            for live in lives
            if live.driver is not None and (live.response.complete or live.decided)
        }
        if judging:
            await asyncio.wait(judging, timeout=timeout_s)
        drivers = [live.driver for live in lives if live.driver is not None]
        for driver in drivers:
            driver.cancel()
        for driver in drivers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await driver
        for tp in tps:
            for response in self.assembler.drop(tp):
                self._live.pop(response.key, None)
        self._gauges()

    def rewound(self, part: Partition) -> None:
        """``part`` is read again from its frontier (after an intake stop): its answers are
        dropped undecided, to be assembled again from their deltas."""
        for response in self.assembler.drop(part.tp):
            live = self._live.pop(response.key, None)
            if live is not None and live.driver is not None:
                live.driver.cancel()
        self._gauges()

    def _gauges(self) -> None:
        self.stats.stream_open = len(self.assembler.open)
        self.stats.stream_open_bytes = self.assembler.bytes

    @property
    def _pipe(self) -> Pipeline:
        assert self.pipeline is not None
        return self.pipeline

    @property
    def _policy(self) -> CommitPolicy:
        assert self.policy is not None
        return self.policy
