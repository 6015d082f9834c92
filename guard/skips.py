"""Why a verdict is ``skipped``: a typed reason, written in the verdict as text.

A judge layer that decides not to judge raises :class:`guard.errors.JudgementSkipped` with a
:class:`SkipReason`. The verdict's ``reason`` is its text, unchanged on the wire:

* ``not_sampled``: sampling left the message out (``sample_rate``); never quarantined;
* ``budget_exhausted:<window>``: a spent cost budget under the ``skip`` policy (or a pause that
  reached ``max_pause_s``); routed per ``failure_policy``, and ``429`` from ``serve``.

:func:`skip_reason` reads the reason back from any verdict (judged here, replayed, or answered
over request-reply), so the runtime and ``serve`` decide on the type, never on string prefixes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from guard.models import Label, Verdict

__all__ = ["SkipCause", "SkipReason", "skip_reason"]


class SkipCause(StrEnum):
    """What made a layer skip the judgement (the reason's text up to ``:``)."""

    NOT_SAMPLED = "not_sampled"
    BUDGET_EXHAUSTED = "budget_exhausted"


@dataclass(frozen=True)
class SkipReason:
    """A skip's cause and, for a spent budget, the window that was spent."""

    cause: SkipCause
    window: str | None = None  # minute, hour, day: BUDGET_EXHAUSTED only

    @classmethod
    def not_sampled(cls) -> SkipReason:
        return cls(SkipCause.NOT_SAMPLED)

    @classmethod
    def budget_exhausted(cls, window: str) -> SkipReason:
        return cls(SkipCause.BUDGET_EXHAUSTED, window)

    @classmethod
    def parse(cls, text: str) -> SkipReason | None:
        """The reason ``text`` writes, or None for a text no layer writes."""
        cause, _, window = text.partition(":")
        try:
            return cls(SkipCause(cause), window or None)
        except ValueError:
            return None

    @property
    def sampled_out(self) -> bool:
        """Left out on purpose by sampling: judged by nobody, held back by nobody."""
        return self.cause is SkipCause.NOT_SAMPLED

    def __str__(self) -> str:
        return self.cause.value if self.window is None else f"{self.cause.value}:{self.window}"


def skip_reason(verdict: Verdict) -> SkipReason | None:
    """The reason of a ``skipped`` verdict; None for any other verdict."""
    if verdict.label is not Label.SKIPPED or verdict.reason is None:
        return None
    return SkipReason.parse(verdict.reason)
