"""How the LLM judges share their connections among SDK clients and read the SDKs' replies."""

from __future__ import annotations

import httpx2
import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion

from guard.errors import MalformedJudgeOutput
from guard.providers._common import (
    CONNECTIONS_PER_CLIENT,
    client_count,
    parse_body,
    round_robin,
)
from guard.settings import JudgeSettings

COMPLETION = (
    b'{"id": "c1", "object": "chat.completion", "created": 1, "model": "m",'
    b' "choices": [{"index": 0, "finish_reason": "stop",'
    b' "message": {"role": "assistant", "content": "{}"}}]}'
)


def settings(in_flight: int) -> JudgeSettings:
    return JudgeSettings.model_validate({"budget": {"max_in_flight": in_flight}})


@pytest.mark.parametrize(
    ("in_flight", "clients"),
    [
        (1, 1),
        (CONNECTIONS_PER_CLIENT, 1),
        (CONNECTIONS_PER_CLIENT + 1, 2),
        (4 * CONNECTIONS_PER_CLIENT, 4),
    ],
)
def test_one_sdk_client_per_connections_per_client_calls_in_flight(
    in_flight: int, clients: int
) -> None:
    """budget.max_in_flight is split over ceil(in_flight / CONNECTIONS_PER_CLIENT) clients."""
    assert client_count(settings(in_flight)) == clients


def test_round_robin_takes_every_client_in_turn() -> None:
    """Calls go to the clients in turn, so each pool holds an even share of the connections."""
    turn = round_robin(["a", "b", "c"])
    assert [next(turn) for _ in range(7)] == ["a", "b", "c", "a", "b", "c", "a"]


def test_reply_in_the_sdk_schema_is_validated_into_its_type() -> None:
    """A reply that is the SDK's schema becomes the SDK's response type."""
    completion = parse_body(ChatCompletion, httpx2.Response(200, content=COMPLETION), "openai")
    assert completion.choices[0].message.content == "{}"


def test_reply_outside_the_sdk_schema_is_built_leniently_like_the_sdk() -> None:
    """A reply missing fields the SDK's type requires (an OpenAI-compatible server's) is still
    read, as the SDK itself reads it by default."""
    body = b'{"choices": [{"finish_reason": "eos", "message": {"content": "{}"}}]}'
    completion = parse_body(ChatCompletion, httpx2.Response(200, content=body), "openai")
    assert completion.choices[0].message.content == "{}"
    assert completion.choices[0].finish_reason == "eos"


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b'"text"'])
def test_reply_that_is_not_a_json_object_is_malformed_output(body: bytes) -> None:
    """A 200 body that is not a JSON object is MalformedJudgeOutput, naming the provider."""
    with pytest.raises(MalformedJudgeOutput, match="anthropic"):
        parse_body(Message, httpx2.Response(200, content=body), "anthropic")


async def test_an_answer_of_the_wrong_shape_is_malformed_output_not_a_crash() -> None:
    """A 200 body the SDK builds leniently can miss fields where the answer is read: that is a
    judge error (an ``error`` verdict, routed by policy), never an exception that escapes."""
    import pytest

    from guard.errors import MalformedJudgeOutput
    from guard.providers._common import bounded_call

    async def read_answer() -> str:
        message: object = "hi"  # {"choices": [{"message": "hi"}]}
        return message.content  # type: ignore[attr-defined, no-any-return]

    with pytest.raises(MalformedJudgeOutput, match="unexpected shape"):
        await bounded_call("openai-compatible", 5.0, read_answer)
