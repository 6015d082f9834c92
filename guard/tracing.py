"""Tracing hooks of the core: a no-op unless the edge installs a :class:`Telemetry`.

The core never imports OpenTelemetry. It reports what it does through the small
:class:`Telemetry` protocol held here (:func:`current`), which is :data:`NOOP` until an edge
calls :func:`install` (``groundguard run`` and ``serve`` do when tracing is switched on:
``consumers/telemetry/``). What the core reports, in the OpenTelemetry GenAI semantic
conventions (development status):

* the guardrail span ``apply_guardrail groundguard`` around :meth:`guard.engine.Guard.judge`
  (``gen_ai.operation.name=apply_guardrail``, ``gen_ai.guardrail.*``), ending with the
  ``gen_ai.evaluation.result`` and ``gen_ai.guardrail.result`` events
  (:func:`evaluation_attributes`, :func:`guardrail_result_attributes`);
* one CLIENT span per judge call (:class:`TracedJudge`: ``{operation} {model}``,
  ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.usage.*``), made around the
  provider judge inside the budget layers, so each retry is its own span and a cache hit none;
* budget waits (rate limit, concurrency, a paused cost budget) as child spans
  ``groundguard.wait {kind}`` made after the fact, only for waits of ``WAIT_SPAN_MIN_NS`` or more
  (:func:`waiting`).

No answer, evidence or question text is reported: the verdict's explanation (which may quote
them) only when the edge says so (``capture_explanation``), then redacted and cut to
``EXPLANATION_MAX_CHARS``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Literal, Protocol

from guard.redact import redact

if TYPE_CHECKING:
    from guard.case import PreparedCase
    from guard.models import Verdict
    from guard.providers.base import Judge, JudgeOutcome, TierKind

AttributeValue = str | bool | int | float
Attributes = Mapping[str, AttributeValue]
SpanKind = Literal["internal", "client"]

GUARDRAIL_COMPONENT = "groundguard"
GUARDRAIL_SPAN = f"apply_guardrail {GUARDRAIL_COMPONENT}"
EVALUATION_EVENT = "gen_ai.evaluation.result"
GUARDRAIL_RESULT_EVENT = "gen_ai.guardrail.result"
EVALUATION_NAME = "groundedness"
EXPLANATION_MAX_CHARS = 256
WAIT_SPAN_MIN_NS = 1_000_000  # shorter waits (an uncontended slot) make no span
# the GenAI operation of a judge call, by tier kind (custom values where none is predefined)
OPERATIONS: dict[str, str] = {
    "llm": "chat",
    "specialist": "chat",
    "detector": "detect_groundedness",
    "offline": "evaluate_rules",
}


class Span(Protocol):
    """A span in progress, as the core sees it."""

    @property
    def recording(self) -> bool:
        """False for a span sampled out: nothing set on it is kept."""

    def set_attributes(self, attributes: Attributes) -> None: ...

    def failed(self, error_type: str) -> None:
        """Mark the span as ended in error (``error.type``; status ERROR)."""


class Telemetry(Protocol):
    """What the core reports through; :data:`NOOP` when tracing is off."""

    @property
    def enabled(self) -> bool: ...

    @property
    def capture_explanation(self) -> bool: ...

    def span(
        self, name: str, attributes: Attributes, *, kind: SpanKind = "internal"
    ) -> AbstractContextManager[Span]:
        """A child span of the current one, current while the block runs."""

    def past_span(self, name: str, attributes: Attributes, start_ns: int, end_ns: int) -> None:
        """A child span of the current one that has already happened (wall-clock ns)."""

    def event(self, name: str, attributes: Attributes) -> None:
        """An event in the current span's context (the edge decides how: a log record)."""


class _NoopSpan:
    recording = False

    def set_attributes(self, attributes: Attributes) -> None:
        pass

    def failed(self, error_type: str) -> None:
        pass

    def __enter__(self) -> _NoopSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class _Noop:
    """The telemetry of a process that traces nothing: every call returns at once."""

    enabled = False
    capture_explanation = False
    _span = _NoopSpan()

    def span(
        self, name: str, attributes: Attributes, *, kind: SpanKind = "internal"
    ) -> AbstractContextManager[Span]:
        return self._span

    def past_span(self, name: str, attributes: Attributes, start_ns: int, end_ns: int) -> None:
        pass

    def event(self, name: str, attributes: Attributes) -> None:
        pass


NOOP: Telemetry = _Noop()
_current: Telemetry = NOOP


def install(telemetry: Telemetry | None) -> None:
    """Report through ``telemetry`` from now on (None: back to :data:`NOOP`). The edge calls
    this once, before building the judge (:class:`TracedJudge` is added only when enabled)."""
    global _current
    _current = telemetry if telemetry is not None else NOOP


def current() -> Telemetry:
    return _current


@contextmanager
def _timed_wait(telemetry: Telemetry, kind: str) -> Iterator[None]:
    start = time.time_ns()
    try:
        yield
    finally:
        end = time.time_ns()
        if end - start >= WAIT_SPAN_MIN_NS:
            telemetry.past_span(
                f"groundguard.wait {kind}", {"groundguard.wait.kind": kind}, start, end
            )


