"""The ``error`` verdicts of every path come from one factory (:mod:`guard.verdicts`): the
engine's (a judge that cannot decide), ``serve``'s (a missed deadline) and ``run``'s (the reply
to a dead-lettered request) agree on the judge they name, its prompt version and their shape;
only the client, which has no judge configured, names no prompt."""

from __future__ import annotations

import logging
import time

from consumers.records import SourceCoordinates, VerdictRecord
from consumers.reply.client import unanswered
from consumers.reply.headers import request_headers
from consumers.runtime.deadletters import build
from consumers.runtime.envelope import Origin
from consumers.runtime.fitting import OutputLimits
from consumers.runtime.message import Pipeline
from consumers.runtime.replies import Replies
from consumers.runtime.stats import ServiceStats
from consumers.serve.deadline import Deadline, DeadlineJudge
from consumers.settings import DeadlinePolicy, ReplySettings, ServiceSettings, TopicSettings
from guard.defaults import PROMPT_VERSION
from guard.engine import Guard
from guard.errors import JudgeTimeout
from guard.models import ContextField, JudgeInfo, JudgeRequest, Label, ScoringMode, Verdict
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from guard.verdicts import NO_PROMPT

# a judge whose provider and model differ from the settings' own: the verdicts must name the
# judge that was configured, as the engine does, not the settings' defaults
SETTINGS = JudgeSettings(threshold=0.6, mode=ScoringMode.BINARY, context_field=ContextField.INPUT)
EXPECTED = JudgeInfo(
    provider="fake", model="slow-judge", prompt_version=PROMPT_VERSION, tier="none"
)
REQUEST = JudgeRequest(id="r-1", output="The fee is $59.", input="The fee is $49.")


def guard(*script: JudgeTimeout, latency_s: float = 0.0) -> Guard:
    judge = FakeJudge(list(script) or None, latency_s=latency_s, model="slow-judge")
    return Guard(judge, SETTINGS)


async def engine_error() -> Verdict:
    return await guard(JudgeTimeout("timed out after 30s")).judge(REQUEST)


async def deadline_error() -> Verdict:
    """A judge that would take 30 s, cancelled at once by a deadline of 0 ms."""
    judge = DeadlineJudge(guard(latency_s=30.0), SETTINGS, DeadlinePolicy.ERROR)
    return await judge.judge(REQUEST, Deadline(ms=0, started=time.perf_counter()))


def reply_error() -> Verdict:
    s = ServiceSettings(
        topics=TopicSettings(requests="in", verdicts="v", quarantine="q", dlq="d"),
        reply=ReplySettings(allowed_prefixes=("guard.reply.",)),
        judge=SETTINGS,
    )
    core = guard()
    origin = Origin(
        SourceCoordinates(topic="in", partition=0, offset=7),
        b"k",
        b"{",
        tuple(request_headers("guard.reply.me", b"c")),
    )
    letter = Pipeline(s, core.parse).dead_letter(build(origin, "invalid_request", "bad"), origin)
    replies = Replies(s, ServiceStats(), core.judge_info)
    try:
        reply = replies.error_reply(letter, origin, OutputLimits(1_000_000))
    finally:
        logging.getLogger("aiokafka.cluster").removeFilter(replies._noise)  # what close does
    assert reply is not None
    return VerdictRecord.model_validate_json(reply.value)


def shape(verdict: Verdict) -> tuple[object, ...]:
    """What every error verdict has in common: label, reason is the error's kind, no
    decision, and the settings' threshold, mode and grounding source."""
    assert verdict.error is not None
    return (
        verdict.label,
        verdict.reason == verdict.error.kind,
        verdict.score,
        verdict.hallucinated,
        verdict.threshold,
        verdict.mode,
        verdict.source,
    )


async def test_engine_serve_and_run_error_verdicts_agree_on_judge_and_shape() -> None:
    """The three fail-closed paths name the configured judge with the real prompt version
    (tier ``none``) and share one shape."""
    verdicts = [await engine_error(), await deadline_error(), reply_error()]
    assert [v.judge for v in verdicts] == [EXPECTED] * 3
    assert [v.reason for v in verdicts] == ["judge_timeout", "deadline_exceeded", "invalid_request"]
    expected_shape = (Label.ERROR, True, None, None, 0.6, ScoringMode.BINARY, ContextField.INPUT)
    assert [shape(v) for v in verdicts] == [expected_shape] * 3
    assert [v.truncation.output.kept_chars for v in verdicts[1:]] == [0, 0]


def test_the_client_without_a_judge_names_no_prompt() -> None:
    """The request-reply client has no judge configured: its error verdict names itself and
    no prompt version, with the same label and reason-is-kind shape."""
    verdict = unanswered(REQUEST, "r-1", "reply_timeout", "no reply within 5 s")
    assert verdict.judge == JudgeInfo(
        provider="groundguard-client", model=NO_PROMPT, prompt_version=NO_PROMPT, tier="none"
    )
    assert verdict.error is not None
    assert (verdict.label, verdict.reason, verdict.error.kind) == (
        Label.ERROR,
        "reply_timeout",
        "reply_timeout",
    )
