"""``serve``'s proxy publishing its verdicts to a real broker: the ``openai`` SDK streams a
passing and a failing answer through the proxy (a loopback upstream, token by token), and both
verdicts arrive on the verdicts topic keyed by their request ids, with the text the client
received as the released prefix; the failing one also on quarantine. A broker that cannot be
reached never holds the client's stream, and the stop's flush is bounded."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import openai
import orjson

from consumers.records import QuarantineRecord, VerdictRecord
from consumers.serve.service import serve_http
from consumers.settings import ServiceSettings, TopicSettings
from guard.assembly import build_guard
from guard.testing.fake_upstream import FakeUpstream
from tests.kafka.broker import free_port
from tests.kafka.kafkautil import read_until
from tests.kafka.servicekit import Topics, create_all, new_topics

EVIDENCE = (
    "Returns are accepted within 30 days of delivery. The Premium plan costs $12,000 a month."
)
PASSING = "Returns are accepted within 30 days. The Premium plan costs $12,000 a month."
FIRST = "Returns are accepted within 30 days. "
FAILING = FIRST + "The Premium plan costs $15,000 a month."
NOTICE = "[withheld]"


def answer_for(body: dict[str, Any]) -> str:
    """The upstream answers the question "fail?" wrongly, any other rightly."""
    asked = body["messages"][-1]["content"]
    return FAILING if asked == "fail?" else PASSING


def settings_for(bootstrap: str, topics: Topics, upstream: FakeUpstream, **proxy: Any) -> Any:
    return ServiceSettings.model_validate(
        {
            "bootstrap_servers": bootstrap,
            "topics": TopicSettings(
                requests=topics.requests,
                verdicts=topics.verdicts,
                quarantine=topics.quarantine,
                dlq=topics.dlq,
            ),
            "judge": {"provider": "offline"},
            "metrics": {"enabled": False},
            "serve": {
                "port": 0,
                "proxy": {
                    "upstream_url": upstream.openai_base_url,
                    "notice": NOTICE,
                    **proxy,
                },
            },
        }
    )


@contextlib.asynccontextmanager
async def serving(settings: ServiceSettings) -> AsyncIterator[tuple[str, asyncio.Task[None]]]:
    """``serve_http`` in this loop; its base URL, and its task (stopped, its flush awaited, on
    exit)."""
    guard = build_guard(settings.judge, os.environ)
    stop = asyncio.Event()
    port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve_http(settings, guard, stop=stop, on_listening=port.set_result))
    try:
        yield f"http://127.0.0.1:{await asyncio.wait_for(port, 30)}", task
    finally:
        stop.set()
        try:
            await asyncio.wait_for(task, 60)
        finally:
            await guard.aclose()


async def streamed(base: str, question: str) -> tuple[str, dict[str, Any]]:
    """The text the openai SDK received, and the groundguard summary of its last chunk."""
    async with openai.AsyncOpenAI(
        base_url=f"{base}/v1", api_key="sk-caller", max_retries=0
    ) as client:
        stream = await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": question}],
            stream=True,
            extra_body={"groundguard_context": EVIDENCE},
        )
        chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    last = [c for c in chunks if c.choices][-1]
    assert last.model_extra is not None
    return text, dict(last.model_extra["groundguard"])


async def test_a_passing_and_a_failing_streamed_answer_arrive_on_the_topics(
    kafka_bootstrap: str,
) -> None:
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    with FakeUpstream(answer=answer_for, token_delay_s=0.005) as upstream:
        settings = settings_for(kafka_bootstrap, topics, upstream)
        async with serving(settings) as (base, _):
            good_text, good = await streamed(base, "pass?")
            bad_text, bad = await streamed(base, "fail?")
    # serve has stopped: its flush delivered what was queued
    assert good_text == PASSING
    assert bad_text == FIRST + NOTICE
    verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=2, timeout_s=30)
    held = await read_until(kafka_bootstrap, topics.quarantine, expected=1, timeout_s=30)
    by_key = {record.key.decode(): record for record in verdicts}
    assert set(by_key) == {good["request_id"], bad["request_id"]}

    passed = VerdictRecord.model_validate_json(by_key[good["request_id"]].value)
    assert passed.label.value == "pass"
    assert passed.input is None
    assert passed.proxy is not None
    assert passed.proxy.released_prefix == PASSING
    assert passed.proxy.outcome == "finished"
    assert passed.proxy.stopped_at is None
    assert passed.proxy.release == "verified"

    failed = VerdictRecord.model_validate_json(by_key[bad["request_id"]].value)
    assert failed.label.value == "fail"
    assert failed.proxy is not None
    assert failed.proxy.released_prefix == FIRST  # what the client got, before the notice
    assert failed.proxy.stopped_at == len(FIRST) == bad["stopped_at"]
    assert failed.proxy.stopped_span == 1
    assert failed.proxy.spans_judged == bad["spans_judged"]
    headers = dict(by_key[bad["request_id"]].headers)
    assert headers["groundguard-label"] == b"fail"

    [quarantined] = held
    assert quarantined.key == bad["request_id"].encode()
    record = QuarantineRecord.model_validate_json(quarantined.value)
    assert record.payload["output"] == FAILING
    assert record.proxy == failed.proxy
    assert orjson.loads(quarantined.value)["input"] is None


async def test_a_broker_that_cannot_be_reached_never_holds_the_stream_and_the_stop_is_bounded() -> (
    None
):
    """Publishing is on (a broker is configured) but nothing listens there: the client gets its
    answer as fast as ever, and serve stops within serve.proxy.publish_flush_s of its drain."""
    topics = new_topics()
    nowhere = f"127.0.0.1:{free_port()}"
    with FakeUpstream(answer=answer_for, token_delay_s=0.005) as upstream:
        settings = settings_for(nowhere, topics, upstream, publish_flush_s=0.5)
        async with serving(settings) as (base, task):
            started = time.monotonic()
            text, summary = await streamed(base, "pass?")
            streamed_s = time.monotonic() - started
            stopping = time.monotonic()
        stopped_s = time.monotonic() - stopping
    assert task.done()
    assert text == PASSING
    assert summary["label"] == "pass"
    assert streamed_s < 10
    assert stopped_s < 5  # the drain (nothing in flight), the 0.5 s flush, the close


async def test_an_answer_whose_upstream_drops_arrives_as_one_error_verdict_not_quarantined(
    kafka_bootstrap: str,
) -> None:
    """No final verdict (the upstream broke off mid-answer): one error verdict, reason
    upstream_failed, with what the client received; nothing on quarantine."""
    topics = new_topics()
    await create_all(kafka_bootstrap, topics, partitions=1)
    with FakeUpstream(answer=answer_for, token_delay_s=0.005, drop_after=9) as upstream:
        settings = settings_for(kafka_bootstrap, topics, upstream)
        async with serving(settings) as (base, _):
            with contextlib.suppress(openai.APIError):
                await streamed(base, "pass?")
            upstream.drop_after = None
            await streamed(base, "fail?")  # then one that blocks: quarantine holds it alone
    verdicts = await read_until(kafka_bootstrap, topics.verdicts, expected=2, timeout_s=30)
    held = await read_until(kafka_bootstrap, topics.quarantine, expected=1, timeout_s=30)
    records = [VerdictRecord.model_validate_json(record.value) for record in verdicts]
    [dropped] = [record for record in records if record.label.value == "error"]
    [failed] = [record for record in records if record.label.value == "fail"]
    assert dropped.reason == "upstream_failed"
    assert dropped.proxy is not None
    assert dropped.proxy.outcome == "upstream_dropped"
    assert dropped.proxy.released_prefix in ("", FIRST)
    assert dropped.proxy.stopped_at == dropped.proxy.released_chars
    assert [record.key for record in held] == [failed.request_id.encode()]  # it alone
