"""Structured logs: one event per line, context bound once, no secrets, no message bodies.

:func:`configure_logging` sets up structlog and routes the standard library's loggers (aiokafka,
the SDKs) through the same processors, so every line leaving the process is rendered alike:
JSON in production, a readable console format on a terminal (``log_format``: ``auto`` picks by
whether the stream is a TTY). Context travels in contextvars: :func:`bind_record` binds the
request id, topic/partition/offset and W3C trace id for everything logged while a message is
handled (a message task calls :func:`mark_record` once instead); the fields are made only when a
line is logged (:func:`merge_record`), so a message that logs nothing pays one context variable.

aiokafka's known-transient start-up errors (no group coordinator yet on a fresh broker, a new
topic's leader election) are demoted to debug during start-up (:class:`TransientStartupNoise`);
after it, and for every other error, levels are kept. A library's line repeated many times a
second (aiokafka looking for a deleted topic) is shown at most once per 10 s, with a count of
those held back (:class:`consumers.repeats.RepeatedLines`).

Two processors stand between an event and its rendering:

* :class:`Redactor` replaces secrets: ``SecretStr`` values, string values of keys whose name says
  key/password/secret/token/authorization/credential, bearer tokens and API-key-shaped strings
  (``sk-...``, ``sk-ant-...``) anywhere in any text, including exception tracebacks;
* unless ``debug_payloads`` is on, message bodies (``payload``, ``output``, ``context``,
  ``messages`` and raw payload fields) are replaced by their size.

Why one module of this length: the log pipeline (redaction of secrets and bodies, renderers,
the standard library's routing, start-up noise from aiokafka, the per-message context) must be
configured in one order at one place.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import logging
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TextIO

import structlog
from aiokafka.errors import (
    GroupCoordinatorNotAvailableError,
    GroupLoadInProgressError,
    NotCoordinatorForGroupError,
)
from pydantic import SecretBytes, SecretStr
from structlog.typing import EventDict, Processor, WrappedLogger

from consumers.repeats import RepeatedLines

LogFormat = Literal["auto", "json", "console"]

REDACTED = "[REDACTED]"
BODY_KEYS = frozenset(
    {
        "payload",
        "output",
        "context",
        "messages",
        "payload_text",
        "payload_base64",
        "body",
        "value",
        "expected_output",
        "input_text",
    }
)
_SENSITIVE_KEY = re.compile(
    r"key|passw|secret|token|authori[sz]ation|credential|cookie|sasl", re.IGNORECASE
)
_SECRET_TEXT = (
    (re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_\-]{6,}"), "sk-" + REDACTED),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}"), r"\1 " + REDACTED),
    (
        re.compile(
            r"(?i)\b(authorization|x-api-key|api[_-]?key|password|secret|token)"
            r"(['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]{4,}"
        ),
        r"\1\2" + REDACTED,
    ),
)
_HANDLER_NAME = "groundguard"
# The SDKs' HTTP transports (httpx2/httpcore2 under openai 3 and anthropic 2) log one INFO line
# per request: chatter that costs CPU on every judge call, so they start at WARNING.
PAYLOAD_LOGGERS = {
    "aiokafka": logging.WARNING,
    "openai": logging.INFO,
    "anthropic": logging.INFO,
    "httpx": logging.WARNING,
    "httpcore": logging.WARNING,
    "httpx2": logging.WARNING,
    "httpcore2": logging.WARNING,
}
HEADERS_READ = 256  # a trace id is looked for in a record's first headers, as the runtime reads
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


def scrub_text(text: str) -> str:
    """``text`` with API keys, bearer tokens and ``key=value`` secrets replaced."""
    for pattern, replacement in _SECRET_TEXT:
        text = pattern.sub(replacement, text)
    return text


def _is_body(value: Any) -> bool:
    return isinstance(value, str | bytes | Mapping | list | tuple) and bool(value)


def _size(value: Any) -> int:
    if isinstance(value, str | bytes):
        return len(value)
    return len(repr(value))


class Redactor:
    """structlog processor: removes secrets everywhere and bodies unless ``debug_payloads``."""

    def __init__(self, *, debug_payloads: bool = False) -> None:
        self.debug_payloads = debug_payloads

    def __call__(self, logger: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
        return {key: self._field(key, value) for key, value in event_dict.items()}

    def _field(self, key: str, value: Any) -> Any:
        if not self.debug_payloads and key in BODY_KEYS and _is_body(value):
            return f"[dropped {_size(value)} chars; set debug_payloads to log bodies]"
        if isinstance(value, SecretStr | SecretBytes):
            return REDACTED
        if _SENSITIVE_KEY.search(key) and isinstance(value, str | bytes) and value:
            return REDACTED
        return self._value(value)

    def _value(self, value: Any) -> Any:
        if isinstance(value, SecretStr | SecretBytes):
            return REDACTED
        if isinstance(value, str):
            return scrub_text(value)
        if isinstance(value, bytes):
            return scrub_text(value.decode("utf-8", "replace"))
        if isinstance(value, Mapping):
            return {str(k): self._field(str(k), v) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self._value(v) for v in value]
        if isinstance(value, int | float | bool) or value is None:
            return value
        return scrub_text(str(value))


def _choose_format(log_format: LogFormat, stream: TextIO) -> Literal["json", "console"]:
    if log_format != "auto":
        return log_format
    isatty = getattr(stream, "isatty", None)
    return "console" if isatty is not None and isatty() else "json"


def _renderer(fmt: Literal["json", "console"], stream: TextIO) -> Processor:
    if fmt == "json":
        return structlog.processors.JSONRenderer(sort_keys=False, default=str)
    colors = bool(getattr(stream, "isatty", lambda: False)())
    return structlog.dev.ConsoleRenderer(
        colors=colors, exception_formatter=structlog.dev.plain_traceback
    )


def shared_processors(*, debug_payloads: bool) -> list[Processor]:
    """The chain every event goes through before rendering (structlog's and stdlib's alike)."""
    return [
        structlog.contextvars.merge_contextvars,
        merge_record,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
        structlog.processors.UnicodeDecoder(),
        Redactor(debug_payloads=debug_payloads),
    ]


# aiokafka's errors that every fresh start may log while the broker finishes setting up: no
# group coordinator yet (the offsets topic is being created, or its leader elected), the group
# still loading, a new topic's leader not yet elected. aiokafka retries them itself.
_TRANSIENT_COORDINATOR_ERRORS = (
    GroupCoordinatorNotAvailableError,
    NotCoordinatorForGroupError,
    GroupLoadInProgressError,
)
STARTUP_GRACE_S = 60.0  # default start-up window in which they are demoted to debug


def is_transient_startup_noise(record: logging.LogRecord) -> bool:
    """Whether ``record`` is one of aiokafka's known-transient start-up lines."""
    args = record.args if isinstance(record.args, tuple) else ()
    if record.name == "aiokafka.consumer.group_coordinator":
        return (
            record.msg == "Group Coordinator Request failed: %s"
            and len(args) == 1
            and isinstance(args[0], _TRANSIENT_COORDINATOR_ERRORS)
        )
    return (
        record.name == "aiokafka.cluster"
        and record.msg == "Topic %s is not available during auto-create initialization"
    )


