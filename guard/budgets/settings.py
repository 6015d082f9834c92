"""Budget settings: how much judging the guard may do, and what happens when it may not.

Every bound of the budget layers is named here; their defaults are in :mod:`guard.defaults`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, SecretStr, model_validator

from guard import defaults
from guard.settings_model import MAX_DURATION_S, SettingsModel

MAX_IN_FLIGHT_LIMIT = 10_000
CHARS_PER_TOKEN = 4  # tiktoken cannot run offline; a chars/4 estimate, corrected by usage
PROMPT_OVERHEAD_TOKENS = 1_700  # schema + system prompt with examples (~1,510), user text + fences
MAX_RATE = 10**9  # requests or tokens per minute: beyond any provider's tier
MAX_USD = 1e9  # a cost window's limit in USD
MAX_MEMORY_BYTES = 2**40  # 1 TiB: beyond any pod
EXPECTED_OUTPUT_TOKENS = 250  # reserved a reply: assumed, not measured (bench/cost.py models ~220)


class BudgetPolicy(StrEnum):
    """What to do when a cost budget window is spent."""

    PAUSE = "pause"  # wait until the window rolls over; nothing is lost, lag grows
    SKIP = "skip"  # a ``skipped`` verdict, routed per the fail-open/closed policy
    FALLBACK = "fallback"  # judge with a cheaper model or the offline judge, said in the verdict


def _redis_url_fault(url: SecretStr) -> str:
    """What makes ``url`` unusable for redis-py ("" when nothing does): the scheme, the host,
    the port, or a db path redis-py would silently read as db 0."""
    try:
        parts = urlsplit(url.get_secret_value())
        if parts.scheme == "unix":
            return "" if parts.path else "has no socket path"
        if parts.scheme not in ("redis", "rediss"):
            return "has no redis://, rediss:// or unix:// scheme"
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError:
        return "has a port that is no number from 0 to 65535"
    if not parts.hostname:
        return "has no host"
    db = parts.path.strip("/")
    return "" if not db or (db.isascii() and db.isdigit()) else "has a db path that is no number"


class FleetMode(StrEnum):
    """How replicas of one deployment share ``rpm``, ``tpm`` and the cost windows."""

    PARTITION_SHARE = "partition_share"  # each takes its share of the input partitions
    PER_REPLICA = "per_replica"  # each takes the whole limits (N replicas spend N times them)
    REDIS = "redis"  # exact fleet-wide limits and cache in Redis; partition shares in an outage


class SampleKey(StrEnum):
    """What sampling hashes: the request id, or the Kafka message key."""

    ID = "id"
    KEY = "key"


class BreakerSettings(SettingsModel):
    """Circuit breaker: opens after consecutive outage failures, probes before closing."""

    failure_threshold: int = Field(
        default=defaults.DEFAULT_FAILURE_THRESHOLD,
        ge=1,
        le=1_000,
        description="Consecutive outage failures (timeouts, unavailable; not rate limits) "
        "that open the breaker.",
    )
    open_for_s: float = Field(
        default=defaults.DEFAULT_OPEN_FOR_S,
        gt=0,
        le=3_600,
        description="How long the breaker stays open (calls fail circuit_open without being "
        "made) before it lets probes through.",
    )
    half_open_probes: int = Field(
        default=defaults.DEFAULT_HALF_OPEN_PROBES,
        ge=1,
        le=100,
        description="Calls let through at once to probe a judge that was down; a probe the "
        "judge answers closes the breaker, an outage failure opens it again.",
    )


class BudgetSettings(SettingsModel):
    """Limits on judging: concurrency, provider rate limits, spend, cache and sampling.

    ``None`` means unlimited. Cost windows are tumbling (aligned to the minute, hour and UTC
    day) and may be combined; the first spent window decides.
    """

    # a validation error never quotes its input: redis_url may hold a password
    model_config = ConfigDict(hide_input_in_errors=True)

    max_in_flight: int = Field(
        default=defaults.DEFAULT_MAX_IN_FLIGHT,
        ge=1,
        le=MAX_IN_FLIGHT_LIMIT,
        description="Judge calls in flight at once (the runtime's "
        "concurrency bounds messages; this bounds calls to the provider). The service sets it "
        "from concurrency; given in the service's settings it is a deprecated alias of "
        "concurrency.",
    )
    rpm: int | None = Field(
        default=None, ge=1, le=MAX_RATE, description="Requests per minute to the model."
    )
    tpm: int | None = Field(
        default=None, ge=1, le=MAX_RATE, description="Tokens per minute to the model."
    )
    max_rate_wait_s: float = Field(
        default=defaults.DEFAULT_MAX_RATE_WAIT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="Longest a call waits for the rate limiter before failing as rate_limited.",
    )
    max_rate_limited_attempts: int = Field(
        default=defaults.DEFAULT_MAX_RATE_LIMITED_ATTEMPTS,
        ge=1,
        le=100,
        description="Calls one request may make that end in 429 before it fails rate_limited.",
    )
    rate_limit_cooldown_s: float = Field(
        default=defaults.DEFAULT_RATE_LIMIT_COOLDOWN_S,
        gt=0,
        le=600,
        description="Pause for every caller after a 429 that gives no Retry-After.",
    )
    cost_per_minute_usd: float | None = Field(
        default=None,
        gt=0,
        le=MAX_USD,
        description="Judge spend allowed per clock minute; unset: unlimited.",
    )
    cost_per_hour_usd: float | None = Field(
        default=None,
        gt=0,
        le=MAX_USD,
        description="Judge spend allowed per clock hour; unset: unlimited.",
    )
    cost_per_day_usd: float | None = Field(
        default=None,
        gt=0,
        le=MAX_USD,
        description="Judge spend allowed per UTC day; unset: unlimited.",
    )
    on_budget_exhausted: BudgetPolicy = Field(
        default=BudgetPolicy.PAUSE,
        description="When a cost window is spent: pause (wait for the window to roll over, up "
        "to max_pause_s), skip (a skipped verdict, routed by failure_policy) or fallback "
        "(fallback_model or the offline judge, said in the verdict).",
    )
    max_pause_s: float = Field(
        default=defaults.DEFAULT_MAX_PAUSE_S,
        gt=0,
        le=MAX_DURATION_S,
        description="Longest a call waits under the pause policy (then budget_exhausted).",
    )
    fallback_model: str | None = Field(
        default=None, description="Cheaper model of the same provider, for the fallback policy."
    )
    fallback_to_offline: bool = Field(
        default=False, description="Fallback policy: use the offline judge."
    )
    breaker: BreakerSettings = Field(default_factory=BreakerSettings)
    cache_size: int = Field(
        default=defaults.DEFAULT_CACHE_SIZE,
        ge=0,
        le=10_000_000,
        description="Verdicts kept in memory; 0 disables the cache.",
    )
    cache_ttl_s: float = Field(
        default=defaults.DEFAULT_CACHE_TTL_S,
        gt=0,
        le=MAX_DURATION_S,
        description="How long a cached verdict is reused for an identical case (same model, "
        "prompt, evidence and output).",
    )
    cache_max_bytes: int = Field(
        default=defaults.DEFAULT_CACHE_MAX_BYTES,
        ge=0,
        le=MAX_MEMORY_BYTES,
        description="Memory the cached verdicts may hold (about); the least recently used go "
        "first beyond it.",
    )
    sample_rate: float = Field(
        default=defaults.DEFAULT_SAMPLE_RATE,
        ge=0.0,
        le=1.0,
        description="Fraction of messages judged.",
    )
    sample_key: SampleKey = Field(
        default=SampleKey.ID,
        description="What sampling hashes: id (the request id) or key (the Kafka message key, "
        "the request id when there is none), so a key's messages are all judged or none.",
    )
    fleet: FleetMode = Field(
        default=FleetMode.PARTITION_SHARE,
        description="partition_share: rpm, tpm and cost windows are the whole fleet's, and "
        "each replica takes the share of its input partitions; redis: the replicas share "
        "them exactly (and the verdict cache) through redis_url, falling back to partition "
        "shares while Redis is unavailable; per_replica: every replica takes the whole limits.",
    )
    redis_url: SecretStr | None = Field(
        default=None,
        description="fleet: redis only: redis://[:password@]host:6379/0 (rediss:// for TLS).",
    )
    redis_prefix: str = Field(
        default=defaults.DEFAULT_REDIS_PREFIX,
        min_length=1,
        description="Prefix of the Redis keys: give each deployment (each budget) its own.",
    )
    redis_timeout_s: float = Field(
        default=defaults.DEFAULT_REDIS_TIMEOUT_S,
        gt=0,
        le=30,
        description="Longest one Redis command may take before Redis counts as unavailable.",
    )
    redis_retry_s: float = Field(
        default=defaults.DEFAULT_REDIS_RETRY_S,
        gt=0,
        le=3_600,
        description="While Redis is unavailable, how often it is tried again.",
    )

    @model_validator(mode="after")
    def _fallback_is_named(self) -> Self:
        if self.on_budget_exhausted is BudgetPolicy.FALLBACK and not (
            self.fallback_model or self.fallback_to_offline
        ):
            raise ValueError(
                "on_budget_exhausted=fallback needs fallback_model or fallback_to_offline=true"
            )
        if self.fallback_model and self.fallback_to_offline:
            raise ValueError("set fallback_model or fallback_to_offline, not both")
        if self.fleet is FleetMode.REDIS and self.redis_url is None:
            raise ValueError(
                "fleet=redis needs redis_url: set judge.budget.redis_url "
                "(GROUNDGUARD_JUDGE__BUDGET__REDIS_URL=redis://host:6379/0), or use "
                "fleet=partition_share"
            )
        if self.redis_url is not None and self.fleet is not FleetMode.REDIS:
            raise ValueError(
                f"redis_url is set but fleet is {self.fleet.value}, so it would be ignored: "
                "set judge.budget.fleet=redis, or remove redis_url"
            )
        if self.redis_url is not None and (fault := _redis_url_fault(self.redis_url)):
            raise ValueError(
                f"judge.budget.redis_url {fault} (the URL is not shown: it may hold a "
                "password): use redis://[:password@]host[:port][/db], rediss:// for TLS, or "
                "unix:///path"
            )
        return self

    def cost_limits(self) -> dict[str, float]:
        """The configured cost windows, by name (``minute``, ``hour``, ``day``)."""
        limits = {
            "minute": self.cost_per_minute_usd,
            "hour": self.cost_per_hour_usd,
            "day": self.cost_per_day_usd,
        }
        return {name: usd for name, usd in limits.items() if usd is not None}
