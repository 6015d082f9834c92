"""The service settings: one pydantic-settings model and its sections, with the checks that span
fields. :mod:`consumers.config` reads them from a file and the environment; their defaults are
in :mod:`guard.defaults`.

Why one module of this length: the settings model and its sections, each field with its
description (shown by the config errors and the chart's schema), and the checks that span
sections; reading them is in :mod:`consumers.config`.
"""

from __future__ import annotations

import socket
import ssl
import warnings
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from guard import defaults
from guard.budgets.settings import MAX_IN_FLIGHT_LIMIT, MAX_MEMORY_BYTES
from guard.settings import JudgeSettings
from guard.settings_model import (
    INT16_MAX,
    INT32_MAX,
    MAX_DURATION_S,
    SettingsModel,
    refuse_bool,
)
from guard.stream.release import Release

ENV_PREFIX = "GROUNDGUARD_"
# GROUNDGUARD_ variables that are not service settings: the project's own switches (scripts/kafka,
# scripts/check-*, scripts/image; GROUNDGUARD_REQUIRE_NATIVE=1, set in CI, makes a missing native
# build an error)
NOT_SETTINGS = frozenset(
    {
        "GROUNDGUARD_BASE",
        "GROUNDGUARD_CACHE",
        "GROUNDGUARD_ENGINE",
        "GROUNDGUARD_IMAGE",
        "GROUNDGUARD_KAFKA_HOME",
        "GROUNDGUARD_REQUIRE_NATIVE",
        "GROUNDGUARD_TOOLS_CACHE",
    }
)


class Guarantee(StrEnum):
    AT_LEAST_ONCE = "at_least_once"
    EXACTLY_ONCE = "exactly_once"


class Ordering(StrEnum):
    NONE = "none"
    KEY = "key"


class FailurePolicy(StrEnum):
    FAIL_CLOSED = "fail_closed"
    FAIL_OPEN = "fail_open"


class SecurityProtocol(StrEnum):
    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"


class SaslMechanism(StrEnum):
    PLAIN = "PLAIN"
    SCRAM_SHA_256 = "SCRAM-SHA-256"
    SCRAM_SHA_512 = "SCRAM-SHA-512"


class _Section(SettingsModel):
    """A section of the service settings (:class:`guard.settings_model.SettingsModel`)."""


TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
MAX_TOPIC_CHARS = 249  # Kafka's limit on a topic name
# output records carry a verdict: the smallest one is about 1.2 KB (an error verdict with its
# input coordinates and headers), one with claims several KB
MIN_OUTPUT_BYTES = 4096
FETCH_FACTOR = 2  # the consumer fetches twice max_message_bytes per partition (runtime/kafka.py)
PRODUCER_MARGIN_BYTES = 65_536  # max_request_size is max_output_bytes plus this (runtime/kafka.py)


def topic_name(name: str) -> str:
    """``name`` when Kafka accepts it as a topic name; a ValueError saying its rule otherwise."""
    if not 1 <= len(name) <= MAX_TOPIC_CHARS or not TOPIC_CHARS.issuperset(name):
        raise ValueError(
            f"a Kafka topic name is 1 to {MAX_TOPIC_CHARS} characters of [a-zA-Z0-9._-] (this "
            f"one has {len(name)}{'' if TOPIC_CHARS.issuperset(name) else ', some not allowed'})"
        )
    if name in (".", ".."):
        raise ValueError("Kafka refuses the topic names '.' and '..'")
    return name


TopicName = Annotated[str, AfterValidator(topic_name)]


class TopicSettings(_Section):
    """The topics the service reads and writes; no two may be the same topic."""

    requests: TopicName = Field(
        default=defaults.DEFAULT_REQUESTS_TOPIC,
        description="The input: the RAG answers (requests) to judge.",
    )
    verdicts: TopicName = Field(
        default=defaults.DEFAULT_VERDICTS_TOPIC,
        description="Every verdict, keyed like its input, with the input's coordinates.",
    )
    quarantine: TopicName = Field(
        default=defaults.DEFAULT_QUARANTINE_TOPIC,
        description="Failing answers (under fail_closed also error and skipped ones) with "
        "their original payload and verdict.",
    )
    approved: TopicName | None = Field(
        default=None,
        description="The original payload of every message not quarantined, for readers that "
        "may only see approved answers. Off unless set.",
    )
    dlq: TopicName = Field(
        default=defaults.DEFAULT_DLQ_TOPIC,
        description="Dead letters: messages that cannot be judged (undecodable, invalid, "
        "oversized, a step that raised) with their original bytes and the reason.",
    )
    batch_state: TopicName = Field(
        default=defaults.DEFAULT_BATCH_STATE_TOPIC,
        description="judge.delivery batch: the compacted topic of submitted batches "
        "(created when missing, partitioned like the input).",
    )

    calibration: TopicName = Field(
        default=defaults.DEFAULT_CALIBRATION_TOPIC,
        description="judge.cascade.learn: the compacted topic of every replica's agreement "
        "counts (created when missing).",
    )
    labels: TopicName = Field(
        default=defaults.DEFAULT_LABELS_TOPIC,
        description="judge.cascade.learn: reviewers' labels of judged messages "
        "(groundguard label; schemas/review-label.v1.json), created when missing.",
    )

    deltas: TopicName | None = Field(
        default=None,
        description="Streamed answers: one record per delta (schemas/delta.v1.json), keyed by "
        "response id, assembled and judged span by span as they arrive. Off unless set.",
    )
    releases: TopicName = Field(
        default=defaults.DEFAULT_RELEASES_TOPIC,
        description="With topics.deltas: how far each streamed answer is released "
        "(schemas/release.v1.json), keyed by response id; created when missing.",
    )

    def outputs(self) -> list[str]:
        names = [self.verdicts, self.quarantine, self.dlq]
        names += [self.releases] if self.deltas else []
        return names + ([self.approved] if self.approved else [])

    def inputs(self) -> list[str]:
        """The topics the service consumes: the requests, and the deltas when set."""
        return [self.requests, *([self.deltas] if self.deltas else [])]


