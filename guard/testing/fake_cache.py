"""The fake LLM server's prompt cache: which request prefixes it has seen, and what a provider
would bill as cache reads and writes for them.

* OpenAI (chat, responses): automatic. The static prefix is the structured-output schema plus
  the system prompt (``instructions``); when at least ``min_tokens`` long and seen before under
  the same ``prompt_cache_key``, its first ``min_tokens + k * 128`` tokens are reported as
  ``cached_tokens``. Nothing is ever billed as a write.
* Anthropic (messages): only with a ``cache_control`` breakpoint. The prefix is the tools plus
  the system blocks up to the marked one; the first call writes it
  (``cache_creation_input_tokens``), later ones read it (``cache_read_input_tokens``). Prefixes
  shorter than ``min_tokens`` are not cached, as Anthropic does silently.

Tokens are estimated at four characters each, like the rest of the fake.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from typing import Any

import orjson

_STEP = 128


def _tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def schema_text(api: str, body: Mapping[str, Any]) -> str:
    """The structured-output schema or tools of a request, as the provider counts them."""
    if api == "responses":
        text = body.get("text")
        schema = text.get("format") if isinstance(text, Mapping) else None
    else:
        schema = body.get("response_format") or body.get("tools")
    return orjson.dumps(schema).decode() if schema else ""


def _openai_prefix(api: str, body: Mapping[str, Any]) -> str:
    if api == "responses":
        system = _text(body.get("instructions"))
    else:
        messages = body.get("messages")
        head = messages[0] if isinstance(messages, list) and messages else None
        first = head if isinstance(head, Mapping) else {}
        system = _text(first.get("content")) if first.get("role") in ("system", "developer") else ""
    return schema_text(api, body) + system if system else ""


def _anthropic_marked_prefix(body: Mapping[str, Any]) -> str:
    """Tools and system blocks up to the last one with ``cache_control`` ("" when none)."""
    system = body.get("system")
    blocks = system if isinstance(system, list) else []
    marked = [i for i, b in enumerate(blocks) if isinstance(b, Mapping) and b.get("cache_control")]
    if not marked:
        return ""
    kept = blocks[: marked[-1] + 1]
    return orjson.dumps(body.get("tools") or []).decode() + _text(kept)


class FakePromptCache:
    """Prefixes seen so far (thread-safe); :meth:`observe` says what a call reads and writes."""

    def __init__(self, min_tokens: int = 1024) -> None:
        self.min_tokens = min_tokens
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def usage(self, api: str, body: Mapping[str, Any], text_tokens: int) -> tuple[int, int, int]:
        """``(input, cached read, cache write)`` tokens of a request whose prompt text has
        ``text_tokens``: the input counts the schema too, as providers count it."""
        cached, written = self.observe(api, body)
        return text_tokens + _tokens(schema_text(api, body)), cached, written

    def observe(self, api: str, body: Mapping[str, Any]) -> tuple[int, int]:
        """``(cached read tokens, cache write tokens)`` of this request; remembers its prefix."""
        if api == "messages":
            return self._anthropic(body)
        prefix = _openai_prefix(api, body)
        tokens = _tokens(prefix)
        if tokens < self.min_tokens:
            return 0, 0
        key = self._key(str(body.get("prompt_cache_key") or ""), prefix)
        if not self._remember(key):
            return 0, 0
        return self.min_tokens + (tokens - self.min_tokens) // _STEP * _STEP, 0

    def _anthropic(self, body: Mapping[str, Any]) -> tuple[int, int]:
        prefix = _anthropic_marked_prefix(body)
        tokens = _tokens(prefix)
        if tokens < self.min_tokens:
            return 0, 0
        return (tokens, 0) if self._remember(self._key("", prefix)) else (0, tokens)

    def _remember(self, key: str) -> bool:
        """True when ``key`` was seen before; remembers it either way."""
        with self._lock:
            seen = key in self._seen
            self._seen.add(key)
            return seen

    @staticmethod
    def _key(cache_key: str, prefix: str) -> str:
        return hashlib.sha256(f"{cache_key}\0{prefix}".encode()).hexdigest()
