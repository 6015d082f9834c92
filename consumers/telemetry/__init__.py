"""Traces and evaluation events over OTLP: off unless asked, nothing imported or done when off.

Tracing is on when ``OTEL_TRACES_EXPORTER`` is set to ``otlp`` or ``console`` (unset or
``none``: off; ``OTEL_SDK_DISABLED=true`` turns it off whatever else is set), and it needs the
``groundguard[otel]`` extra (``opentelemetry-sdk`` and the OTLP exporters): a process asked to
trace without it refuses to start. Everything else is the standard ``OTEL_*`` environment
read by the SDK and its exporters: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``/``..._LOGS_ENDPOINT``), ``OTEL_EXPORTER_OTLP_PROTOCOL``
(``http/protobuf``, the default, or ``grpc``), ``OTEL_EXPORTER_OTLP_HEADERS``,
``OTEL_TRACES_SAMPLER``/``OTEL_TRACES_SAMPLER_ARG`` (e.g. ``parentbased_traceidratio`` and
``0.1``), ``OTEL_SERVICE_NAME`` (default ``groundguard``), ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_PROPAGATORS``, ``OTEL_BSP_*``. Evaluation events are log records (the Logs API) sent by
``OTEL_LOGS_EXPORTER`` (default: the traces' exporter); with ``OTEL_LOGS_EXPORTER=none`` they
are span events on the guardrail span instead. The verdict's explanation, which may quote the
answer or its evidence, is in the event only with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (redacted, 256 characters).

What is traced (``consumers/telemetry/otel.py``): each Kafka message is a CONSUMER span
``process {topic}``, the child of the record's W3C ``traceparent``/``tracestate``, with its
partition, offset and outcome; its records are published under a PRODUCER span ``send``, whose
context replaces the input's ``traceparent``/``tracestate`` on every record groundguard
publishes (verdict, quarantine, approved, reply, dead letter). Each ``serve`` request is a
SERVER span, the child of the request's ``traceparent``. The core's spans and events are in
:mod:`guard.tracing`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from consumers.errors import SettingsError
from guard import tracing as core_tracing

if TYPE_CHECKING:
    from consumers.runtime.envelope import OutRecord, RecordLike

EXPORTERS = ("otlp", "console")
DEFAULT_SERVICE_NAME = "groundguard"


class Span(Protocol):
    @property
    def recording(self) -> bool: ...

    def set_attributes(self, attributes: core_tracing.Attributes) -> None: ...

    def failed(self, error_type: str) -> None: ...


class RuntimeTracing(Protocol):
    """The runtime's spans: a message, its publication, an HTTP check."""

    @property
    def enabled(self) -> bool: ...

    def message(self, record: RecordLike) -> AbstractContextManager[Span]:
        """The message's span, current while the block runs."""

    def publish(self, outputs: Sequence[OutRecord]) -> AbstractContextManager[Span]:
        """The span of publishing one message's records."""

    def stamp(self, outputs: list[OutRecord]) -> list[OutRecord]:
        """``outputs`` carrying the current span's context (``traceparent``, ``tracestate``)."""

    def http(
        self, method: str, route: str, headers: Mapping[str, str]
    ) -> AbstractContextManager[Span]:
        """A SERVER span for one request, the child of its ``traceparent``."""

    def shutdown(self) -> None:
        """Send what is buffered and stop the exporters."""


class _NoopSpan:
    recording = False

    def set_attributes(self, attributes: core_tracing.Attributes) -> None:
        pass

    def failed(self, error_type: str) -> None:
        pass

    def __enter__(self) -> _NoopSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class _Noop:
    enabled = False
    _span = _NoopSpan()

    def message(self, record: RecordLike) -> AbstractContextManager[Span]:
        return self._span

    def publish(self, outputs: Sequence[OutRecord]) -> AbstractContextManager[Span]:
        return self._span

    def stamp(self, outputs: list[OutRecord]) -> list[OutRecord]:
        return outputs

    def http(
        self, method: str, route: str, headers: Mapping[str, str]
    ) -> AbstractContextManager[Span]:
        return self._span

    def shutdown(self) -> None:
        pass


NOOP: RuntimeTracing = _Noop()
_current: RuntimeTracing = NOOP


def requested(environ: Mapping[str, str]) -> bool:
    """Whether the environment asks for traces (see the module docstring)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    return exporter not in ("", "none")


def check(environ: Mapping[str, str]) -> None:
    """:class:`SettingsError` when tracing is asked for but cannot be had."""
    if not requested(environ):
        return
    exporters = [e.strip() for e in environ["OTEL_TRACES_EXPORTER"].lower().split(",")]
    unknown = [e for e in exporters if e not in EXPORTERS]
    if unknown:
        raise SettingsError(
            "OTEL_TRACES_EXPORTER",
            f"{', '.join(unknown)} is not an exporter groundguard knows",
            "use otlp (or console to debug), or none to trace nothing",
        )
    try:
        import opentelemetry.sdk  # noqa: F401
    except ImportError:
        raise SettingsError(
            "OTEL_TRACES_EXPORTER",
            "tracing is asked for but the OpenTelemetry SDK is not installed",
            "pip install 'groundguard[otel]', or unset OTEL_TRACES_EXPORTER",
        ) from None


def setup(environ: Mapping[str, str]) -> RuntimeTracing:
    """Start tracing when the environment asks for it (:func:`check` first), install the core's
    hooks (:func:`guard.tracing.install`) and return the runtime's; :data:`NOOP` when off.
    Call it before building the judge."""
    global _current
    check(environ)
    if not requested(environ):
        return NOOP
    from consumers.telemetry.otel import start

    runtime, core = start(environ)
    core_tracing.install(core)
    _current = runtime
    return runtime


def current() -> RuntimeTracing:
    return _current


def shutdown() -> None:
    """Flush and stop what :func:`setup` started; back to :data:`NOOP`."""
    global _current
    runtime, _current = _current, NOOP
    core_tracing.install(None)
    runtime.shutdown()
