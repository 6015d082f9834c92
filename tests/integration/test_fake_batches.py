"""The fake's batch endpoints, driven by the real SDKs' own batch methods."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anthropic
import openai
import orjson
import pytest

from guard.testing import FakeLLMServer
from guard.testing.fake_batches import ITEM_ERROR_MARKER, ITEM_EXPIRE_MARKER
from guard.testing.fake_server import marker_verdict

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "the sky is blue"}]}


def line(custom_id: str, text: str) -> bytes:
    body = {**CHAT, "messages": [{"role": "user", "content": text}]}
    item = {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}
    return orjson.dumps(item) + b"\n"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """Batches run until a test ends them (``end_batches``): no test waits on the clock."""
    with FakeLLMServer(verdict=marker_verdict, batch_delay_s=3600) as srv:
        yield srv


def end_batches(server: FakeLLMServer) -> None:
    """Every batch created so far ends now (the fake reads ``delay_s`` when a batch is read)."""
    server.batches.delay_s = 0


@pytest.fixture
async def oai(server: FakeLLMServer) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def ant(server: FakeLLMServer) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(
        base_url=server.anthropic_base_url, api_key="k", max_retries=0
    )
    yield client
    await client.close()


async def test_openai_batch_runs_after_its_delay_and_splits_output_and_error_files(
    server: FakeLLMServer, oai: openai.AsyncOpenAI
) -> None:
    data = line("a", "fine") + line("b", f"broken {ITEM_ERROR_MARKER}") + line("c", "HALLUCINATED")
    upload = await oai.files.create(file=("in.jsonl", data), purpose="batch")
    batch = await oai.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert (await oai.batches.retrieve(batch.id)).status == "in_progress"
    end_batches(server)
    done = await oai.batches.retrieve(batch.id)
    assert done.status == "completed"
    assert done.request_counts is not None
    assert (done.request_counts.completed, done.request_counts.failed) == (2, 1)
    assert done.output_file_id
    assert done.error_file_id
    out = [
        orjson.loads(x) for x in (await oai.files.content(done.output_file_id)).content.splitlines()
    ]
    err = [
        orjson.loads(x) for x in (await oai.files.content(done.error_file_id)).content.splitlines()
    ]
    assert sorted(o["custom_id"] for o in out) == ["a", "c"]
    assert all(o["response"]["body"]["object"] == "chat.completion" for o in out)
    assert [e["custom_id"] for e in err] == ["b"]
    assert server.batches.submitted() == {"a": 1, "b": 1, "c": 1}


async def test_openai_expired_and_cancelled_batches(
    server: FakeLLMServer, oai: openai.AsyncOpenAI
) -> None:
    data = line("x", "ok") + line("y", ITEM_EXPIRE_MARKER)
    upload = await oai.files.create(file=("in.jsonl", data), purpose="batch")
    expired = await oai.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    cancelled = await oai.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    assert (await oai.batches.cancel(cancelled.id)).status == "cancelled"
    end_batches(server)
    ended = await oai.batches.retrieve(expired.id)
    assert ended.status == "expired"
    assert ended.error_file_id is not None
    errors = (await oai.files.content(ended.error_file_id)).content
    assert orjson.loads(errors.splitlines()[0])["error"]["code"] == "batch_expired"


async def test_anthropic_message_batch_results_through_the_sdk(
    server: FakeLLMServer, ant: anthropic.AsyncAnthropic
) -> None:
    params = {"model": "claude-haiku-4-5", "max_tokens": 50}
    requests: list[anthropic.types.messages.batch_create_params.Request] = [
        {"custom_id": "ok", "params": {**params, "messages": [{"role": "user", "content": "hi"}]}},  # type: ignore[typeddict-item]
        {
            "custom_id": "bad",
            "params": {**params, "messages": [{"role": "user", "content": ITEM_ERROR_MARKER}]},  # type: ignore[typeddict-item]
        },
        {
            "custom_id": "late",
            "params": {**params, "messages": [{"role": "user", "content": ITEM_EXPIRE_MARKER}]},  # type: ignore[typeddict-item]
        },
    ]
    batch = await ant.messages.batches.create(requests=requests)
    assert batch.processing_status == "in_progress"
    end_batches(server)
    ended = await ant.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended"
    assert (ended.request_counts.succeeded, ended.request_counts.errored) == (1, 1)
    assert ended.request_counts.expired == 1
    results = {r.custom_id: r.result async for r in await ant.messages.batches.results(batch.id)}
    assert results["ok"].type == "succeeded"
    assert results["bad"].type == "errored"
    assert results["late"].type == "expired"
    assert server.stats()["batch"]["items_submitted"] == 3


async def test_duplicate_custom_ids_are_refused(oai: openai.AsyncOpenAI) -> None:
    upload = await oai.files.create(
        file=("in.jsonl", line("a", "x") + line("a", "y")), purpose="batch"
    )
    with pytest.raises(openai.BadRequestError):
        await oai.batches.create(
            input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
