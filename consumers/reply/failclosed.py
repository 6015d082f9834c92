"""The ``error`` verdict a requester gets instead of a judgement: from the client when no
verdict arrives (:func:`consumers.reply.client.unanswered`), or from ``run`` when the request
was dead-lettered (:meth:`consumers.runtime.replies.Replies.error_reply`). Its ``reason`` and
``error.kind`` say why; code that sends only on ``label == "pass"`` blocks the answer."""

from __future__ import annotations

from guard import defaults
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


def error_verdict(
    request_id: str,
    kind: str,
    message: str,
    *,
    provider: str,
    retriable: bool,
    output_chars: int = 0,
    source: ContextField = ContextField.CONTEXT,
) -> Verdict:
    """An ``error`` verdict for a request that was not judged; ``provider`` names who says so."""
    return Verdict(
        request_id=request_id,
        label=Label.ERROR,
        reason=kind,
        threshold=defaults.DEFAULT_THRESHOLD,
        mode=ScoringMode.SCALE5,
        explanation=f"No verdict: {message}; failing closed (do not send the answer).",
        truncation=Truncation(
            context=Cut(original_chars=0, kept_chars=0, truncated=False),
            output=Cut(original_chars=output_chars, kept_chars=0, truncated=False),
        ),
        source=source,
        judge=JudgeInfo(provider=provider, model="none", prompt_version="none", tier="none"),
        error=ErrorInfo(kind=kind, message=message, retriable=retriable),
    )
