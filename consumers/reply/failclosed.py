"""The ``error`` verdict a requester gets instead of a judgement: from the client when no
verdict arrives (:func:`consumers.reply.client.unanswered`), or from ``run`` when the request
was dead-lettered (:meth:`consumers.runtime.replies.Replies.error_reply`). Its ``reason`` and
``error.kind`` say why; code that sends only on ``label == "pass"`` blocks the answer.

Both build it with the core's one factory (:func:`guard.verdicts.error_verdict`). ``run`` names
its configured judge (:func:`guard.verdicts.unjudged`: the real prompt version) and its judge
settings' threshold, mode and grounding source; the client, which has no judge configured,
names itself (:func:`guard.verdicts.no_judge`) and the defaults."""

from __future__ import annotations

from guard import defaults
from guard.models import ContextField, ErrorInfo, JudgeInfo, ScoringMode, Verdict
from guard.verdicts import error_verdict as make_error_verdict
from guard.verdicts import nothing_judged


def error_verdict(
    request_id: str,
    kind: str,
    message: str,
    *,
    judge: JudgeInfo,
    retriable: bool,
    output_chars: int = 0,
    source: ContextField = ContextField.CONTEXT,
    threshold: float = defaults.DEFAULT_THRESHOLD,
    mode: ScoringMode = ScoringMode.SCALE5,
) -> Verdict:
    """An ``error`` verdict for a request that was not judged; ``judge`` names who says so."""
    return make_error_verdict(
        request_id,
        ErrorInfo(kind=kind, message=message, retriable=retriable),
        judge=judge,
        explanation=f"No verdict: {message}; failing closed (do not send the answer).",
        threshold=threshold,
        mode=mode,
        source=source,
        truncation=nothing_judged(output_chars),
    )
