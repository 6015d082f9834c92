"""Every default, in one place: of the judge core, its budget layers, replay, and the streaming
runtime's settings (:mod:`consumers.settings` reads its defaults from here too)."""

from __future__ import annotations

from typing import Final, Literal

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RETRIES = 2
RETRY_BASE_DELAY_S = 0.5
RETRY_MAX_DELAY_S = 8.0
RETRY_AFTER_CAP_S = 60.0
DEFAULT_THRESHOLD = 0.5
DEFAULT_MAX_CONTEXT_CHARS = 4000
DEFAULT_MAX_OUTPUT_CHARS = 4000
# a reply's cap: at the prompt's bounds a claim takes ~70 tokens (12-word claim, 15-word quote,
# 12-word reason, keys), so 4,096 holds ~55 claims, more than a 4,000-character output makes; a
# reply cut there is a malformed_judge_output error naming judge.max_tokens
DEFAULT_MAX_TOKENS = 4096
# v2: static system prompt, token in the user message, worked examples; v3: a short answer
# (bounded explanation, claims and quotes; reasons only for unsupported claims)
PROMPT_VERSION = "groundedness-v4"
SCHEMA_VERSION = "1"
MAX_EVIDENCE_ITEMS = 1000  # documents or turns rendered per request; the rest count as cut
DEFAULT_ON_TRUNCATED_OUTPUT: Final[Literal["judge_chunks"]] = "judge_chunks"  # or fail, pass
DEFAULT_MAX_OUTPUT_CHUNKS = 4  # windows of max_output_chars judged per output
DEFAULT_INJECTION_POLICY: Final[Literal["fail"]] = "fail"  # or flag, error
OFFLOAD_MIN_CHARS = 20_000  # inputs at least this long are worked on in a worker thread
PREPARE_THREADS = 2  # worker threads per process for CPU-heavy work (guard.offload)
DEFAULT_CASCADE_CONFIDENCE = 0.8  # the offline verdict stands at this confidence or above
DEFAULT_OPENAI_API: Final[Literal["chat"]] = "chat"  # or responses
DEFAULT_FAKE_LATENCY_S = 0.0
DEFAULT_REPLAY_CONCURRENCY = 16  # requests judged at once by replay
DEFAULT_BATCH_COMPLETION_WINDOW: Final[Literal["24h"]] = "24h"  # the only one both providers offer
DEFAULT_BATCH_MAX_ITEMS = 200  # items per provider batch (also bounded by concurrency)
DEFAULT_BATCH_MAX_WAIT_S = 60.0  # an open batch is submitted once its first item waited this long
DEFAULT_BATCH_POLL_INTERVAL_S = 30.0  # how often a submitted batch is polled
DEFAULT_BATCH_FAILURE_POLICY: Final[Literal["realtime"]] = "realtime"  # or error
DEFAULT_CALIBRATION_TOPIC = "guard.calibration"  # compacted; the learning cascade's counts
DEFAULT_LABELS_TOPIC = "guard.labels"  # reviewers' labels of judged messages
DEFAULT_LEARNING_FLUSH_S = 5.0  # how often a replica publishes its learning cascade's counts
DEFAULT_BATCH_STATE_TOPIC = "guard.batches"  # compacted; the runtime's submitted batches

