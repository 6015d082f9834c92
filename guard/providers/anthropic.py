"""The Anthropic judge: the official SDK with a strict, forced tool as structured output.

The assessment schema is offered as one tool (``strict: true``) and ``tool_choice`` forces the
model to call it, so the answer is the tool's input, validated against the pydantic model. The
SDK's own retries are off; :class:`guard.retry.RetryPolicy` retries transient errors only.

No ``temperature`` is sent: the anthropic SDK 2.x removed the sampling parameters and API version
2026-10-21 rejects them with a 400; the forced tool is what keeps the answer's shape fixed.

As in :mod:`guard.providers.openai`, the body is a plain dict posted with the client's own
``post``, the raw ``httpx2.Response`` is validated into the SDK's ``Message``, and calls are
spread round-robin over several SDK clients sharing ``budget.max_in_flight``.

Prompt caching: the static prefix (tool schema + system prompt) is the same on every call of a
mode; a ``cache_control`` breakpoint on the system block caches it when
``judge.prompt_cache.anthropic_breakpoint`` says so (``auto``: when the judge's recent call rate
makes a 1.25x write plus 0.1x reads cheaper than list price, :mod:`guard.providers.caching`).
Anthropic offers no flex tier: ``delivery: flex`` is a start-up error.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import anthropic
import httpx2
import pydantic
from anthropic.types import Message

from guard import defaults
from guard.budgets.estimate import estimate_tokens
from guard.case import PreparedCase
from guard.decide.assessment import Assessment
from guard.errors import MalformedJudgeOutput
from guard.models import Usage
from guard.prepare.injection import Fence
from guard.providers._common import (
    CUT_MESSAGE,
    client_count,
    connection_limits,
    default_retry,
    parse_body,
    rate_limit_headers,
    retried_call,
    round_robin,
)
from guard.providers.base import JudgeOutcome
from guard.providers.caching import CallRate, breakpoint_pays, use_examples
from guard.providers.flex import check_flex
from guard.providers.pricing import ModelPrice
from guard.providers.prompts import JudgePrompt, assessment_for, build_prompt, system_prompt
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings

_RATE_PREFIXES = ("anthropic-ratelimit-",)
_TOOL_DESCRIPTION = "Record the groundedness assessment of the OUTPUT against the EVIDENCE."


def anthropic_model(settings: JudgeSettings) -> str:
    """``settings.model``, or the default Anthropic model when it is still the OpenAI default."""
    if settings.model == defaults.DEFAULT_MODEL:
        return defaults.DEFAULT_ANTHROPIC_MODEL
    return settings.model


class AnthropicJudge:
    """Implements :class:`guard.providers.base.Judge` with the ``anthropic`` SDK."""

    provider = "anthropic"

    def __init__(
        self,
        settings: JudgeSettings,
        api_key: str | None,
        *,
        retry: RetryPolicy | None = None,
        price: ModelPrice | None = None,
    ) -> None:
        self.settings = settings
        self.model = anthropic_model(settings)
        if settings.delivery == "flex":
            check_flex(self.provider, self.model, price)
        self._price = price
        self._rate = CallRate()
        model, name = assessment_for(settings.mode)
        short, padded = (
            _schema_tokens(model, name) + estimate_tokens(system_prompt(settings.mode, examples=on))
            for on in (False, True)
        )
        self.examples = use_examples(settings.prompt_cache.examples, price, short, padded)
        self._retry = retry or default_retry(settings)
        self._secrets = (api_key,) if api_key else ()
        self._clients = [
            anthropic.AsyncAnthropic(
                api_key=api_key,
                base_url=settings.base_url,
                timeout=settings.timeout_s,
                max_retries=0,
                http_client=anthropic.DefaultAsyncHttpxClient(limits=connection_limits(settings)),
            )
            for _ in range(client_count(settings))
        ]
        self._turn = round_robin(self._clients)

    def __repr__(self) -> str:
        return f"AnthropicJudge(model={self.model!r}, base_url={self.settings.base_url!r})"

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        prompt = build_prompt(case, Fence.new(), examples=self.examples)
        return await retried_call(
            self.provider, self.settings, self._retry, lambda: self._call(prompt), self._secrets
        )

    async def aclose(self) -> None:
        await asyncio.gather(*(client.close() for client in self._clients))

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        """One of the judge's SDK clients (for the batch endpoints)."""
        return self._clients[0]

    @property
    def secrets(self) -> tuple[str, ...]:
        """What error messages must not show (the API key)."""
        return self._secrets

    def mark_prefix(self, prompt: JudgePrompt) -> bool:
        """Whether this call puts a cache breakpoint after the static prefix (counts the call)."""
        recent = self._rate.record()
        rule = self.settings.prompt_cache.anthropic_breakpoint
        if rule != "auto":
            return rule == "always"
        price = self._price
        if price is None or _prefix_tokens(prompt) < price.cache_min_tokens:
            return False
        return breakpoint_pays(price, recent)

    async def _call(self, prompt: JudgePrompt) -> JudgeOutcome:
        body = self.request_body(prompt)
        response = await next(self._turn).post("/v1/messages", body=body, cast_to=httpx2.Response)
        message = parse_body(Message, response, self.provider)
        return self.message_outcome(prompt, message, response.headers)

    def request_body(self, prompt: JudgePrompt) -> dict[str, Any]:
        """The body of a realtime call (and of a Message Batches item's ``params``)."""
        system: dict[str, Any] = {"type": "text", "text": prompt.system}
        if self.mark_prefix(prompt):
            system["cache_control"] = {"type": "ephemeral"}
        return {
            "model": self.model,
            "max_tokens": self.settings.max_tokens,
            "system": [system],
            "messages": [{"role": "user", "content": prompt.user}],
            "tools": [_assessment_tool(prompt.output_model, prompt.schema_name)],
            "tool_choice": {"type": "tool", "name": prompt.schema_name},
        }

    def message_outcome(
        self, prompt: JudgePrompt, message: Message, headers: Any = None
    ) -> JudgeOutcome:
        """The outcome of an answer (a realtime reply, or a batch item's message)."""
        return JudgeOutcome(
            assessment=_assessment(message, prompt),
            provider=self.provider,
            model=self.model,
            usage=_usage(message),
            rate_limit=rate_limit_headers(headers or {}, _RATE_PREFIXES),
        )


