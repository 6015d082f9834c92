"""The OpenAI judge: the official SDK with strict structured output.

Chat completions with a strict ``json_schema`` response format by default, or the Responses API
(``text.format`` json_schema, ``store=False``) with ``openai_api="responses"``. The schema is
built once per assessment model with the SDK's own converter (what ``parse`` does on every call,
at about half the cost of a call) and the answer is validated against the pydantic model here.
``base_url`` points it at any OpenAI-compatible endpoint (vLLM, Ollama, a proxy). The SDK's own
retries are off; :class:`guard.retry.RetryPolicy` retries transient errors only.

Per call the judge spends CPU only where it must (``bench/judge_cpu.py``): the request body is a
plain dict posted with the client's own ``post`` (``create`` would re-walk it through the SDK's
typed-dict transform), the reply is taken as the raw ``httpx2.Response`` (headers for the rate
limits) and validated into the SDK's response type, and the calls are spread round-robin over
several SDK clients that share ``budget.max_in_flight`` (a pool's cost per call grows with the
connections it holds).

Cost levers: the static prefix (schema + system prompt) is the same on every call of a mode and
``prompt_cache_key`` names it, so OpenAI's automatic prompt cache serves it at the cached-input
price (``Usage.cached_tokens``); ``judge.delivery: flex`` sends ``service_tier: flex``
(:mod:`guard.providers.flex`), and the tier that served is read back into ``Usage.service_tier``.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Literal

import httpx2
import openai
import orjson
import pydantic
from openai.lib._parsing._completions import type_to_response_format_param
from openai.lib._parsing._responses import type_to_text_format_param
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

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
    parse_data,
    rate_limit_headers,
    retried_call,
    round_robin,
)
from guard.providers.base import JudgeOutcome
from guard.providers.caching import use_examples
from guard.providers.flex import FlexTier, Tier, check_flex, warn_short_timeout
from guard.providers.pricing import ModelPrice
from guard.providers.prompts import JudgePrompt, assessment_for, build_prompt, system_prompt
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings

AssessmentModel = type[pydantic.BaseModel]

ServedTier = Literal["default", "flex", "priority"]
PLACEHOLDER_KEY = "not-needed"  # OpenAI-compatible local servers usually ignore the key
_RATE_PREFIXES = ("x-ratelimit-",)
_POST_OPTIONS: openai.RequestOptions = {"security": {"bearer_auth": True}}  # as ``create`` sends


class OpenAIJudge:
    """Implements :class:`guard.providers.base.Judge` with the ``openai`` SDK."""

    def __init__(
        self,
        settings: JudgeSettings,
        api_key: str | None,
        *,
        retry: RetryPolicy | None = None,
        price: ModelPrice | None = None,
    ) -> None:
        self.settings = settings
        self.model = settings.model
        self.provider = "openai" if settings.base_url is None else "openai-compatible"
        self.examples = use_examples(
            settings.prompt_cache.examples,
            price,
            _prefix_tokens(settings, examples=False),
            _prefix_tokens(settings, examples=True),
        )
        self.flex: FlexTier | None = None
        if settings.delivery == "flex":
            check_flex("openai", self.model, price)
            warn_short_timeout(settings.timeout_s)
            self.flex = FlexTier(settings.flex)
        self._retry = retry or default_retry(settings)
        self._secrets = (api_key,) if api_key else ()
        self._clients = [
            openai.AsyncOpenAI(
                api_key=api_key or PLACEHOLDER_KEY,
                base_url=settings.base_url,
                timeout=settings.timeout_s,
                max_retries=0,
                http_client=openai.DefaultAsyncHttpxClient(limits=connection_limits(settings)),
            )
            for _ in range(client_count(settings))
        ]
        self._turn = round_robin(self._clients)
        self._fixed = self._fixed_fields()

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={self.settings.base_url!r})"

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        prompt = build_prompt(case, Fence.new(), examples=self.examples)
        call = self._responses if self.settings.openai_api == "responses" else self._chat

        async def at(tier: Tier | None) -> JudgeOutcome:
            return await retried_call(
                self.provider, self.settings, self._retry, lambda: call(prompt, tier), self._secrets
            )

        if self.flex is None:
            return await at(None)
        return await self.flex.run(at)

    async def aclose(self) -> None:
        await asyncio.gather(*(client.close() for client in self._clients))

    @property
    def client(self) -> openai.AsyncOpenAI:
        """One of the judge's SDK clients (for the batch endpoints)."""
        return self._clients[0]

    @property
    def secrets(self) -> tuple[str, ...]:
        """What error messages must not show (the API key)."""
        return self._secrets

    def _fixed_fields(self) -> dict[str, Any]:
        """The body fields that are the same on every call."""
        limit = self.settings.max_tokens
        compatible = self.settings.base_url is not None
        # OpenAI-compatible servers (vLLM, Ollama) may reject fields they do not know: they get
        # the key only when one is configured
        configured = self.settings.prompt_cache.cache_key
        cache_key = {} if compatible and not configured else {"prompt_cache_key": self._cache_key()}
        if self.settings.openai_api == "responses":
            return {
                "model": self.model,
                "temperature": 0,
                "store": False,
                "max_output_tokens": limit,
                **cache_key,
            }
        # OpenAI deprecated max_tokens; OpenAI-compatible servers (vLLM, Ollama) still expect it.
        return {
            "model": self.model,
            "temperature": 0,
            "max_tokens" if compatible else "max_completion_tokens": limit,
            **cache_key,
        }

    def _cache_key(self) -> str:
        """Calls with the same static prefix share a key, so OpenAI routes them to one cache."""
        configured = self.settings.prompt_cache.cache_key
        return configured or f"groundguard-{defaults.PROMPT_VERSION}-{self.settings.mode.value}"

    def _tiered(self, body: dict[str, Any], tier: Tier | None) -> dict[str, Any]:
        return body if tier is None else {**body, "service_tier": tier}

    async def _post(self, path: str, body: dict[str, Any]) -> httpx2.Response:
        """``body`` posted as is by the next client; the SDK raises on error statuses."""
        return await next(self._turn).post(
            path, body=body, cast_to=httpx2.Response, options=_POST_OPTIONS
        )

    def _outcome(self, assessment: Assessment, usage: Usage, headers: Any) -> JudgeOutcome:
        return JudgeOutcome(
            assessment=assessment,
            provider=self.provider,
            model=self.model,
            usage=usage,
            rate_limit=rate_limit_headers(headers, _RATE_PREFIXES),
        )

    # ------------------------------------------------------------------ chat completions

    async def _chat(self, prompt: JudgePrompt, tier: Tier | None = None) -> JudgeOutcome:
        response = await self._post("/chat/completions", self._chat_body(prompt, tier))
        completion = parse_body(ChatCompletion, response, "openai")
        return self._chat_outcome(prompt, completion, response.headers, tier)

    def _chat_body(self, prompt: JudgePrompt, tier: Tier | None = None) -> dict[str, Any]:
        return self._tiered(
            {
                **self._fixed,
                "response_format": _response_format(prompt.output_model),
                "messages": [
                    {"role": "system", "content": prompt.system},
                    {"role": "user", "content": prompt.user},
                ],
            },
            tier,
        )

    def _chat_outcome(
        self, prompt: JudgePrompt, completion: ChatCompletion, headers: Any, tier: Tier | None
    ) -> JudgeOutcome:
        assessment = _validated(prompt, _chat_text(completion))
        usage = _chat_usage(completion, _served(completion.service_tier, tier))
        return self._outcome(assessment, usage, headers)

    # ------------------------------------------------------------------ batch items

    def batch_request(self, prompt: JudgePrompt) -> tuple[str, dict[str, Any]]:
        """The endpoint and body of a realtime call, as one Batch API item."""
        if self.settings.openai_api == "responses":
            return "/v1/responses", self._responses_body(prompt)
        return "/v1/chat/completions", self._chat_body(prompt)

    def batch_outcome(self, prompt: JudgePrompt, body: dict[str, Any]) -> JudgeOutcome:
        """A batch item's response body, read as the realtime answer is."""
        if self.settings.openai_api == "responses":
            parsed = parse_data(Response, body, "openai")
            return self._responses_outcome(prompt, parsed, {}, None)
        return self._chat_outcome(prompt, parse_data(ChatCompletion, body, "openai"), {}, None)

    # ------------------------------------------------------------------ responses API

    async def _responses(self, prompt: JudgePrompt, tier: Tier | None = None) -> JudgeOutcome:
        response = await self._post("/responses", self._responses_body(prompt, tier))
        parsed = parse_body(Response, response, "openai")
        return self._responses_outcome(prompt, parsed, response.headers, tier)

    def _responses_body(self, prompt: JudgePrompt, tier: Tier | None = None) -> dict[str, Any]:
        return self._tiered(
            {
                **self._fixed,
                "text": {"format": _text_format(prompt.output_model)},
                "instructions": prompt.system,
                "input": [{"role": "user", "content": prompt.user}],
            },
            tier,
        )

    def _responses_outcome(
        self, prompt: JudgePrompt, parsed: Response, headers: Any, tier: Tier | None
    ) -> JudgeOutcome:
        assessment = _validated(prompt, _responses_text(parsed))
        usage = _responses_usage(parsed, _served(parsed.service_tier, tier))
        return self._outcome(assessment, usage, headers)