# The streaming runtime (consumers/settings.py)
DEFAULT_REQUESTS_TOPIC = "rag.responses"
DEFAULT_VERDICTS_TOPIC = "guard.verdicts"
DEFAULT_QUARANTINE_TOPIC = "guard.quarantine"
DEFAULT_DLQ_TOPIC = "guard.dlq"
DEFAULT_RELEASES_TOPIC = "guard.releases"  # streamed answers over Kafka: how far each is released
DEFAULT_KAFKA_AUTO_OFFSET_RESET = "earliest"
DEFAULT_KAFKA_MAX_POLL_RECORDS = 500
DEFAULT_KAFKA_MAX_POLL_INTERVAL_MS = 300_000
DEFAULT_KAFKA_SESSION_TIMEOUT_MS = 45_000
DEFAULT_KAFKA_HEARTBEAT_INTERVAL_MS = 3_000
DEFAULT_KAFKA_REQUEST_TIMEOUT_MS = 40_000
DEFAULT_KAFKA_METADATA_MAX_AGE_MS = 30_000  # one metadata request per client per 30 s
DEFAULT_KAFKA_LINGER_MS = 5
DEFAULT_KAFKA_MAX_BATCH_SIZE = 1_048_576
DEFAULT_KAFKA_POLL_TIMEOUT_MS = 100
DEFAULT_KAFKA_TRANSACTION_TIMEOUT_MS = 60_000
# Kafka request-reply (consumers/reply/): off until reply.allowed_prefixes is set
DEFAULT_REPLY_TIMEOUT_S = 5.0  # a reply unacknowledged (or its topic unknown) by then is dropped
DEFAULT_REPLY_MISSING_TOPIC_RECHECK_S = 30.0  # a reply topic found missing is skipped this long
DEFAULT_REPLY_LOG_INTERVAL_S = 60.0  # an ignored or dropped reply: one log line per topic per this
DEFAULT_CLIENT_TIMEOUT_S = 10.0  # ScreeningClient.screen: the wait for a verdict, then fail closed
DEFAULT_METRICS_HOST = "0.0.0.0"  # every interface: the pod's probes and scrapes come from outside
DEFAULT_METRICS_PORT = 9464
DEFAULT_METRICS_STALL_AFTER_S = 120.0
DEFAULT_LOG_LEVEL = "info"
DEFAULT_LOG_FORMAT = "auto"
DEFAULT_LOG_PROGRESS_INTERVAL_S = 60.0
DEFAULT_BOOTSTRAP_SERVERS = "127.0.0.1:9092"
DEFAULT_GROUP_ID = "groundguard"
DEFAULT_CLIENT_ID = "groundguard"
DEFAULT_CONCURRENCY = 256
DEFAULT_PARTITION_BUFFER = 512
DEFAULT_MAX_BUFFERED_BYTES = 32 * 1024 * 1024
DEFAULT_MAX_MESSAGE_BYTES = 512 * 1024
DEFAULT_MAX_OUTPUT_BYTES = 1_000_000
DEFAULT_COMMIT_INTERVAL_S = 1.0
DEFAULT_TRANSACTION_INTERVAL_S = 0.1
DEFAULT_DRAIN_TIMEOUT_S = 30.0
DEFAULT_REVOKE_TIMEOUT_S = 10.0
DEFAULT_PUBLISH_TIMEOUT_S = 120.0
DEFAULT_COMMIT_TIMEOUT_S = 30.0
DEFAULT_STARTUP_TIMEOUT_S = 60.0
DEFAULT_TOPIC_PARTITIONS = 6
DEFAULT_TOPIC_REPLICATION = 1

# groundguard serve (consumers/serve): the HTTP check API
DEFAULT_SERVE_HOST = "127.0.0.1"  # loopback unless told (the chart sets 0.0.0.0 for its pods)
DEFAULT_SERVE_PORT = 8080
DEFAULT_SERVE_MAX_IN_FLIGHT = 256  # requests (batch items count one each) judged at once
DEFAULT_SERVE_DEADLINE_MS = 5_000  # a request without x-groundguard-deadline-ms gets this long
MAX_SERVE_DEADLINE_MS = 120_000  # the longest deadline a caller may ask for
DEFAULT_SERVE_ON_DEADLINE = "error"  # fail closed; "offline": the offline judge's verdict
DEFAULT_SERVE_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_SERVE_MAX_BATCH_ITEMS = 100
DEFAULT_SERVE_RETRY_AFTER_S = 1  # Retry-After on a shed (429) or a budget refusal
# Request bodies held at once (read, parsed, judged): parsing a body of tiny documents takes up
# to ~50 times its bytes, so 4 MiB of bodies stay well inside the chart's 512 Mi
DEFAULT_SERVE_MAX_BUFFERED_BODY_BYTES = 4 * 1024 * 1024
DEFAULT_SERVE_MAX_CONNECTIONS = 1024  # open HTTP connections; past it a new one gets 503, closed
DEFAULT_PROXY_RELEASE = "verified"  # release text only up to the last span judged not to fail
DEFAULT_PROXY_UPSTREAM_TIMEOUT_S = 120.0  # connect, and the longest silence of an upstream stream
DEFAULT_PROXY_MAX_SPANS_IN_FLIGHT = 4  # span judgements at once per answer (more wait)
DEFAULT_PROXY_MAX_SPAN_CHARS = 1200  # a run without a sentence end is cut at this length
DEFAULT_PROXY_MAX_ANSWER_CHARS = 200_000  # an upstream answer longer than this is cut off
DEFAULT_PROXY_PUBLISH_QUEUE = (
    1000  # proxied answers' verdicts waiting for the broker; more: dropped
)
DEFAULT_PROXY_PUBLISH_QUEUE_BYTES = 16 * 1024 * 1024  # and their bytes (records are ~2-20 KB)
DEFAULT_PROXY_PUBLISH_FLUSH_S = 5.0  # at stop, the wait for queued proxy verdicts to be acked
DEFAULT_PROXY_NOTICE = (
    "\n\n[groundguard: the rest of this answer was withheld: it is not supported by the sources.]"
)
DEFAULT_SERVE_HEADER_TIMEOUT_S = 10.0  # a request's headers must arrive whole within this