class SecuritySettings(_Section):
    """How the Kafka clients (consumer, producers, admin) authenticate and encrypt. Settings
    the protocol would ignore are refused at start."""

    protocol: SecurityProtocol = Field(
        default=SecurityProtocol.PLAINTEXT,
        description="Kafka security.protocol: SSL and SASL_SSL use TLS, SASL_PLAINTEXT and "
        "SASL_SSL authenticate with SASL.",
    )
    sasl_mechanism: SaslMechanism | None = Field(
        default=None, description="SASL protocols only; unset means PLAIN."
    )
    sasl_username: str | None = Field(
        default=None, description="SASL protocols only: the user (required with them)."
    )
    sasl_password: SecretStr | None = Field(
        default=None,
        description="SASL protocols only: the password (required with them); prefer the "
        "environment.",
    )
    ssl_cafile: Path | None = Field(
        default=None,
        description="TLS protocols only: a PEM file of the CAs that sign the brokers' "
        "certificates; unset: the system's trusted CAs.",
    )
    ssl_certfile: Path | None = Field(
        default=None,
        description="TLS protocols only: the client certificate (PEM) for mutual TLS.",
    )
    ssl_keyfile: Path | None = Field(
        default=None,
        description="TLS protocols only: the client certificate's private key (PEM), when it "
        "is not in ssl_certfile; needs ssl_certfile.",
    )
    ssl_key_password: SecretStr | None = Field(
        default=None, description="TLS protocols only: the password of the private key."
    )
    ssl_check_hostname: bool = Field(
        default=True,
        description="TLS protocols only: check that the broker's certificate names the host "
        "connected to.",
    )

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL)

    @property
    def uses_ssl(self) -> bool:
        return self.protocol in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL)

    def ssl_context(self) -> ssl.SSLContext | None:
        if not self.uses_ssl:
            return None
        context = ssl.create_default_context(
            cafile=str(self.ssl_cafile) if self.ssl_cafile else None
        )
        if self.ssl_certfile:
            password = self.ssl_key_password.get_secret_value() if self.ssl_key_password else None
            context.load_cert_chain(
                str(self.ssl_certfile),
                str(self.ssl_keyfile) if self.ssl_keyfile else None,
                password,
            )
        context.check_hostname = self.ssl_check_hostname
        return context

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments shared by aiokafka's consumer, producer and admin client."""
        kwargs: dict[str, Any] = {
            "security_protocol": self.protocol.value,
            "ssl_context": self.ssl_context(),
        }
        if self.uses_sasl:
            password = self.sasl_password.get_secret_value() if self.sasl_password else None
            kwargs |= {
                "sasl_mechanism": (self.sasl_mechanism or SaslMechanism.PLAIN).value,
                "sasl_plain_username": self.sasl_username,
                "sasl_plain_password": password,
            }
        return kwargs


class KafkaTuning(_Section):
    """Client knobs; the defaults suit slow judges (seconds per message)."""

    auto_offset_reset: str = Field(
        default=defaults.DEFAULT_KAFKA_AUTO_OFFSET_RESET,
        pattern="^(earliest|latest)$",
        description="Where the group starts reading a partition that has no committed offset: "
        "its first record or only new ones.",
    )
    max_poll_records: int = Field(
        default=defaults.DEFAULT_KAFKA_MAX_POLL_RECORDS,
        ge=1,
        le=INT32_MAX,
        description="Records one fetch (getmany) returns at most.",
    )
    max_poll_interval_ms: int = Field(
        default=defaults.DEFAULT_KAFKA_MAX_POLL_INTERVAL_MS,
        ge=1000,
        le=INT32_MAX,
        description="Kafka max.poll.interval.ms: the longest the consumer may go between "
        "fetches before it leaves the group.",
    )
    session_timeout_ms: int = Field(
        default=defaults.DEFAULT_KAFKA_SESSION_TIMEOUT_MS,
        ge=1000,
        le=INT32_MAX,
        description="How long the group waits for a silent member: the longest a killed "
        "replica's partitions stall (and, with static_membership, the time a restarted "
        "replica has to come back without a rebalance).",
    )
    static_membership: bool = Field(
        default=False,
        description="Join the group as instance_id (group.instance.id): a replica restarted "
        "under the same instance_id within session_timeout_ms gets its partitions back "
        "without a rebalance. Needs an instance_id stable across restarts (a StatefulSet pod "
        "name); a stopped replica does not leave the group, so its partitions wait "
        "session_timeout_ms for another.",
    )
    heartbeat_interval_ms: int = Field(
        default=defaults.DEFAULT_KAFKA_HEARTBEAT_INTERVAL_MS,
        ge=100,
        le=INT32_MAX,
        description="How often the consumer tells the group it is alive; must be below "
        "session_timeout_ms (about a third of it).",
    )
    request_timeout_ms: int = Field(
        default=defaults.DEFAULT_KAFKA_REQUEST_TIMEOUT_MS,
        ge=1000,
        le=INT32_MAX,
        description="How long the consumer, producers and admin client wait for a broker's "
        "answer to one request.",
    )
    metadata_max_age_ms: int = Field(
        default=defaults.DEFAULT_KAFKA_METADATA_MAX_AGE_MS,
        ge=1000,
        le=INT32_MAX,
        description="How old the consumer's and producer's cluster metadata may get before "
        "it is asked for again: a requests topic deleted and created again is consumed again, "
        "and a deleted output topic noticed, within this (aiokafka's own default is 5 minutes).",
    )
    linger_ms: int = Field(
        default=defaults.DEFAULT_KAFKA_LINGER_MS,
        ge=0,
        le=INT32_MAX,
        description="How long the producer waits to fill a batch before sending it (replies "
        "are sent without waiting).",
    )
    max_batch_size: int = Field(
        default=defaults.DEFAULT_KAFKA_MAX_BATCH_SIZE,
        ge=16_384,
        le=INT32_MAX,
        description="Producer bytes buffered per partition; aiokafka's "
        "16 KiB default caps throughput at a few hundred "
        "verdicts/s.",
    )
    poll_timeout_ms: int = Field(
        default=defaults.DEFAULT_KAFKA_POLL_TIMEOUT_MS,
        ge=1,
        le=5000,
        description="How long one getmany() waits for records.",
    )
    transaction_timeout_ms: int = Field(
        default=defaults.DEFAULT_KAFKA_TRANSACTION_TIMEOUT_MS,
        ge=1000,
        le=INT32_MAX,
        description="Exactly-once only: the broker aborts a transaction left open longer than "
        "this.",
    )


