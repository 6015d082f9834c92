"""A verdict by the deadline, whatever the judge does: the deadline policy of ``serve``.

The judge (budgets, cache, retries and all) gets until the request's deadline. When it has not
answered by then its call is cancelled and ``serve.on_deadline`` decides:

* ``error`` (default, fail closed): an ``error`` verdict, reason and ``error.kind``
  ``deadline_exceeded`` (retriable): the caller must not send the answer unchecked;
* ``offline``: the offline judge's verdict on the same request (a few milliseconds of CPU past
  the deadline), with ``judge.fallback_reason`` ``deadline_exceeded`` and ``judge.tier``
  ``offline``.

Either way the verdict says the deadline passed; a request never hangs past it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

from consumers.settings import DeadlinePolicy
from guard.boundary import GuardCore
from guard.models import ErrorInfo, JudgeRequest, Verdict
from guard.settings import JudgeSettings
from guard.verdicts import error_verdict, nothing_judged

DEADLINE_EXCEEDED = "deadline_exceeded"


@dataclass(frozen=True)
class Deadline:
    """A request's deadline: ``ms`` from its arrival at ``started`` (``time.perf_counter``)."""

    ms: int
    started: float

    def left_s(self) -> float:
        return max(0.0, self.ms / 1000.0 - (time.perf_counter() - self.started))


@dataclass(frozen=True)
class DeadlineJudge:
    """Judges with ``guard`` within a deadline; ``offline`` judges when the policy says so."""

    guard: GuardCore
    settings: JudgeSettings
    policy: DeadlinePolicy
    offline: GuardCore | None = None

    async def judge(self, request: JudgeRequest, deadline: Deadline) -> Verdict:
        """The verdict on ``request`` (its id fixed first, so every path reports the same)."""
        if request.id is None:
            request = request.model_copy(update={"id": uuid.uuid4().hex})
        try:
            async with asyncio.timeout(deadline.left_s()):  # no task of its own, unlike wait_for
                return await self.guard.judge(request)
        except TimeoutError:
            pass
        if self.policy is DeadlinePolicy.OFFLINE and self.offline is not None:
            return self._marked(await self.offline.judge(request))
        return deadline_error(request, self.guard, self.settings, deadline.ms)

    @staticmethod
    def _marked(verdict: Verdict) -> Verdict:
        judge = verdict.judge.model_copy(update={"fallback_reason": DEADLINE_EXCEEDED})
        return verdict.model_copy(update={"judge": judge})


def deadline_error(
    request: JudgeRequest, guard: GuardCore, settings: JudgeSettings, ms: int
) -> Verdict:
    """The fail-closed verdict when ``guard``'s judge missed the deadline of ``ms``: nothing
    was judged (:func:`guard.verdicts.error_verdict`, naming ``guard.judge_info``)."""
    return error_verdict(
        request.id or uuid.uuid4().hex,
        ErrorInfo(kind=DEADLINE_EXCEEDED, message=f"no verdict within {ms} ms", retriable=True),
        judge=guard.judge_info,
        explanation=f"The judge did not answer within the deadline of {ms} ms "
        "(serve.on_deadline: error); failing closed.",
        threshold=settings.threshold,
        mode=settings.mode,
        source=request.context_field or settings.context_field,
        truncation=nothing_judged(len(request.output)),
        latency_ms=float(ms),
        metadata=request.metadata,
    )