# The budget layers (guard/budgets)
DEFAULT_MAX_IN_FLIGHT = DEFAULT_CONCURRENCY  # no hidden throughput cliff behind the runtime
DEFAULT_MAX_RATE_WAIT_S = 120.0
DEFAULT_RATE_LIMIT_COOLDOWN_S = 1.0
DEFAULT_MAX_RATE_LIMITED_ATTEMPTS = 10
DEFAULT_MAX_PAUSE_S = 86_400.0 + 60.0  # long enough for a day window to roll over
DEFAULT_FAILURE_THRESHOLD = 5
DEFAULT_OPEN_FOR_S = 30.0
DEFAULT_HALF_OPEN_PROBES = 1
DEFAULT_CACHE_SIZE = 10_000
DEFAULT_CACHE_TTL_S = 3_600.0
DEFAULT_CACHE_MAX_BYTES = 32 * 1024 * 1024  # verdicts with many long claims must not grow it
CACHE_ENTRY_BYTES = 500  # Python objects of one cached outcome or claim, besides their text
DEFAULT_REDIS_PREFIX = "groundguard"
DEFAULT_REDIS_TIMEOUT_S = 0.5
DEFAULT_REDIS_RETRY_S = 5.0
DEFAULT_SAMPLE_RATE = 1.0

# Cost levers (guard/providers/pricing.py, guard/providers/caching.py, guard/providers/flex.py)
CACHE_MIN_TOKENS = 1024  # shortest cacheable prefix when a price file says none (OpenAI's)
CACHE_ESTIMATE_MARGIN = 1.1  # chars/4 may miss a prompt's real tokens by 10%: a prefix cached
# for certain is this far past the minimum by the estimate (examples: auto, guard/providers/caching)
CACHE_STEP_TOKENS = 128  # OpenAI caches prefixes in steps of this many tokens past the minimum
CACHE_TTL_S = 300.0  # a cached prefix unused this long is gone (OpenAI 5-10 min, Anthropic 5 min)
DEFAULT_DELIVERY: Final[Literal["realtime"]] = "realtime"  # or flex, batch
DEFAULT_FLEX_ON_CAPACITY: Final[Literal["realtime"]] = "realtime"  # or wait
DEFAULT_FLEX_MAX_WAIT_S = 300.0  # on_capacity=wait: give up after this long without capacity
DEFAULT_PROMPT_EXAMPLES: Final[Literal["auto"]] = "auto"  # or on, off
DEFAULT_ANTHROPIC_BREAKPOINT: Final[Literal["auto"]] = "auto"  # or always, never
FLEX_RETRY_BASE_S = 1.0  # first wait after a flex capacity refusal; doubles up to the cap
FLEX_RETRY_MAX_S = 30.0

# streamed answers over Kafka (topics.deltas; consumers/runtime/streams.py)
DEFAULT_STREAM_TIMEOUT_S = 60.0  # an open response silent this long gets a stream_timeout verdict
DEFAULT_STREAM_MAX_OPEN = 10_000  # open responses per replica; more evict the oldest
DEFAULT_STREAM_MAX_OPEN_BYTES = 64 * 1024 * 1024  # their text held; more evict the oldest
DEFAULT_STREAM_CLOSED_MEMORY = 100_000  # closed response ids remembered, to drop late deltas
