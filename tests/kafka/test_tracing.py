"""``groundguard run`` traced to a real OpenTelemetry Collector (``scripts/otelcol``, built from
the Go module proxy): the spans and evaluation events that arrive over OTLP, their parentage
across the Kafka hop in and out, and no payload text in any of it."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.kafka.kafkautil import produce, read_until, unique
from tests.kafka.otelcollector import (
    Collector,
    Span,
    can_build,
    read,
    running_collector,
    wait_for,
)
from tests.kafka.servicekit import EVIDENCE, command, create_all, new_topics, service_env

pytest.importorskip("opentelemetry.sdk", reason="tracing needs the groundguard[otel] extra")
if not can_build():
    pytest.skip("the test collector needs Go to build (scripts/otelcol)", allow_module_level=True)

CONSUMER, PRODUCER, CLIENT = 5, 4, 3
ANSWER = "The Eiffel Tower is in Paris"
QUESTION = "Where is the tower of Gustave?"


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with running_collector(tmp_path_factory.mktemp("otelcol")) as running:
        yield running


def _config(tmp_path: Path, bootstrap: str, topics: Any) -> Path:
    config = {
        "bootstrap_servers": bootstrap,
        "group_id": unique("group"),
        "topics": {
            "requests": topics.requests,
            "verdicts": topics.verdicts,
            "quarantine": topics.quarantine,
            "dlq": topics.dlq,
        },
        "commit_interval_s": 0.5,
        "metrics": {"enabled": False},
        "judge": {"provider": "fake"},
    }
    path = tmp_path / "groundguard.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _traceparent() -> tuple[str, str, bytes]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01".encode()


def _header(record: Any, name: str) -> str:
    return next(value.decode() for key, value in record.headers if key == name)


def _one(spans: list[Span], name: str, trace_id: str) -> Span:
    found = [s for s in spans if s.name == name and s.trace_id == trace_id]
    assert len(found) == 1, [(s.name, s.trace_id) for s in spans]
    return found[0]


def _traced_env(collector: Collector, protocol: str) -> dict[str, str]:
    return service_env(
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint(protocol),
        OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
        OTEL_BSP_SCHEDULE_DELAY="100",
        OTEL_BLRP_SCHEDULE_DELAY="100",
    )


async def _run_traced(
    tmp_path: Path, bootstrap: str, collector: Collector, protocol: str
) -> tuple[Any, dict[str, tuple[str, str]], Any, Any]:
    """Two requests (one judged, one poison) with traceparents through ``groundguard run``;
    the topics, the traces sent, the verdict and the dead letter."""
    topics = new_topics()
    await create_all(bootstrap, topics, partitions=1)
    judged_trace, judged_parent, judged_header = _traceparent()
    poison_trace, poison_parent, poison_header = _traceparent()
    request = {"id": "traced-1", "output": ANSWER, "context": EVIDENCE, "question": QUESTION}
    await produce(
        bootstrap,
        topics.requests,
        [
            (b"k1", orjson.dumps(request), [("traceparent", judged_header)]),
            (b"k2", b"{not json", [("traceparent", poison_header)]),
        ],
    )
    config = _config(tmp_path, bootstrap, topics)
    log_path = tmp_path / "service.log"
    env = _traced_env(collector, protocol)
    async with command("run", "--config", str(config), env=env, log_path=log_path) as proc:
        verdicts = await read_until(bootstrap, topics.verdicts, expected=1)
        letters = await read_until(bootstrap, topics.dlq, expected=1)
    assert proc.returncode == 0, log_path.read_text()[-3000:]
    assert len(verdicts) == 1
    assert len(letters) == 1
    sent = {"judged": (judged_trace, judged_parent), "poison": (poison_trace, poison_parent)}
    return topics, sent, verdicts[0], letters[0]


async def test_a_judged_message_is_one_trace_from_producer_to_subscriber(
    kafka_bootstrap: str, collector: Collector, tmp_path: Path
) -> None:
    """Over OTLP/HTTP: the message span is the child of the record's traceparent; the
    guardrail span, the judge's CLIENT span and the publishing span are beneath it; the
    evaluation and guardrail results are log records in the guardrail span; the verdict record
    carries the publishing span's context; no answer, question or evidence text arrives."""
    topics, sent, verdict, _ = await _run_traced(
        tmp_path, kafka_bootstrap, collector, "http/protobuf"
    )
    trace_id, parent_id = sent["judged"]
    wait_for(
        collector.out,
        trace_id,
        spans={f"process {topics.requests}", "apply_guardrail groundguard", "chat fake-judge"}
        | {"send"},
        events=frozenset({"gen_ai.evaluation.result", "gen_ai.guardrail.result"}),
    )
    spans, logs = read(collector.out)
    label = orjson.loads(verdict.value)["label"]

    message = _one(spans, f"process {topics.requests}", trace_id)
    assert message.parent_id == parent_id
    assert message.kind == CONSUMER
    assert message.attributes["messaging.system"] == "kafka"
    assert message.attributes["messaging.destination.name"] == topics.requests
    assert message.attributes["messaging.destination.partition.id"] == "0"
    assert message.attributes["messaging.kafka.offset"] == 0
    assert message.attributes["groundguard.outcome"] == label
    assert message.resource["service.name"] == "groundguard"

    guardrail = _one(spans, "apply_guardrail groundguard", trace_id)
    assert guardrail.parent_id == message.span_id
    assert guardrail.attributes["gen_ai.operation.name"] == "apply_guardrail"
    assert guardrail.attributes["openinference.span.kind"] == "GUARDRAIL"
    assert guardrail.attributes["gen_ai.guardrail.result.value"] == label
    assert guardrail.attributes["groundguard.verdict.judge.tier"] == "llm"

    call = _one(spans, "chat fake-judge", trace_id)
    assert call.parent_id == guardrail.span_id
    assert call.kind == CLIENT
    assert call.attributes["gen_ai.operation.name"] == "chat"
    assert call.attributes["gen_ai.provider.name"] == "fake"
    assert call.attributes["gen_ai.request.model"] == "fake-judge"
    assert call.attributes["gen_ai.usage.input_tokens"] == 100
    assert call.attributes["gen_ai.usage.output_tokens"] == 20
    assert call.attributes["gen_ai.usage.cache_read.input_tokens"] == 0
    assert call.attributes["openinference.span.kind"] == "LLM"
    assert call.attributes["llm.token_count.total"] == 120

    publish = _one(spans, "send", trace_id)
    assert publish.parent_id == message.span_id
    assert publish.kind == PRODUCER
    assert _header(verdict, "traceparent") == f"00-{trace_id}-{publish.span_id}-01"

    events = {r.event_name: r for r in logs if r.trace_id == trace_id}
    evaluation = events["gen_ai.evaluation.result"]
    assert evaluation.span_id == guardrail.span_id
    assert evaluation.attributes["gen_ai.evaluation.name"] == "groundedness"
    assert evaluation.attributes["gen_ai.evaluation.score.label"] == label
    assert evaluation.attributes["gen_ai.evaluation.score.value"] == pytest.approx(
        orjson.loads(verdict.value)["score"]
    )
    assert evaluation.attributes["groundguard.verdict.judge.tier"] == "llm"
    assert "gen_ai.evaluation.explanation" not in evaluation.attributes
    assert events["gen_ai.guardrail.result"].span_id == guardrail.span_id

    received = collector.out.read_text()
    for text in (ANSWER, QUESTION, EVIDENCE, "Eiffel", "Gustave"):
        assert text not in received


async def test_a_dead_letter_continues_its_trace_over_grpc(
    kafka_bootstrap: str, collector: Collector, tmp_path: Path
) -> None:
    """Over OTLP/gRPC: a poison record's message span (outcome ``dead_letter``) is the child
    of its traceparent, and the dead letter carries the trace on."""
    topics, sent, _, letter = await _run_traced(tmp_path, kafka_bootstrap, collector, "grpc")
    trace_id, parent_id = sent["poison"]
    wait_for(collector.out, trace_id, spans={f"process {topics.requests}", "send"})
    spans, _ = read(collector.out)
    message = _one(spans, f"process {topics.requests}", trace_id)
    assert message.parent_id == parent_id
    assert message.attributes["groundguard.outcome"] == "dead_letter"
    assert message.attributes["groundguard.dead_letter.reason"]
    publish = _one(spans, "send", trace_id)
    assert publish.parent_id == message.span_id
    assert _header(letter, "traceparent") == f"00-{trace_id}-{publish.span_id}-01"
    assert not [s for s in spans if s.trace_id == trace_id and s.name.startswith("apply_")]
