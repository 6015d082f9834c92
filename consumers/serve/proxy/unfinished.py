"""The ``error`` verdict of a proxied answer that ended without a final verdict, so that every
proxied answer (one the upstream began with status 200) is handed to the publisher exactly once.

How the answer ended (``proxy.outcome`` of the record, ``outcome`` of the ``proxy.verdict`` log
line) names its verdict's ``reason`` (and ``error.kind``):

======================================================================  ======================
outcome                                                                 reason
======================================================================  ======================
``client_left`` (the client closed the stream before its end)           ``client_disconnected``
``upstream_dropped``, ``upstream_ended_early``, ``upstream_malformed``,  ``upstream_failed``
``upstream_error``, ``upstream_too_large``
``answer_too_long`` (past ``serve.proxy.max_answer_chars``)             ``answer_too_long``
``judge_raised`` (a judge that raised instead of returning a verdict)   ``judge_error``
``finished`` with no text to judge (a tool call alone, say)             ``empty_output``
``proxy_error`` (reading the upstream raised: a bug, logged)            ``proxy_error``
======================================================================  ======================

Only ``judge_error`` is an *undecided* answer in the sense of ``serve.proxy.undecided``: the
judge was asked and could not decide, so it is quarantined under ``undecided: block`` (the
default) as any undecided span is. The others say nothing of the answer's grounding (the
client left, the upstream broke off, a bound cut it, there was no text), so they are never
quarantined: a client closing streams must not flood the review queue.
"""

from __future__ import annotations

from dataclasses import dataclass

from guard.models import ErrorInfo, JudgeInfo, JudgeRequest, Verdict
from guard.settings import JudgeSettings
from guard.verdicts import error_verdict, nothing_judged

CLIENT_LEFT = "client_left"
CLIENT_DISCONNECTED = "client_disconnected"
UPSTREAM_FAILED = "upstream_failed"
JUDGE_ERROR = "judge_error"
EMPTY_OUTPUT = "empty_output"
UPSTREAM_OUTCOMES = frozenset(
    {
        "upstream_dropped",
        "upstream_ended_early",
        "upstream_malformed",
        "upstream_error",
        "upstream_too_large",
    }
)


@dataclass(frozen=True)
class Unfinished:
    """Why an answer has no judged verdict: its reason, a message, and how it is treated."""

    reason: str
    message: str
    retriable: bool  # the same request, sent again, could get an answer judged
    undecided: bool  # the judge could not decide: it blocks as serve.proxy.undecided says


def unfinished(outcome: str, message: str) -> Unfinished:
    """The reason an answer that ended as ``outcome`` gets (see the module docstring)."""
    if outcome == CLIENT_LEFT:
        return Unfinished(CLIENT_DISCONNECTED, message, retriable=False, undecided=False)
    if outcome in UPSTREAM_OUTCOMES:
        return Unfinished(UPSTREAM_FAILED, message, retriable=True, undecided=False)
    if outcome == "judge_raised":
        return Unfinished(JUDGE_ERROR, message, retriable=False, undecided=True)
    if outcome == "finished":
        return Unfinished(EMPTY_OUTPUT, message, retriable=False, undecided=False)
    return Unfinished(outcome, message, retriable=False, undecided=False)


def unfinished_verdict(
    request: JudgeRequest, why: Unfinished, *, judge: JudgeInfo, settings: JudgeSettings
) -> Verdict:
    """The ``error`` verdict on the answer ``request`` (its ``output`` as it arrived), built
    like ``run``'s (:func:`guard.verdicts.error_verdict`): nothing of the output judged."""
    assert request.id is not None
    return error_verdict(
        request.id,
        ErrorInfo(kind=why.reason, message=why.message, retriable=why.retriable),
        judge=judge,
        explanation=f"No verdict: {why.message}.",
        threshold=settings.threshold,
        mode=settings.mode,
        source=request.context_field or settings.context_field,
        truncation=nothing_judged(len(request.output)),
        metadata=request.metadata,
    )
