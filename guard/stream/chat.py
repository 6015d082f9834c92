"""The evidence of a chat request (OpenAI chat completions or Anthropic messages) as a
:class:`~guard.models.JudgeRequest` whose grounding source is its conversation (``messages``).

What is evidence, as for any ``messages`` request (:mod:`guard.prepare.evidence`): the user's
turns and tool results. Earlier assistant turns are shown to the judge labelled *not evidence*.
The system message is shown the same way unless ``system_as_evidence``: a RAG prompt often
carries the retrieved documents there, but it also carries the instructions, persona and rules
("always say refunds take 90 days" is not a fact the answer may rest on), so reading it as
evidence is a choice for deployments that put only documents in it. An explicit context sent
beside the request (:data:`CONTEXT_FIELD`: a string, strings, or ``{"text", "id", "source"}``
documents, removed before the request goes upstream) is evidence first. Each evidence item that
is not a user turn becomes a tool turn (``TOOL RESULT``) named for what it is: ``context``, the
document's source or id, ``system prompt``, ``document``, or the tool's call id.

Content parts that are not text (images, audio) are left out. Nothing here raises for odd
shapes: a field of the wrong type is skipped (the upstream will refuse the request itself).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

from guard.models import ContextField, JudgeRequest, Message

CONTEXT_FIELD = "groundguard_context"
"""The request body field of an explicit context; removed before forwarding."""

Wire = Literal["openai", "anthropic"]
Role = Literal["user", "assistant", "system", "tool"]


def chat_request(
    body: Mapping[str, Any],
    wire: Wire,
    *,
    request_id: str,
    system_as_evidence: bool = False,
    metadata: dict[str, Any] | None = None,
) -> JudgeRequest:
    """The request to judge an answer to ``body`` with (its output filled in later)."""
    turns = list(_explicit(body.get(CONTEXT_FIELD)))
    if wire == "anthropic":
        turns += _system_turns(body.get("system"), system_as_evidence)
        turns += _anthropic_turns(body.get("messages"))
    else:
        turns += _openai_turns(body.get("messages"), system_as_evidence)
    return JudgeRequest(
        output="",
        messages=turns,
        context_field=ContextField.MESSAGES,
        id=request_id,
        metadata=metadata,
    )


def without_extensions(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` as it goes upstream: every field but the extension fields, untouched."""
    return {k: v for k, v in body.items() if k != CONTEXT_FIELD}


def _turn(role: Role, text: str, name: str | None = None) -> Iterator[Message]:
    if text.strip():
        yield Message(role=role, content=text, name=name)


def _explicit(value: Any) -> Iterator[Message]:
    items = (
        [value] if isinstance(value, str | Mapping) else value if isinstance(value, list) else []
    )
    for item in items:
        if isinstance(item, str):
            yield from _turn("tool", item, "context")
        elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
            name = item.get("source") or item.get("id") or "context"
            yield from _turn("tool", item["text"], str(name))


def _text_of(content: Any) -> str:
    """The text of a content value: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str))


def _system_turns(content: Any, as_evidence: bool) -> Iterator[Message]:
    text = _text_of(content)
    if as_evidence:
        yield from _turn("tool", text, "system prompt")
    else:
        yield from _turn("system", text)


def _openai_turns(messages: Any, system_as_evidence: bool) -> Iterator[Message]:
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, Mapping):
            continue
        role, text = message.get("role"), _text_of(message.get("content"))
        if role in ("system", "developer"):
            yield from _system_turns(text, system_as_evidence)
        elif role == "tool":
            yield from _turn("tool", text, str(message.get("tool_call_id") or "tool"))
        elif role == "function":
            yield from _turn("tool", text, str(message.get("name") or "function"))
        elif role in ("user", "assistant"):
            yield from _turn(role, text)


def _anthropic_turns(messages: Any) -> Iterator[Message]:
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            continue
        role: Role = "user" if message["role"] == "user" else "assistant"
        content = message.get("content")
        if isinstance(content, str):
            yield from _turn(role, content)
            continue
        for block in content if isinstance(content, list) else []:
            if isinstance(block, Mapping):
                yield from _anthropic_block(role, block)


def _anthropic_block(role: Role, block: Mapping[str, Any]) -> Iterator[Message]:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        yield from _turn(role, block["text"])
    elif kind == "tool_result":
        yield from _turn(
            "tool", _text_of(block.get("content")), str(block.get("tool_use_id") or "tool")
        )
    elif kind == "document":
        source = block.get("source")
        if isinstance(source, Mapping) and source.get("type") == "text":
            data = source.get("data")
            name = str(block.get("title") or "document")
            yield from _turn("tool", data if isinstance(data, str) else "", name)
