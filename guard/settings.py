"""Judge settings: one frozen model, validated once at the edge and passed down explicitly."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Literal, Self

from pydantic import Field, SecretStr, model_validator

from guard import defaults
from guard.budgets.settings import BudgetSettings
from guard.cost_settings import FlexSettings, PromptCacheSettings
from guard.learning.settings import CascadeSettings
from guard.models import ContextField, ScoringMode, TruncatedOutputPolicy
from guard.settings_model import INT32_MAX, MAX_DURATION_S, SettingsModel
from guard.tiers.kinds import KINDS, AnthropicTier, OfflineTier, OpenAITier, TierSettings, kind_of


class Provider(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    OFFLINE = "offline"
    CASCADE = "cascade"
    FAKE = "fake"


MOVED_TO_TIERS = frozenset({"provider", "cascade_provider", "cascade_confidence"})


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
        description="Who judges, as one tier: offline (deterministic rules, no network), "
        "openai, anthropic or fake (tests); cascade is the two tiers offline then "
        "cascade_provider (deprecated: write judge.tiers). Not with tiers.",
    )
    tiers: list[TierSettings] | None = Field(
        default=None,
        min_length=1,
        max_length=8,
        description="The cascade of tiers, in order: each decides what it is sure of (pass_at, "
        "fail_at) and hands the rest on; the last always decides. An LLM kind (openai, "
        "anthropic, fake) may only be last. Replaces provider, cascade_provider and "
        "cascade_confidence. See docs/architecture.md.",
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
    cascade: CascadeSettings = Field(
        default_factory=CascadeSettings,
        description="The learning cascade: what the screen tiers may decide, learned from the "
        "last tier's verdicts and reviewers' labels.",
    )
    cascade_confidence: float = Field(
        default=defaults.DEFAULT_CASCADE_CONFIDENCE,
        ge=0.0,
        le=1.0,
        description="provider cascade (deprecated: the offline tier's pass_at and fail_at): "
        "the offline verdict stands when its confidence is at least this.",
    )
    price_file: Path | None = Field(default=None, description="Extra or overriding prices.")
    openai_api: Literal["chat", "responses"] = Field(
        default=defaults.DEFAULT_OPENAI_API,
        description="OpenAI endpoint: chat completions or the Responses API.",
    )
    cascade_provider: Provider = Field(
        default=Provider.OPENAI,
        description="provider cascade (deprecated: the last tier's kind): the LLM judge "
        "consulted when the offline verdict is not confident enough (openai or anthropic).",
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

    @model_validator(mode="after")
    def _tiers_are_a_cascade(self) -> Self:
        if self.tiers is None:
            return self
        moved = sorted(MOVED_TO_TIERS & self.model_fields_set)
        if moved:
            raise ValueError(
                f"{' and '.join(moved)} cannot be given with tiers: the tiers say who judges "
                "(remove them)"
            )
        names = [tier.tier_name for tier in self.tiers]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"tier names must differ: {', '.join(twice)} (set each tier's name)")
        for position, tier in enumerate(self.tiers[:-1], start=1):
            if kind_of(tier).llm:
                raise ValueError(
                    f"tier {position} ({tier.kind}) calls an LLM inside the budget layers: it "
                    "can only be the last tier (move it last)"
                )
        return self

    def tier_list(self) -> tuple[TierSettings, ...]:
        """The tiers that judge, in order: ``tiers``, or the ones ``provider`` means (one tier;
        ``cascade`` is offline at ``cascade_confidence``, then its LLM)."""
        if self.tiers is not None:
            return tuple(self.tiers)
        confidence = self.cascade_confidence  # where an offline tier's verdict is unsure
        offline = OfflineTier(kind="offline", pass_at=confidence, fail_at=1.0 - confidence)
        if self.provider is Provider.CASCADE:
            return (offline, self._cascade_llm())
        if self.provider is Provider.OFFLINE:
            return (offline,)
        one: TierSettings = KINDS[self.provider.value].settings.model_validate(
            {"kind": self.provider.value}
        )  # type: ignore[assignment]
        return (one,)

    def _cascade_llm(self) -> OpenAITier | AnthropicTier:
        provider = self.cascade_provider
        if provider not in (Provider.OPENAI, Provider.ANTHROPIC):
            from guard.errors import ConfigError

            raise ConfigError(
                "judge.cascade_provider",
                f"{provider.value} is not an LLM provider",
                "use openai or anthropic",
            )
        if self.base_url is None and self.model.startswith("claude"):
            provider = Provider.ANTHROPIC
        if provider is Provider.ANTHROPIC:
            return AnthropicTier(kind="anthropic")
        return OpenAITier(kind="openai")

    def deprecations(self) -> list[str]:
        """Notes on settings that moved, for the start-up log."""
        if self.tiers is None and self.provider is Provider.CASCADE:
            llm = self._cascade_llm().kind
            return [
                "judge.provider: cascade is the two-tier list judge.tiers: [{kind: offline, "
                f"pass_at: {self.cascade_confidence}, fail_at: "
                f"{round(1.0 - self.cascade_confidence, 6)}}}, {{kind: {llm}}}]; "
                "cascade_confidence and cascade_provider move there"
            ]
        return []
