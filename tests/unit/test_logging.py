"""Structured logs: rendered output never holds an API key; bodies are dropped by default."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from pydantic import SecretStr

from consumers.logging import (
    bind_record,
    bind_request_id,
    configure_logging,
    get_logger,
    mark_record,
    reset_logging,
    scrub_text,
    trace_id_from_headers,
)
from guard.settings import JudgeSettings

OPENAI_KEY = "sk-proj-Abc123XyZ987secretSECRET000"
ANTHROPIC_KEY = "sk-ant-api03-QwErTy-123456789-secretsecret"
TRACEPARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture
def output() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    yield stream
    reset_logging()


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_api_keys_never_reach_the_rendered_json_output(output: io.StringIO) -> None:
    """Keys in fields, nested settings, free text, stdlib records and tracebacks: redacted."""
    configure_logging(log_format="json", stream=output)
    log = get_logger("groundguard.test")
    settings = JudgeSettings(api_key=SecretStr(OPENAI_KEY))
    log.info(
        "judge.configured",
        api_key=OPENAI_KEY,
        settings=settings.model_dump(),
        secret=SecretStr(ANTHROPIC_KEY),
        headers={"Authorization": f"Bearer {OPENAI_KEY}", "x-api-key": ANTHROPIC_KEY},
    )
    log.warning("judge.retry", detail=f"401 from provider: invalid key {ANTHROPIC_KEY} used")
    logging.getLogger("aiokafka").error("connect failed, sasl password=%s", "hunter2hunter2")
    logging.getLogger("openai").warning(
        "request headers {'authorization': 'Bearer %s'}", OPENAI_KEY
    )
    try:
        raise RuntimeError(f"provider rejected api_key={OPENAI_KEY}")
    except RuntimeError:
        log.exception("judge.failed")
    text = output.getvalue()
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, "hunter2hunter2", "Abc123XyZ987", "QwErTy-1234"):
        assert secret not in text
    assert len(lines(output)) == 5
    assert "[REDACTED]" in text


def test_console_output_redacts_too(output: io.StringIO) -> None:
    configure_logging(log_format="console", stream=output)
    get_logger().info("judge.configured", api_key=OPENAI_KEY, note=f"using {ANTHROPIC_KEY}")
    text = output.getvalue()
    assert OPENAI_KEY not in text
    assert ANTHROPIC_KEY not in text
    assert "judge.configured" in text


def test_message_bodies_are_dropped_by_default(output: io.StringIO) -> None:
    configure_logging(log_format="json", stream=output)
    get_logger().info(
        "request.invalid",
        payload={"output": "the secret answer"},
        output="the secret answer",
        context=["private evidence"],
        messages=[{"role": "user", "content": "private question"}],
        attempt=2,
    )
    (event,) = lines(output)
    assert "secret answer" not in output.getvalue()
    assert "private" not in output.getvalue()
    assert event["payload"].startswith("[dropped")
    assert event["attempt"] == 2


def test_bodies_are_logged_when_debug_payloads_is_on(output: io.StringIO) -> None:
    configure_logging(log_format="json", stream=output, debug_payloads=True)
    get_logger().info("request.received", output="the answer", api_key=OPENAI_KEY)
    (event,) = lines(output)
    assert event["output"] == "the answer"
    assert OPENAI_KEY not in output.getvalue()


def test_numbers_under_token_like_names_are_kept(output: io.StringIO) -> None:
    """``input_tokens=120`` is a count, not a secret."""
    configure_logging(log_format="json", stream=output)
    get_logger().info("verdict.published", input_tokens=120, output_tokens=20, partition_key="k")
    (event,) = lines(output)
    assert event["input_tokens"] == 120
    assert event["partition_key"] == "[REDACTED]"


def test_record_context_is_bound_to_every_line_one_event_per_line(output: io.StringIO) -> None:
    configure_logging(log_format="json", stream=output)
    log = get_logger()
    with bind_record(
        topic="rag.responses",
        partition=3,
        offset=17,
        request_id="r-9",
        headers=[("traceparent", TRACEPARENT)],
    ):
        log.info("judge.started")
        logging.getLogger("aiokafka").warning("stdlib line\nwith a newline")
    log.info("after")
    first, second, after = lines(output)
    for event in (first, second):
        assert (event["topic"], event["partition"], event["offset"]) == ("rag.responses", 3, 17)
        assert event["request_id"] == "r-9"
        assert event["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert (first["event"], first["level"]) == ("judge.started", "info")
    assert first["timestamp"]
    assert "topic" not in after


def test_a_message_task_binds_its_record_once_and_only_for_itself(output: io.StringIO) -> None:
    """The runtime binds a record at the top of its message's task (no reset: a task runs in a
    copy of the context); the fields, the request id set later and the trace id reach every
    line logged by that task, and no other task's."""
    configure_logging(log_format="json", stream=output)
    log = get_logger()

    async def message(offset: int) -> None:
        mark_record(
            topic="rag.responses",
            partition=3,
            offset=offset,
            headers=[("traceparent", TRACEPARENT)],
        )
        bind_request_id(f"r-{offset}")
        await asyncio.sleep(0)
        log.warning("judge.slow", offset_seen=offset)

    async def both() -> None:
        await asyncio.gather(asyncio.create_task(message(17)), asyncio.create_task(message(18)))
        log.info("loop")

    asyncio.run(both())
    first, second, loop = lines(output)
    for event, offset in ((first, 17), (second, 18)):
        assert (event["topic"], event["offset"], event["request_id"]) == (
            "rag.responses",
            offset,
            f"r-{offset}",
        )
        assert event["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert "topic" not in loop
    assert "request_id" not in loop


def test_level_filters_lower_events(output: io.StringIO) -> None:
    configure_logging(log_format="json", stream=output, level="warning")
    get_logger().info("quiet")
    get_logger().warning("loud")
    assert [e["event"] for e in lines(output)] == ["loud"]


def test_auto_format_is_json_when_not_a_tty(output: io.StringIO) -> None:
    configure_logging(log_format="auto", stream=output)
    get_logger().info("x")
    assert lines(output)[0]["event"] == "x"


def test_configuring_twice_keeps_one_handler(output: io.StringIO) -> None:
    configure_logging(log_format="json", stream=output)
    configure_logging(log_format="json", stream=output)
    structlog.get_logger().info("once")
    assert len(lines(output)) == 1


@pytest.mark.parametrize("header", [b"garbage", b"00-" + b"0" * 32 + b"-00f067aa0ba902b7-01"])
def test_invalid_traceparent_gives_no_trace_id(header: bytes) -> None:
    assert trace_id_from_headers([("traceparent", header)]) is None


def test_scrub_text_replaces_key_shapes() -> None:
    assert OPENAI_KEY not in scrub_text(f"key is {OPENAI_KEY}.")
    assert "hunter2x" not in scrub_text("password: hunter2x")
    assert scrub_text("no secrets here") == "no secrets here"


def test_library_debug_logs_that_print_bodies_are_held_back(output: io.StringIO) -> None:
    """aiokafka and the SDKs print payloads in their debug text; at level debug they stay quiet
    unless debug_payloads is on."""
    configure_logging(log_format="json", stream=output, level="debug")
    logging.getLogger("aiokafka.producer").debug("Sending (key=b'k' value=b'the secret answer')")
    logging.getLogger("openai._base_client").debug("Request options: {'json_data': 'prompt'}")
    get_logger("consumers.service").debug("verdict.published")
    assert [e["event"] for e in lines(output)] == ["verdict.published"]
    configure_logging(log_format="json", stream=output, level="debug", debug_payloads=True)
    logging.getLogger("aiokafka.producer").debug("Sending (key=b'k' value=b'x')")
    assert lines(output)[-1]["logger"] == "aiokafka.producer"


class TestTransientStartupNoise:
    """aiokafka's known-transient start-up errors (no group coordinator yet, a new topic's
    leader election) are demoted to debug during start-up; real errors, and the same errors
    once start-up is over, keep their level."""

    COORDINATOR = "aiokafka.consumer.group_coordinator"

    def _coordinator_failed(self, error: Exception) -> None:
        logging.getLogger(self.COORDINATOR).error("Group Coordinator Request failed: %s", error)

    def test_coordinator_not_available_at_start_is_not_an_error_line(
        self, output: io.StringIO
    ) -> None:
        from aiokafka.errors import GroupCoordinatorNotAvailableError, GroupLoadInProgressError

        configure_logging(log_format="json", stream=output, level="info")
        self._coordinator_failed(GroupCoordinatorNotAvailableError())
        self._coordinator_failed(GroupLoadInProgressError())
        logging.getLogger("aiokafka.cluster").warning(
            "Topic %s is not available during auto-create initialization", "t"
        )
        assert lines(output) == []

    def test_they_show_at_debug_level_when_asked_for(self, output: io.StringIO) -> None:
        from aiokafka.errors import GroupCoordinatorNotAvailableError

        configure_logging(log_format="json", stream=output, level="debug", debug_payloads=True)
        self._coordinator_failed(GroupCoordinatorNotAvailableError())
        assert [e["level"] for e in lines(output)] == ["debug"]

    def test_real_errors_keep_their_level(self, output: io.StringIO) -> None:
        from aiokafka.errors import GroupAuthorizationFailedError

        configure_logging(log_format="json", stream=output, level="info")
        self._coordinator_failed(GroupAuthorizationFailedError())
        logging.getLogger(self.COORDINATOR).error("Heartbeat failed: %r", "boom")
        assert [e["level"] for e in lines(output)] == ["error", "error"]

    def test_after_the_start_up_grace_they_keep_their_level(self, output: io.StringIO) -> None:
        from aiokafka.errors import GroupCoordinatorNotAvailableError

        configure_logging(log_format="json", stream=output, level="info", startup_grace_s=0)
        self._coordinator_failed(GroupCoordinatorNotAvailableError())
        assert [e["level"] for e in lines(output)] == ["error"]
