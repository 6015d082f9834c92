"""The two wire formats of the proxy: reading an upstream's stream into text and marks, and
writing what :class:`~guard.stream.release.HoldAndRelease` releases as the client expects it.

OpenAI (``POST /v1/chat/completions``): ``data: {chat.completion.chunk}`` events, the text in
``choices[0].delta.content``, ended by ``data: [DONE]``. A stopped answer ends with the notice,
a chunk with ``finish_reason: "content_filter"`` and ``data: [DONE]``.

Anthropic (``POST /v1/messages``): ``message_start``, ``content_block_start`` /
``content_block_delta`` (``text_delta``) / ``content_block_stop`` per block, ``message_delta``
(the stop reason and usage) and ``message_stop``. A stopped answer ends with the notice in the
open text block (or a new one), ``content_block_stop``, ``message_delta`` with ``stop_reason:
"refusal"`` and ``message_stop``.

Everything that is not answer text (roles, tool calls, thinking, usage, pings) is forwarded as
it came, in its place. The last chunk (OpenAI's ``finish_reason`` chunk, Anthropic's
``message_delta``) carries a ``groundguard`` object: the verdict's summary (:func:`summary`),
never the claims, which quote text that may have been withheld. An upstream that breaks off
gets the wire's error event (the SDKs raise ``APIError``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from guard.stream.sse import SseEvent, sse_bytes

DONE = b"data: [DONE]\n\n"


@dataclass(frozen=True)
class Raw:
    """An upstream event forwarded as it came (``event`` None: a data-only event)."""

    data: dict[str, Any]
    event: str | None = None


@dataclass(frozen=True)
class Trailer:
    """The upstream's last chunk before the end, where the verdict's summary goes."""

    data: dict[str, Any]


class End:
    """The upstream's end of the answer (``[DONE]``, ``message_stop``)."""


@dataclass(frozen=True)
class Failed:
    """An error event from the upstream."""

    message: str


Item = str | Raw | Trailer | End | Failed
END = End()


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _loads(data: str) -> dict[str, Any]:
    value = orjson.loads(data)
    if not isinstance(value, dict):
        raise ValueError("an event that is not a JSON object")
    return value


# --------------------------------------------------------------------------- OpenAI