class TransientStartupNoise(logging.Filter):
    """Handler filter: during the first ``grace_s`` seconds, aiokafka's known-transient start-up
    errors (:func:`is_transient_startup_noise`) become debug lines (shown only when aiokafka logs
    at debug). Every other record, and these ones after the grace, keep their level: a
    coordinator still missing after start-up is a real problem and is shown as such."""

    def __init__(self, grace_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._until = clock() + grace_s

    def filter(self, record: logging.LogRecord) -> bool:
        if (
            record.levelno <= logging.DEBUG
            or not is_transient_startup_noise(record)
            or self._clock() >= self._until
        ):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def configure_logging(
    *,
    log_format: LogFormat = "auto",
    level: str | int = "info",
    debug_payloads: bool = False,
    stream: TextIO | None = None,
    startup_grace_s: float = STARTUP_GRACE_S,
) -> None:
    """Configure structlog and the stdlib root logger; calling it again replaces the setup.

    For ``startup_grace_s`` seconds aiokafka's transient start-up errors are demoted to debug
    (:class:`TransientStartupNoise`); a library's repeated lines are bounded
    (:class:`consumers.repeats.RepeatedLines`)."""
    stream = stream if stream is not None else sys.stderr
    numeric = level if isinstance(level, int) else logging.getLevelName(level.upper())
    shared = shared_processors(debug_payloads=debug_payloads)
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _renderer(_choose_format(log_format, stream), stream),
        ],
    )
    handler = logging.StreamHandler(stream)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(formatter)
    handler.addFilter(TransientStartupNoise(startup_grace_s))
    handler.addFilter(RepeatedLines())
    root = logging.getLogger()
    _remove_our_handlers(root)
    root.addHandler(handler)
    root.setLevel(numeric)
    _cap_library_loggers(numeric, debug_payloads=debug_payloads)


