"""Replay: judge a file (or stream) of JSONL requests without Kafka.

Each input line is one request object. Verdicts are written as JSONL in input order, each with
the ``line`` it came from. A line that is not JSON, not an object, or not a valid request is a
*bad line*: reported with its line number (``on_bad_line``, and in the summary) and skipped; the
run goes on. At most ``concurrency`` requests are judged at once, and at most
``window_factor * concurrency`` lines are held between reading and writing, so memory stays
bounded however slow one request is.

With ``label_field`` (a column saying whether the row is hallucinated; ``invert_label`` when it
says grounded instead) the summary holds the confusion matrix, balanced accuracy, precision and
recall, the positive class being "hallucinated".

Over 350 lines on purpose: the bounded run (reader, workers, in-order writer) and the
summary it fills are one concept read together; the formatting at the end is what the
``replay`` command prints of that summary.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from guard import defaults, strictjson
from guard.errors import GuardError, InvalidRequest
from guard.models import JudgeRequest, Label, Verdict

DEFAULT_CONCURRENCY = defaults.DEFAULT_REPLAY_CONCURRENCY
WINDOW_FACTOR = 4
_TRUE_WORDS = frozenset(
    {
        "true",
        "1",
        "yes",
        "y",
        "hallucinated",
        "hallucination",
        "fail",
        "failed",
        "unsupported",
        "ungrounded",
        "not_grounded",
    }
)
_FALSE_WORDS = frozenset(
    {"false", "0", "no", "n", "grounded", "pass", "passed", "faithful", "supported", "ok"}
)


class ReplayGuard(Protocol):
    """What replay needs of :class:`guard.engine.Guard`."""

    intake_stop_reason: str | None

    def parse(self, payload: bytes | str | Mapping[str, Any]) -> JudgeRequest: ...

    async def judge(self, request: JudgeRequest) -> Verdict: ...


@dataclass(frozen=True)
class BadLine:
    """An input line that could not be judged, and why."""

    line: int
    kind: str  # "invalid_json", "invalid_request", or a GuardError kind
    message: str


@dataclass(frozen=True)
class ReplayProgress:
    """A snapshot of a running replay."""

    read: int
    done: int
    passed: int
    failed: int
    errors: int
    skipped: int
    bad_lines: int
    elapsed_s: float
    total: int | None = None

    @property
    def rate(self) -> float:
        """Lines finished per second."""
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left, when the total is known and a rate has been measured."""
        if self.total is None or self.rate <= 0:
            return None
        return max(0, self.total - self.done) / self.rate