def _served(reported: str | None, requested: Tier | None) -> ServedTier | None:
    """The tier that served a call: as the response says, else as requested. ``scale`` and
    ``auto`` bill as the default tier."""
    if reported == "flex" or (reported is None and requested == "flex"):
        return "flex"
    if reported == "priority":
        return "priority"
    return "default" if reported is not None or requested is not None else None


def _prefix_tokens(settings: JudgeSettings, *, examples: bool) -> int:
    """Estimated tokens of the static prefix, with or without the worked examples: schema +
    system prompt."""
    model, _ = assessment_for(settings.mode)
    schema = estimate_tokens(orjson.dumps(_response_format(model)).decode())
    return schema + estimate_tokens(system_prompt(settings.mode, examples=examples))


@functools.cache
def _response_format(model: AssessmentModel) -> Any:
    """The strict json_schema response format for ``model`` (built once)."""
    return type_to_response_format_param(model)


@functools.cache
def _text_format(model: AssessmentModel) -> Any:
    """The strict json_schema ``text.format`` of the Responses API for ``model`` (built once)."""
    return type_to_text_format_param(model)


def _validated(prompt: JudgePrompt, text: str) -> Assessment:
    """``text`` parsed strictly as the prompt's assessment model."""
    try:
        return prompt.output_model.model_validate_json(text)
    except pydantic.ValidationError as exc:
        raise MalformedJudgeOutput(
            f"openai answer is not the {prompt.schema_name} schema ({exc.error_count()} problems)"
        ) from exc


