"""The OpenAI judge: the official SDK with strict structured output.

Chat completions (``chat.completions.parse(response_format=Model)``) by default, or the Responses
API (``responses.parse(text_format=Model)``, ``store=False``) with ``openai_api="responses"``.
``base_url`` points it at any OpenAI-compatible endpoint (vLLM, Ollama, a proxy). The SDK's own
retries are off; :class:`guard.retry.RetryPolicy` retries transient errors only.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ParsedChatCompletion
from openai.types.responses import ParsedResponse

from guard.assessment import Assessment
from guard.case import PreparedCase
from guard.errors import MalformedJudgeOutput
from guard.injection import Fence
from guard.models import Usage
from guard.prompts import JudgePrompt, build_prompt
from guard.providers._common import (
    connection_limits,
    default_retry,
    rate_limit_headers,
    retried_call,
)
from guard.providers.base import JudgeOutcome
from guard.retry import RetryPolicy
from guard.settings import JudgeSettings

PLACEHOLDER_KEY = "not-needed"  # OpenAI-compatible local servers usually ignore the key
_RATE_PREFIXES = ("x-ratelimit-",)


class OpenAIJudge:
    """Implements :class:`guard.providers.base.Judge` with the ``openai`` SDK."""

    def __init__(self, settings: JudgeSettings, api_key: str | None, *,
                 retry: RetryPolicy | None = None) -> None:
        self.settings = settings
        self.model = settings.model
        self.provider = "openai" if settings.base_url is None else "openai-compatible"
        self._retry = retry or default_retry(settings)
        self._client = openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_KEY, base_url=settings.base_url,
            timeout=settings.timeout_s, max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(limits=connection_limits(settings)))

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={self.settings.base_url!r})"

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        prompt = build_prompt(case, Fence.new())
        call = self._responses if self.settings.openai_api == "responses" else self._chat
        return await retried_call(self.provider, self.settings, self._retry,
                                  lambda: call(prompt))

    async def aclose(self) -> None:
        await self._client.close()

    def _outcome(self, assessment: Assessment, usage: Usage,
                 headers: Any) -> JudgeOutcome:
        return JudgeOutcome(assessment=assessment, provider=self.provider, model=self.model,
                            usage=usage, rate_limit=rate_limit_headers(headers, _RATE_PREFIXES))

    # ------------------------------------------------------------------ chat completions

    async def _chat(self, prompt: JudgePrompt) -> JudgeOutcome:
        limit = ({"max_tokens": self.settings.max_tokens} if self.settings.base_url
                 else {"max_completion_tokens": self.settings.max_tokens})
        raw = await self._client.chat.completions.with_raw_response.parse(
            model=self.model, temperature=0, response_format=prompt.output_model,
            messages=[{"role": "system", "content": prompt.system},
                      {"role": "user", "content": prompt.user}],
            **limit)  # type: ignore[arg-type]
        completion: ParsedChatCompletion[Any] = raw.parse()
        return self._outcome(_chat_assessment(completion), _chat_usage(completion), raw.headers)

    # ------------------------------------------------------------------ responses API

    async def _responses(self, prompt: JudgePrompt) -> JudgeOutcome:
        raw = await self._client.responses.with_raw_response.parse(
            model=self.model, temperature=0, text_format=prompt.output_model, store=False,
            instructions=prompt.system, input=[{"role": "user", "content": prompt.user}],
            max_output_tokens=self.settings.max_tokens)
        response: ParsedResponse[Any] = raw.parse()
        return self._outcome(_responses_assessment(response), _responses_usage(response),
                             raw.headers)


def _chat_assessment(completion: ParsedChatCompletion[Any]) -> Assessment:
    if not completion.choices:
        raise MalformedJudgeOutput("openai answer has no choices")
    message = completion.choices[0].message
    if message.refusal:
        raise MalformedJudgeOutput(f"openai judge refused: {message.refusal[:200]}")
    if message.parsed is None:
        raise MalformedJudgeOutput("openai answer has no parsed assessment")
    parsed: Assessment = message.parsed
    return parsed


def _chat_usage(completion: ParsedChatCompletion[Any]) -> Usage:
    usage = completion.usage
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    return Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens,
                 cached_tokens=(details.cached_tokens or 0) if details else 0)


def _responses_assessment(response: ParsedResponse[Any]) -> Assessment:
    for item in response.output:
        if item.type != "message":
            continue
        for part in item.content:
            if part.type == "refusal":
                raise MalformedJudgeOutput(f"openai judge refused: {part.refusal[:200]}")
    parsed = response.output_parsed
    if parsed is None:
        raise MalformedJudgeOutput("openai response has no parsed assessment")
    result: Assessment = parsed
    return result


def _responses_usage(response: ParsedResponse[Any]) -> Usage:
    usage = response.usage
    if usage is None:
        return Usage()
    details = usage.input_tokens_details
    return Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                 cached_tokens=(details.cached_tokens or 0) if details else 0)
