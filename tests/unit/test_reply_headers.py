"""Request-reply in ``run`` without a broker: reading the reply headers (whatever their bytes),
building the reply record, throttling the logs, and the settings' checks."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from consumers.records import SourceCoordinates, VerdictRecord
from consumers.reply.headers import (
    CORRELATION_ID_HEADER,
    IGNORED_REASONS,
    REPLY_PARTITION_HEADER,
    REPLY_TOPIC_HEADER,
    Ignored,
    ReplyTo,
    reply_target,
    request_headers,
)
from consumers.runtime.deadletters import build
from consumers.runtime.envelope import Origin, OutRecord
from consumers.runtime.fitting import OutputLimits
from consumers.runtime.message import Finished, Pipeline
from consumers.runtime.replies import MissingReplyTopicNoise, Replies, Throttle
from consumers.runtime.stats import ServiceStats
from consumers.settings import ReplySettings, ServiceSettings, TopicSettings
from guard.engine import Guard
from guard.models import Label
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

ALLOWED = ("guard.reply.",)
GUARD = Guard(FakeJudge(), JudgeSettings())


def target(headers: list[tuple[str, bytes | None]], **kw: Any) -> ReplyTo | Ignored | None:
    return reply_target(headers, allowed_prefixes=kw.pop("allowed", ALLOWED), **kw)


def asks(topic: bytes, correlation: bytes | None = b"c-1") -> list[tuple[str, bytes | None]]:
    headers: list[tuple[str, bytes | None]] = [(REPLY_TOPIC_HEADER, topic)]
    return headers + ([(CORRELATION_ID_HEADER, correlation)] if correlation is not None else [])


class TestReplyTarget:
    def test_both_headers_under_an_allowed_prefix_give_the_reply(self) -> None:
        corr = uuid.uuid4().bytes  # Spring's ReplyingKafkaTemplate sends 16 raw bytes
        assert target(asks(b"guard.reply.a1", corr)) == ReplyTo("guard.reply.a1", corr)

    def test_the_client_headers_round_trip(self) -> None:
        assert target(request_headers("guard.reply.x", b"id")) == ReplyTo("guard.reply.x", b"id")

    def test_no_reply_topic_header_asks_for_nothing(self) -> None:
        assert target([(CORRELATION_ID_HEADER, b"c"), ("traceparent", b"x")]) is None

    @pytest.mark.parametrize(
        ("headers", "reason"),
        [
            (asks(b"other.topic"), "not_allowed"),
            (asks(b"guard.reply.a", None), "no_correlation_id"),
            (asks(b"guard.reply.a", b""), "invalid_correlation_id"),
            (asks(b"guard.reply.a", b"x" * 257), "invalid_correlation_id"),
            (asks(b"guard.reply.a b"), "invalid_topic"),
            (asks(b"guard.reply.\xff"), "invalid_topic"),
            (asks(b"guard.reply." + b"a" * 240), "invalid_topic"),
            (asks(b""), "invalid_topic"),
            (asks(b"guard.reply.a") + asks(b"guard.reply.b"), "duplicate_header"),
            ([(REPLY_TOPIC_HEADER, None)], "invalid_topic"),
        ],
    )
    def test_unusable_headers_are_ignored_with_a_reason(
        self, headers: list[tuple[str, bytes | None]], reason: str
    ) -> None:
        found = target(headers)
        assert isinstance(found, Ignored)
        assert found.reason == reason

    @pytest.mark.parametrize("partition", [0, 1, 7, 2**31 - 1])
    def test_a_reply_partition_is_read_as_spring_writes_it(self, partition: int) -> None:
        header = (REPLY_PARTITION_HEADER, partition.to_bytes(4, "big"))
        assert target([*asks(b"guard.reply.a"), header]) == ReplyTo(
            "guard.reply.a", b"c-1", partition
        )

    def test_the_client_headers_round_trip_with_a_partition(self) -> None:
        headers = request_headers("guard.reply.x", b"id", 5)
        assert target(headers) == ReplyTo("guard.reply.x", b"id", 5)

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            (b"", "invalid_reply_partition"),
            (b"\x00\x01", "invalid_reply_partition"),  # a short, not an int
            (b"\x00\x00\x00\x00\x01", "invalid_reply_partition"),
            (b"\xff\xff\xff\xff", "invalid_reply_partition"),  # -1
            (b"\x80\x00\x00\x00", "invalid_reply_partition"),  # the smallest int
            (None, "invalid_reply_partition"),
        ],
    )
    def test_an_unusable_reply_partition_is_ignored(self, value: bytes | None, reason: str) -> None:
        found = target([*asks(b"guard.reply.a"), (REPLY_PARTITION_HEADER, value)])
        assert found == Ignored(reason, "guard.reply.a")

    def test_a_reply_partition_given_twice_is_ignored(self) -> None:
        twice = [(REPLY_PARTITION_HEADER, (n).to_bytes(4, "big")) for n in (0, 1)]
        assert target([*asks(b"guard.reply.a"), *twice]) == Ignored(
            "duplicate_header", "guard.reply.a"
        )

    @given(st.binary(max_size=8))
    def test_any_reply_partition_bytes_give_a_valid_partition_or_a_reason(
        self, value: bytes
    ) -> None:
        found = target([*asks(b"guard.reply.a"), (REPLY_PARTITION_HEADER, value)])
        if isinstance(found, ReplyTo):
            assert len(value) == 4
            assert found.partition == int.from_bytes(value, "big") < 2**31
        else:
            assert found == Ignored("invalid_reply_partition", "guard.reply.a")

    def test_the_service_own_topics_are_reserved(self) -> None:
        found = target(asks(b"guard.reply.v"), reserved={"guard.reply.v"})
        assert found == Ignored("reserved_topic", "guard.reply.v")

    def test_request_reply_off_ignores_every_reply(self) -> None:
        assert target(asks(b"guard.reply.a"), allowed=()) == Ignored("not_allowed", "guard.reply.a")

    @given(
        st.lists(
            st.tuples(
                st.sampled_from(
                    [
                        REPLY_TOPIC_HEADER,
                        CORRELATION_ID_HEADER,
                        REPLY_PARTITION_HEADER,
                        "kafka_replyTopic\x00",
                    ]
                )
                | st.text(max_size=20),
                st.none() | st.binary(max_size=300),
            ),
            max_size=6,
        )
    )
    def test_hostile_header_bytes_never_raise_and_never_escape_the_prefix(
        self, headers: list[tuple[str, bytes | None]]
    ) -> None:
        found = target(headers)
        if isinstance(found, ReplyTo):
            assert found.topic.startswith("guard.reply.")
            assert found.topic.isascii()
            assert found.topic.isprintable()
            assert 0 < len(found.correlation_id) <= 256
            assert found.partition is None or 0 <= found.partition < 2**31
        elif isinstance(found, Ignored):
            assert found.reason in IGNORED_REASONS
            assert len(found.topic) <= 64 * 4  # shown cut short, escaped

    @given(st.binary(min_size=1, max_size=256))
    def test_any_correlation_id_travels_unchanged(self, correlation: bytes) -> None:
        assert target(asks(b"guard.reply.t", correlation)) == ReplyTo("guard.reply.t", correlation)


@dataclass
class Record:
    value: bytes
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    key: bytes | None = b"user-1"
    topic: str = "in"
    partition: int = 0
    offset: int = 7
    timestamp: int = 0


def settings(**reply: Any) -> ServiceSettings:
    return ServiceSettings(
        topics=TopicSettings(requests="in", verdicts="v", quarantine="q", dlq="d"),
        reply=ReplySettings(**({"allowed_prefixes": ALLOWED} | reply)),
    )


async def outputs_for(record: Record, s: ServiceSettings, stats: ServiceStats) -> Finished:
    replies = Replies(s, stats, GUARD.judge_info)
    pipeline = Pipeline(s, GUARD.parse, replies=replies)

    async def judge(decoded: Any) -> Any:
        return await GUARD.judge(decoded.request)

    finished = await pipeline.process(record, judge)
    await replies.close()
    assert isinstance(finished, Finished)
    return finished


class TestReplyRecord:
    async def test_the_reply_is_the_verdict_record_keyed_like_it_without_credentials(
        self,
    ) -> None:
        headers = [
            *request_headers("guard.reply.me", b"corr"),
            ("traceparent", b"00-t-01"),
            ("baggage", b"Bearer abc.def"),
        ]
        record = Record(b'{"id": "r", "output": "x", "context": "x"}', headers)
        finished = await outputs_for(record, settings(), ServiceStats())
        verdict = next(o for o in finished.outputs if o.kind == "verdict")
        reply = next(o for o in finished.outputs if o.kind == "reply")
        assert (reply.topic, reply.key, reply.value) == ("guard.reply.me", b"user-1", verdict.value)
        names = dict(reply.headers)
        assert names[CORRELATION_ID_HEADER] == b"corr"
        assert names["traceparent"] == b"00-t-01"
        assert "baggage" not in names
        assert "baggage" not in dict(verdict.headers)  # a credential travels on no record

    async def test_a_reply_is_fitted_like_the_verdict_and_keeps_its_correlation_id(
        self,
    ) -> None:
        headers = [
            *request_headers("guard.reply.me", b"corr"),
            *[("traceparent", b"t" * 8000) for _ in range(6)],
        ]
        record = Record(b'{"output": "x", "context": "x"}', headers, key=b"k" * 5000)
        finished = await outputs_for(record, settings(), ServiceStats())
        reply = next(o for o in finished.outputs if o.kind == "reply")
        assert dict(reply.headers)[CORRELATION_ID_HEADER] == b"corr"
        assert reply.key is not None
        assert reply.key.startswith(b"sha256:")
        assert "groundguard-headers-dropped" in dict(reply.headers)

    async def test_a_reply_partition_goes_on_the_reply_record(self) -> None:
        headers = request_headers("guard.reply.me", b"corr", 2)
        finished = await outputs_for(
            Record(b'{"output": "x", "context": "x"}', headers), settings(), ServiceStats()
        )
        reply = next(o for o in finished.outputs if o.kind == "reply")
        assert reply.partition == 2
        assert all(o.partition is None for o in finished.outputs if o.kind != "reply")

    @pytest.mark.parametrize(
        ("value", "kind", "request_id"),
        [
            (b'{"id": "r9", "output": ', "invalid_json", "in-0-7"),
            (b'{"id": "r9", "output": 5}', "invalid_request", "r9"),
            (b"[1, 2]", "not_an_object", "in-0-7"),
            (b"\xff\xfe", "invalid_utf8", "in-0-7"),
        ],
    )
    async def test_a_dead_lettered_request_gets_an_error_reply(
        self, value: bytes, kind: str, request_id: str
    ) -> None:
        """The dead letter goes to the dead-letter topic, and the requester gets an ``error``
        verdict with the dead letter's reason at once (it waited until its timeout)."""
        headers = [*request_headers("guard.reply.me", b"corr", 1), ("traceparent", b"00-t-01")]
        finished = await outputs_for(Record(value, headers), settings(), ServiceStats())
        assert [o.kind for o in finished.outputs] == ["dead_letter", "reply"]
        letter, reply = finished.outputs
        assert (reply.topic, reply.partition, reply.key) == ("guard.reply.me", 1, b"user-1")
        assert dict(reply.headers)[CORRELATION_ID_HEADER] == b"corr"
        assert dict(reply.headers)["traceparent"] == b"00-t-01"
        record = VerdictRecord.model_validate_json(reply.value)
        assert record.label is Label.ERROR
        assert record.reason == kind == letter.tag
        assert record.error is not None
        assert (record.error.kind, record.error.retriable) == (kind, False)
        assert record.error.message
        assert record.request_id == request_id
        assert (record.input.topic, record.input.offset) == ("in", 7)

    @given(
        st.binary(max_size=300),
        st.none() | st.binary(max_size=300),
        st.lists(st.tuples(st.text(max_size=12), st.binary(max_size=40)), max_size=4),
    )
    def test_any_dead_lettered_bytes_get_a_valid_error_reply(
        self, value: bytes, request_id: bytes | None, extra: list[tuple[str, bytes]]
    ) -> None:
        """Whatever the payload and headers, the error reply is a valid verdict record with
        a request id of at most 256 characters, its correlation id and its partition."""
        s = settings()
        headers = [*request_headers("guard.reply.me", b"c", 3), *extra]
        if request_id is not None:
            headers.append(("x-request-id", request_id))
        origin = Origin(
            SourceCoordinates(topic="in", partition=0, offset=7), b"k", value, tuple(headers)
        )
        letter = Pipeline(s, GUARD.parse).dead_letter(
            build(origin, "invalid_request", "bad"), origin
        )
        replies = Replies(s, ServiceStats(), GUARD.judge_info)
        reply = replies.error_reply(letter, origin, OutputLimits(1_000_000))
        logging.getLogger("aiokafka.cluster").removeFilter(replies._noise)  # what close does
        assert reply is not None
        record = VerdictRecord.model_validate_json(reply.value)
        assert (record.label, record.reason) == (Label.ERROR, "invalid_request")
        assert 0 < len(record.request_id) <= 256
        assert (reply.topic, reply.partition) == ("guard.reply.me", 3)
        assert dict(reply.headers)[CORRELATION_ID_HEADER] == b"c"

    def test_an_error_reply_that_fails_leaves_the_dead_letter_standing(self) -> None:
        """A bug building the courtesy reply of a dead-lettered request is that reply's
        problem: the message still ends as its dead letter (the last resort calls this too)."""

        class Broken(Replies):
            def error_reply(self, letter: OutRecord, origin: Origin, limit: int) -> None:
                raise RuntimeError("boom")

        s = settings()
        origin = Origin(
            SourceCoordinates(topic="in", partition=0, offset=7),
            b"k",
            b"{",
            tuple(request_headers("guard.reply.me", b"c")),
        )
        pipeline = Pipeline(s, GUARD.parse, replies=Broken(s, ServiceStats(), GUARD.judge_info))
        letter = pipeline.dead_letter(build(origin, "invalid_json", "bad"), origin)
        logging.getLogger("aiokafka.cluster").removeFilter(pipeline.replies._noise)  # type: ignore[union-attr]
        finished = pipeline.answered(Finished([letter], origin))
        assert [o.kind for o in finished.outputs] == ["dead_letter"]
        assert finished.outputs[0] is letter

    async def test_a_dead_lettered_request_asking_no_reply_gets_none(self) -> None:
        finished = await outputs_for(Record(b"{"), settings(), ServiceStats())
        assert [o.kind for o in finished.outputs] == ["dead_letter"]

    async def test_an_ignored_reply_is_counted_and_the_verdict_still_routed(self) -> None:
        stats = ServiceStats()
        record = Record(b'{"output": "x", "context": "x"}', request_headers("elsewhere", b"c"))
        finished = await outputs_for(record, settings(), stats)
        assert [o.kind for o in finished.outputs] == ["verdict"]
        assert stats.replies_ignored == {"not_allowed": 1}


