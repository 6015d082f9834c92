"""The evidence of a proxied chat request, and server-sent events read from split bytes."""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

from hypothesis import given
from hypothesis import strategies as st

from guard.models import ContextField
from guard.stream.chat import CONTEXT_FIELD, chat_request, without_extensions
from guard.stream.sse import SseReader, sse_bytes


def roles(body: dict, wire: str, **options: bool) -> list[tuple[str, str, str | None]]:
    request = chat_request(body, wire, request_id="r", **options)  # type: ignore[arg-type]
    assert request.context_field is ContextField.MESSAGES
    return [(m.role, m.content, m.name) for m in request.messages or []]


class TestOpenAIEvidence:
    BODY: ClassVar[dict[str, Any]] = {
        "messages": [
            {"role": "system", "content": "Docs: returns within 30 days."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "How long?"}, {"type": "image_url"}],
            },
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Policy: 30 days."},
        ]
    }

    def test_user_turns_and_tool_results_are_evidence_and_the_system_is_not(self) -> None:
        assert roles(self.BODY, "openai") == [
            ("system", "Docs: returns within 30 days.", None),
            ("user", "How long?", None),
            ("tool", "Policy: 30 days.", "c1"),
        ]

    def test_the_system_message_is_evidence_when_configured(self) -> None:
        found = roles(self.BODY, "openai", system_as_evidence=True)
        assert found[0] == ("tool", "Docs: returns within 30 days.", "system prompt")

    def test_an_explicit_context_comes_first_and_is_not_forwarded(self) -> None:
        body = {**self.BODY, CONTEXT_FIELD: ["A.", {"text": "B.", "source": "kb/7"}], "seed": 3}
        assert roles(body, "openai")[:2] == [("tool", "A.", "context"), ("tool", "B.", "kb/7")]
        assert without_extensions(body) == {**self.BODY, "seed": 3}


class TestAnthropicEvidence:
    def test_tool_results_documents_and_the_system_prompt(self) -> None:
        body = {
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "document",
                            "title": "policy",
                            "source": {"type": "text", "data": "30 days."},
                        },
                        {"type": "text", "text": "How long?"},
                    ],
                },
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "input": {}}]},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Yes."}],
                },
            ],
        }
        assert roles(body, "anthropic") == [
            ("system", "Be brief.", None),
            ("tool", "30 days.", "policy"),
            ("user", "How long?", None),
            ("tool", "Yes.", "t1"),
        ]

    def test_odd_shapes_are_skipped_not_raised(self) -> None:
        assert (
            roles({"messages": [1, {"role": "user", "content": 5}], "system": 3}, "anthropic") == []
        )


class TestSse:
    EVENTS: ClassVar[list[tuple[str, str]]] = [
        ("message_start", '{"a": "café — $12,000"}'),
        ("", '{"b": 1}'),
        ("x", "two\nlines"),
    ]

    def raw(self, newline: bytes) -> bytes:
        data = b"".join(sse_bytes(d, e or None) for e, d in self.EVENTS)
        return b": comment\n" + data.replace(b"\n", newline)

    @given(st.sampled_from([b"\n", b"\r\n", b"\r"]), st.lists(st.integers(0, 200), max_size=30))
    def test_events_are_the_same_however_the_bytes_are_split(
        self, newline: bytes, cuts: list[int]
    ) -> None:
        raw = self.raw(newline)
        marks = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
        reader = SseReader()
        events = [e for a, b in itertools.pairwise(marks) for e in reader.feed(raw[a:b])]
        assert [(e.event, e.data) for e in events] == [(e or "message", d) for e, d in self.EVENTS]
