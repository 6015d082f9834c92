"""The fake's prompt cache: what it bills as cache reads and writes for the requests it sees."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from guard.testing import FakePromptCache

SYSTEM = "x" * 5_000  # 1,250 tokens at four characters each


def chat(system: str, user: str, key: str = "k") -> dict[str, Any]:
    return {
        "prompt_cache_key": key,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }


def test_openai_second_call_with_the_same_prefix_reads_whole_128_token_steps() -> None:
    cache = FakePromptCache()
    assert cache.observe("chat", chat(SYSTEM, "a")) == (0, 0)
    assert cache.observe("chat", chat(SYSTEM, "b")) == (1_152, 0)  # 1,024 + 1 * 128 of 1,250


def test_openai_prefix_is_keyed_by_prompt_cache_key_and_needs_the_minimum() -> None:
    cache = FakePromptCache()
    cache.observe("chat", chat(SYSTEM, "a", key="one"))
    assert cache.observe("chat", chat(SYSTEM, "a", key="two")) == (0, 0)
    cache.observe("chat", chat("short", "a"))
    assert cache.observe("chat", chat("short", "a")) == (0, 0)


def test_anthropic_caches_only_up_to_a_breakpoint_writing_first_then_reading() -> None:
    cache = FakePromptCache()
    plain = {"system": [{"type": "text", "text": SYSTEM}]}
    marked = {"system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]}
    assert cache.observe("messages", plain) == (0, 0)
    _, written = cache.observe("messages", marked)
    assert written >= 1_250
    assert cache.observe("messages", marked) == (written, 0)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(min_size=1, max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(
    st.sampled_from(["chat", "responses", "messages"]),
    st.dictionaries(
        st.sampled_from(
            [
                "messages",
                "system",
                "instructions",
                "text",
                "tools",
                "response_format",
                "prompt_cache_key",
            ]
        ),
        JSON,
        max_size=5,
    ),
)
@example("responses", {"instructions": "hi", "text": 5})
@example("chat", {"messages": [5, {"role": "system", "content": [1]}]})
@example("messages", {"system": [{"cache_control": 1, "text": 3}], "tools": 5})
def test_any_request_body_yields_non_negative_counts_and_never_raises(
    api: str, body: dict[str, Any]
) -> None:
    """Bodies of any shape (the fake serves whatever clients send) are read without error."""
    try:
        read, written = FakePromptCache(min_tokens=0).observe(api, body)
    except (TypeError, AttributeError) as exc:  # pragma: no cover - the property under test
        raise AssertionError(f"crashed on {body!r}") from exc
    assert read >= 0
    assert written >= 0