class TestThrottle:
    def test_once_per_key_per_interval(self) -> None:
        now = [0.0]
        throttle = Throttle(60.0, clock=lambda: now[0])
        assert throttle.allow("a")
        assert throttle.allow("b")
        assert not throttle.allow("a")
        now[0] = 61.0
        assert throttle.allow("a")

    def test_a_flood_of_distinct_keys_is_bounded(self) -> None:
        throttle = Throttle(60.0, clock=lambda: 0.0)
        allowed = sum(throttle.allow(f"topic-{i}") for i in range(10_000))
        assert allowed == 20
        assert throttle.suppressed == 10_000 - 20
        assert len(throttle._last) <= 1024


class TestReplySettings:
    def test_off_by_default(self) -> None:
        assert not ServiceSettings().reply.enabled

    @pytest.mark.parametrize("prefix", ["", "  ", "guard.", "in"])
    def test_a_prefix_that_is_empty_or_matches_an_own_topic_is_refused(self, prefix: str) -> None:
        with pytest.raises(ValidationError, match=r"reply\.allowed_prefixes"):
            ServiceSettings(
                topics=TopicSettings(requests="in"), reply=ReplySettings(allowed_prefixes=(prefix,))
            )


class TestAiokafkaNoise:
    def test_missing_reply_topic_errors_of_aiokafka_are_dropped_others_kept(self) -> None:
        noise = MissingReplyTopicNoise(("guard.reply.",))

        def record(topic: str, msg: str = MissingReplyTopicNoise.MESSAGE) -> logging.LogRecord:
            return logging.LogRecord("aiokafka.cluster", logging.ERROR, "", 0, msg, (topic,), None)

        assert not noise.filter(record("guard.reply.gone"))
        assert noise.filter(record("guard.verdicts"))
        assert noise.filter(record("guard.reply.x", "Topic %s is not available"))

    async def test_the_filter_lives_as_long_as_the_service(self) -> None:
        replies = Replies(settings(), ServiceStats(), GUARD.judge_info)
        cluster = logging.getLogger("aiokafka.cluster")
        assert replies._noise in cluster.filters
        await replies.close()
        assert replies._noise not in cluster.filters
