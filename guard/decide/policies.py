"""What the guard decides on top of the judge: verdicts over several windows of one output, and
the injection policy.

* :func:`combine`: the verdicts on consecutive windows of one output become one. The first
  window that does not pass decides (label, score, explanation); when all pass, the lowest score
  does. Claims of every window are kept; usage, cost and latency are summed.
* :func:`apply_policies`: ``injection_policy``: with injection findings, a ``pass`` or
  ``skipped`` verdict becomes ``fail`` (policy ``fail``) or ``error`` (policy ``error``) with
  reason ``injection_detected``; ``flag`` only lists the findings. A verdict changed by the
  policy keeps the judge's score and raw score (what the judge said); its label, reason and
  explanation say what the guard decided and why.

``on_truncated_output`` needs no policy here: an output longer than the judge may read is failed
by :class:`guard.Guard` before any judge call (reason :data:`TRUNCATED_REASON`).
"""

from __future__ import annotations

from collections.abc import Sequence

from guard.models import ErrorInfo, Label, QuoteCheck, Usage, Verdict
from guard.settings import JudgeSettings

TRUNCATED_REASON = "output_truncated"
INJECTION_REASON = "injection_detected"


def _deciding(verdicts: Sequence[Verdict]) -> Verdict:
    failed = [v for v in verdicts if v.label is not Label.PASS]
    if failed:
        return failed[0]
    return min(verdicts, key=lambda v: v.score if v.score is not None else 0.0)


def _usage(verdicts: Sequence[Verdict]) -> Usage:
    return Usage(
        input_tokens=sum(v.usage.input_tokens for v in verdicts),
        output_tokens=sum(v.usage.output_tokens for v in verdicts),
        cached_tokens=sum(v.usage.cached_tokens for v in verdicts),
    )


def _quote_check(verdicts: Sequence[Verdict]) -> QuoteCheck:
    return QuoteCheck(
        quotes=sum(v.quote_check.quotes for v in verdicts),
        fabricated=sum(v.quote_check.fabricated for v in verdicts),
        trusted=all(v.quote_check.trusted for v in verdicts),
    )


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """One verdict for the windows of one output (see the module docstring)."""
    if len(verdicts) == 1:
        return verdicts[0]
    deciding = _deciding(verdicts)
    return deciding.model_copy(
        update={
            "claims": [c for v in verdicts for c in v.claims],
            "unsupported_claims": [c for v in verdicts for c in v.unsupported_claims],
            "quote_check": _quote_check(verdicts),
            "usage": _usage(verdicts),
            "cost_usd": sum(v.cost_usd for v in verdicts),
            "latency_ms": sum(v.latency_ms for v in verdicts),
            "explanation": f"Window {verdicts.index(deciding) + 1} of {len(verdicts)} decided: "
            f"{deciding.explanation}",
        }
    )


def _overruled(verdict: Verdict, label: Label, reason: str, why: str) -> Verdict:
    update: dict[str, object] = {
        "label": label,
        "reason": reason,
        "explanation": f"{why} {verdict.explanation}".strip(),
        "hallucinated": True if label is Label.FAIL else None,
    }
    if label is Label.ERROR:
        update["error"] = ErrorInfo(kind=reason, message=why, retriable=False)
    return verdict.model_copy(update=update)


def _injection_policy(verdict: Verdict, settings: JudgeSettings) -> Verdict:
    policy = settings.injection_policy
    if (
        policy == "flag"
        or not verdict.injections
        or verdict.label not in (Label.PASS, Label.SKIPPED)
    ):
        return verdict
    kinds = ", ".join(sorted({f"{f.kind} in {f.location}" for f in verdict.injections}))
    label = Label.FAIL if policy == "fail" else Label.ERROR
    why = (
        f"{'Failed' if label is Label.FAIL else 'Undecided'}: the judged text holds "
        f"instructions aimed at the judge ({kinds}), so its verdict cannot be trusted "
        f"(injection_policy: {policy})."
    )
    return _overruled(verdict, label, INJECTION_REASON, why)


def apply_policies(verdict: Verdict, settings: JudgeSettings) -> Verdict:
    """``verdict`` after the truncation and injection policies of ``settings``."""
    return _injection_policy(verdict, settings)
