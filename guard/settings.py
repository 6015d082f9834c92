"""Judge settings: one frozen model, validated once at the edge and passed down explicitly."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr

from guard import defaults
from guard.budgets.settings import BudgetSettings
from guard.cost_settings import FlexSettings, PromptCacheSettings
from guard.models import ContextField, ScoringMode, TruncatedOutputPolicy
from guard.settings_model import INT32_MAX, MAX_DURATION_S, SettingsModel


class Provider(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    OFFLINE = "offline"
    CASCADE = "cascade"
    FAKE = "fake"


class BatchSettings(SettingsModel):
    """``delivery: batch``: how judge calls are gathered into provider batches."""

    max_items: int = Field(
        default=defaults.DEFAULT_BATCH_MAX_ITEMS,
        ge=1,
        le=50_000,
        description="Items per batch; the runtime's concurrency also bounds the items waiting.",
    )
    max_wait_s: float = Field(
        default=defaults.DEFAULT_BATCH_MAX_WAIT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="An open batch is submitted once its first item has waited this long.",
    )
    poll_interval_s: float = Field(
        default=defaults.DEFAULT_BATCH_POLL_INTERVAL_S,
        gt=0,
        le=MAX_DURATION_S,
        description="How often a submitted batch's status is read.",
    )
    completion_window: Literal["24h"] = Field(
        default=defaults.DEFAULT_BATCH_COMPLETION_WINDOW,
        description="The providers' completion window (24h is the only one).",
    )
    failure_policy: Literal["realtime", "error"] = Field(
        default=defaults.DEFAULT_BATCH_FAILURE_POLICY,
        description="An item that errored or expired: judged again in realtime, or an error "
        "verdict (reason batch_item_failed / batch_item_expired).",
    )


class JudgeSettings(SettingsModel):
    """How to judge. Secrets are ``SecretStr`` and never printed."""

    provider: Provider = Field(
        default=Provider.OFFLINE,
        description="Who judges: offline (deterministic rules, no network), openai, anthropic, "
        "cascade (offline first, then cascade_provider) or fake (tests).",
    )
    model: str = Field(
        default=defaults.DEFAULT_MODEL,
        description="The LLM judge's model; left at the default, the anthropic judge uses "
        "claude-haiku-4-5. The offline judge ignores it.",
    )
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint (vLLM, Ollama) or a proxy."
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="The LLM provider's API key. Prefer the environment: this variable, "
        "api_key_file or the provider's own (OPENAI_API_KEY, ANTHROPIC_API_KEY).",
    )
    api_key_file: Path | None = Field(
        default=None,
        description="A file holding only the API key (a mounted Secret); used when api_key is "
        "unset, before the provider's variable (OPENAI_API_KEY, ANTHROPIC_API_KEY).",
    )
    timeout_s: float = Field(
        default=defaults.DEFAULT_TIMEOUT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="How long one call to the LLM provider may take (each attempt).",
    )
    max_retries: int = Field(
        default=defaults.DEFAULT_MAX_RETRIES,
        ge=0,
        le=10,
        description="Retries of a judge call after a transient error (timeout, unavailable, "
        "429), with jittered exponential backoff or the provider's Retry-After.",
    )
    max_tokens: int = Field(
        default=defaults.DEFAULT_MAX_TOKENS,
        gt=0,
        le=INT32_MAX,
        description="Cap on the judge's reply; a reply cut there is a malformed_judge_output "
        "error.",
    )
    mode: ScoringMode = Field(
        default=ScoringMode.SCALE5,
        description="scale5: the judge rates 1 to 5, score (raw - 1) / 4; binary: grounded 1, "
        "not grounded 0.",
    )
    threshold: float = Field(
        default=defaults.DEFAULT_THRESHOLD,
        gt=0.0,
        le=1.0,
        description="Pass at score >= threshold; 0 would pass everything.",
    )
    context_field: ContextField = Field(
        default=ContextField.CONTEXT,
        description="The grounding source when a request names none: context, input, "
        "expected_output or messages (a conversation).",
    )
    max_context_chars: int = Field(
        default=defaults.DEFAULT_MAX_CONTEXT_CHARS,
        ge=100,
        le=INT32_MAX,
        description="Evidence per judge call: the grounding source is fitted to this many "
        "characters at sentence ends, keeping the parts that matter to the output.",
    )
    max_output_chars: int = Field(
        default=defaults.DEFAULT_MAX_OUTPUT_CHARS,
        ge=100,
        le=INT32_MAX,
        description="Output per judge call (one window; see on_truncated_output); the question "
        "is cut to this length too.",
    )
    on_truncated_output: TruncatedOutputPolicy = Field(
        default=defaults.DEFAULT_ON_TRUNCATED_OUTPUT,
        description="An output longer than max_output_chars: 'judge_chunks' judges it in "
        "consecutive windows (one call each; longer than max_output_chunks windows: fails "
        "without a call), 'fail' fails it without a call, 'pass' judges only the first window "
        "(the verdict's coverage says so). Failures have reason output_truncated.",
    )
    max_output_chunks: int = Field(
        default=defaults.DEFAULT_MAX_OUTPUT_CHUNKS,
        ge=1,
        le=16,
        description="judge_chunks: at most this many windows (judge calls) per output.",
    )
    injection_policy: Literal["flag", "fail", "error"] = Field(
        default=defaults.DEFAULT_INJECTION_POLICY,
        description="Instructions aimed at the judge found in the judged text: 'fail' turns a "
        "pass (or skip) into a fail, 'error' into an undecided error verdict, 'flag' only "
        "lists them; the reason is injection_detected.",
    )
    field_map: dict[str, str] = Field(
        default_factory=dict,
        description="Request field -> JSON pointer (/a/b) or dotted path (a.b) in the producer's "
        "message, e.g. {'output': '/response/text', 'context': 'retrieval.docs'}.",
    )
    cascade_confidence: float = Field(
        default=defaults.DEFAULT_CASCADE_CONFIDENCE,
        ge=0.0,
        le=1.0,
        description="Cascade: the offline verdict stands when its confidence is at least this.",
    )
    price_file: Path | None = Field(default=None, description="Extra or overriding prices.")
    openai_api: Literal["chat", "responses"] = Field(
        default=defaults.DEFAULT_OPENAI_API,
        description="OpenAI endpoint: chat completions or the Responses API.",
    )
    cascade_provider: Provider = Field(
        default=Provider.OPENAI,
        description="Cascade: the LLM judge consulted when the offline "
        "verdict is not confident enough (openai or anthropic).",
    )
    fake_latency_s: float = Field(
        default=defaults.DEFAULT_FAKE_LATENCY_S,
        ge=0.0,
        le=600.0,
        description="provider fake only: seconds each judgement takes (tests and benchmarks).",
    )
    budget: BudgetSettings = Field(
        default_factory=BudgetSettings,
        description="Concurrency, rate limits, cost budget, breaker, cache and sampling.",
    )
    # realtime: one call per message; flex: OpenAI's flex tier (slower, batch prices);
    # batch: provider batch APIs (docs/delivery.md)
    delivery: Literal["realtime", "flex", "batch"] = Field(
        default=defaults.DEFAULT_DELIVERY,
        description="realtime: one call per message; flex: OpenAI's flex tier (slower, batch "
        "prices); batch: the providers' batch APIs (verdicts minutes later). See "
        "docs/delivery.md.",
    )
    batch: BatchSettings = Field(
        default_factory=BatchSettings, description="delivery: batch: gathering and polling."
    )
    flex: FlexSettings = Field(
        default_factory=FlexSettings, description="delivery=flex: what a capacity refusal does."
    )
    prompt_cache: PromptCacheSettings = Field(
        default_factory=PromptCacheSettings,
        description="The cacheable prompt prefix: worked examples, Anthropic breakpoint, key.",
    )