def _cap_library_loggers(level: int, *, debug_payloads: bool) -> None:
    """Library debug logs print message bodies and prompts (aiokafka's "Sending ... value=",
    the SDKs' request options) inside their text, where no processor can tell them apart: they
    stay at INFO and above unless ``debug_payloads`` is on. The INFO chatter of aiokafka and of
    the HTTP transports is dropped."""
    for name, floor in PAYLOAD_LOGGERS.items():
        logging.getLogger(name).setLevel(level if debug_payloads else max(level, floor))


def _remove_our_handlers(root: logging.Logger) -> None:
    for handler in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(handler)
        handler.close()


def reset_logging() -> None:
    """Undo :func:`configure_logging` (for tests and embedding applications)."""
    _remove_our_handlers(logging.getLogger())
    for name in PAYLOAD_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET)
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()
    _RECORD.set(None)


def trace_id_from_headers(headers: Iterable[tuple[str, bytes | None]] | None) -> str | None:
    """The W3C trace id from a ``traceparent`` header, if there is a valid one."""
    for name, value in headers or ():
        if name.lower() == "traceparent" and value:
            match = _TRACEPARENT.match(value.decode("ascii", "replace").strip().lower())
            if match and match.group(1) != "0" * 32:
                return match.group(1)
    return None


@dataclass(slots=True)
class RecordContext:
    """The record a message task handles; its log fields are made only when a line is logged
    (:func:`merge_record`), so a message that logs nothing pays one context variable."""

    topic: str
    partition: int
    offset: int
    request_id: str | None = None
    headers: Sequence[tuple[str, bytes | None]] | None = None


_RECORD: contextvars.ContextVar[RecordContext | None] = contextvars.ContextVar(
    "groundguard_record", default=None
)


def merge_record(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """Add the bound record's coordinates, request id and trace id (an event's own keys win)."""
    record = _RECORD.get()
    if record is None:
        return event_dict
    event_dict.setdefault("topic", record.topic)
    event_dict.setdefault("partition", record.partition)
    event_dict.setdefault("offset", record.offset)
    if record.request_id is not None:
        event_dict.setdefault("request_id", record.request_id)
    headers = record.headers
    trace_id = trace_id_from_headers(
        None if headers is None else itertools.islice(headers, HEADERS_READ)
    )
    if trace_id is not None:
        event_dict.setdefault("trace_id", trace_id)
    return event_dict


def mark_record(
    *,
    topic: str,
    partition: int,
    offset: int,
    request_id: str | None = None,
    headers: Sequence[tuple[str, bytes | None]] | None = None,
) -> None:
    """Bind a record to every log line of the current task from here on, without a reset: a
    task runs in its own copy of the context, so this is the message task's binding."""
    _RECORD.set(RecordContext(topic, partition, offset, request_id, headers))


def bind_request_id(request_id: str) -> None:
    """Add the request id to the bound record (or to the context, with no record bound)."""
    record = _RECORD.get()
    if record is None:
        structlog.contextvars.bind_contextvars(request_id=request_id)
    else:
        record.request_id = request_id


@contextlib.contextmanager
def bind_record(
    *,
    topic: str,
    partition: int,
    offset: int,
    request_id: str | None = None,
    headers: Sequence[tuple[str, bytes | None]] | None = None,
) -> Iterator[None]:
    """Bind a record's coordinates, request id and trace id to every log line in this block."""
    token = _RECORD.set(RecordContext(topic, partition, offset, request_id, headers))
    try:
        yield
    finally:
        _RECORD.reset(token)


def get_logger(name: str | None = None) -> Any:
    """A structlog logger (``structlog.get_logger``), named like the stdlib logger it feeds."""
    return structlog.get_logger(name)