class ReplySettings(_Section):
    """Kafka request-reply (:mod:`consumers.reply`): a request carrying a ``kafka_replyTopic``
    and a ``kafka_correlationId`` header also gets its verdict on that topic. Off by default."""

    allowed_prefixes: tuple[str, ...] = Field(
        default=(),
        description="Reply topics must start with one of these prefixes (e.g. 'guard.reply.'); "
        "empty: no replies are sent and reply headers are ignored (counted).",
    )
    timeout_s: float = Field(
        default=defaults.DEFAULT_REPLY_TIMEOUT_S,
        gt=0,
        le=120,
        description="How long a reply may wait for its topic's metadata and its acknowledgement; "
        "then it is dropped and counted (the verdicts topic stays the record of truth).",
    )
    missing_topic_recheck_s: float = Field(
        default=defaults.DEFAULT_REPLY_MISSING_TOPIC_RECHECK_S,
        gt=0,
        le=MAX_DURATION_S,
        description="A reply topic found missing is taken as missing for this long "
        "(replies to it are dropped at once); a reply partition missing from the topic's "
        "known metadata is asked for afresh at most once per topic in this interval.",
    )
    log_interval_s: float = Field(
        default=defaults.DEFAULT_REPLY_LOG_INTERVAL_S,
        ge=0,
        le=MAX_DURATION_S,
        description="An ignored or dropped reply is logged at most once per topic and reason "
        "in this interval.",
    )

    @property
    def enabled(self) -> bool:
        return bool(self.allowed_prefixes)


class MetricsSettings(_Section):
    """Prometheus metrics and the health routes."""

    enabled: bool = Field(
        default=True,
        description="run: serve /metrics, /healthz and /readyz on host:port (the chart's "
        "probes need it); serve: expose /metrics on the serve port.",
    )
    host: str = Field(
        default=defaults.DEFAULT_METRICS_HOST,
        description="run: the address the metrics and health server listens on (every "
        "interface by default: probes and scrapes come from outside the pod).",
    )
    port: int = Field(
        default=defaults.DEFAULT_METRICS_PORT,
        ge=0,
        le=65535,
        description="Prometheus /metrics and /healthz, /readyz.",
    )
    stall_after_s: float = Field(
        default=defaults.DEFAULT_METRICS_STALL_AFTER_S,
        gt=0,
        le=MAX_DURATION_S,
        description="Unhealthy when work waits and nothing finished for this long.",
    )


class LogSettings(_Section):
    """Structured logs on stderr."""

    level: str = Field(
        default=defaults.DEFAULT_LOG_LEVEL,
        pattern="(?i)^(debug|info|warning|error|critical)$",
        description="The lowest level logged (any case); library loggers that print message "
        "bodies stay at info or above unless debug_payloads.",
    )
    format: str = Field(
        default=defaults.DEFAULT_LOG_FORMAT,
        pattern="^(auto|json|console)$",
        description="auto: console lines when stderr is a terminal, JSON lines otherwise.",
    )
    debug_payloads: bool = Field(
        default=False,
        description="Log message bodies (payload, output, context, messages); never in production.",
    )
    progress_interval_s: float = Field(
        default=defaults.DEFAULT_LOG_PROGRESS_INTERVAL_S,
        ge=0,
        le=MAX_DURATION_S,
        description="Log a service.progress line (counts, lag, judge spend and budget left) "
        "this often; 0 turns it off.",
    )


class DeadlinePolicy(StrEnum):
    ERROR = "error"
    OFFLINE = "offline"


class UpstreamKind(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"


class Undecided(StrEnum):
    BLOCK = "block"
    RELEASE = "release"


class ProxySettings(_Section):
    """``serve``'s streaming proxy: ``POST /v1/chat/completions`` (OpenAI) or ``POST
    /v1/messages`` (Anthropic), forwarded to ``upstream_url`` and released as judged (see
    :mod:`consumers.serve.proxy`). Off until ``upstream_url`` is set."""

    upstream_url: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s]+$",
        description="The model API to forward to: an OpenAI-compatible base URL ending before "
        "/chat/completions (https://api.openai.com/v1), or Anthropic's base URL "
        "(https://api.anthropic.com). Unset: the proxy routes answer 404.",
    )
    upstream_kind: UpstreamKind = Field(
        default=UpstreamKind.OPENAI,
        description="The upstream's API: openai serves POST /v1/chat/completions, anthropic "
        "serves POST /v1/messages (the other route answers 404).",
    )
    upstream_api_key: SecretStr | None = Field(
        default=None,
        description="The key sent upstream (Authorization: Bearer for openai, x-api-key for "
        "anthropic) in place of the caller's credentials. Unset: the caller's credentials are "
        "passed through (not possible with api_keys_file, where the caller's key is "
        "groundguard's).",
    )
    upstream_timeout_s: float = Field(
        default=defaults.DEFAULT_PROXY_UPSTREAM_TIMEOUT_S,
        gt=0,
        le=3600,
        description="The longest wait for the upstream to connect, answer, or send the next "
        "bytes of a stream; then the answer is cut off (an error event).",
    )
    release: Release = Field(
        default=Release(defaults.DEFAULT_PROXY_RELEASE),
        description="verified: text is released up to the end of the last span judged not to "
        "fail; final: held until the whole answer is judged; immediate: streamed at once and "
        "judged after (monitoring only: nothing is stopped).",
    )
    system_as_evidence: bool = Field(
        default=False,
        description="Read the system message as evidence (RAG prompts that carry the retrieved "
        "documents there). Off: it is shown to the judge as instructions, not evidence, since "
        "it also holds rules and personas an answer must not be grounded in.",
    )
    notice: str = Field(
        default=defaults.DEFAULT_PROXY_NOTICE,
        max_length=2000,
        description="Text sent in place of a stopped answer's rest (empty: none), before the "
        "stream ends with finish_reason content_filter (openai) or stop_reason refusal "
        "(anthropic).",
    )
    undecided: Undecided = Field(
        default=Undecided.BLOCK,
        description="A span the judge could not decide (an error verdict, a deadline, a spent "
        "budget): block (fail closed) or release it. A sampled-out span is always released.",
    )
    max_spans_in_flight: int = Field(
        default=defaults.DEFAULT_PROXY_MAX_SPANS_IN_FLIGHT,
        ge=1,
        le=1000,
        description="Span judgements running at once for one answer; later spans wait for a "
        "slot (generation does not).",
    )
    max_span_chars: int = Field(
        default=defaults.DEFAULT_PROXY_MAX_SPAN_CHARS,
        ge=50,
        le=1_000_000,
        description="Text without a sentence end is cut into spans of at most this many "
        "characters (at whitespace), so nothing is held without bound.",
    )
    max_answer_chars: int = Field(
        default=defaults.DEFAULT_PROXY_MAX_ANSWER_CHARS,
        ge=1000,
        le=INT32_MAX,
        description="An upstream answer longer than this is cut off (an error event): the "
        "bound on what one proxied answer holds.",
    )
    publish: bool = Field(
        default=True,
        description="When bootstrap_servers is set: publish each proxied answer's verdict to "
        "topics.verdicts, and a failing one to topics.quarantine, keyed by its request id, "
        "in the background (the client's stream never waits). false: the proxy.verdict log "
        "line only.",
    )
    publish_queue: int = Field(
        default=defaults.DEFAULT_PROXY_PUBLISH_QUEUE,
        ge=1,
        le=1_000_000,
        description="Proxied answers' verdicts waiting for the broker; one more is dropped "
        "(groundguard_proxy_publish_dropped_total{reason=queue_full}, logged), never waited for.",
    )
    publish_queue_bytes: int = Field(
        default=defaults.DEFAULT_PROXY_PUBLISH_QUEUE_BYTES,
        ge=65_536,
        le=INT32_MAX,
        description="Bytes of those records (verdict and quarantine) held at once; past it an "
        "answer is dropped as for publish_queue. At least twice max_output_bytes.",
    )
    publish_flush_s: float = Field(
        default=defaults.DEFAULT_PROXY_PUBLISH_FLUSH_S,
        gt=0,
        le=600,
        description="At stop, after the requests drained: the longest wait for the queued "
        "verdicts to be acknowledged; those left are dropped (reason shutdown, logged).",
    )


