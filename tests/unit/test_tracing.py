"""Tracing: off unless ``OTEL_TRACES_EXPORTER`` asks, free when off (no OpenTelemetry import, no
wrapper), and when on the guardrail span, one CLIENT span per judge call, budget waits and the
evaluation events, with no payload text; outputs carry the publishing span's context."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from consumers import telemetry
from consumers.errors import SettingsError
from consumers.runtime.envelope import OutRecord
from consumers.runtime.kinds import OutputKind
from guard import Guard, JudgeSettings
from guard import tracing as core_tracing
from guard.assembly import build_guard
from guard.decide.assessment import Scale5Assessment
from guard.models import JudgeRequest
from guard.testing import FakeJudge

otel = pytest.importorskip("opentelemetry.sdk", reason="needs the groundguard[otel] extra")

from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import (  # noqa: E402
    InMemoryLogRecordExporter,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF  # noqa: E402

from consumers.telemetry.otel import CoreTelemetry, OtelRuntime  # noqa: E402

ANSWER = "Marie Curie won two Nobel prizes"
EVIDENCE = "Marie Curie won the Nobel prize in physics and in chemistry."
SECRET_EXPLANATION = "the answer says Marie Curie won two, api_key=sk-abcdefghijklmnop123456"


@dataclass
class Captured:
    spans: InMemorySpanExporter
    logs: InMemoryLogRecordExporter
    core: CoreTelemetry
    runtime: OtelRuntime


def _capture(*, explain: bool = False, sampled: bool = True) -> Captured:
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    tracer_provider = TracerProvider(sampler=None if sampled else ALWAYS_OFF)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    tracer = tracer_provider.get_tracer("test")
    core = CoreTelemetry(tracer, logger_provider.get_logger("test"), explain=explain)
    return Captured(spans, logs, core, OtelRuntime(tracer, [tracer_provider, logger_provider]))


@pytest.fixture
def captured() -> Iterator[Captured]:
    capture = _capture()
    core_tracing.install(capture.core)
    try:
        yield capture
    finally:
        core_tracing.install(None)


def _request() -> JudgeRequest:
    return JudgeRequest(id="r1", output=ANSWER, context=EVIDENCE)


def _scale5(raw: int, explanation: str = "judged") -> Scale5Assessment:
    return Scale5Assessment(explanation=explanation, claims=[], score=raw)  # type: ignore[arg-type]


class TestSwitch:
    @pytest.mark.parametrize(
        ("environ", "on"),
        [
            ({}, False),
            ({"OTEL_TRACES_EXPORTER": "none"}, False),
            ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
            ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, False),
            ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, False),
        ],
    )
    def test_tracing_is_on_only_when_an_exporter_is_asked_for(
        self, environ: dict[str, str], on: bool
    ) -> None:
        assert telemetry.requested(environ) is on

    def test_an_unknown_exporter_is_a_bad_setting_naming_the_variable(self) -> None:
        with pytest.raises(SettingsError, match="OTEL_TRACES_EXPORTER"):
            telemetry.check({"OTEL_TRACES_EXPORTER": "zipkin"})

    def test_off_the_setup_is_the_noop_and_installs_nothing(self) -> None:
        assert telemetry.setup({}) is telemetry.NOOP
        assert core_tracing.current() is core_tracing.NOOP

    def test_off_neither_core_nor_runtime_imports_opentelemetry(self) -> None:
        """A judged request and a built service path with tracing off: no OpenTelemetry
        module is loaded and the judge is not wrapped."""
        code = (
            "import asyncio, sys\n"
            "from consumers import telemetry\n"
            "from consumers.runtime import service\n"
            "from guard import JudgeSettings\n"
            "from guard.assembly import build_guard\n"
            "from guard.tracing import TracedJudge\n"
            "telemetry.setup({})\n"
            "guard = build_guard(JudgeSettings(provider='fake'), {})\n"
            "v = asyncio.run(guard.judge_payload({'output': 'a b', 'context': 'a b'}))\n"
            "assert not isinstance(guard.backend._provider_judge, TracedJudge)\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "[]"


class TestCoreSpans:
    async def test_a_judged_request_is_a_guardrail_span_over_one_client_span(
        self, captured: Captured
    ) -> None:
        guard = build_guard(JudgeSettings(provider="fake"), {})
        verdict = await guard.judge(_request())
        spans = {s.name: s for s in captured.spans.get_finished_spans()}
        guardrail, call = spans["apply_guardrail groundguard"], spans["chat fake-judge"]
        assert call.parent is not None
        assert call.parent.span_id == guardrail.context.span_id
        assert call.kind.name == "CLIENT"
        assert call.attributes is not None
        assert call.attributes["gen_ai.provider.name"] == "fake"
        assert call.attributes["gen_ai.usage.input_tokens"] == 100
        assert guardrail.attributes is not None
        assert guardrail.attributes["gen_ai.operation.name"] == "apply_guardrail"
        assert guardrail.attributes["gen_ai.guardrail.result.value"] == verdict.label.value

    async def test_each_verdict_is_an_evaluation_log_record_in_the_guardrail_span(
        self, captured: Captured
    ) -> None:
        guard = Guard(core_tracing.traced(FakeJudge([_scale5(5)]), "llm"), JudgeSettings())
        verdict = await guard.judge(_request())
        guardrail = next(
            s
            for s in captured.spans.get_finished_spans()
            if s.name == "apply_guardrail groundguard"
        )
        records = {r.log_record.event_name: r.log_record for r in captured.logs.get_finished_logs()}
        evaluation = records[core_tracing.EVALUATION_EVENT]
        assert evaluation.span_id == guardrail.context.span_id
        assert evaluation.attributes is not None
        assert evaluation.attributes["gen_ai.evaluation.name"] == "groundedness"
        assert evaluation.attributes["gen_ai.evaluation.score.label"] == verdict.label.value
        assert evaluation.attributes["gen_ai.evaluation.score.value"] == verdict.score
        assert evaluation.attributes["groundguard.verdict.judge.tier"] == "llm"
        assert core_tracing.GUARDRAIL_RESULT_EVENT in records

    async def test_the_explanation_is_reported_only_when_asked_and_then_redacted(self) -> None:
        for explain in (False, True):
            capture = _capture(explain=explain)
            core_tracing.install(capture.core)
            try:
                judge = FakeJudge([_scale5(5, SECRET_EXPLANATION)])
                await Guard(judge, JudgeSettings()).judge(_request())
            finally:
                core_tracing.install(None)
            (evaluation,) = [
                r.log_record
                for r in capture.logs.get_finished_logs()
                if r.log_record.event_name == core_tracing.EVALUATION_EVENT
            ]
            assert evaluation.attributes is not None
            shown = evaluation.attributes.get("gen_ai.evaluation.explanation")
            if explain:
                assert isinstance(shown, str)
                assert "sk-abcdefghijklmnop" not in shown
            else:
                assert shown is None

    async def test_no_answer_or_evidence_text_is_in_any_span_or_event(
        self, captured: Captured
    ) -> None:
        guard = build_guard(JudgeSettings(provider="fake"), {})
        await guard.judge(_request())
        values: list[Any] = []
        for span in captured.spans.get_finished_spans():
            values += [span.name, *(span.attributes or {}).values()]
        for record in captured.logs.get_finished_logs():
            values += list((record.log_record.attributes or {}).values())
        text = " ".join(str(v) for v in values)
        assert "Curie" not in text
        assert "Nobel" not in text

    async def test_a_wait_for_a_concurrency_slot_is_a_child_span(self, captured: Captured) -> None:
        settings = JudgeSettings(provider="fake", budget={"max_in_flight": 1})
        guard = build_guard(settings, {})
        slow = FakeJudge(latency_s=0.05)
        guard.backend._slots.inner = slow  # type: ignore[attr-defined]
        requests = [
            JudgeRequest(id=f"r{i}", output=f"{ANSWER} {i}", context=EVIDENCE) for i in range(2)
        ]
        await asyncio.gather(*(guard.judge(r) for r in requests))
        finished = captured.spans.get_finished_spans()
        waits = [s for s in finished if s.name == "groundguard.wait concurrency"]
        assert len(waits) == 1
        assert waits[0].parent is not None

    async def test_a_sampled_out_request_reports_no_span_and_no_event(self) -> None:
        capture = _capture(sampled=False)
        core_tracing.install(capture.core)
        try:
            await build_guard(JudgeSettings(provider="fake"), {}).judge(_request())
        finally:
            core_tracing.install(None)
        assert capture.spans.get_finished_spans() == ()
        assert capture.logs.get_finished_logs() == ()

    def test_off_a_judge_is_not_wrapped(self) -> None:
        judge = FakeJudge()
        assert core_tracing.traced(judge, "llm") is judge


class TestRuntime:
    def test_outputs_carry_the_current_span_and_keep_the_cleaned_baggage(self) -> None:
        capture = _capture()
        out = OutRecord(
            topic="verdicts",
            key=None,
            value=b"{}",
            headers=[
                ("traceparent", b"00-" + b"1" * 32 + b"-" + b"2" * 16 + b"-01"),
                ("baggage", b"tenant=a"),
            ],
            kind=OutputKind.VERDICT,
        )
        with capture.runtime.publish([out]) as _:
            (stamped,) = capture.runtime.stamp([out])
        (span,) = capture.spans.get_finished_spans()
        headers = dict(stamped.headers)
        trace_id = format(span.context.trace_id, "032x")
        span_id = format(span.context.span_id, "016x")
        assert headers["traceparent"].startswith(f"00-{trace_id}-{span_id}-".encode())
        assert headers["baggage"] == b"tenant=a"
        assert len(stamped.headers) == 2


class TestServe:
    async def test_a_check_is_a_server_span_continuing_the_requests_traceparent(self) -> None:
        import httpx2

        from consumers.serve.app import build_app
        from consumers.serve.service import make_api
        from consumers.settings import ServiceSettings

        capture = _capture()
        core_tracing.install(capture.core)
        try:
            settings = ServiceSettings.model_validate({"judge": {"provider": "fake"}})
            guard = build_guard(settings.judge, {})
            api, ready = make_api(settings, guard, None)
            api.state.started = True
            api.tracing = capture.runtime
            transport = httpx2.ASGITransport(app=build_app(api, ready=ready))
            trace_id, parent_id = "ab" * 16, "cd" * 8
            async with httpx2.AsyncClient(transport=transport, base_url="http://serve") as client:
                answer = await client.post(
                    "/v1/check",
                    json={"output": ANSWER, "context": EVIDENCE},
                    headers={"traceparent": f"00-{trace_id}-{parent_id}-01"},
                )
        finally:
            core_tracing.install(None)
        assert answer.status_code == 200
        spans = {s.name: s for s in capture.spans.get_finished_spans()}
        server = spans["POST /v1/check"]
        assert server.kind.name == "SERVER"
        assert format(server.context.trace_id, "032x") == trace_id
        assert server.parent is not None
        assert format(server.parent.span_id, "016x") == parent_id
        assert server.attributes is not None
        assert server.attributes["http.response.status_code"] == 200
        guardrail = spans["apply_guardrail groundguard"]
        assert guardrail.parent is not None
        assert guardrail.parent.span_id == server.context.span_id

    async def test_a_proxied_request_is_a_server_span_continuing_its_traceparent(self) -> None:
        """The streaming proxy's routes (serve.proxy) continue the caller's trace too; an
        unreachable upstream answers 502 under the span."""
        import httpx2

        from consumers.serve.app import build_app
        from consumers.serve.service import make_api
        from consumers.settings import ServiceSettings

        capture = _capture()
        core_tracing.install(capture.core)
        try:
            settings = ServiceSettings.model_validate(
                {
                    "judge": {"provider": "fake"},
                    "serve": {"proxy": {"upstream_url": "http://127.0.0.1:9/v1"}},
                }
            )
            guard = build_guard(settings.judge, {})
            api, ready = make_api(settings, guard, None)
            api.state.started = True
            api.tracing = capture.runtime
            transport = httpx2.ASGITransport(app=build_app(api, ready=ready))
            trace_id, parent_id = "ef" * 16, "01" * 8
            async with httpx2.AsyncClient(transport=transport, base_url="http://serve") as client:
                answer = await client.post(
                    "/v1/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": EVIDENCE}]},
                    headers={"traceparent": f"00-{trace_id}-{parent_id}-01"},
                )
            if api.proxy is not None:
                await api.proxy.aclose()
        finally:
            core_tracing.install(None)
        assert answer.status_code == 502
        spans = {s.name: s for s in capture.spans.get_finished_spans()}
        server = spans["POST /v1/chat/completions"]
        assert server.kind.name == "SERVER"
        assert format(server.context.trace_id, "032x") == trace_id
        assert server.attributes is not None
        assert server.attributes["http.response.status_code"] == 502
