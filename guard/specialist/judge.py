"""The specialist judge: a format's calls made to an OpenAI-compatible chat completions endpoint
with the ``openai`` SDK, and its reading turned into an assessment.

Calls are plain text: these servers and models do not reliably support structured output, so
no ``response_format`` is sent and each format parses strictly. The body is a plain dict posted
with the SDK client's own ``post`` (as :mod:`guard.providers.openai` does: custom roles such as
Granite Guardian's ``context`` and server fields such as vLLM's ``chat_template_kwargs`` pass
as they are), with ``temperature: 0`` and ``max_tokens`` (what vLLM, TGI and Ollama read).

Each call is bounded by ``timeout_s`` and retried on transient errors only (at most
``max_retries`` times); SDK errors become :mod:`guard.errors` kinds where they enter
(:func:`guard.providers.errors.map_sdk_error`), with the key redacted. At most ``max_in_flight``
calls of a tier run at once; MiniCheck's calls for one output run side by side within that
bound, and the first to fail cancels the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, TypeVar

import httpx2
import openai
from openai.types.chat import ChatCompletion

from guard.case import PreparedCase
from guard.errors import ConfigError
from guard.providers._common import (
    SDK_MAX_CONNECTIONS,
    SDK_MAX_KEEPALIVE,
    bounded_call,
    parse_body,
    rate_limit_headers,
)
from guard.providers.base import Judge, JudgeOutcome
from guard.providers.credentials import check_api_key_shape
from guard.retry import RetryPolicy
from guard.specialist.formats import Call, Format, Reading
from guard.specialist.granite import GraniteGuardian
from guard.specialist.lynx import Lynx
from guard.specialist.minicheck import MiniCheck
from guard.specialist.reply import Reply, read_reply, total_usage
from guard.specialist.settings import SpecialistTier
from guard.tiers.assess import assessment_from_p

T = TypeVar("T")
PLACEHOLDER_KEY = "not-needed"  # local servers usually take any key; the SDK wants one
_POST_OPTIONS: openai.RequestOptions = {"security": {"bearer_auth": True}}  # as ``create`` sends
_RATE_PREFIXES = ("x-ratelimit-",)


def format_for(tier: SpecialistTier) -> Format:
    """The prompt format ``tier`` names."""
    if tier.format == "lynx":
        return Lynx()
    if tier.format == "granite_guardian":
        return GraniteGuardian(use_logprobs=tier.use_logprobs, risk_via=tier.granite_risk_via)
    return MiniCheck(use_logprobs=tier.use_logprobs, max_sentences=tier.max_sentences)


class SpecialistJudge:
    """Implements :class:`guard.providers.base.Judge` for a ``specialist`` tier."""

    def __init__(
        self, tier: SpecialistTier, api_key: str | None, *, retry: RetryPolicy | None = None
    ) -> None:
        self.tier = tier
        self.model = tier.model
        self.provider = f"specialist:{tier.format}"
        self.format = format_for(tier)
        self._retry = retry or RetryPolicy(max_retries=tier.max_retries)
        self._secrets = (api_key,) if api_key else ()
        self._slots = asyncio.Semaphore(tier.max_in_flight)
        limits = httpx2.Limits(
            max_connections=max(SDK_MAX_CONNECTIONS, tier.max_in_flight),
            max_keepalive_connections=max(SDK_MAX_KEEPALIVE, tier.max_in_flight),
        )
        self._client = openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_KEY,
            base_url=tier.base_url,
            timeout=tier.timeout_s,
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(limits=limits),
        )

    def __repr__(self) -> str:
        return (
            f"SpecialistJudge(format={self.tier.format!r}, model={self.model!r}, "
            f"base_url={self.tier.base_url!r})"
        )

    async def assess(self, case: PreparedCase) -> JudgeOutcome:
        calls = self.format.calls(case)
        replies = await _all_or_first_error([self._send(call) for call in calls])
        reading = self.format.read(calls, replies)
        return self._outcome(case, reading, replies)

    async def aclose(self) -> None:
        await self._client.close()

    def body(self, call: Call) -> dict[str, Any]:
        """The request body of ``call``."""
        return {
            "model": self.model,
            "messages": [dict(m) for m in call.messages],
            "temperature": 0,
            "max_tokens": self.tier.reply_tokens(),
            **call.extra,
        }

    async def _send(self, call: Call) -> Reply:
        body = self.body(call)
        async with self._slots:
            return await self._retry.run(
                lambda: bounded_call(
                    self.provider, self.tier.timeout_s, lambda: self._post(body), self._secrets
                )
            )

    async def _post(self, body: dict[str, Any]) -> Reply:
        response = await self._client.post(
            "/chat/completions", body=body, cast_to=httpx2.Response, options=_POST_OPTIONS
        )
        completion = parse_body(ChatCompletion, response, self.provider)
        headers = rate_limit_headers(response.headers, _RATE_PREFIXES)
        return read_reply(completion, self.provider, headers)

    def _outcome(
        self,
        case: PreparedCase,
        reading: Reading,
        replies: Sequence[Reply],
    ) -> JudgeOutcome:
        assessment = assessment_from_p(
            reading.grounded_p, case.mode, reading.claims, reading.explanation
        )
        return JudgeOutcome(
            assessment=assessment,
            provider=self.provider,
            model=self.model,
            usage=total_usage(replies),
            tier="specialist",
            confidence=reading.confidence,
            grounded_p=min(1.0, max(0.0, reading.grounded_p)),
            rate_limit=replies[-1].rate_limit,
        )


async def _all_or_first_error(awaitables: Sequence[Awaitable[T]]) -> list[T]:
    """The results of ``awaitables`` run side by side, in order; the first error cancels the
    rest and is raised (as does the caller's cancellation)."""
    if len(awaitables) == 1:
        return [await awaitables[0]]
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        error = None if task.cancelled() else task.exception()
        if error is not None:
            raise error
    return [task.result() for task in tasks]


def build_specialist(tier: SpecialistTier, environ: Mapping[str, str]) -> Judge:
    """The judge of a ``specialist`` tier. The API key is ``tier.api_key``, else the variable
    ``tier.api_key_env`` names in ``environ``, else none; :class:`ConfigError` when a named
    variable is unset or a key cannot go in an HTTP header."""
    where = f"tiers.{tier.name or 'specialist'}"
    if not tier.base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"{where}.base_url",
            "is not an http:// or https:// URL",
            "give the server's OpenAI-compatible endpoint, such as http://vllm:8000/v1",
        )
    return SpecialistJudge(tier, _api_key(tier, environ, where))


def _api_key(tier: SpecialistTier, environ: Mapping[str, str], where: str) -> str | None:
    if tier.api_key is not None:
        return _usable(f"{where}.api_key", tier.api_key.get_secret_value())
    if tier.api_key_env is None:
        return None
    key = environ.get(tier.api_key_env, "").strip()
    if not key:
        raise ConfigError(
            f"{where}.api_key_env",
            f"the environment variable {tier.api_key_env} is unset or empty",
            f"set {tier.api_key_env} to the server's API key, or drop api_key_env",
        )
    return _usable(tier.api_key_env, key)


def _usable(source: str, key: str) -> str:
    fault = check_api_key_shape(key)
    if fault is not None:
        raise ConfigError(
            source,
            f"{fault}: an API key is printable ASCII without spaces (the key is not shown)",
            "copy the key again without stray characters (quotes, line breaks, look-alikes)",
        )
    return key
