"""The wire formats of the fake LLM APIs: verdict scripts, request parsing, replies, faults.

:mod:`guard.testing.fake_server` serves these over HTTP. The replies follow the shapes the real
``openai`` and ``anthropic`` SDKs parse: chat completions (JSON content, a forced function call,
or a refusal), Responses API output items, and Anthropic messages (a forced ``tool_use`` block or
JSON text), each with usage numbers; faults use each provider's own error bodies.

Over 350 lines on purpose: the three providers' request and reply shapes sit side by side so a
change to one is checked against the others; each function is small.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

VerdictScript = Callable[[dict[str, Any], str], dict[str, Any]]
"""``(request body, text of all messages) -> assessment dict``.

The dict may hold ``score`` (1-5) or ``grounded`` (bool) or both; the missing one is derived so
that it fits the schema the client asked for. Two special keys change the reply itself:
``_refusal`` (a refusal text) and ``_raw_text`` (sent verbatim as the model's text).
"""

FaultKind = Literal[
    "rate_limit",
    "quota",
    "unauthorized",
    "bad_request",
    "server_error",
    "overloaded",
    "hang",
    "malformed",
    "unauthorized_echo",
    "flex_unavailable",
]
FAULT_KINDS: tuple[str, ...] = (
    "rate_limit",
    "quota",
    "unauthorized",
    "bad_request",
    "server_error",
    "overloaded",
    "hang",
    "malformed",
    "unauthorized_echo",
    "flex_unavailable",
)
HALLUCINATION_MARKER = "HALLUCINATED"


@dataclass(frozen=True)
class Fault:
    """One injected failure.

    ``rate_limit``: 429 with ``Retry-After`` (and ``retry-after-ms``) of ``retry_after_s``
    (omitted when None). ``quota``: 429 ``insufficient_quota`` (OpenAI) or a spend-limit 429
    (Anthropic). ``unauthorized``: 401. ``unauthorized_echo``: 401 whose message repeats the
    key the client presented, as some gateways do. ``bad_request``: 400. ``server_error``: 500.
    ``overloaded``: 529. ``hang``: wait ``hang_s`` seconds, then answer normally.
    ``malformed``: 200 with a body that is not JSON. ``flex_unavailable``: OpenAI's flex-tier
    capacity refusal, 429 with code ``resource_unavailable`` (not billed; ``Retry-After`` as for
    ``rate_limit``). ``path`` limits the fault to requests whose path ends with it (e.g.
    ``"/messages"``).
    """

    kind: FaultKind
    retry_after_s: float | None = 1.0
    hang_s: float = 3600.0
    path: str | None = None

    def applies_to(self, path: str) -> bool:
        return self.path is None or path.endswith(self.path)


# --------------------------------------------------------------------------- verdicts


def marker_verdict(body: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The lenient script: score 1 (not grounded) only when the marker ``HALLUCINATED`` occurs
    anywhere in the prompt text, else score 5 with one supported claim that quotes the evidence
    verbatim, whatever the output says (for tests of the plumbing, never of judging)."""
    del body
    output = fenced_text(text, "OUTPUT") or text
    if HALLUCINATION_MARKER in text:
        claim = {
            "claim": _sentence_with(output, HALLUCINATION_MARKER),
            "reason": "The evidence does not say this.",
            "evidence_quote": None,
            "supported": False,
        }
        return {
            "explanation": "The output makes a claim the evidence does not support.",
            "claims": [claim],
            "score": 1,
            "grounded": False,
        }
    quote = _first_sentence(_strip_label(fenced_text(text, "EVIDENCE") or "")) or None
    claim = {
        "claim": _first_sentence(output) or "The output.",
        "reason": "The evidence states it.",
        "evidence_quote": quote,
        "supported": True,
    }
    return {
        "explanation": "Every claim of the output is supported by the evidence.",
        "claims": [claim],
        "score": 5,
        "grounded": True,
    }


def default_verdict(body: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The default script: not grounded (score 1) when the output holds a number that the
    evidence does not (``90 days`` against ``30 days``) or the marker ``HALLUCINATED`` occurs in
    the prompt; else score 5 with one supported claim quoting the evidence. A fake that passed
    everything would let a user's test of their pipeline pass a hallucination; it still reads no
    more than numbers (a wrong name passes: script one for that)."""
    output, evidence = fenced_text(text, "OUTPUT"), fenced_text(text, "EVIDENCE")
    if output is not None and evidence is not None:
        missing = [n for n in _NUMBER.findall(output) if n not in _NUMBER.findall(evidence)]
        if missing:
            claim = {
                "claim": _sentence_with(output, missing[0]),
                "reason": f"The evidence does not mention {missing[0]}.",
                "evidence_quote": None,
                "supported": False,
            }
            return {
                "explanation": f"The output states {missing[0]}, which the evidence does "
                "not support.",
                "claims": [claim],
                "score": 1,
                "grounded": False,
            }
    return marker_verdict(body, text)


numbers_verdict = default_verdict  # its earlier name, when the default was the marker alone


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_FENCED = "<<BEGIN_{label}_([0-9A-Za-z]+)>>\n(.*?)\n<<END_{label}_\\1>>"
_LABEL_PREFIX = re.compile(r"^(\[[^\]]*\]\s*(\([^)]*\)\s*)?)?([A-Z][A-Z ]*(\([^)]*\))?:\s*)?")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def fenced_text(text: str, label: str) -> str | None:
    """The text inside this project's fence markers for ``label`` (``EVIDENCE``, ``OUTPUT``)."""
    match = re.search(_FENCED.format(label=label), text, re.DOTALL)
    return match.group(2) if match else None


def _strip_label(evidence: str) -> str:
    """The first evidence line with a letter, without its ``[1]``/``[turn 1] USER:`` label."""
    for line in evidence.splitlines():
        body = _LABEL_PREFIX.sub("", line.strip(), count=1)
        if any(ch.isalpha() for ch in body):
            return body
    return ""


def _first_sentence(text: str) -> str:
    match = _SENTENCE.search(text.strip())
    return match.group(0).strip() if match else ""


def _sentence_with(text: str, needle: str) -> str:
    for match in _SENTENCE.finditer(text):
        if needle in match.group(0):
            return match.group(0).strip()
    return " ".join(text.split())[:200]


def fit_to_schema(verdict: dict[str, Any], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """Derive ``score``/``grounded`` from each other and keep only the schema's properties."""
    out = dict(verdict)
    if "score" in out and "grounded" not in out:
        out["grounded"] = int(out["score"]) >= 4
    if "grounded" in out and "score" not in out:
        out["score"] = 5 if out["grounded"] else 1
    props = (schema or {}).get("properties")
    if isinstance(props, Mapping) and props:
        out = {k: v for k, v in out.items() if k in props or k.startswith("_")}
    return out


# --------------------------------------------------------------------------- request parsing


def _text_of(content: Any) -> str:
    """Text of a message content: a string, or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text_of(part.get("text", part.get("content", "")))
            for part in content
            if isinstance(part, Mapping)
        )
    return ""


def prompt_text(body: Mapping[str, Any]) -> str:
    """All prompt text of a chat, responses or messages request, joined by newlines."""
    parts = [_text_of(body.get("system")), _text_of(body.get("instructions"))]
    items = body.get("messages") or body.get("input") or []
    if isinstance(items, str):
        parts.append(items)
    else:
        parts.extend(_text_of(m.get("content")) for m in items if isinstance(m, Mapping))
    return "\n".join(p for p in parts if p)


def _chat_schema(body: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(schema, forced tool name) of a chat completions request."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt.get("json_schema", {}).get("schema"), None
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        name = choice["function"]["name"]
        for tool in body.get("tools") or []:
            if tool.get("function", {}).get("name") == name:
                return tool["function"].get("parameters"), name
    return None, None


def _responses_schema(body: Mapping[str, Any]) -> dict[str, Any] | None:
    fmt = (body.get("text") or {}).get("format") or {}
    return fmt.get("schema") if fmt.get("type") == "json_schema" else None


def _anthropic_schema(body: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(schema, forced tool name) of an Anthropic messages request."""
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") == "tool":
        for tool in body.get("tools") or []:
            if tool.get("name") == choice.get("name"):
                return tool.get("input_schema"), tool["name"]
    fmt = (body.get("output_config") or {}).get("format") or body.get("output_format") or {}
    return (fmt.get("schema") if fmt.get("type") == "json_schema" else None), None


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "application/json"


def json_reply(status: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    return Reply(status, orjson.dumps(payload), headers)


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _chat_reply(
    body: Mapping[str, Any], verdict: dict[str, Any], usage: dict[str, int]
) -> dict[str, Any]:
    schema, tool = _chat_schema(body)
    fitted = fit_to_schema(verdict, schema)
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    finish = "stop"
    if "_refusal" in fitted:
        message["refusal"] = str(fitted["_refusal"])
    elif "_raw_text" in fitted:
        message["content"] = str(fitted["_raw_text"])
    elif tool is not None:
        message["tool_calls"] = [
            {
                "id": new_id("call_"),
                "type": "function",
                "function": {"name": tool, "arguments": orjson.dumps(fitted).decode()},
            }
        ]
        finish = "tool_calls"
    else:
        message["content"] = orjson.dumps(fitted).decode()
    return {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "system_fingerprint": "fp_fake",
        "service_tier": body.get("service_tier") or "default",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": usage["input"],
            "completion_tokens": usage["output"],
            "total_tokens": usage["input"] + usage["output"],
            "prompt_tokens_details": {"cached_tokens": usage["cached"]},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _responses_reply(
    body: Mapping[str, Any], verdict: dict[str, Any], usage: dict[str, int]
) -> dict[str, Any]:
    fitted = fit_to_schema(verdict, _responses_schema(body))
    if "_refusal" in fitted:
        part: dict[str, Any] = {"type": "refusal", "refusal": str(fitted["_refusal"])}
    else:
        text = fitted.get("_raw_text")
        part = {
            "type": "output_text",
            "annotations": [],
            "logprobs": [],
            "text": str(text) if text is not None else orjson.dumps(fitted).decode(),
        }
    return {
        "id": new_id("resp_"),
        "object": "response",
        "created_at": time.time(),
        "status": "completed",
        "model": body.get("model", "fake"),
        "error": None,
        "incomplete_details": None,
        "service_tier": body.get("service_tier") or "default",
        "instructions": body.get("instructions"),
        "output": [
            {
                "type": "message",
                "id": new_id("msg_"),
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "temperature": body.get("temperature"),
        "text": body.get("text"),
        "usage": {
            "input_tokens": usage["input"],
            "output_tokens": usage["output"],
            "total_tokens": usage["input"] + usage["output"],
            "input_tokens_details": {"cached_tokens": usage["cached"], "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _anthropic_reply(
    body: Mapping[str, Any], verdict: dict[str, Any], usage: dict[str, int]
) -> dict[str, Any]:
    schema, tool = _anthropic_schema(body)
    fitted = fit_to_schema(verdict, schema)
    stop = "end_turn"
    if "_refusal" in fitted:
        content: list[dict[str, Any]] = [{"type": "text", "text": str(fitted["_refusal"])}]
        stop = "refusal"
    elif "_raw_text" in fitted:
        content = [{"type": "text", "text": str(fitted["_raw_text"])}]
    elif tool is not None:
        content = [{"type": "tool_use", "id": new_id("toolu_"), "name": tool, "input": fitted}]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": orjson.dumps(fitted).decode()}]
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {  # Anthropic's input_tokens exclude cache reads and writes
            "input_tokens": max(0, usage["input"] - usage["cached"] - usage.get("cache_write", 0)),
            "output_tokens": usage["output"],
            "cache_read_input_tokens": usage["cached"],
            "cache_creation_input_tokens": usage.get("cache_write", 0),
        },
    }


REPLY_BUILDERS: dict[
    str, Callable[[Mapping[str, Any], dict[str, Any], dict[str, int]], dict[str, Any]]
] = {
    "chat": _chat_reply,
    "responses": _responses_reply,
    "messages": _anthropic_reply,
}


def route(path: str) -> str | None:
    for suffix, name in (
        ("/chat/completions", "chat"),
        ("/responses", "responses"),
        ("/messages", "messages"),
    ):
        if path.endswith(suffix):
            return name
    return None


def fault_reply(fault: Fault, api: str, presented_key: str = "") -> Reply:
    """The HTTP reply for a fault, shaped like the provider's own error bodies
    (``presented_key``: the key the client sent, for ``unauthorized_echo``)."""
    anthropic = api == "messages"
    if fault.kind == "malformed":
        return Reply(200, b'{"id": "broken", "choices": [', ())
    if fault.kind == "unauthorized_echo":
        message = f"Invalid credentials presented: {presented_key}"
        if anthropic:
            return json_reply(
                401,
                {"type": "error", "error": {"type": "authentication_error", "message": message}},
            )
        return json_reply(
            401,
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            },
        )
    headers: tuple[tuple[str, str], ...] = ()
    if fault.kind in ("rate_limit", "flex_unavailable") and fault.retry_after_s is not None:
        headers = (
            ("retry-after", f"{fault.retry_after_s:g}"),
            ("retry-after-ms", f"{fault.retry_after_s * 1000:g}"),
        )
    status, etype, code, message = _FAULT_BODIES[fault.kind][int(anthropic)]
    if anthropic:
        payload: dict[str, Any] = {"type": "error", "error": {"type": etype, "message": message}}
    else:
        payload = {"error": {"message": message, "type": etype, "param": None, "code": code}}
    return json_reply(status, payload, headers)


# kind -> (openai (status, type, code, message), anthropic (status, type, code, message))
_FAULT_BODIES: dict[str, tuple[tuple[int, str, str | None, str], ...]] = {
    "rate_limit": (
        (429, "requests", "rate_limit_exceeded", "Rate limit reached for requests."),
        (429, "rate_limit_error", None, "Number of request tokens has exceeded your rate limit."),
    ),
    "quota": (
        (
            429,
            "insufficient_quota",
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details.",
        ),
        (
            429,
            "rate_limit_error",
            None,
            "You have reached your specified API usage limits. You will regain access on "
            "2099-01-01 at 00:00 UTC.",
        ),
    ),
    "unauthorized": (
        (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
        (401, "authentication_error", None, "invalid x-api-key"),
    ),
    "bad_request": (
        (400, "invalid_request_error", None, "Invalid request."),
        (400, "invalid_request_error", None, "Invalid request."),
    ),
    "server_error": (
        (500, "server_error", None, "The server had an error while processing your request."),
        (500, "api_error", None, "Internal server error"),
    ),
    "overloaded": (
        (529, "server_error", None, "The engine is currently overloaded."),
        (529, "overloaded_error", None, "Overloaded"),
    ),
    "flex_unavailable": (
        (
            429,
            "rate_limit_error",
            "resource_unavailable",
            "Resource unavailable: flex processing has no capacity right now. Please retry "
            "later or use the default service tier.",
        ),
        (429, "rate_limit_error", None, "Number of request tokens has exceeded your rate limit."),
    ),
    "hang": (
        (500, "server_error", None, "unreachable"),
        (500, "api_error", None, "unreachable"),
    ),
}


__all__ = [
    "FAULT_KINDS",
    "HALLUCINATION_MARKER",
    "REPLY_BUILDERS",
    "Fault",
    "FaultKind",
    "Reply",
    "VerdictScript",
    "default_verdict",
    "estimate_tokens",
    "fault_reply",
    "fenced_text",
    "fit_to_schema",
    "json_reply",
    "marker_verdict",
    "new_id",
    "numbers_verdict",
    "prompt_text",
    "route",
]
