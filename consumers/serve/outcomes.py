"""The HTTP status of a verdict from ``/v1/check``.

The body is always the verdict (the schema of ``schemas/verdict.v1.json`` without ``input``);
the status tells a client whether to retry. Decided verdicts, judge errors and the deadline
error are 200: the verdict is the answer (``label`` ``error`` means "do not send unchecked").
Budget refusals are refusals of the work, as in ``run``, and say so in the status:

| verdict | status |
|---|---|
| ``skipped`` with reason ``budget_exhausted:<window>`` (cost budget, policy ``skip``) | 429 |
| ``error`` kind ``rate_limited`` (the rate limit's wait bound passed) | 429 |
| ``error`` kind ``circuit_open`` or ``quota_exhausted`` | 503 |

All three carry ``Retry-After``. A batch answers 200 with each item's verdict.
"""

from __future__ import annotations

from consumers.serve.deadline import DEADLINE_EXCEEDED
from guard.models import Verdict
from guard.skips import SkipCause, skip_reason

REFUSED_429 = frozenset({"rate_limited"})
REFUSED_503 = frozenset({"circuit_open", "quota_exhausted"})


def status_of(verdict: Verdict) -> int:
    """200, or 429/503 for a budget refusal (see the module docstring)."""
    skipped = skip_reason(verdict)
    if skipped is not None and skipped.cause is SkipCause.BUDGET_EXHAUSTED:
        return 429
    kind = verdict.error.kind if verdict.error is not None else None
    if kind in REFUSED_429:
        return 429
    if kind in REFUSED_503:
        return 503
    return 200


def outcome_of(verdict: Verdict) -> str:
    """The ``outcome`` label of the request metrics: the verdict's label, or
    ``deadline_exceeded`` when the deadline policy decided."""
    if DEADLINE_EXCEEDED in (verdict.reason, verdict.judge.fallback_reason):
        return DEADLINE_EXCEEDED
    return verdict.label.value