class StreamSettings(_Section):
    """Streamed answers over Kafka (``topics.deltas``; :mod:`consumers.runtime.streams`): how
    long a response may stay open, and how many (and how much text) may be open at once.
    Every response closed without its whole text (timed out, evicted) gets an ``error``
    verdict saying why."""

    timeout_s: float = Field(
        default=defaults.DEFAULT_STREAM_TIMEOUT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="A response whose next delta has not arrived this long after its last one "
        "(a gap, or no final delta) gets an error verdict with reason stream_timeout.",
    )
    max_open: int = Field(
        default=defaults.DEFAULT_STREAM_MAX_OPEN,
        ge=1,
        le=INT32_MAX,
        description="Open responses held per replica; one more evicts the oldest (the lowest "
        "first offset) with an error verdict, reason stream_evicted (counted and logged).",
    )
    max_open_bytes: int = Field(
        default=defaults.DEFAULT_STREAM_MAX_OPEN_BYTES,
        ge=1024,
        le=MAX_MEMORY_BYTES,
        description="Delta text held by open responses per replica (UTF-8 bytes); past it "
        "the oldest are evicted as with max_open.",
    )
    undecided: Undecided = Field(
        default=Undecided.BLOCK,
        description="A span the judge could not decide: block (its release stops there, the "
        "final verdict is that span's) or release it.",
    )
    max_spans_in_flight: int = Field(
        default=defaults.DEFAULT_PROXY_MAX_SPANS_IN_FLIGHT,
        ge=1,
        le=1000,
        description="Span judgements running at once for one response; later spans wait.",
    )
    max_span_chars: int = Field(
        default=defaults.DEFAULT_PROXY_MAX_SPAN_CHARS,
        ge=50,
        le=1_000_000,
        description="Text without a sentence end is cut into spans of at most this many "
        "characters (at whitespace).",
    )


class ServeSettings(_Section):
    """``groundguard serve``: the HTTP check API (see :mod:`consumers.serve`)."""

    host: str = Field(
        default=defaults.DEFAULT_SERVE_HOST,
        min_length=1,
        description="The address to listen on: loopback by default; 0.0.0.0 (every interface) "
        "needs api_keys_file or allow_unauthenticated, else serve refuses to start.",
    )
    allow_unauthenticated: bool = Field(
        default=False,
        description="Let serve listen on a non-loopback address without api_keys_file (a "
        "trusted network: a NetworkPolicy, a sidecar doing the auth); a warning is logged.",
    )
    port: int = Field(
        default=defaults.DEFAULT_SERVE_PORT,
        ge=0,
        le=65535,
        description="/v1/check, /v1/check/batch, /openapi.json, /metrics, /healthz, /readyz.",
    )
    max_in_flight: int = Field(
        default=defaults.DEFAULT_SERVE_MAX_IN_FLIGHT,
        ge=1,
        le=100_000,
        description="Requests judged at once (a batch counts each item); past it a request is "
        "refused at once with 429 and Retry-After, never queued.",
    )
    deadline_ms: int = Field(
        default=defaults.DEFAULT_SERVE_DEADLINE_MS,
        ge=1,
        le=defaults.MAX_SERVE_DEADLINE_MS,
        description="A request's deadline when it sends no x-groundguard-deadline-ms header.",
    )
    on_deadline: DeadlinePolicy = Field(
        default=DeadlinePolicy(defaults.DEFAULT_SERVE_ON_DEADLINE),
        description="When the judge has not answered by the deadline: error (an error verdict, "
        "kind deadline_exceeded: fail closed) or offline (the offline judge's verdict, "
        "judge.fallback_reason deadline_exceeded).",
    )
    api_keys_file: Path | None = Field(
        default=None,
        description="A file of bearer API keys, one per line (# comments); every /v1 request "
        "must send one. Unset: no authentication (a warning is logged at start).",
    )
    max_body_bytes: int = Field(
        default=defaults.DEFAULT_SERVE_MAX_BODY_BYTES,
        ge=1024,
        le=INT32_MAX,
        description="Larger request bodies are refused with 413.",
    )
    max_batch_items: int = Field(
        default=defaults.DEFAULT_SERVE_MAX_BATCH_ITEMS,
        ge=1,
        le=100_000,
        description="Requests in one /v1/check/batch call.",
    )
    retry_after_s: int = Field(
        default=defaults.DEFAULT_SERVE_RETRY_AFTER_S,
        ge=1,
        le=86_400,
        description="Retry-After sent with a 429 (shed or budget refusal).",
    )
    max_buffered_body_bytes: int = Field(
        default=defaults.DEFAULT_SERVE_MAX_BUFFERED_BODY_BYTES,
        ge=1024,
        description="Request bodies held at once, from reading to the answer (parsing may take "
        "~50x their bytes); a body that would pass it is refused with 429 and Retry-After "
        "before it is read (Content-Length) or as it arrives. At least max_body_bytes.",
    )
    max_connections: int = Field(
        default=defaults.DEFAULT_SERVE_MAX_CONNECTIONS,
        ge=1,
        le=1_000_000,
        description="Open HTTP connections; one past it is answered 503 with Retry-After and "
        "closed.",
    )
    header_timeout_s: float = Field(
        default=defaults.DEFAULT_SERVE_HEADER_TIMEOUT_S,
        gt=0,
        le=3600,
        description="Seconds a client has to send a request's headers whole, counted from the "
        "connection (or the previous answer); then the connection is closed (408).",
    )
    proxy: ProxySettings = Field(default_factory=ProxySettings)


