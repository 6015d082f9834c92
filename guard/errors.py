"""Exceptions of the judge core.

Hierarchy::

    GuardError                      root of every error raised by ``guard``
    ├── ConfigError                 a setting is invalid; says the field and the fix
    ├── InvalidRequest              a request cannot be judged (bad shape, bad types, too big)
    ├── JudgementSkipped            no judgement by design (sampling, budget ``skip`` policy)
    ├── JournalError                the batch journal cannot be stored or read
    │                               (:mod:`guard.batch.journal`)
    └── JudgeError                  the judge could not give a verdict
        ├── JudgeTimeout            the call exceeded its timeout            (retriable)
        ├── JudgeUnavailable        connection error, 408/409/5xx/529        (retriable)
        │   └── FlexUnavailable     OpenAI's flex tier has no capacity (429 resource_unavailable):
        │                           the flex policy falls back or waits; never retried on top
        ├── RateLimited             429 with a retry hint                    (retriable)
        ├── QuotaExhausted          429 insufficient_quota / spend limit     (stops intake)
        ├── JudgeRejected           400/401/403/404/422: our request or key is wrong (stops intake
        │                           for 401/403)
        ├── MalformedJudgeOutput    the judge answered, but not with the strict schema
        ├── BatchItemFailed         a batch item errored (failure_policy: error)
        ├── BatchItemExpired        a batch ended before its item ran (failure_policy: error)
        └── CircuitOpen             the breaker is open; no call was made

Behaviour lives in class attributes: ``retriable`` (a retry may succeed), ``stops_intake``
(the runtime should stop consuming instead of burning through the backlog) and ``kind``
(the stable name written into ``error`` verdicts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guard.skips import SkipReason


class GuardError(Exception):
    """Root of every error raised by the judge core."""

    kind: str = "guard_error"


class ConfigError(GuardError):
    """A setting is invalid. The message names the field and how to fix it."""

    kind = "config_error"

    def __init__(self, field: str, problem: str, fix: str) -> None:
        self.field = field
        self.problem = problem
        self.fix = fix
        super().__init__(f"{field}: {problem} (fix: {fix})")


class InvalidRequest(GuardError):
    """The request cannot be judged: it does not match the request model.

    ``reason`` is the dead-letter code: ``invalid_utf8``, ``invalid_json``, ``not_an_object`` or
    ``invalid_request``.
    """

    kind = "invalid_request"

    def __init__(self, message: str, *, reason: str = "invalid_request") -> None:
        self.reason = reason
        super().__init__(message)


class JudgementSkipped(GuardError):
    """No judgement was made on purpose; the verdict is ``skipped`` with this reason
    (:class:`guard.skips.SkipReason`, written as its text)."""

    kind = "skipped"

    def __init__(self, reason: SkipReason) -> None:
        self.reason = reason
        super().__init__(str(reason))


class JudgeError(GuardError):
    """The judge could not give a verdict."""

    kind = "judge_error"
    retriable: bool = False
    stops_intake: bool = False

    def __init__(
        self, message: str, *, status: int | None = None, retry_after_s: float | None = None
    ) -> None:
        self.status = status
        self.retry_after_s = retry_after_s
        super().__init__(message)


class JudgeTimeout(JudgeError):
    kind = "judge_timeout"
    retriable = True


class JudgeUnavailable(JudgeError):
    kind = "judge_unavailable"
    retriable = True


class FlexUnavailable(JudgeUnavailable):
    """OpenAI's flex tier has no capacity now (429, not billed). :mod:`guard.providers.flex`
    falls back to the default tier or waits for it; once that wait is over, retrying on top
    (or counting it as an outage, or pausing every caller as for a rate limit) would only
    repeat the wait, so it is not ``retriable``."""

    kind = "flex_unavailable"
    retriable = False


class RateLimited(JudgeError):
    kind = "rate_limited"
    retriable = True


class QuotaExhausted(JudgeError):
    kind = "quota_exhausted"
    stops_intake = True


class JudgeRejected(JudgeError):
    kind = "judge_rejected"

    @property
    def stops_intake(self) -> bool:  # type: ignore[override]
        return self.status in (401, 403)


class MalformedJudgeOutput(JudgeError):
    kind = "malformed_judge_output"


class CircuitOpen(JudgeError):
    kind = "circuit_open"


class BatchItemFailed(JudgeError):
    kind = "batch_item_failed"


class BatchItemExpired(JudgeError):
    kind = "batch_item_expired"
