"""Which span verdict stops an answer that is released as it is judged: one rule for
``serve``'s streaming proxy (:mod:`consumers.serve.proxy`) and for streamed answers over Kafka
(:mod:`consumers.runtime.streams`), each with its own ``undecided`` setting."""

from __future__ import annotations

from consumers.settings import Undecided
from guard.models import Label, Verdict
from guard.skips import SkipCause, skip_reason

EMPTY_OUTPUT = "empty_output"


def blocks(verdict: Verdict, undecided: Undecided) -> bool:
    """Whether a span's verdict stops the answer: a fail always; a verdict without a decision
    (error, a spent budget) unless ``undecided: release``; never a sampled-out span or text
    with nothing to judge (no letter or digit)."""
    if verdict.label is Label.FAIL:
        return True
    if verdict.label is Label.PASS or verdict.reason == EMPTY_OUTPUT:
        return False
    skipped = skip_reason(verdict)
    if skipped is not None and skipped.cause is SkipCause.NOT_SAMPLED:
        return False
    return undecided is Undecided.BLOCK