@dataclass(frozen=True)
class Confusion:
    """Confusion matrix of decided, labelled rows; positive = hallucinated."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    undecided: int = 0  # labelled rows whose verdict was error or skipped
    unlabelled: int = 0  # judged rows without a usable label

    @property
    def positives(self) -> int:
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        return self.tn + self.fp

    @property
    def precision(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        """True-positive rate: hallucinated rows caught."""
        return _ratio(self.tp, self.positives)

    @property
    def tnr(self) -> float | None:
        """True-negative rate: grounded rows passed."""
        return _ratio(self.tn, self.negatives)

    @property
    def balanced_accuracy(self) -> float | None:
        if self.recall is None or self.tnr is None:
            return None
        return (self.recall + self.tnr) / 2

    @property
    def accuracy(self) -> float | None:
        return _ratio(self.tp + self.tn, self.positives + self.negatives)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass
class ReplaySummary:
    lines: int = 0  # non-blank lines read
    judged: int = 0
    by_label: dict[str, int] = field(default_factory=dict)
    by_tier: dict[str, int] = field(default_factory=dict)
    bad_lines: list[BadLine] = field(default_factory=list)
    mean_latency_ms: float = 0.0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    label_field: str | None = None
    confusion: Confusion | None = None
    stopped: str | None = None  # why reading stopped early (quota exhausted, key rejected)


def parse_label(value: object, *, invert: bool = False) -> bool | None:
    """Whether a label value says "hallucinated" (None: missing or not understood)."""
    result: bool | None = None
    if isinstance(value, bool):
        result = value
    elif isinstance(value, int | float) and value in (0, 1):
        result = bool(value)
    elif isinstance(value, str):
        word = value.strip().lower()
        result = True if word in _TRUE_WORDS else False if word in _FALSE_WORDS else None
    if result is None:
        return None
    return not result if invert else result


async def _numbered(lines: Iterable[str] | AsyncIterable[str]) -> AsyncIterator[tuple[int, str]]:
    if isinstance(lines, AsyncIterable):
        number = 0
        async for line in lines:
            number += 1
            yield number, line
    else:
        for number, line in enumerate(lines, start=1):
            yield number, line


@dataclass
class _Result:
    line: int
    verdict: Verdict | None = None
    bad: BadLine | None = None
    label: bool | None = None


class _Run:
    """The state of one replay: counters, the in-order writer, the bounded window."""

    def __init__(
        self,
        guard: ReplayGuard,
        out: TextIO,
        *,
        concurrency: int,
        label_field: str | None,
        invert_label: bool,
        total: int | None,
        on_progress: Callable[[ReplayProgress], None] | None,
        on_bad_line: Callable[[BadLine], None] | None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.guard, self.out, self.concurrency = guard, out, concurrency
        self.label_field, self.invert_label, self.total = label_field, invert_label, total
        self.on_progress, self.on_bad_line = on_progress, on_bad_line
        self.window = asyncio.Semaphore(concurrency * WINDOW_FACTOR)
        self.queue: asyncio.Queue[tuple[int, int, str] | None] = asyncio.Queue(concurrency)
        self.finished: dict[int, _Result | None] = {}
        self.next_seq = 0
        self.read = 0
        self.labels: Counter[str] = Counter()
        self.tiers: Counter[str] = Counter()
        self.bad: list[BadLine] = []
        self.latencies: list[float] = []
        self.cost = 0.0
        self.matrix: Counter[str] = Counter()
        self.started = time.monotonic()

    async def feed(self, lines: Iterable[str] | AsyncIterable[str]) -> None:
        seq = 0
        async for number, line in _numbered(lines):
            await self.window.acquire()
            if self.guard.intake_stop_reason is not None:
                self.window.release()
                break
            if not line.strip():
                self.complete(seq, None)
            else:
                self.read += 1
                await self.queue.put((seq, number, line))
            seq += 1
        for _ in range(self.concurrency):
            await self.queue.put(None)

    async def work(self) -> None:
        while (item := await self.queue.get()) is not None:
            seq, number, line = item
            self.complete(seq, await self.judge_line(number, line))

    async def judge_line(self, number: int, line: str) -> _Result:
        try:  # the service's reading: depth-limited, no NaN, no key named twice
            obj = strictjson.loads(line)
        except InvalidRequest as exc:
            return _Result(number, bad=BadLine(number, "invalid_json", str(exc)))
        try:
            request = self.guard.parse(obj if isinstance(obj, Mapping) else line)
            verdict = await self.guard.judge(request)
        except GuardError as exc:
            return _Result(number, bad=BadLine(number, exc.kind, str(exc)))
        label = None
        if self.label_field is not None and isinstance(obj, Mapping):
            label = parse_label(obj.get(self.label_field), invert=self.invert_label)
        return _Result(number, verdict=verdict, label=label)

    def complete(self, seq: int, result: _Result | None) -> None:
        self.finished[seq] = result
        while self.next_seq in self.finished:
            done = self.finished.pop(self.next_seq)
            self.next_seq += 1
            self.window.release()
            if done is not None:
                self.record(done)

    def record(self, result: _Result) -> None:
        if result.bad is not None:
            self.bad.append(result.bad)
            if self.on_bad_line is not None:
                self.on_bad_line(result.bad)
        elif result.verdict is not None:
            self.write(result.line, result.verdict)
            self.count(result.verdict, result.label)
        if self.on_progress is not None:
            self.on_progress(self.progress())

    def write(self, line: int, verdict: Verdict) -> None:
        record = {"line": line, **verdict.model_dump(mode="json")}
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def count(self, verdict: Verdict, label: bool | None) -> None:
        self.labels[verdict.label.value] += 1
        self.tiers[verdict.judge.tier] += 1
        self.latencies.append(verdict.latency_ms)
        self.cost += verdict.cost_usd
        if self.label_field is None:
            return
        if label is None:
            self.matrix["unlabelled"] += 1
        elif verdict.hallucinated is None:
            self.matrix["undecided"] += 1
        else:
            cell = ("t" if verdict.hallucinated == label else "f") + (
                "p" if verdict.hallucinated else "n"
            )
            self.matrix[cell] += 1

    def progress(self) -> ReplayProgress:
        return ReplayProgress(
            read=self.read,
            done=sum(self.labels.values()) + len(self.bad),
            passed=self.labels[Label.PASS.value],
            failed=self.labels[Label.FAIL.value],
            errors=self.labels[Label.ERROR.value],
            skipped=self.labels[Label.SKIPPED.value],
            bad_lines=len(self.bad),
            elapsed_s=time.monotonic() - self.started,
            total=self.total,
        )

    def summary(self) -> ReplaySummary:
        confusion = None
        if self.label_field is not None:
            confusion = Confusion(
                **{k: self.matrix[k] for k in ("tp", "fp", "tn", "fn", "undecided", "unlabelled")}
            )
        judged = sum(self.labels.values())
        return ReplaySummary(
            lines=self.read,
            judged=judged,
            by_label=dict(self.labels),
            by_tier=dict(self.tiers),
            bad_lines=sorted(self.bad, key=lambda b: b.line),
            mean_latency_ms=sum(self.latencies) / judged if judged else 0.0,
            cost_usd=self.cost,
            elapsed_s=time.monotonic() - self.started,
            label_field=self.label_field,
            confusion=confusion,
            stopped=self.guard.intake_stop_reason,
        )


async def replay(
    guard: ReplayGuard,
    lines: Iterable[str] | AsyncIterable[str],
    out: TextIO,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    label_field: str | None = None,
    invert_label: bool = False,
    total: int | None = None,
    on_progress: Callable[[ReplayProgress], None] | None = None,
    on_bad_line: Callable[[BadLine], None] | None = None,
) -> ReplaySummary:
    """Judge every JSONL request in ``lines``, write verdicts to ``out``, return the summary.

    ``total`` (the number of lines, when known) lets progress report an ETA. Bad lines never
    stop the run; errors of the judge become ``error`` verdicts (the guard never raises them).
    An error that stops intake (quota exhausted, key rejected) stops reading: the lines in
    flight finish, the rest are not read, and ``summary.stopped`` says why.
    """
    run = _Run(
        guard,
        out,
        concurrency=concurrency,
        label_field=label_field,
        invert_label=invert_label,
        total=total,
        on_progress=on_progress,
        on_bad_line=on_bad_line,
    )
    async with asyncio.TaskGroup() as group:
        group.create_task(run.feed(lines))
        for _ in range(concurrency):
            group.create_task(run.work())
    return run.summary()


def format_progress(progress: ReplayProgress) -> str:
    """One status line: count, rate, pass/fail/error so far, ETA."""
    count = f"{progress.done}/{progress.total}" if progress.total else str(progress.done)
    eta = progress.eta_s
    parts = [
        f"{count} lines",
        f"{progress.rate:.1f}/s",
        f"pass {progress.passed}",
        f"fail {progress.failed}",
        f"error {progress.errors}",
    ]
    if progress.skipped:
        parts.append(f"skipped {progress.skipped}")
    if progress.bad_lines:
        parts.append(f"bad {progress.bad_lines}")
    if eta is not None:
        parts.append(f"ETA {eta:.0f}s")
    return "  ".join(parts)


def format_summary(summary: ReplaySummary) -> str:
    """The end-of-run table, in plain text."""
    rate = summary.judged / summary.elapsed_s if summary.elapsed_s > 0 else 0.0
    rows = [("lines read", str(summary.lines)), ("judged", str(summary.judged))]
    rows += [(f"  {label.value}", str(summary.by_label.get(label.value, 0))) for label in Label]
    rows += [
        ("bad lines", str(len(summary.bad_lines))),
        ("decided by", ", ".join(f"{k} {v}" for k, v in sorted(summary.by_tier.items())) or "-"),
        ("mean judge latency", f"{summary.mean_latency_ms:.1f} ms"),
        ("cost", f"${summary.cost_usd:.6f}"),
        ("elapsed", f"{summary.elapsed_s:.2f} s ({rate:.1f} lines/s)"),
    ]
    lines = ["replay summary", *_table(rows)]
    if summary.stopped:
        lines.append(f"  STOPPED EARLY: {summary.stopped} (the remaining lines were not read)")
    if summary.confusion is not None:
        lines += _confusion_lines(summary.confusion, summary.label_field or "")
    if summary.bad_lines:
        lines.append("bad lines (skipped):")
        lines += [f"  line {b.line}: {b.kind}: {b.message}" for b in summary.bad_lines]
    return "\n".join(lines)


def _table(rows: list[tuple[str, str]]) -> list[str]:
    width = max(len(name) for name, _ in rows)
    return [f"  {name.ljust(width)}  {value}" for name, value in rows]


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _confusion_lines(c: Confusion, label_field: str) -> list[str]:
    return [
        f"against labels in '{label_field}' (positive = hallucinated)",
        f"  {'':22}{'judged fail':>13}{'judged pass':>13}",
        f"  {'labelled hallucinated':22}{c.tp:>13}{c.fn:>13}",
        f"  {'labelled grounded':22}{c.fp:>13}{c.tn:>13}",
        *_table(
            [
                ("balanced accuracy", _fmt(c.balanced_accuracy)),
                ("precision", _fmt(c.precision)),
                ("recall (TPR)", _fmt(c.recall)),
                ("TNR", _fmt(c.tnr)),
                ("accuracy", _fmt(c.accuracy)),
                ("undecided (error/skipped)", str(c.undecided)),
                ("unlabelled", str(c.unlabelled)),
            ]
        ),
    ]
