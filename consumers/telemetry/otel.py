"""The OpenTelemetry SDK behind :mod:`consumers.telemetry`, imported only when tracing is on.

One ``TracerProvider`` (sampler from ``OTEL_TRACES_SAMPLER``, batch export) and one
``LoggerProvider`` for the ``gen_ai.evaluation.result`` / ``gen_ai.guardrail.result`` events,
both groundguard's own (the global providers are left to the application, if any). The W3C
context travels through the global propagator (``OTEL_PROPAGATORS``, default ``tracecontext,
baggage``); only the propagator's trace headers are written onto outputs, so a ``baggage``
header stays the one :func:`consumers.runtime.headers.safe_tracing` cleaned.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from opentelemetry import propagate, trace
from opentelemetry._logs import Logger
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    ConsoleLogRecordExporter,
    LogRecordExporter,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from consumers.telemetry import DEFAULT_SERVICE_NAME
from guard import tracing as core_tracing

if TYPE_CHECKING:
    from consumers.runtime.envelope import OutRecord, RecordLike

SCOPE = "groundguard"
KEPT_HEADERS = frozenset({"baggage"})  # carried as the input had it, cleaned of credentials
_KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}


class OtelSpan:
    """:class:`consumers.telemetry.Span` and :class:`guard.tracing.Span` over an SDK span."""

    def __init__(self, span: trace.Span) -> None:
        self.span = span
        self.recording = span.is_recording()

    def set_attributes(self, attributes: core_tracing.Attributes) -> None:
        self.span.set_attributes(attributes)

    def failed(self, error_type: str) -> None:
        self.span.set_attribute("error.type", error_type)
        self.span.set_status(Status(StatusCode.ERROR))


@contextmanager
def _current(
    tracer: trace.Tracer,
    name: str,
    *,
    kind: SpanKind,
    attributes: core_tracing.Attributes,
    context: Context | None = None,
) -> Iterator[OtelSpan]:
    # exceptions are not recorded: their messages may hold payload text; error.type is set
    with tracer.start_as_current_span(
        name,
        context=context,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        handle = OtelSpan(span)
        try:
            yield handle
        except BaseException as exc:
            handle.failed(type(exc).__name__)
            raise


class CoreTelemetry:
    """:class:`guard.tracing.Telemetry`: the core's spans and events."""

    enabled = True

    def __init__(self, tracer: trace.Tracer, logger: Logger | None, *, explain: bool) -> None:
        self._tracer, self._logger = tracer, logger
        self.capture_explanation = explain

    def span(
        self,
        name: str,
        attributes: core_tracing.Attributes,
        *,
        kind: core_tracing.SpanKind = "internal",
    ) -> AbstractContextManager[core_tracing.Span]:
        return _current(self._tracer, name, kind=_KINDS[kind], attributes=attributes)

    def past_span(
        self, name: str, attributes: core_tracing.Attributes, start_ns: int, end_ns: int
    ) -> None:
        span = self._tracer.start_span(name, attributes=attributes, start_time=start_ns)
        span.end(end_time=end_ns)

    def event(self, name: str, attributes: core_tracing.Attributes) -> None:
        span = trace.get_current_span()
        if not span.is_recording():  # sampled out: its events are not sent either
            return
        if self._logger is not None:  # the Logs API: a log record in the current span's context
            self._logger.emit(event_name=name, attributes=attributes)
        else:  # OTEL_LOGS_EXPORTER=none: a span event
            span.add_event(name, attributes)


def _carrier(headers: Sequence[tuple[str, bytes]]) -> dict[str, str]:
    fields = propagate.get_global_textmap().fields
    return {
        name.lower(): (value or b"").decode("latin-1")
        for name, value in headers
        if name.lower() in fields
    }


