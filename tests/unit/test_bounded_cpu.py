"""Preparing one message costs bounded CPU, and heavy preparation never runs on the event loop.

The per-test timeouts below are not speed measurements (``bench/adversarial.py`` measures): they
are 100x the time the bounded code needs, and far below the minutes the quadratic code took.
"""

from __future__ import annotations

import asyncio
import random
import string
import threading
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard import Guard, JudgeSettings
from guard.case import PreparedCase
from guard.defaults import MAX_EVIDENCE_ITEMS
from guard.models import JudgeRequest
from guard.offline import OfflineJudge
from guard.prepare.excerpt import excerpt
from guard.prepare.sanitize import MAX_COMBINING_RUN, sanitize


def _distinct_words(n: int) -> list[str]:
    rng = random.Random(1)
    return ["".join(rng.choices(string.ascii_lowercase, k=8)) for _ in range(n)]


@pytest.mark.timeout(30)
def test_an_excerpt_for_a_query_of_25k_distinct_words_is_linear() -> None:
    """The evidence excerpt once ran a regex alternation of every output word over the context:
    quadratic, 220 s of CPU for one 500 KB message."""
    words = _distinct_words(50_000)
    query = " ".join(words[:25_000])
    context = ". ".join(" ".join(words[i : i + 12]) for i in range(25_000, 50_000, 12))
    kept = excerpt(context, 4000, query + " " + words[49_990])
    assert len(kept) <= 4000
    assert words[49_990] in kept  # the unit sharing a query word is still preferred


@pytest.mark.timeout(30)
def test_long_runs_of_combining_marks_are_capped_before_normalisation() -> None:
    """NFC sorts a run of marks in quadratic time; the stream-safe limit keeps 30 per run."""
    text = "e" + "\u0327\u0301" * 100_000 + " end"
    clean = sanitize(text)
    assert clean.endswith(" end")
    assert len(clean) <= 1 + MAX_COMBINING_RUN + len(" end")


def test_combining_marks_of_real_text_are_kept() -> None:
    assert sanitize("Ṩ q\u0307\u0323 e\u0301") == "Ṩ q\u0323\u0307 é"


def test_documents_beyond_the_item_cap_are_not_rendered_but_count_as_cut() -> None:
    extra = 500
    docs = ["filler"] * (MAX_EVIDENCE_ITEMS + extra)
    guard = Guard(OfflineJudge(), JudgeSettings(max_context_chars=100_000))
    case = guard.prepare(JudgeRequest(output="Filler.", context=docs))
    assert isinstance(case, PreparedCase)
    assert len(case.passages) == MAX_EVIDENCE_ITEMS
    cut = case.truncation.context
    assert cut.truncated
    assert cut.original_chars >= cut.kept_chars + extra * len("filler")


def test_the_most_recent_turns_are_kept_beyond_the_item_cap() -> None:
    turns = [{"role": "user", "content": f"turn {i}"} for i in range(MAX_EVIDENCE_ITEMS + 10)]
    guard = Guard(
        OfflineJudge(), JudgeSettings(context_field="messages", max_context_chars=100_000)
    )
    case = guard.prepare(JudgeRequest.model_validate({"output": "x", "messages": turns}))
    assert isinstance(case, PreparedCase)
    evidence = case.evidence
    assert f"turn {MAX_EVIDENCE_ITEMS + 9}" in evidence
    assert "turn 0\n" not in evidence
    assert not evidence.startswith("[turn 1]")


class _ThreadRecordingGuard(Guard):
    threads: list[str]

    def prepare_chunks(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.threads.append(threading.current_thread().name)
        return super().prepare_chunks(*args, **kwargs)


@pytest.mark.parametrize(("size", "off_loop"), [(2_000, False), (200_000, True)])
async def test_large_requests_are_prepared_off_the_event_loop(size: int, off_loop: bool) -> None:
    guard = _ThreadRecordingGuard(OfflineJudge(), JudgeSettings())
    guard.threads = []
    sentence = "Returns are accepted within 30 days. "
    request = JudgeRequest(
        output="Returns are accepted within 30 days.", context=sentence * (size // len(sentence))
    )
    verdict = await guard.judge(request)
    await guard.aclose()
    assert verdict.label.value == "pass"
    loop_thread = threading.current_thread().name
    assert (guard.threads[0] != loop_thread) is off_loop


async def test_the_event_loop_keeps_running_while_a_large_request_is_prepared() -> None:
    """A ticker task gets turns while a 400 KB request is prepared (no timing asserted)."""
    guard = Guard(OfflineJudge(), JudgeSettings())
    words = _distinct_words(40_000)
    request = JudgeRequest(output=" ".join(words[:20_000]), context=". ".join(words[20_000:]))
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await guard.judge(request)
    done.set()
    await task
    await guard.aclose()
    assert ticks > 1


def test_a_text_of_many_tiny_sentences_is_ranked_in_groups_within_the_budget() -> None:
    from guard.prepare.excerpt import MAX_UNITS

    text = "Ok. " * (MAX_UNITS * 4) + "Electronics may be returned within 15 days."
    kept = excerpt(text, 200, "electronics returned 15 days")
    assert len(kept) <= 200
    assert kept.endswith("Electronics may be returned within 15 days.")


@given(
    st.text(
        alphabet=st.sampled_from("ae \u0301\u0308\u0327\u0323\u05b0\u2028\u2029\r\n"), max_size=300
    )
)
def test_sanitized_text_has_no_long_mark_runs_and_no_exotic_line_breaks(text: str) -> None:
    clean = sanitize(text)
    assert "\u2028" not in clean
    assert "\u2029" not in clean
    assert "\r" not in clean
    run = 0
    for ch in clean:
        run = run + 1 if unicodedata.combining(ch) else 0
        assert run <= MAX_COMBINING_RUN


class _ThreadRecordingOfflineJudge(OfflineJudge):
    threads: list[str]

    def check(self, case):  # type: ignore[no-untyped-def]
        self.threads.append(threading.current_thread().name)
        return super().check(case)


async def test_the_offline_checks_of_a_typical_request_run_off_the_event_loop() -> None:
    judge = _ThreadRecordingOfflineJudge()
    judge.threads = []
    sentence = "Returns are accepted within 30 days of delivery for a full refund. "
    verdict = await Guard(judge, JudgeSettings()).judge(
        JudgeRequest(output=sentence, context=[sentence * 3] * 5)
    )
    assert verdict.label.value == "pass"
    assert judge.threads[0].startswith("guard-cpu")
