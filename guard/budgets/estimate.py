"""Token estimates made before a call, when the provider has not yet said what it used.

tiktoken downloads its encodings at run time and so fails offline: a chars/4 estimate is used,
and the rate limiter and cost budget correct it with the usage the response reports.
"""

from __future__ import annotations

from guard.budgets.settings import CHARS_PER_TOKEN, EXPECTED_OUTPUT_TOKENS, PROMPT_OVERHEAD_TOKENS
from guard.case import PreparedCase
from guard.models import Usage


def estimate_tokens(text: str) -> int:
    """Tokens of ``text``, rounded up, at about four characters a token."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_usage(case: PreparedCase) -> Usage:
    """The usage a judge call on ``case`` is expected to report."""
    judged = case.evidence + case.labels + case.output + (case.question or "")
    return Usage(
        input_tokens=PROMPT_OVERHEAD_TOKENS + estimate_tokens(judged),
        output_tokens=EXPECTED_OUTPUT_TOKENS,
    )


def total_tokens(usage: Usage) -> int:
    """Tokens that count against a tokens-per-minute limit."""
    return usage.input_tokens + usage.output_tokens