class OtelRuntime:
    """:class:`consumers.telemetry.RuntimeTracing` over the SDK."""

    enabled = True

    def __init__(self, tracer: trace.Tracer, providers: Sequence[object]) -> None:
        self._tracer = tracer
        self._providers = providers

    def message(self, record: RecordLike) -> AbstractContextManager[OtelSpan]:
        parent = propagate.extract(_carrier(record.headers))
        attributes: dict[str, core_tracing.AttributeValue] = {
            "openinference.span.kind": "CHAIN",
            "messaging.system": "kafka",
            "messaging.operation.name": "process",
            "messaging.operation.type": "process",
            "messaging.destination.name": record.topic,
            "messaging.destination.partition.id": str(record.partition),
            "messaging.kafka.offset": record.offset,
        }
        return _current(
            self._tracer,
            f"process {record.topic}",
            context=parent,
            kind=SpanKind.CONSUMER,
            attributes=attributes,
        )

    def publish(self, outputs: Sequence[OutRecord]) -> AbstractContextManager[OtelSpan]:
        attributes: dict[str, core_tracing.AttributeValue] = {
            "messaging.system": "kafka",
            "messaging.operation.name": "send",
            "messaging.operation.type": "send",
            "messaging.batch.message_count": len(outputs),
            "groundguard.outputs": ",".join(out.kind.value for out in outputs),
        }
        return _current(self._tracer, "send", kind=SpanKind.PRODUCER, attributes=attributes)

    def stamp(self, outputs: list[OutRecord]) -> list[OutRecord]:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        written = {name: value for name, value in carrier.items() if name not in KEPT_HEADERS}
        if not written:
            return outputs
        added = [(name, value.encode("latin-1")) for name, value in written.items()]
        return [
            dataclasses.replace(
                out,
                headers=[(n, v) for n, v in out.headers if n.lower() not in written] + added,
            )
            for out in outputs
        ]

    def http(
        self, method: str, route: str, headers: Mapping[str, str]
    ) -> AbstractContextManager[OtelSpan]:
        fields = propagate.get_global_textmap().fields
        carrier = {name.lower(): value for name, value in headers.items() if name.lower() in fields}
        attributes = {"http.request.method": method, "http.route": route, "url.path": route}
        return _current(
            self._tracer,
            f"{method} {route}",
            context=propagate.extract(carrier),
            kind=SpanKind.SERVER,
            attributes=attributes,
        )

    def shutdown(self) -> None:
        for provider in self._providers:
            provider.shutdown()  # type: ignore[attr-defined]


def _protocol(environ: Mapping[str, str], signal: str) -> str:
    value = environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    return value.strip().lower()


def _span_exporter(name: str, environ: Mapping[str, str]) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter()
    if _protocol(environ, "TRACES") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter as HttpSpanExporter,
    )

    return HttpSpanExporter()


def _log_exporter(name: str, environ: Mapping[str, str]) -> LogRecordExporter:
    if name == "console":
        return ConsoleLogRecordExporter()
    if _protocol(environ, "LOGS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter

        return OTLPLogExporter()
    from opentelemetry.exporter.otlp.proto.http._log_exporter import (
        OTLPLogExporter as HttpLogExporter,
    )

    return HttpLogExporter()


def _resource(environ: Mapping[str, str]) -> Resource:
    named = "OTEL_SERVICE_NAME" in environ or "service.name=" in environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if named:
        return resource
    return resource.merge(Resource({"service.name": DEFAULT_SERVICE_NAME}))


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.lower().split(",") if name.strip() not in ("", "none")]


def start(environ: Mapping[str, str]) -> tuple[OtelRuntime, CoreTelemetry]:
    """The providers, exporters and both telemetry objects for ``environ`` (tracing on)."""
    resource = _resource(environ)
    tracer_provider = TracerProvider(resource=resource)
    traces = _names(environ["OTEL_TRACES_EXPORTER"])
    for name in traces:
        tracer_provider.add_span_processor(BatchSpanProcessor(_span_exporter(name, environ)))
    providers: list[object] = [tracer_provider]
    logger = None
    logs = _names(environ.get("OTEL_LOGS_EXPORTER", ",".join(traces)))
    if logs:
        logger_provider = LoggerProvider(resource=resource)
        for name in logs:
            logger_provider.add_log_record_processor(
                BatchLogRecordProcessor(_log_exporter(name, environ))
            )
        logger = logger_provider.get_logger(SCOPE)
        providers.append(logger_provider)
    tracer = tracer_provider.get_tracer(SCOPE)
    explain = environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").lower()
    core = CoreTelemetry(tracer, logger, explain=explain == "true")
    return OtelRuntime(tracer, providers), core