@functools.cache
def _assessment_tool(model: type[pydantic.BaseModel], name: str) -> Any:
    """The strict tool whose input is the assessment (built once per model)."""
    return {
        "name": name,
        "description": _TOOL_DESCRIPTION,
        "input_schema": model.model_json_schema(),
        "strict": True,
    }


def _prefix_tokens(prompt: JudgePrompt) -> int:
    """Estimated tokens of the static prefix: the tool schema and the system prompt."""
    return _schema_tokens(prompt.output_model, prompt.schema_name) + estimate_tokens(prompt.system)


@functools.cache
def _schema_tokens(model: type[pydantic.BaseModel], name: str) -> int:
    return estimate_tokens(str(_assessment_tool(model, name)))


def _assessment(message: Message, prompt: JudgePrompt) -> Assessment:
    if message.stop_reason == "refusal":
        raise MalformedJudgeOutput("anthropic judge refused to assess")
    if message.stop_reason == "max_tokens":
        raise MalformedJudgeOutput(f"anthropic answer was {CUT_MESSAGE}")
    for block in message.content:
        if block.type == "tool_use" and block.name == prompt.schema_name:
            try:
                return prompt.output_model.model_validate(block.input)
            except pydantic.ValidationError as exc:
                raise MalformedJudgeOutput(
                    f"anthropic tool input is not the assessment schema "
                    f"({exc.error_count()} problems)"
                ) from exc
    raise MalformedJudgeOutput("anthropic answer has no assessment tool call")


def _usage(message: Message) -> Usage:
    """Input tokens count cache reads and writes too; ``cached_tokens`` are the cache reads,
    ``cache_write_tokens`` the writes (Anthropic reports all three apart)."""
    u = message.usage
    cached = u.cache_read_input_tokens or 0
    written = u.cache_creation_input_tokens or 0
    return Usage(
        input_tokens=u.input_tokens + cached + written,
        output_tokens=u.output_tokens,
        cached_tokens=cached,
        cache_write_tokens=written,
    )