@dataclass
class OpenAIWire:
    """One answer in OpenAI's chat completion chunks."""

    model: str
    envelope: dict[str, Any] = field(default_factory=dict)
    _held: list[bytes] = field(default_factory=list)
    _trailer: dict[str, Any] | None = None

    kind = "openai"
    media_type = "text/event-stream"

    def read(self, event: SseEvent) -> Iterator[Item]:
        if event.data.strip() == "[DONE]":
            yield END
            return
        chunk = _loads(event.data)
        if isinstance(chunk.get("error"), dict):
            yield Failed(str(chunk["error"].get("message") or "upstream error"))
            return
        if not self.envelope:
            keep = ("id", "object", "created", "model", "system_fingerprint", "service_tier")
            self.envelope = {k: chunk[k] for k in keep if k in chunk}
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            yield Raw(chunk)  # the usage chunk, and anything else without a choice
            return
        raw_delta = choice.get("delta")
        delta: dict[str, Any] = raw_delta if isinstance(raw_delta, dict) else {}
        content = delta.get("content")
        if isinstance(content, str) and content:
            yield content
            rest = {k: v for k, v in delta.items() if k not in ("content", "role")}
            if not rest and choice.get("finish_reason") is None:
                return
            chunk = {**chunk, "choices": [{**choice, "delta": rest}]}
        if choice.get("finish_reason") is not None:
            yield Trailer(chunk)
        else:
            yield Raw(chunk)

    def _chunk(self, delta: dict[str, Any], finish: str | None, **extra: Any) -> dict[str, Any]:
        envelope = self.envelope or {
            "id": "chatcmpl-groundguard",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
        }
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**envelope, "choices": [choice], **extra}

    def text(self, text: str) -> bytes:
        return sse_bytes(_json(self._chunk({"content": text}, None)))

    def mark(self, item: object) -> bytes:
        if isinstance(item, Trailer):
            self._trailer = item.data
            return b""
        assert isinstance(item, Raw)
        if self._trailer is not None:  # after the trailer (usage): sent after it, at the end
            self._held.append(sse_bytes(_json(item.data)))
            return b""
        return sse_bytes(_json(item.data))

    def finished(self, summary: dict[str, Any]) -> bytes:
        last = self._trailer or self._chunk({}, "stop")
        return sse_bytes(_json({**last, "groundguard": summary})) + b"".join(self._held) + DONE

    def stopped(self, notice: str, summary: dict[str, Any]) -> bytes:
        head = self.text(notice) if notice else b""
        last = self._chunk({}, "content_filter", groundguard=summary)
        return head + sse_bytes(_json(last)) + DONE

    def aborted(self, reason: str, message: str) -> bytes:
        error = {"message": message, "type": "upstream_error", "code": reason}
        return sse_bytes(_json({"error": error}))

    # the whole answer (stream: false)

    @staticmethod
    def answer(body: dict[str, Any]) -> str:
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        return content if isinstance(content, str) else ""

    @staticmethod
    def blocked(body: dict[str, Any], notice: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": notice, "refusal": None}
        choice = {"index": 0, "message": message, "logprobs": None}
        return {**body, "choices": [{**choice, "finish_reason": "content_filter"}]}


# --------------------------------------------------------------------------- Anthropic


@dataclass
class AnthropicWire:
    """One answer in Anthropic's message stream events."""

    model: str
    _open: dict[int, str] = field(default_factory=dict)  # index -> block type, written
    _text_index: int | None = None
    _next_index: int = 0
    _started: bool = False
    _output_tokens: int = 0
    _held: list[bytes] = field(default_factory=list)
    _trailer: dict[str, Any] | None = None

    kind = "anthropic"
    media_type = "text/event-stream"

    def read(self, event: SseEvent) -> Iterator[Item]:
        data = _loads(event.data)
        kind = data.get("type", event.event)
        if kind == "error":
            error = data.get("error")
            yield Failed(str(error.get("message") if isinstance(error, dict) else "error"))
        elif kind == "content_block_delta" and _text_delta(data):
            yield data["delta"]["text"]
        elif kind == "message_delta":
            yield Trailer(data)
        elif kind == "message_stop":
            yield Raw(data, "message_stop")
            yield END
        else:
            yield Raw(data, str(kind))

    def _event(self, data: dict[str, Any]) -> bytes:
        kind = str(data["type"])
        self._note(kind, data)
        return sse_bytes(_json(data), kind)

    def _note(self, kind: str, data: dict[str, Any]) -> None:
        """What the client has been sent: started, open blocks, the text block, usage."""
        index = data.get("index")
        if kind == "message_start":
            self._started = True
            usage = (data.get("message") or {}).get("usage") or {}
            self._output_tokens = int(usage.get("output_tokens") or 0)
        elif kind == "content_block_start" and isinstance(index, int):
            block = data.get("content_block") or {}
            self._open[index] = str(block.get("type"))
            self._next_index = max(self._next_index, index + 1)
            if block.get("type") == "text":
                self._text_index = index
        elif kind == "content_block_stop" and isinstance(index, int):
            self._open.pop(index, None)
            if index == self._text_index:
                self._text_index = None

    def text(self, text: str) -> bytes:
        head = b""
        if self._text_index is None:  # text outside a block the upstream opened
            head = self._start_text()
        delta = {"type": "text_delta", "text": text}
        return head + self._event(
            {"type": "content_block_delta", "index": self._text_index, "delta": delta}
        )

    def _start_text(self) -> bytes:
        head = b"" if self._started else self._event(self._message_start())
        block = {"type": "content_block_start", "index": self._next_index}
        return head + self._event({**block, "content_block": {"type": "text", "text": ""}})

    def _message_start(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": "msg_groundguard",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": self.model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return {"type": "message_start", "message": message}

    def mark(self, item: object) -> bytes:
        if isinstance(item, Trailer):
            self._trailer = item.data
            usage = item.data.get("usage") or {}
            self._output_tokens = int(usage.get("output_tokens") or self._output_tokens)
            return b""
        assert isinstance(item, Raw)
        if self._trailer is not None:
            self._held.append(sse_bytes(_json(item.data), item.event))
            return b""
        return self._event(item.data)

    def finished(self, summary: dict[str, Any]) -> bytes:
        head = b"" if self._started else self._event(self._message_start())
        last = self._trailer or self._message_delta("end_turn")
        stop = self._held or [sse_bytes(_json({"type": "message_stop"}), "message_stop")]
        return (
            head
            + sse_bytes(_json({**last, "groundguard": summary}), "message_delta")
            + (b"".join(stop))
        )

    def _message_delta(self, reason: str) -> dict[str, Any]:
        delta = {"stop_reason": reason, "stop_sequence": None}
        return {
            "type": "message_delta",
            "delta": delta,
            "usage": {"output_tokens": self._output_tokens},
        }

    def stopped(self, notice: str, summary: dict[str, Any]) -> bytes:
        out = (
            self.text(notice)
            if notice
            else (b"" if self._started else self._event(self._message_start()))
        )
        for index in sorted(self._open):
            out += self._event({"type": "content_block_stop", "index": index})
        last = {**self._message_delta("refusal"), "groundguard": summary}
        out += sse_bytes(_json(last), "message_delta")
        return out + sse_bytes(_json({"type": "message_stop"}), "message_stop")

    def aborted(self, reason: str, message: str) -> bytes:
        error = {"type": "error", "error": {"type": "api_error", "message": f"{reason}: {message}"}}
        return sse_bytes(_json(error), "error")

    # the whole answer (stream: false)

    @staticmethod
    def answer(body: dict[str, Any]) -> str:
        content = body.get("content")
        blocks = content if isinstance(content, list) else []
        texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        return "".join(t for t in texts if isinstance(t, str))

    @staticmethod
    def blocked(body: dict[str, Any], notice: str) -> dict[str, Any]:
        content = [{"type": "text", "text": notice}] if notice else []
        return {**body, "content": content, "stop_reason": "refusal", "stop_sequence": None}


def _text_delta(data: dict[str, Any]) -> bool:
    delta = data.get("delta")
    return (
        isinstance(delta, dict)
        and delta.get("type") == "text_delta"
        and isinstance(delta.get("text"), str)
    )


Wire = OpenAIWire | AnthropicWire
