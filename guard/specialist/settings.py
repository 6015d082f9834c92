"""The settings of a ``specialist`` tier: which model format, where its server is, its bounds.

The defaults of the specialist judges live here, in one place (they are the package's own:
:mod:`guard.defaults` holds the rest of the core's).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from guard import defaults
from guard.settings_model import INT32_MAX, MAX_DURATION_S
from guard.tiers.base import TierBase

SpecialistFormat = Literal["lynx", "granite_guardian", "minicheck"]
GraniteRiskVia = Literal["chat_template_kwargs", "system"]

# max_tokens when unset, per format: Lynx writes its reasoning before the score (its model card
# generates up to 600 new tokens); Granite Guardian answers Yes/No, 3.2 with a confidence tag
# (the card generates up to 20); MiniCheck answers one token (its reference code asks for 1;
# a few more let the server end the reply itself)
DEFAULT_MAX_TOKENS: dict[SpecialistFormat, int] = {
    "lynx": 1024,
    "granite_guardian": 20,
    "minicheck": 4,
}
DEFAULT_MAX_IN_FLIGHT = 16  # calls to the server at once, per tier
DEFAULT_MAX_SENTENCES = 32  # MiniCheck claims (calls) per output window
MAX_SENTENCES_LIMIT = 1000
TOP_LOGPROBS = 5  # alternatives asked per generated token (OpenAI allows 0-20, vLLM 20 by default)


class SpecialistTier(TierBase):
    """A groundedness model with its own prompt format behind an OpenAI-compatible chat
    completions endpoint (vLLM, TGI, Ollama)."""

    kind: Literal["specialist"] = Field(description="This tier is a specialist model.")
    format: SpecialistFormat = Field(
        description="The model's prompt format: lynx (PatronusAI Lynx 8B/70B), "
        "granite_guardian (ibm-granite granite-guardian-3.0 to 3.2, groundedness risk) or "
        "minicheck (Bespoke-MiniCheck-7B, one call per sentence of the output)."
    )
    base_url: str = Field(
        min_length=1,
        description="The OpenAI-compatible endpoint, with its path prefix "
        "(http://vllm:8000/v1, http://ollama:11434/v1).",
    )
    model: str = Field(
        min_length=1, description="The model name the server knows (its served model name)."
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="The server's API key, if it wants one; prefer api_key_env.",
    )
    api_key_env: str | None = Field(
        default=None,
        min_length=1,
        description="The environment variable holding the server's API key, read when api_key "
        "is unset (local servers usually want none).",
    )
    timeout_s: float = Field(
        default=defaults.DEFAULT_TIMEOUT_S,
        gt=0,
        le=MAX_DURATION_S,
        description="How long one call to the server may take (each attempt).",
    )
    max_retries: int = Field(
        default=defaults.DEFAULT_MAX_RETRIES,
        ge=0,
        le=10,
        description="Retries of a call after a transient error (timeout, unavailable, 429), "
        "with jittered exponential backoff or the server's Retry-After.",
    )
    max_tokens: int | None = Field(
        default=None,
        gt=0,
        le=INT32_MAX,
        description="Cap on each reply (default per format: lynx 1024, granite_guardian 20, "
        "minicheck 4); a reply cut there is a malformed_judge_output error, unless it is "
        "already a whole Yes/No answer.",
    )
    use_logprobs: bool = Field(
        default=True,
        description="granite_guardian and minicheck: ask for token logprobs and read the "
        "grounded probability from the Yes/No tokens (without them, or when the server sends "
        "none, it is 1.0 or 0.0 from the answer). lynx never asks for them.",
    )
    granite_risk_via: GraniteRiskVia = Field(
        default="chat_template_kwargs",
        description="granite_guardian: how the groundedness risk reaches the model's chat "
        "template: chat_template_kwargs (vLLM; the Hugging Face template's guardian_config) "
        "or system (a system message 'groundedness', as Ollama's granite3-guardian template "
        "reads it). Other formats ignore it.",
    )
    max_in_flight: int = Field(
        default=DEFAULT_MAX_IN_FLIGHT,
        ge=1,
        le=100_000,
        description="Calls to the server at once from this tier (minicheck makes one per "
        "sentence); further calls wait their turn.",
    )
    max_sentences: int = Field(
        default=DEFAULT_MAX_SENTENCES,
        ge=1,
        le=MAX_SENTENCES_LIMIT,
        description="minicheck: claims checked per output window, one call each; the "
        "sentences beyond the last claim are checked together with it.",
    )

    def reply_tokens(self) -> int:
        """The cap on each reply: ``max_tokens``, or the format's default."""
        return self.max_tokens or DEFAULT_MAX_TOKENS[self.format]
