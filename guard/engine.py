"""The Guard: parse a request, prepare it, ask the judge, and turn the answer into a verdict.

Verdicts decided without a judge (``judge.tier == "none"``):

* empty output, or one without a single letter or digit (whitespace, invisible characters, a
  lone ":" -- such inputs are known to fool LLM judges) -> label ``error``, reason
  ``empty_output``, hallucinated None;
* an output longer than ``on_truncated_output`` lets a judge read (one window of
  ``max_output_chars`` under ``fail``, ``max_output_chunks`` windows under ``judge_chunks``)
  -> label ``fail``, score 0, hallucinated True, reason ``output_truncated``: text that is
  never judged never passes, and no judge call is spent on a foregone verdict;
* no grounding source, or an empty one, for the chosen ``context_field`` (the request's own
  ``context_field`` when it has one, else the setting) -> label ``fail``,
  score 0, hallucinated True, reason ``no_evidence``: failing closed, never a silent pass.

A judge that cannot decide gives label ``error`` with the error's ``kind`` as reason; a judgement
skipped on purpose gives label ``skipped``. :meth:`Guard.judge` never raises for either.

Why one module of this length: :class:`Guard` makes every kind of verdict (empty output, no
evidence, skipped, error, decided, the windows of a long output) next to the one call that
leads to each, so a reader sees every exit of a judgement in one place. The next split, when
it grows: the verdict builders into ``guard/decide/``.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from guard import strictjson, tracing
from guard.batch.items import ItemRef
from guard.budgets.judge import BudgetedJudge, BudgetStats
from guard.case import PreparedCase
from guard.decide.policies import TRUNCATED_REASON, apply_policies, combine
from guard.decide.quotes import check_quotes
from guard.decide.scoring import Scored, score
from guard.defaults import PROMPT_VERSION
from guard.errors import InvalidRequest, JudgeError, JudgementSkipped, MalformedJudgeOutput
from guard.models import (
    ClaimVerdict,
    ContextField,
    Cut,
    ErrorInfo,
    InjectionFinding,
    JudgeInfo,
    JudgeRequest,
    Label,
    OutputCoverage,
    TierReading,
    Truncation,
    UnsupportedClaim,
    Usage,
    Verdict,
)
from guard.offload import off_loop
from guard.prepare.bidi import reorders_display
from guard.prepare.evidence import render_for_queries, request_chars
from guard.prepare.injection import scan_request
from guard.prepare.mapping import FieldMap
from guard.prepare.sanitize import sanitize
from guard.prepare.truncate import covered, truncate, window_spans
from guard.providers.base import Judge, JudgeOutcome
from guard.redact import redact
from guard.settings import JudgeSettings
from guard.skips import SkipReason
from guard.verdicts import error_verdict, unjudged

if TYPE_CHECKING:
    from guard.batch.judge import BatchingJudge
    from guard.learning.learner import Learner

MAX_INJECTION_FINDINGS = 20
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")  # what str.isalnum() accepts
MAX_VALIDATION_PROBLEMS = 5

Price = Callable[[str, Usage], float]


# --------------------------------------------------------------------------- parsing


def _problem(error: Mapping[str, Any]) -> str:
    loc = tuple(error.get("loc", ()))
    if loc and loc[0] == "context":
        return "context: expected string, list of strings or documents"
    path = ".".join(str(part) for part in loc) or "request"
    message = str(error.get("msg", "invalid"))
    return f"{path}: {message[:1].lower()}{message[1:]}"


def describe_validation_error(exc: ValidationError) -> str:
    """One line naming each bad field path and its problem (at most a few, deduplicated)."""
    problems = list(dict.fromkeys(_problem(e) for e in exc.errors()))
    extra = len(problems) - MAX_VALIDATION_PROBLEMS
    text = "; ".join(problems[:MAX_VALIDATION_PROBLEMS])
    return f"{text}; and {extra} more" if extra > 0 else text


# --------------------------------------------------------------------------- the guard


class Guard:
    """Judges requests with ``judge`` under ``settings``; the single entry point of the core,
    and the :class:`~guard.boundary.GuardCore` the runtime holds.

    ``price(model, usage)`` gives a call's cost in USD (0 when not given; the tier that billed
    it is ``usage.service_tier``); ``clock`` measures judge latency. ``batcher`` is the batching
    judge inside ``judge`` under ``delivery: batch`` (the runtime gives it a durable journal).
    ``intake_stop_reason`` is set to the error kind when the judge reports an error that should
    stop intake (quota exhausted, 401/403).
    """

    def __init__(
        self,
        judge: Judge,
        settings: JudgeSettings,
        *,
        price: Price | None = None,
        clock: Callable[[], float] = time.perf_counter,
        batcher: BatchingJudge | None = None,
        learner: Learner | None = None,
    ) -> None:
        self.backend: Judge = judge
        self.settings = settings
        self.learner = learner  # the learning cascade's (judge.cascade.learn), if any
        self.field_map = FieldMap(settings.field_map)
        self.intake_stop_reason: str | None = None
        self._price = price
        self._clock = clock
        self.batcher = batcher
        key = settings.api_key.get_secret_value() if settings.api_key else None
        self._secrets = (key,) if key else ()

    # ---------------------------------------------------------------- parse

    def parse(self, payload: bytes | str | Mapping[str, Any]) -> JudgeRequest:
        """A request from raw bytes, text or a mapping; :class:`InvalidRequest` when impossible."""
        obj = (
            payload
            if isinstance(payload, Mapping)
            else strictjson.loads(payload, full_check=bool(self.field_map))
        )
        if not isinstance(obj, Mapping):
            raise InvalidRequest(
                f"expected a JSON object, got {type(obj).__name__}", reason="not_an_object"
            )
        fields = self.field_map.apply(obj) if self.field_map else dict(obj)
        try:
            return JudgeRequest.model_validate(fields)
        except ValidationError as exc:
            raise InvalidRequest(describe_validation_error(exc)) from exc

    # ---------------------------------------------------------------- prepare

    def prepare(
        self, request: JudgeRequest, *, message_key: str | None = None, item: ItemRef | None = None
    ) -> PreparedCase | Verdict:
        """The case to show a judge (the output's first window), or a verdict when none is
        needed (empty output/evidence). ``message_key`` is the stream's message key, for
        sampling by key; ``item`` the message's stream position, for batch items' ids."""
        cases = self.prepare_chunks(request, message_key=message_key, item=item)
        return cases if isinstance(cases, Verdict) else cases[0]

    def prepare_chunks(
        self, request: JudgeRequest, *, message_key: str | None = None, item: ItemRef | None = None
    ) -> list[PreparedCase] | Verdict:
        """One case per window of the output to judge (one unless ``on_truncated_output`` is
        ``judge_chunks`` and the output is longer than ``max_output_chars``), or a verdict
        when none is needed. Bounded work: linear in the request's size."""
        s = self.settings
        request_id = request.id or uuid.uuid4().hex
        pieces, output_cut, coverage = self._output_windows(request)
        if not pieces:
            return self._empty_output(request, request_id, output_cut)
        if not coverage.complete and coverage.policy != "pass":
            return self._unjudgeable_output(
                request, request_id, output_cut, coverage, scan_request(pieces, (), None)
            )
        source = self.source_of(request)
        question = self._question(request)
        queries = (
            [f"{request.output} {request.question or ''}"]
            if len(pieces) == 1
            else [f"{p} {question or ''}" for p in pieces]
        )
        renders = render_for_queries(request, source, s.max_context_chars, queries)
        if not renders[0].passages:
            truncation = Truncation(context=renders[0].cut, output=output_cut)
            return self._no_evidence(
                request, request_id, truncation, coverage, scan_request(pieces, (), None)
            )
        injections = tuple(scan_request(pieces, renders, question)[:MAX_INJECTION_FINDINGS])
        reordered = reorders_display(request.output)
        return [
            PreparedCase(
                request_id=request_id,
                output=piece,
                evidence=rendered.text,
                passages=rendered.passages,
                source=source,
                mode=s.mode,
                threshold=s.threshold,
                question=question,
                truncation=Truncation(context=rendered.cut, output=output_cut),
                injections=injections,
                message_key=message_key,
                item=item,
                coverage=coverage,
                window=number,
                display_reordered=reordered,
                labels=rendered.labels,
            )
            for number, (piece, rendered) in enumerate(zip(pieces, renders, strict=True), 1)
        ]

    def _output_windows(self, request: JudgeRequest) -> tuple[list[str], Cut, OutputCoverage]:
        """The windows of the sanitized output a judge will see (those with a word), what was
        cut, and the coverage the verdict reports."""
        s = self.settings
        clean = sanitize(request.output)
        most = s.max_output_chunks if s.on_truncated_output == "judge_chunks" else 1
        spans, complete = window_spans(clean, s.max_output_chars, most)
        spans = [(a, b) for a, b in spans if _LETTER_OR_DIGIT.search(clean, a, b)]  # a word
        pieces = [clean[a:b] for a, b in spans]
        judged = covered(spans)
        cut = Cut(original_chars=len(clean), kept_chars=judged, truncated=not complete)
        coverage = OutputCoverage(
            policy=s.on_truncated_output,
            total_chars=len(clean),
            judged_chars=judged,
            chunks=len(pieces),
            complete=complete,
        )
        return pieces, cut, coverage

    def source_of(self, request: JudgeRequest) -> ContextField:
        """The grounding source: the request's own ``context_field``, else the setting's."""
        return request.context_field or self.settings.context_field

    def _question(self, request: JudgeRequest) -> str | None:
        """The question the output answers: given, or the conversation's last user turn."""
        text = request.question
        if text is None and self.source_of(request) is ContextField.MESSAGES:
            users = [m.content for m in request.messages or [] if m.role == "user"]
            text = users[-1] if users else None
        if text is None:
            return None
        question, _ = truncate(sanitize(text), self.settings.max_output_chars)
        return question or None

    # ---------------------------------------------------------------- judge

    async def judge(
        self, request: JudgeRequest, *, message_key: str | None = None, item: ItemRef | None = None
    ) -> Verdict:
        """The verdict on ``request``; never raises for judge errors or skipped judgements.

        ``message_key``: the stream's message key (sampling by key uses it); ``item``: the
        message's position in its stream (a batch item's ``custom_id`` is made of it, so the
        next owner of a partition finds the items submitted before it took over). The configured
        :class:`~guard.providers.base.Judge` itself is ``guard.backend``. Large requests are
        prepared in a worker thread, so their CPU never blocks the event loop for long.
        With tracing on, the judgement is the guardrail span (:mod:`guard.tracing`).
        """
        telemetry = tracing.current()
        if not telemetry.enabled:
            return await self._judge(request, message_key=message_key, item=item)
        attributes = tracing.guardrail_attributes(PROMPT_VERSION)
        with telemetry.span(tracing.GUARDRAIL_SPAN, attributes) as span:
            verdict = await self._judge(request, message_key=message_key, item=item)
            if not span.recording:  # sampled out: nothing to report
                return verdict
            result = tracing.guardrail_result_attributes(verdict)
            span.set_attributes(result)
            explain = telemetry.capture_explanation
            evaluation = tracing.evaluation_attributes(verdict, explanation=explain)
            telemetry.event(tracing.EVALUATION_EVENT, evaluation)
            telemetry.event(tracing.GUARDRAIL_RESULT_EVENT, result)
            return verdict

    async def _judge(
        self, request: JudgeRequest, *, message_key: str | None, item: ItemRef | None
    ) -> Verdict:
        cases = await off_loop(
            request_chars(request),
            self.prepare_chunks,
            request,
            message_key=message_key,
            item=item,
        )
        if isinstance(cases, Verdict):
            return cases
        verdicts: list[Verdict] = []
        for case in cases:  # windows of a long output, one after the other
            verdicts.append(await self._judge_case(request, case))
            if verdicts[-1].label is not Label.PASS:
                break  # the first window that does not pass decides
        return apply_policies(combine(verdicts), self.settings)

    async def _judge_case(self, request: JudgeRequest, prepared: PreparedCase) -> Verdict:
        started = self._clock()
        try:
            outcome = await self.backend.assess(prepared)
        except JudgementSkipped as exc:
            return self._skipped(request, prepared, exc.reason)
        except JudgeError as exc:
            return self._error(request, prepared, exc, self._elapsed_ms(started))
        latency_ms = self._elapsed_ms(started)
        try:
            scored = score(outcome.assessment, prepared.mode, prepared.threshold)
        except MalformedJudgeOutput as exc:
            return self._error(request, prepared, exc, latency_ms, outcome)
        return self._decided(request, prepared, outcome, scored, latency_ms)

    async def judge_payload(self, payload: bytes | str | Mapping[str, Any]) -> Verdict:
        """Parse and judge; :class:`InvalidRequest` propagates (dead-letter it). A large payload
        is parsed in a worker thread, like a large request is prepared."""
        size = 0 if isinstance(payload, Mapping) else len(payload)
        return await self.judge(await off_loop(size, self.parse, payload))

    def budget_stats(self) -> BudgetStats | None:
        """The budget layers' counters when ``backend`` is the budgeted judge, else None."""
        return self.backend.stats() if isinstance(self.backend, BudgetedJudge) else None

    def rescale_budgets(self, share: float) -> None:
        """Limit the budgeted judge to ``share`` (0..1) of its configured rpm, tpm and cost
        windows (:meth:`BudgetedJudge.rescale`); a judge without budget layers has none."""
        if isinstance(self.backend, BudgetedJudge):
            self.backend.rescale(share)

    async def aclose(self) -> None:
        try:
            await self.backend.aclose()
        finally:
            state_file = self.settings.cascade.state_file
            if self.learner is not None and state_file is not None:
                from guard.learning import state

                state.save(state_file, self.learner.ledger)

    def _elapsed_ms(self, started: float) -> float:
        return max(0.0, (self._clock() - started) * 1000.0)

    def _cost(self, outcome: JudgeOutcome) -> float:
        if self._price is None:
            return 0.0
        return self._price(outcome.model, outcome.usage)

    # ---------------------------------------------------------------- verdicts

    def _verdict(
        self, request: JudgeRequest, request_id: str, truncation: Truncation, **fields: Any
    ) -> Verdict:
        """A verdict on ``request`` with the fields every verdict carries."""
        fields.setdefault("judge", self._judge_info())
        return Verdict(
            request_id=request_id,
            threshold=self.settings.threshold,
            mode=self.settings.mode,
            source=self.source_of(request),
            truncation=truncation,
            metadata=request.metadata,
            **fields,
        )

    @property
    def judge_info(self) -> JudgeInfo:
        """The judge a verdict names when no judge call decided it
        (:func:`guard.verdicts.unjudged`)."""
        return unjudged(self.backend.provider, self.backend.model)

    def _judge_info(self, outcome: JudgeOutcome | None = None) -> JudgeInfo:
        if outcome is None:
            return self.judge_info
        return JudgeInfo(
            provider=outcome.provider,
            model=outcome.model,
            prompt_version=PROMPT_VERSION,
            tier=outcome.tier,
            tier_name=outcome.tier_name,
            window_cuts=outcome.window_cuts,
            tiers=[
                TierReading(
                    name=t.name,
                    kind=t.kind,
                    grounded_p=t.grounded_p,
                    decided=t.decided,
                    error=t.error,
                    basis=t.basis,
                    bound=t.bound,
                    audited=t.audited,
                    window_cuts=t.window_cuts,
                )
                for t in outcome.tier_scores
            ],
            cached=outcome.cached,
            fallback_reason=outcome.fallback_reason,
            unsure=outcome.unsure,
        )

    def _empty_output(self, request: JudgeRequest, request_id: str, output_cut: Cut) -> Verdict:
        return self._error_verdict(
            request,
            request_id,
            Truncation(context=_no_cut(), output=output_cut),
            ErrorInfo(kind="empty_output", message="output has no letters or digits"),
            "The output is empty or has no words; there is nothing to judge.",
        )

    def _no_evidence(
        self,
        request: JudgeRequest,
        request_id: str,
        truncation: Truncation,
        coverage: OutputCoverage,
        injections: list[InjectionFinding],
    ) -> Verdict:
        source = self.source_of(request).value
        return self._verdict(
            request,
            request_id,
            truncation,
            label=Label.FAIL,
            reason="no_evidence",
            score=0.0,
            hallucinated=True,
            injections=injections[:MAX_INJECTION_FINDINGS],
            coverage=coverage,
            explanation=f"The grounding source '{source}' is missing or empty, so no claim of "
            "the output can be supported; failing closed.",
        )

    def _unjudgeable_output(
        self,
        request: JudgeRequest,
        request_id: str,
        output_cut: Cut,
        coverage: OutputCoverage,
        injections: list[InjectionFinding],
    ) -> Verdict:
        s = self.settings
        most = s.max_output_chunks if coverage.policy == "judge_chunks" else 1
        nothing = {"judged_chars": 0, "chunks": 0}
        return self._verdict(
            request,
            request_id,
            Truncation(context=_no_cut(), output=output_cut.model_copy(update={"kept_chars": 0})),
            label=Label.FAIL,
            reason=TRUNCATED_REASON,
            score=0.0,
            hallucinated=True,
            coverage=coverage.model_copy(update=nothing),
            injections=injections[:MAX_INJECTION_FINDINGS],
            explanation=f"The output has {coverage.total_chars} characters, more than "
            f"{most} window(s) of {s.max_output_chars} can judge (on_truncated_output: "
            f"{coverage.policy}); text that is never judged never passes, so it fails without "
            "a judge call.",
        )

    def _skipped(self, request: JudgeRequest, case: PreparedCase, reason: SkipReason) -> Verdict:
        return self._verdict(
            request,
            case.request_id,
            case.truncation,
            label=Label.SKIPPED,
            reason=str(reason),
            injections=list(case.injections),
            coverage=case.coverage,
            explanation=f"Not judged: {reason}.",
        )

    def _error(
        self,
        request: JudgeRequest,
        case: PreparedCase,
        exc: JudgeError,
        latency_ms: float,
        outcome: JudgeOutcome | None = None,
    ) -> Verdict:
        if exc.stops_intake:
            self.intake_stop_reason = exc.kind
        message = redact(str(exc), self._secrets)
        spent: dict[str, Any] = {}
        if outcome is not None:
            spent = {"usage": outcome.usage, "cost_usd": self._cost(outcome)}
        return self._error_verdict(
            request,
            case.request_id,
            case.truncation,
            ErrorInfo(kind=exc.kind, message=message, retriable=exc.retriable),
            f"The judge could not decide: {message}",
            injections=list(case.injections),
            coverage=case.coverage,
            latency_ms=latency_ms,
            **spent,
        )

    def _error_verdict(
        self,
        request: JudgeRequest,
        request_id: str,
        truncation: Truncation,
        error: ErrorInfo,
        explanation: str,
        **fields: Any,
    ) -> Verdict:
        """An ``error`` verdict on ``request`` from the one factory (:mod:`guard.verdicts`)."""
        return error_verdict(
            request_id,
            error,
            judge=self.judge_info,
            explanation=explanation,
            threshold=self.settings.threshold,
            mode=self.settings.mode,
            source=self.source_of(request),
            truncation=truncation,
            metadata=request.metadata,
            **fields,
        )

    def _decided(
        self,
        request: JudgeRequest,
        case: PreparedCase,
        outcome: JudgeOutcome,
        scored: Scored,
        latency_ms: float,
    ) -> Verdict:
        claims, quote_check = check_quotes(
            _claims(outcome), "\n\n".join(p.text for p in case.passages)
        )
        return self._verdict(
            request,
            case.request_id,
            case.truncation,
            label=scored.label,
            score=scored.score,
            raw_score=scored.raw,
            hallucinated=scored.hallucinated,
            explanation=outcome.assessment.explanation,
            claims=claims,
            unsupported_claims=[
                UnsupportedClaim(claim=c.claim, reason=c.reason) for c in claims if not c.supported
            ],
            quote_check=quote_check,
            injections=list(case.injections),
            coverage=case.coverage,
            judge=self._judge_info(outcome),
            confidence=outcome.confidence,
            usage=outcome.usage,
            cost_usd=self._cost(outcome),
            latency_ms=latency_ms,
        )


def _claims(outcome: JudgeOutcome) -> list[ClaimVerdict]:
    return [
        ClaimVerdict(
            claim=c.claim, supported=c.supported, reason=c.reason, evidence_quote=c.evidence_quote
        )
        for c in outcome.assessment.claims
    ]


def _no_cut() -> Cut:
    return Cut(original_chars=0, kept_chars=0, truncated=False)
