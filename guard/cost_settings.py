"""Settings of the cost levers that are not budgets: the flex tier and prompt caching.

``judge.delivery`` (realtime, flex or batch) lives on :class:`guard.settings.JudgeSettings`;
these are the sub-settings of its ``flex`` mode and of the cacheable prompt prefix.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from guard import defaults
from guard.settings_model import SettingsModel


class FlexSettings(SettingsModel):
    """``judge.delivery: flex``: OpenAI's ``service_tier: flex`` at batch prices."""

    on_capacity: Literal["realtime", "wait"] = Field(
        default=defaults.DEFAULT_FLEX_ON_CAPACITY,
        description="When flex refuses a call for lack of capacity (429 resource unavailable, "
        "not billed): 'realtime' sends it again at the default tier (list price), 'wait' retries "
        "flex with backoff for up to max_wait_s, then fails it (error kind flex_unavailable).",
    )
    max_wait_s: float = Field(
        default=defaults.DEFAULT_FLEX_MAX_WAIT_S,
        gt=0,
        le=86_400,
        description="on_capacity=wait: how long one call may wait for flex capacity.",
    )


class PromptCacheSettings(SettingsModel):
    """The cacheable static prefix of every judge call (schema + system prompt)."""

    examples: Literal["auto", "on", "off"] = Field(
        default=defaults.DEFAULT_PROMPT_EXAMPLES,
        description="Two fenced worked examples in the system prompt, which push the static "
        "prefix past the 1,024-token cache minimum. 'auto': on when the model's price entry "
        "says a prefix that long is cached (cache_min_tokens), off otherwise (claude-haiku-4-5 "
        "caches from 4,096 tokens; unpriced self-hosted models). With caching they pay above "
        "a cache hit rate of about 60% on gpt-4o-mini (steady traffic); 'off' for a trickle.",
    )
    anthropic_breakpoint: Literal["auto", "always", "never"] = Field(
        default=defaults.DEFAULT_ANTHROPIC_BREAKPOINT,
        description="Anthropic cache_control on the static prefix. 'auto' marks it when the "
        "judge's calls in the last 5 minutes make one cache write (1.25x) plus reads (0.1x) "
        "cheaper than list price, and the prefix reaches the model's cache minimum.",
    )
    cache_key: str | None = Field(
        default=None,
        description="OpenAI prompt_cache_key (routes calls sharing the prefix to the same "
        "cache); default: groundguard-<prompt version>-<mode>. Sent to a base_url endpoint only "
        "when set here.",
    )
