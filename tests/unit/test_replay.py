"""Replay over JSONL: ordered verdicts, bad lines skipped with their numbers, labelled metrics."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from typing import ClassVar

import pytest

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.decide.assessment import Scale5Assessment
from guard.errors import QuotaExhausted
from guard.offline import OfflineJudge
from guard.providers.base import JudgeOutcome
from guard.replay import (
    BadLine,
    ReplayProgress,
    format_progress,
    format_summary,
    parse_label,
    replay,
)
from guard.testing import FakeJudge

RETURNS = "Our return policy allows returns within 30 days."
SHIPPING = "Standard shipping takes 3 to 5 business days and is free on orders over $50."


def request(id_: str, output: str, context: str = RETURNS, **extra: object) -> str:
    return json.dumps({"id": id_, "output": output, "context": context, **extra})


def offline_guard() -> Guard:
    settings = JudgeSettings()
    return Guard(OfflineJudge(settings), settings)


def written(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


class SlowerForEarlierLines:
    """A judge that answers the first requests last, to shuffle completion order."""

    provider = "fake"
    model = "slow-first"

    def __init__(self, count: int) -> None:
        self.count = count

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        index = int(case.request_id)
        for _ in range((self.count - index) * 3):
            await asyncio.sleep(0)
        return JudgeOutcome(
            Scale5Assessment(explanation="ok", claims=[], score=5),
            provider=self.provider,
            model=self.model,
        )

    async def aclose(self) -> None:
        return None


class TestGoodFile:
    async def test_every_line_gets_a_verdict_with_its_line_number(self) -> None:
        lines = [
            request("a", "You can return items within 30 days."),
            request("b", "You can return items within 90 days."),
            request("c", "Shipping is free on orders over $50.", SHIPPING),
        ]
        out = io.StringIO()
        summary = await replay(offline_guard(), lines, out)
        verdicts = written(out)
        assert [(v["line"], v["request_id"], v["label"]) for v in verdicts] == [
            (1, "a", "pass"),
            (2, "b", "fail"),
            (3, "c", "pass"),
        ]
        assert summary.lines == summary.judged == 3
        assert summary.by_label == {"pass": 2, "fail": 1}
        assert summary.by_tier == {"offline": 3}
        assert summary.bad_lines == []
        assert summary.confusion is None

    async def test_verdicts_are_written_in_input_order_when_judged_out_of_order(self) -> None:
        count = 12
        guard = Guard(SlowerForEarlierLines(count), JudgeSettings())
        lines = [request(str(i), "You can return items within 30 days.") for i in range(count)]
        out = io.StringIO()
        await replay(guard, lines, out, concurrency=4)
        assert [v["request_id"] for v in written(out)] == [str(i) for i in range(count)]

    async def test_no_more_than_concurrency_requests_are_judged_at_once(self) -> None:
        judge = FakeJudge(latency_s=0.001)
        lines = [request(str(i), "Returns within 30 days.") for i in range(20)]
        await replay(Guard(judge, JudgeSettings()), lines, io.StringIO(), concurrency=3)
        assert judge.calls == 20
        assert 1 <= judge.peak_in_flight <= 3

    async def test_an_async_source_and_progress_with_a_known_total(self) -> None:
        lines = [request(str(i), "You can return items within 30 days.") for i in range(5)]

        async def source() -> AsyncIterator[str]:
            for line in lines:
                yield line

        seen: list[ReplayProgress] = []
        summary = await replay(
            offline_guard(), source(), io.StringIO(), total=5, on_progress=seen.append
        )
        assert [p.done for p in seen] == [1, 2, 3, 4, 5]
        assert seen[-1].passed == summary.by_label["pass"] == 5
        assert seen[-1].eta_s == 0
        assert "5/5 lines" in format_progress(seen[-1])


class TestBadFile:
    LINES: ClassVar[list[str]] = [
        request("ok-1", "You can return items within 30 days."),
        '{"id": "truncated", "output": "x"',  # 2: invalid JSON
        "",  # 3: blank, ignored
        '["an", "array"]',  # 4: not an object
        json.dumps({"id": "no-output", "context": RETURNS}),  # 5: missing output
        json.dumps({"id": "bad-type", "output": 42, "context": RETURNS}),  # 6: wrong type
        request("ok-2", "You can return items within 90 days."),  # 7
    ]

    async def test_bad_lines_are_reported_with_line_numbers_and_the_run_completes(self) -> None:
        reported: list[BadLine] = []
        out = io.StringIO()
        summary = await replay(offline_guard(), self.LINES, out, on_bad_line=reported.append)
        assert [(b.line, b.kind) for b in summary.bad_lines] == [
            (2, "invalid_json"),
            (4, "invalid_request"),
            (5, "invalid_request"),
            (6, "invalid_request"),
        ]
        assert reported == summary.bad_lines
        assert [(v["line"], v["label"]) for v in written(out)] == [(1, "pass"), (7, "fail")]
        assert summary.lines == 6
        assert summary.judged == 2

    async def test_hostile_lines_are_bad_lines_never_a_crash(self) -> None:
        """Found by the red team: a line nested 5,000 deep raised RecursionError out of the
        standard JSON parser and ended the whole replay with a traceback."""
        lines = [
            request("ok-1", "You can return items within 30 days."),
            '{"output": "x", "context": "x", "metadata": ' + "[" * 5000 + "]" * 5000 + "}",
            '{"output": "The moon is cheese.", "output": "x", "context": "x"}',
            '{"output": "x", "context": "x", "metadata": {"n": NaN}}',
        ]
        summary = await replay(offline_guard(), lines, io.StringIO())
        assert [(b.line, b.kind) for b in summary.bad_lines] == [
            (2, "invalid_json"),
            (3, "invalid_json"),
            (4, "invalid_json"),
        ]
        assert summary.judged == 1

    async def test_the_summary_table_lists_bad_lines(self) -> None:
        summary = await replay(offline_guard(), self.LINES, io.StringIO())
        table = format_summary(summary)
        assert "bad lines" in table
        assert "line 2: invalid_json" in table
        assert "line 6: invalid_request" in table


class TestLabelledMetrics:
    ROWS: ClassVar[list[tuple[str, str, bool]]] = [
        ("You can return items within 30 days.", RETURNS, False),
        ("You can return items within 90 days.", RETURNS, True),
        ("Returns are not allowed within 30 days.", RETURNS, True),
        ("Shipping is free on orders over $50.", SHIPPING, False),
        ("Shipping is free on orders over $20.", SHIPPING, True),
        ("Standard shipping takes 3 to 5 business days.", SHIPPING, True),  # mislabelled
        ("Express shipping arrives tomorrow via FedEx.", SHIPPING, False),  # mislabelled
    ]

    def lines(self, field: str = "hallucinated", invert: bool = False) -> list[str]:
        return [
            request(str(i), output, context, **{field: label != invert})
            for i, (output, context, label) in enumerate(self.ROWS)
        ]

    async def test_confusion_matrix_and_rates_match_the_written_verdicts(self) -> None:
        out = io.StringIO()
        summary = await replay(offline_guard(), self.lines(), out, label_field="hallucinated")
        labels = {str(i): label for i, (_, _, label) in enumerate(self.ROWS)}
        pairs = [(v["hallucinated"], labels[str(v["request_id"])]) for v in written(out)]
        tp = sum(p and y for p, y in pairs)
        fp = sum(p and not y for p, y in pairs)
        tn = sum(not p and not y for p, y in pairs)
        fn = sum(not p and y for p, y in pairs)
        c = summary.confusion
        assert c is not None
        assert (c.tp, c.fp, c.tn, c.fn) == (tp, fp, tn, fn)
        assert c.precision == pytest.approx(tp / (tp + fp))
        assert c.recall == pytest.approx(tp / (tp + fn))
        assert c.balanced_accuracy == pytest.approx((tp / (tp + fn) + tn / (tn + fp)) / 2)
        assert fp > 0
        assert fn > 0  # the mislabelled rows make both kinds of error appear
        assert "balanced accuracy" in format_summary(summary)

    async def test_an_inverted_grounded_column_gives_the_same_matrix(self) -> None:
        direct = await replay(
            offline_guard(), self.lines(), io.StringIO(), label_field="hallucinated"
        )
        inverted = await replay(
            offline_guard(),
            self.lines("is_grounded", invert=True),
            io.StringIO(),
            label_field="is_grounded",
            invert_label=True,
        )
        assert direct.confusion == inverted.confusion

    async def test_rows_without_a_usable_label_are_counted_apart(self) -> None:
        lines = [request("1", "You can return items within 30 days.", label="maybe")]
        summary = await replay(offline_guard(), lines, io.StringIO(), label_field="label")
        assert summary.confusion is not None
        assert summary.confusion.unlabelled == 1
        assert summary.confusion.balanced_accuracy is None


@pytest.mark.parametrize(
    ("value", "invert", "expected"),
    [
        (True, False, True),
        (False, False, False),
        (1, False, True),
        ("yes", False, True),
        ("grounded", False, False),
        ("hallucinated", False, True),
        (True, True, False),
        ("pass", True, True),
        (None, False, None),
        ("perhaps", False, None),
        (2, False, None),
    ],
)
def test_label_values_are_read_as_hallucinated_or_not(
    value: object, invert: bool, expected: bool | None
) -> None:
    assert parse_label(value, invert=invert) is expected


async def test_an_error_that_stops_intake_stops_reading_and_says_why() -> None:
    judge = FakeJudge([QuotaExhausted("insufficient_quota", status=429)])
    lines = [request(str(i), "You can return items within 30 days.") for i in range(50)]
    out = io.StringIO()
    summary = await replay(Guard(judge, JudgeSettings()), lines, out, concurrency=2)
    assert summary.stopped == "quota_exhausted"
    assert judge.calls < 50
    assert summary.by_label == {"error": summary.judged}
    assert len(written(out)) == summary.judged
    assert "STOPPED EARLY: quota_exhausted" in format_summary(summary)