def _chat_text(completion: ChatCompletion) -> str:
    if not completion.choices:
        raise MalformedJudgeOutput("openai answer has no choices")
    choice = completion.choices[0]
    if choice.message.refusal:
        raise MalformedJudgeOutput(f"openai judge refused: {choice.message.refusal[:200]}")
    if choice.finish_reason == "length":
        raise MalformedJudgeOutput(f"openai answer was {CUT_MESSAGE}")
    if not choice.message.content:
        raise MalformedJudgeOutput("openai answer has no content")
    return choice.message.content


def _chat_usage(completion: ChatCompletion, tier: ServedTier | None) -> Usage:
    usage = completion.usage
    if usage is None:
        return Usage(service_tier=tier)
    details = usage.prompt_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
        service_tier=tier,
    )


def _responses_text(response: Response) -> str:
    if response.status == "incomplete":
        raise MalformedJudgeOutput(f"openai response is incomplete ({CUT_MESSAGE}?)")
    texts: list[str] = []
    for item in response.output:
        if item.type != "message":
            continue
        for part in item.content:
            if part.type == "refusal":
                raise MalformedJudgeOutput(f"openai judge refused: {part.refusal[:200]}")
            texts.append(part.text)
    if not texts:
        raise MalformedJudgeOutput("openai response has no output text")
    return "".join(texts)


def _responses_usage(response: Response, tier: ServedTier | None) -> Usage:
    usage = response.usage
    if usage is None:
        return Usage(service_tier=tier)
    details = usage.input_tokens_details
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
        service_tier=tier,
    )