def waiting(kind: str) -> AbstractContextManager[object]:
    """Around a budget wait (``rate_limit``, ``concurrency``, ``cost_budget``): a child span of
    the wait when tracing is on and it lasted ``WAIT_SPAN_MIN_NS`` or more."""
    telemetry = _current
    if not telemetry.enabled:
        return _NoopSpan()
    return _timed_wait(telemetry, kind)


# ------------------------------------------------------------------ what is reported


def guardrail_attributes(policy_version: str) -> dict[str, AttributeValue]:
    return {
        "openinference.span.kind": "GUARDRAIL",
        "gen_ai.operation.name": "apply_guardrail",
        "gen_ai.provider.name": GUARDRAIL_COMPONENT,
        "gen_ai.guardrail.component.name": GUARDRAIL_COMPONENT,
        "gen_ai.guardrail.policy.id": EVALUATION_NAME,
        "gen_ai.guardrail.policy.version": policy_version,
        "gen_ai.guardrail.source": "model_response",
    }


def _verdict_common(verdict: Verdict) -> dict[str, AttributeValue]:
    judge = verdict.judge
    out: dict[str, AttributeValue] = {
        "groundguard.verdict.judge.tier": judge.tier,
        "groundguard.verdict.judge.provider": judge.provider,
        "groundguard.verdict.judge.model": judge.model,
    }
    if judge.tier_name is not None:
        out["groundguard.verdict.judge.tier_name"] = judge.tier_name
    if verdict.reason is not None:
        out["groundguard.verdict.reason"] = verdict.reason[:EXPLANATION_MAX_CHARS]
    if verdict.error is not None:
        out["error.type"] = verdict.error.kind
    return out


def guardrail_result_attributes(verdict: Verdict) -> dict[str, AttributeValue]:
    """The verdict on the guardrail span and its ``gen_ai.guardrail.result`` event: the label
    as groundguard's native result, the reason (a fixed vocabulary) as the result's reason."""
    out = _verdict_common(verdict)
    out["gen_ai.guardrail.result.type"] = "label"
    out["gen_ai.guardrail.result.value"] = verdict.label.value
    if verdict.reason is not None:
        out["gen_ai.guardrail.result.reason"] = verdict.reason[:EXPLANATION_MAX_CHARS]
    return out


def evaluation_attributes(verdict: Verdict, *, explanation: bool) -> dict[str, AttributeValue]:
    """The ``gen_ai.evaluation.result`` event of a verdict: score, label, the deciding tier;
    the explanation only with ``explanation`` (redacted, cut short)."""
    out = _verdict_common(verdict)
    out["gen_ai.evaluation.name"] = EVALUATION_NAME
    out["gen_ai.evaluation.score.label"] = verdict.label.value
    if verdict.score is not None:
        out["gen_ai.evaluation.score.value"] = verdict.score
    if explanation and verdict.explanation:
        out["gen_ai.evaluation.explanation"] = redact(verdict.explanation)[:EXPLANATION_MAX_CHARS]
    out["groundguard.request.id"] = verdict.request_id[:EXPLANATION_MAX_CHARS]
    return out


def call_attributes(provider: str, model: str, tier: TierKind) -> dict[str, AttributeValue]:
    return {
        "gen_ai.operation.name": OPERATIONS.get(tier, "chat"),
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
        "groundguard.judge.tier": tier,
        # OpenInference (Phoenix): a model call is an LLM span, a rules or detector tier an
        # evaluator
        "openinference.span.kind": "LLM" if tier in ("llm", "specialist") else "EVALUATOR",
        "llm.provider": provider,
        "llm.model_name": model,
    }


def outcome_attributes(outcome: JudgeOutcome) -> dict[str, AttributeValue]:
    usage = outcome.usage
    out: dict[str, AttributeValue] = {
        "gen_ai.response.model": outcome.model,
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
        "llm.token_count.prompt": usage.input_tokens,
        "llm.token_count.completion": usage.output_tokens,
        "llm.token_count.total": usage.input_tokens + usage.output_tokens,
        "llm.token_count.prompt_details.cache_read": usage.cached_tokens,
    }
    if usage.service_tier is not None:
        out["gen_ai.request.service_tier"] = usage.service_tier
    if outcome.grounded_p is not None:
        out["groundguard.judge.grounded_p"] = outcome.grounded_p
    return out


class TracedJudge:
    """A judge whose every call is a CLIENT span ``{operation} {model}``."""

    def __init__(self, inner: Judge, tier: TierKind, telemetry: Telemetry) -> None:
        self.inner, self.tier, self._telemetry = inner, tier, telemetry
        self.provider, self.model = inner.provider, inner.model
        self._attributes = call_attributes(inner.provider, inner.model, tier)
        self._name = f"{self._attributes['gen_ai.operation.name']} {inner.model}"

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        with self._telemetry.span(self._name, self._attributes, kind="client") as span:
            try:
                outcome = await self.inner.assess(case)
            except Exception as exc:
                span.failed(getattr(exc, "kind", None) or type(exc).__name__)
                raise
            if span.recording:
                span.set_attributes(outcome_attributes(outcome))
            return outcome

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> object:  # the inner judge's other attributes (stats)
        return getattr(self.inner, name)


def traced(judge: Judge, tier: TierKind) -> Judge:
    """``judge`` with a span per call when tracing is on; ``judge`` itself when it is off."""
    telemetry = _current
    if not telemetry.enabled or isinstance(judge, TracedJudge):
        return judge
    return TracedJudge(judge, tier, telemetry)
