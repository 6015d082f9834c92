"""Verdicts no judge decided: the one factory for ``error`` verdicts and the judge they name.

Three places fail closed with an ``error`` verdict: the engine when the judge cannot decide or
the output is empty (:class:`guard.engine.Guard`), ``serve`` when the judge misses a request's
deadline (:mod:`consumers.serve.deadline`), and request-reply when a request is dead-lettered
or gets no reply (:mod:`consumers.reply.failclosed`). All of them build it with
:func:`error_verdict`, so a subscriber sees one shape: label ``error``, ``reason`` equal to
``error.kind``, no score, nothing of the output judged, and ``judge.tier`` ``none``.

Why ``prompt_version`` is :data:`~guard.defaults.PROMPT_VERSION` in :func:`unjudged`: it names
the judge prompt that was configured for the request, not a prompt that was sent. Wherever a
guard is configured (the engine, ``serve``, ``run``) that prompt is known: it is the one the
request was, or would have been, judged with; a store that groups verdicts or re-runs requests
by prompt version must find the error among the judgements of the same configuration (this is
what the engine always wrote; ``serve`` and ``run`` now say the same). Only a side that has no
judge configured, the request-reply client that timed out (:func:`no_judge`), says
:data:`NO_PROMPT`: it cannot know the server's prompt, and a guess would be false.
"""

from __future__ import annotations

from typing import Any

from guard.defaults import PROMPT_VERSION
from guard.models import (
    ContextField,
    Cut,
    ErrorInfo,
    JudgeInfo,
    Label,
    ScoringMode,
    Truncation,
    Verdict,
)

NO_PROMPT = "none"  # prompt_version and model of a verdict made where no judge is configured


def unjudged(provider: str, model: str) -> JudgeInfo:
    """The judge a verdict names when the configured judge (``provider``, ``model``) made no
    call for it: tier ``none``, the configured prompt's version (see the module docstring)."""
    return JudgeInfo(provider=provider, model=model, prompt_version=PROMPT_VERSION, tier="none")


def no_judge(provider: str) -> JudgeInfo:
    """The judge a verdict names where no judge is configured: ``provider`` says who speaks."""
    return JudgeInfo(provider=provider, model=NO_PROMPT, prompt_version=NO_PROMPT, tier="none")


def nothing_judged(output_chars: int) -> Truncation:
    """The truncation of a request none of whose ``output_chars`` characters was judged."""
    return Truncation(
        context=Cut(original_chars=0, kept_chars=0, truncated=False),
        output=Cut(original_chars=output_chars, kept_chars=0, truncated=False),
    )


def error_verdict(
    request_id: str,
    error: ErrorInfo,
    *,
    judge: JudgeInfo,
    explanation: str,
    threshold: float,
    mode: ScoringMode,
    source: ContextField,
    truncation: Truncation,
    **fields: Any,
) -> Verdict:
    """The ``error`` verdict on ``request_id``: ``reason`` is ``error.kind``; ``fields`` are the
    optional verdict fields a path knows (``metadata``, ``latency_ms``, ``coverage``, ...)."""
    return Verdict(
        request_id=request_id,
        label=Label.ERROR,
        reason=error.kind,
        error=error,
        judge=judge,
        explanation=explanation,
        threshold=threshold,
        mode=mode,
        source=source,
        truncation=truncation,
        **fields,
    )
