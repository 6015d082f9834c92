"""One chat completion as the specialist formats read it: its text, whether it was cut, and the
alternatives the server reported for each generated token (``logprobs.content[].top_logprobs``).

A reply without content is :class:`MalformedJudgeOutput` here; each format decides what a cut
reply (``finish_reason: length``) still says.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from openai.types.chat import ChatCompletion

from guard.errors import MalformedJudgeOutput
from guard.models import Usage

Position = tuple[tuple[str, float], ...]
"""One generated token's alternatives: (decoded token, logprob), the chosen one included."""


@dataclass(frozen=True)
class Reply:
    text: str
    cut: bool  # finish_reason "length": the reply hit max_tokens
    positions: tuple[Position, ...] | None  # None: the server sent no logprobs
    usage: Usage = field(default_factory=Usage)
    rate_limit: dict[str, str] = field(default_factory=dict)  # the server's rate-limit headers


def read_reply(
    completion: ChatCompletion, provider: str, rate_limit: dict[str, str] | None = None
) -> Reply:
    """The text, cut flag and token alternatives of ``completion``'s first choice."""
    if not completion.choices:
        raise MalformedJudgeOutput(f"{provider} answer has no choices")
    choice = completion.choices[0]
    text = choice.message.content
    if not text or not text.strip():
        raise MalformedJudgeOutput(f"{provider} answer has no content")
    return Reply(
        text=text,
        cut=choice.finish_reason == "length",
        positions=_positions(choice.logprobs.content if choice.logprobs else None),
        usage=_usage(completion),
        rate_limit=rate_limit or {},
    )


def _positions(content: Sequence[object] | None) -> tuple[Position, ...] | None:
    if not content:
        return None
    return tuple(_alternatives(token) for token in content)


def _alternatives(token: object) -> Position:
    """The reported alternatives of one token; the chosen token alone when the server sent
    no alternatives (``top_logprobs: []``)."""
    top = getattr(token, "top_logprobs", None) or ()
    pairs = [(str(t.token), float(t.logprob)) for t in top]
    if not pairs:
        pairs = [(str(getattr(token, "token", "")), float(getattr(token, "logprob", -math.inf)))]
    return tuple(pairs)


def _usage(completion: ChatCompletion) -> Usage:
    usage = completion.usage
    if usage is None:
        return Usage()
    return Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)


def label_mass(positions: Iterable[Position], label: str) -> float:
    """The probability the server reports for tokens reading ``label`` (case and surrounding
    space ignored), summed over the alternatives of ``positions``."""
    return sum(
        math.exp(logprob)
        for position in positions
        for token, logprob in position
        if token.strip().lower() == label and logprob > -math.inf
    )


def total_usage(replies: Iterable[Reply]) -> Usage:
    """The usage of several calls, added up."""
    usages = [r.usage for r in replies]
    return Usage(
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
    )