class ServiceSettings(BaseSettings):
    """Everything ``groundguard run`` needs. See the module docstring for how it is read."""

    # hide_input_in_errors: a validation error never quotes values (API keys, redis_url)
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
        hide_input_in_errors=True,
        allow_inf_nan=False,
    )

    bootstrap_servers: str = Field(
        default=defaults.DEFAULT_BOOTSTRAP_SERVERS,
        min_length=1,
        description="The Kafka brokers to start from, comma-separated host:port "
        "([v6 address]:port).",
    )
    topics: TopicSettings = Field(default_factory=TopicSettings)
    group_id: str = Field(
        default=defaults.DEFAULT_GROUP_ID,
        min_length=1,
        description="The consumer group: replicas with the same group_id share the input's "
        "partitions and its committed offsets.",
    )
    client_id: str = Field(
        default=defaults.DEFAULT_CLIENT_ID,
        min_length=1,
        description="Prefix of the Kafka client ids the brokers log: client_id-instance_id "
        "(consumer), client_id-producer and client_id-admin.",
    )
    instance_id: str = Field(
        default_factory=socket.gethostname,
        min_length=1,
        description="Stable per replica (pod name); part of the "
        "transactional id in exactly-once mode.",
    )
    security: SecuritySettings = Field(default_factory=SecuritySettings)
    concurrency: int = Field(
        default=defaults.DEFAULT_CONCURRENCY,
        ge=1,
        le=100_000,
        description="Judge calls in flight at once, over all partitions; "
        "the judge's budget.max_in_flight follows it.",
    )
    partition_buffer: int = Field(
        default=defaults.DEFAULT_PARTITION_BUFFER,
        ge=1,
        le=10_000_000,
        description="Messages held per partition (in flight, waiting "
        "or unacknowledged) before it is paused.",
    )
    max_buffered_bytes: int = Field(
        default=defaults.DEFAULT_MAX_BUFFERED_BYTES,
        ge=1_048_576,
        le=MAX_MEMORY_BYTES,
        description="Bytes held over all partitions before partitions are paused: input "
        "records (keys, values, headers) until their message is finished, and output records "
        "until acknowledged (exactly-once: until their transaction commits). Bounds memory "
        "when messages are big, as partition_buffer bounds their count. The messages being "
        "parsed and judged are also admitted within it by their parsed size (about 520 bytes "
        "per JSON object besides their bytes), so many tiny documents cannot take many times it.",
    )
    max_message_bytes: int = Field(
        default=defaults.DEFAULT_MAX_MESSAGE_BYTES,
        ge=64,
        le=INT32_MAX // FETCH_FACTOR,
        description="Larger messages go to the dead-letter topic. At most 1,073,741,823: "
        "the consumer fetches twice this, and Kafka's fetch size is a 32-bit field.",
    )
    max_output_bytes: int = Field(
        default=defaults.DEFAULT_MAX_OUTPUT_BYTES,
        ge=MIN_OUTPUT_BYTES,
        le=INT32_MAX - PRODUCER_MARGIN_BYTES,
        description="An output record larger than this (the broker's "
        "default max.message.bytes is ~1 MB) is replaced "
        "by a dead letter instead of failing to publish.",
    )
    guarantee: Guarantee = Field(
        default=Guarantee.AT_LEAST_ONCE,
        description="at_least_once: a message's offset is committed once its outputs are "
        "acknowledged (after a crash some are published again, same request_id); "
        "exactly_once: outputs and offsets commit in one Kafka transaction (needs "
        "transactional_id_prefix).",
    )
    transactional_id_prefix: str | None = Field(
        default=None, description="Exactly-once only; the transactional id is prefix-instance_id."
    )
    ordering: Ordering = Field(
        default=Ordering.NONE,
        description="none: a partition's messages are judged concurrently; key: messages of "
        "a partition with the same key are judged one after another.",
    )
    failure_policy: FailurePolicy = Field(
        default=FailurePolicy.FAIL_CLOSED,
        description="Undecided verdicts (error, and skipped except by sampling): fail_closed "
        "quarantines them, fail_open lets them through (copied to the approved topic when set).",
    )
    commit_interval_s: float = Field(
        default=defaults.DEFAULT_COMMIT_INTERVAL_S,
        gt=0,
        le=60,
        description="At-least-once: how often offsets are committed.",
    )
    transaction_interval_s: float = Field(
        default=defaults.DEFAULT_TRANSACTION_INTERVAL_S,
        gt=0,
        le=60,
        description="Exactly-once: how often finished messages are published in one transaction.",
    )
    drain_timeout_s: float = Field(
        default=defaults.DEFAULT_DRAIN_TIMEOUT_S,
        ge=0,
        le=MAX_DURATION_S,
        description="On SIGTERM, how long in-flight judgements may "
        "finish before the rest is left for redelivery.",
    )
    revoke_timeout_s: float = Field(
        default=defaults.DEFAULT_REVOKE_TIMEOUT_S,
        ge=0,
        le=MAX_DURATION_S,
        description="On a rebalance, how long in-flight judgements "
        "of revoked partitions may finish.",
    )
    publish_timeout_s: float = Field(
        default=defaults.DEFAULT_PUBLISH_TIMEOUT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="How long one output may be retried before "
        "the service stops (offsets stay uncommitted).",
    )
    commit_timeout_s: float = Field(
        default=defaults.DEFAULT_COMMIT_TIMEOUT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="How long one offset commit or one exactly-once "
        "transaction may take; a commit that times out "
        "is retried at the next interval, a transaction "
        "that times out stops the service.",
    )
    startup_timeout_s: float = Field(
        default=defaults.DEFAULT_STARTUP_TIMEOUT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="How long start-up waits for an unreachable broker or a missing topic "
        "before run exits 1 naming it; aiokafka's transient start-up errors are logged at "
        "debug level for this long.",
    )
    learning_flush_s: float = Field(
        default=defaults.DEFAULT_LEARNING_FLUSH_S,
        gt=0,
        le=MAX_DURATION_S,
        description="judge.cascade.learn: how often this replica publishes its changed "
        "agreement counts to topics.calibration (and at stop).",
    )
    create_topics: bool = Field(
        default=False,
        description="Create the requests and output topics that are missing at start (with "
        "topic_partitions and topic_replication); otherwise they are waited for.",
    )
    topic_partitions: int = Field(
        default=defaults.DEFAULT_TOPIC_PARTITIONS,
        ge=1,
        le=INT32_MAX,
        description="Partitions of a topic created by create_topics (and in the kafka-topics "
        "command logged for a missing one).",
    )
    topic_replication: int = Field(
        default=defaults.DEFAULT_TOPIC_REPLICATION,
        ge=1,
        le=INT16_MAX,
        description="Replication factor of a topic created by create_topics (and in the "
        "kafka-topics command logged for a missing one).",
    )
    kafka: KafkaTuning = Field(default_factory=KafkaTuning)
    reply: ReplySettings = Field(default_factory=ReplySettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    serve: ServeSettings = Field(default_factory=ServeSettings)
    stream: StreamSettings = Field(default_factory=StreamSettings)

    @property
    def proxy_publishes(self) -> bool:
        """Whether ``serve``'s proxy publishes its verdicts: a proxy, a broker given
        (``bootstrap_servers`` set, not its default) and ``serve.proxy.publish``."""
        proxy = self.serve.proxy
        configured = "bootstrap_servers" in self.model_fields_set
        return proxy.upstream_url is not None and proxy.publish and configured

    @property
    def transactional_id(self) -> str | None:
        if self.guarantee is not Guarantee.EXACTLY_ONCE or not self.transactional_id_prefix:
            return None
        return f"{self.transactional_id_prefix}-{self.instance_id}"

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        return refuse_bool(cls, value, info)

    @field_validator("bootstrap_servers")
    @classmethod
    def _servers_are_host_port(cls, value: str) -> str:
        for server in value.split(","):
            bootstrap_server(server.strip())
        return value

    @model_validator(mode="before")
    @classmethod
    def _one_concurrency_knob(cls, data: Any) -> Any:
        return one_concurrency_knob(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _cross_checks(self) -> ServiceSettings:
        for field, problem, fix in _cross_field_problems(self):
            raise ValueError(f"[{field}] {problem} || {fix}")
        return self


def one_concurrency_knob(data: dict[str, Any]) -> dict[str, Any]:
    """``concurrency`` is the one bound on judge calls: the judge's ``budget.max_in_flight``
    (its concurrency layer and SDK connection pools) is set from it. ``judge.budget.max_in_flight``
    given here is a deprecated alias: it sets ``concurrency`` when that is not given."""
    judge = _as_dict(data.get("judge", {}))
    budget = _as_dict(judge.get("budget", {})) if isinstance(judge, dict) else None
    if not isinstance(judge, dict) or not isinstance(budget, dict):
        return data  # not a mapping: validation reports it
    if "max_in_flight" in budget:
        warnings.warn(
            "judge.budget.max_in_flight is deprecated in the service settings; set "
            "concurrency (it bounds judge calls in flight, and max_in_flight follows "
            "it)",
            FutureWarning,
            stacklevel=2,
        )
        data = {**data, "concurrency": data.get("concurrency", budget["max_in_flight"])}
    concurrency = data.get("concurrency", defaults.DEFAULT_CONCURRENCY)
    try:
        bound = int(concurrency) if not isinstance(concurrency, bool) else 0
    except (TypeError, ValueError, OverflowError):
        return data  # validation names the bad concurrency
    if bound < 1:
        return data
    budget = {**budget, "max_in_flight": min(bound, MAX_IN_FLIGHT_LIMIT)}
    return {**data, "judge": {**judge, "budget": budget}}


def bootstrap_server(server: str) -> None:
    """A ValueError unless ``server`` is ``host``, ``host:port`` or ``[v6 address]:port`` with a
    port from 1 to 65535 (the server's text is not quoted: a list may come from a secret)."""
    host, port = server, ""
    if server.startswith("["):
        host, _, port = server[1:].partition("]")
        port = port.removeprefix(":")
    elif server.count(":") == 1:
        host, _, port = server.partition(":")
    if not host.strip() or (port and not (port.isascii() and port.isdigit())):
        raise ValueError(
            "each bootstrap server must be host:port (comma-separated, e.g. "
            "kafka-0:9092,kafka-1:9092)"
        )
    if port and not 1 <= int(port) <= 65535:
        raise ValueError("a bootstrap server's port must be from 1 to 65535")


def is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a name the OS refuses (too long, say)."""
    try:
        return Path(path).is_file()
    except OSError:
        return False


def _as_dict(value: Any) -> Any:
    """A settings model as the fields it was given (unset fields keep their defaults)."""
    return value.model_dump(exclude_unset=True) if isinstance(value, BaseModel) else value


def _cross_field_problems(s: ServiceSettings) -> list[tuple[str, str, str]]:
    problems: list[tuple[str, str, str]] = []
    if s.guarantee is Guarantee.EXACTLY_ONCE and not s.transactional_id_prefix:
        problems.append(
            (
                "transactional_id_prefix",
                "exactly_once needs a transactional id prefix",
                "set transactional_id_prefix (GROUNDGUARD_TRANSACTIONAL_ID_PREFIX), "
                "e.g. 'groundguard'; each replica adds its instance_id",
            )
        )
    problems += _security_problems(s.security)
    problems += _topic_problems(s.topics)
    problems += _serve_problems(s)
    problems += _reply_problems(s)
    if s.judge.api_key_file is not None and not is_file(s.judge.api_key_file):
        problems.append(
            (
                "judge.api_key_file",
                f"file {s.judge.api_key_file} does not exist",
                "point it at a file holding the API key",
            )
        )
    problems += _batch_problems(s)
    problems += _group_problems(s)
    problems += _stream_problems(s)
    return problems


def _stream_problems(s: ServiceSettings) -> list[tuple[str, str, str]]:
    """Streamed answers: an open answer's deltas are pending work, so health must wait longer
    than an answer may stay silent (a timed-out answer's verdict is progress)."""
    if s.topics.deltas is None or s.stream.timeout_s < s.metrics.stall_after_s:
        return []
    return [
        (
            "stream.timeout_s",
            f"{s.stream.timeout_s:g}s is not below metrics.stall_after_s "
            f"({s.metrics.stall_after_s:g}s): answers waiting for their deltas would make the "
            "service look stalled",
            "lower stream.timeout_s or raise metrics.stall_after_s",
        )
    ]


REBALANCE_MARGIN_MS = 5_000  # a revoking member's rejoin, after its revoke and its commit
INT32_MAX = 2**31 - 1  # Kafka's timeouts travel as 32-bit integers


def rebalance_timeout_ms(s: ServiceSettings) -> float:
    """How long the group waits for a member to rejoin during a rebalance: at least the session
    timeout, and long enough for this member's revoke (in-flight judgements get
    ``revoke_timeout_s``, then their offsets ``commit_timeout_s``). aiokafka's default is the
    session timeout, so a member still handing back its partitions was evicted."""
    handing_back_ms = (s.revoke_timeout_s + s.commit_timeout_s) * 1000 + REBALANCE_MARGIN_MS
    return max(float(s.kafka.session_timeout_ms), handing_back_ms)


def _group_problems(s: ServiceSettings) -> list[tuple[str, str, str]]:
    """The consumer group's timings: heartbeats within the session, and a rebalance timeout
    (:func:`rebalance_timeout_ms`) Kafka can carry."""
    problems = []
    k = s.kafka
    if k.heartbeat_interval_ms >= k.session_timeout_ms:
        problems.append(
            (
                "kafka.heartbeat_interval_ms",
                f"{k.heartbeat_interval_ms} ms is not below kafka.session_timeout_ms "
                f"({k.session_timeout_ms} ms): the group would evict this member",
                "lower it to about a third of session_timeout_ms",
            )
        )
    if not rebalance_timeout_ms(s) <= INT32_MAX:
        problems.append(
            (
                "revoke_timeout_s",
                "revoke_timeout_s and commit_timeout_s together exceed the rebalance timeout "
                f"Kafka can carry ({INT32_MAX} ms)",
                "set them to seconds or minutes (defaults 10 and 30)",
            )
        )
    return problems


_OUTPUTS = ("verdicts", "quarantine", "dlq", "approved", "deltas", "releases")


def _topic_problems(topics: TopicSettings) -> list[tuple[str, str, str]]:
    """The requests topic is no output, and no two outputs share a topic: a reader of one
    would get the other's records (verdicts read as quarantine, dead letters as verdicts)."""
    if topics.requests in [*topics.outputs(), topics.deltas]:
        return [
            (
                "topics.requests",
                "the requests topic is also an output (or the deltas) topic",
                "use distinct topic names so verdicts are not judged again",
            )
        ]
    seen: dict[str, str] = {}
    for name in _OUTPUTS:
        topic = getattr(topics, name)
        if topic is not None and topic in seen:
            return [
                (
                    f"topics.{name}",
                    f"topics.{name} is the same topic as topics.{seen[topic]}",
                    f"give topics.{name} a topic of its own",
                )
            ]
        seen.setdefault(topic, name)
    return []


def _batch_problems(s: ServiceSettings) -> list[tuple[str, str, str]]:
    """``delivery: batch``: readiness must outlast the waits that are deliberate, and the
    journal topic must be a topic of its own."""
    if s.judge.delivery != "batch":
        return []
    problems = []
    if s.topics.deltas is not None:
        problems.append(
            (
                "topics.deltas",
                "streamed answers are judged span by span while they stream, not in batches",
                "use judge.delivery realtime or flex with topics.deltas",
            )
        )
    waits = max(s.judge.batch.max_wait_s, s.judge.batch.poll_interval_s)
    if s.metrics.stall_after_s <= waits:
        problems.append(
            (
                "metrics.stall_after_s",
                f"{s.metrics.stall_after_s:g}s is not longer than judge.batch's max_wait_s or "
                f"poll_interval_s ({waits:g}s): waiting for a batch would read as a stall",
                "raise metrics.stall_after_s or lower the batch waits",
            )
        )
    learning = (s.topics.calibration, s.topics.labels)
    if s.topics.calibration == s.topics.labels or set(learning) & {
        s.topics.requests,
        s.topics.batch_state,
        *s.topics.outputs(),
    }:
        problems.append(
            (
                "topics.calibration",
                "the calibration and labels topics must differ from each other and from the "
                "service's other topics",
                "keep the defaults (guard.calibration, guard.labels) or give each its own",
            )
        )
    if s.topics.batch_state in (s.topics.requests, *s.topics.outputs()):
        problems.append(
            (
                "topics.batch_state",
                "the batch journal topic is also the requests or an output topic",
                "give the journal a topic of its own (default guard.batches)",
            )
        )
    return problems


def _reply_problems(s: ServiceSettings) -> list[tuple[str, str, str]]:
    """A reply prefix must name a family of topics, never the service's own topics."""
    problems: list[tuple[str, str, str]] = []
    own = [*s.topics.inputs(), *s.topics.outputs()]
    for prefix in s.reply.allowed_prefixes:
        if not prefix.strip():
            problems.append(
                (
                    "reply.allowed_prefixes",
                    "an empty prefix would let a request send its verdict to any topic",
                    "list prefixes such as 'guard.reply.'",
                )
            )
        clash = [topic for topic in own if topic.startswith(prefix)]
        if prefix.strip() and clash:
            problems.append(
                (
                    "reply.allowed_prefixes",
                    f"prefix {prefix!r} matches the service's own topic {clash[0]!r}",
                    "use a prefix that only reply topics start with, e.g. 'guard.reply.'",
                )
            )
    return problems


def _serve_problems(s: ServiceSettings) -> list[tuple[str, str, str]]:
    """The serve: section's checks across its fields and the file system."""
    problems: list[tuple[str, str, str]] = []
    if s.serve.max_batch_items > s.serve.max_in_flight:
        problems.append(
            (
                "serve.max_batch_items",
                f"a batch of {s.serve.max_batch_items} could never be admitted under "
                f"serve.max_in_flight {s.serve.max_in_flight}",
                "lower serve.max_batch_items or raise serve.max_in_flight",
            )
        )
    if s.serve.max_buffered_body_bytes < s.serve.max_body_bytes:
        problems.append(
            (
                "serve.max_buffered_body_bytes",
                f"{s.serve.max_buffered_body_bytes} is below serve.max_body_bytes "
                f"{s.serve.max_body_bytes}: a body of the largest size could never be read",
                "raise serve.max_buffered_body_bytes or lower serve.max_body_bytes",
            )
        )
    proxy = s.serve.proxy
    if proxy.upstream_url and s.serve.api_keys_file is not None and not proxy.upstream_api_key:
        problems.append(
            (
                "serve.proxy.upstream_api_key",
                "with serve.api_keys_file the caller's key is groundguard's, so there are no "
                "caller credentials to pass upstream",
                "set serve.proxy.upstream_api_key (GROUNDGUARD_SERVE__PROXY__UPSTREAM_API_KEY)",
            )
        )
    problems += _proxy_publish_problems(s)
    if s.serve.api_keys_file is not None and not is_file(s.serve.api_keys_file):
        problems.append(
            (
                "serve.api_keys_file",
                f"file {s.serve.api_keys_file} does not exist",
                "point it at a file of API keys, one per line (a mounted Secret)",
            )
        )
    return problems


def _proxy_publish_problems(s: ServiceSettings) -> list[tuple[str, str, str]]:
    """Publishing the proxy's verdicts: the queue holds an answer's largest records, and
    ``serve.proxy.publish: true`` said outright needs a proxy and a broker to publish to."""
    proxy = s.serve.proxy
    if not proxy.publish:
        return []
    outright = "publish" in proxy.model_fields_set
    if proxy.upstream_url is None and outright:
        return [
            (
                "serve.proxy.publish",
                "true, but there is no proxy whose verdicts to publish",
                "set serve.proxy.upstream_url, or remove serve.proxy.publish",
            )
        ]
    if not s.proxy_publishes and not outright:
        return []
    problems = []
    if proxy.publish_queue_bytes < 2 * s.max_output_bytes:
        problems.append(
            (
                "serve.proxy.publish_queue_bytes",
                f"{proxy.publish_queue_bytes} is below twice max_output_bytes "
                f"({s.max_output_bytes}): an answer's records (verdict and quarantine) might "
                "never fit the queue",
                "raise serve.proxy.publish_queue_bytes or lower max_output_bytes",
            )
        )
    if "bootstrap_servers" not in s.model_fields_set:  # said outright: publish is true
        problems.append(
            (
                "bootstrap_servers",
                "serve.proxy.publish is true but no broker is configured",
                "set bootstrap_servers (GROUNDGUARD_BOOTSTRAP_SERVERS) to the brokers, or "
                "serve.proxy.publish: false",
            )
        )
    return problems


_SASL_FIELDS = ("sasl_mechanism", "sasl_username", "sasl_password")
_SSL_FIELDS = ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_key_password")


def _security_problems(sec: SecuritySettings) -> list[tuple[str, str, str]]:
    """Credentials the protocol would silently ignore are refused, as are missing ones."""
    problems: list[tuple[str, str, str]] = []
    sasl_set = [name for name in _SASL_FIELDS if getattr(sec, name) is not None]
    if sasl_set and not sec.uses_sasl:
        want = "SASL_SSL" if sec.uses_ssl else "SASL_SSL (or SASL_PLAINTEXT)"
        problems.append(
            (
                "security.protocol",
                f"{', '.join(sasl_set)} set, but protocol "
                f"{sec.protocol} does not use SASL, so they would be ignored",
                f"set security.protocol: {want} (GROUNDGUARD_SECURITY__PROTOCOL="
                "SASL_SSL), or remove the security.sasl_ settings",
            )
        )
    ssl_set = [name for name in _SSL_FIELDS if getattr(sec, name) is not None]
    ssl_set += ["ssl_check_hostname"] if "ssl_check_hostname" in sec.model_fields_set else []
    if ssl_set and not sec.uses_ssl:
        problems.append(
            (
                "security.protocol",
                f"{', '.join(ssl_set)} set, but protocol "
                f"{sec.protocol} does not use TLS, so they would be ignored",
                "set security.protocol to SSL or SASL_SSL "
                "(GROUNDGUARD_SECURITY__PROTOCOL), or remove the security.ssl_ settings",
            )
        )
    if sec.uses_sasl and not (sec.sasl_username and sec.sasl_password):
        problems.append(
            (
                "security.sasl_username",
                f"{sec.protocol} needs a user and password",
                "set security.sasl_username and security.sasl_password "
                "(GROUNDGUARD_SECURITY__SASL_PASSWORD)",
            )
        )
    for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile"):
        path = getattr(sec, name)
        if path is not None and not is_file(path):
            problems.append(
                (
                    f"security.{name}",
                    f"file {path} does not exist",
                    "point it at a readable PEM file",
                )
            )
    if sec.ssl_keyfile and not sec.ssl_certfile:
        problems.append(
            (
                "security.ssl_certfile",
                "a key file was given without a certificate",
                "set security.ssl_certfile to the client certificate",
            )
        )
    return problems
