"""Decoding records into requests or dead letters, and routing verdicts to their topics."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consumers.records import DeadLetter, QuarantineRecord, VerdictRecord
from consumers.runtime.codec import Decoded, decode, has_long_digits
from consumers.runtime.deadletters import route as route_dead_letter
from consumers.runtime.routing import quarantined, route_verdict
from consumers.settings import FailurePolicy, TopicSettings
from guard.budgets import BudgetSettings
from guard.budgets.judge import build_budgeted_judge
from guard.engine import Guard
from guard.models import Label, Verdict
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

GUARD = Guard(FakeJudge(), JudgeSettings())
TOPICS = TopicSettings(requests="in", verdicts="v", quarantine="q", dlq="d", approved="a")


@dataclass
class Record:
    value: bytes | None
    key: bytes | None = b"user-1"
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    topic: str = "in"
    partition: int = 2
    offset: int = 41
    timestamp: int = 1_700_000_000_000


def _decode(record: Record, max_bytes: int = 1000) -> Decoded | DeadLetter:
    return decode(record, parse=GUARD.parse, max_bytes=max_bytes)


class TestDecode:
    def test_a_valid_request_keeps_its_id_and_coordinates(self) -> None:
        decoded = _decode(Record(b'{"id": "r1", "output": "x", "context": "x"}'))
        assert isinstance(decoded, Decoded)
        assert decoded.request.id == "r1"
        assert (decoded.source.topic, decoded.source.partition, decoded.source.offset) == (
            "in",
            2,
            41,
        )
        assert decoded.source.key == "user-1"

    def test_a_request_without_id_takes_the_request_id_header(self) -> None:
        decoded = _decode(Record(b'{"output": "x"}', headers=[("X-Request-Id", b"hdr-7")]))
        assert isinstance(decoded, Decoded)
        assert decoded.request.id == "hdr-7"

    def test_a_request_without_id_or_header_gets_its_coordinates_as_id(self) -> None:
        decoded = _decode(Record(b'{"output": "x"}'))
        assert isinstance(decoded, Decoded)
        assert decoded.request.id == "in-2-41"

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            (b'{"output": ', "invalid_json"),
            (b'{"output": "\xc3\x28"}', "invalid_utf8"),
            (b'"just a string"', "not_an_object"),
            (b'{"context": "c"}', "invalid_request"),
            (b'{"output": ["not", "text"]}', "invalid_request"),
            (None, "invalid_request"),
        ],
    )
    def test_undecodable_records_become_dead_letters_with_the_reason(
        self, value: bytes | None, reason: str
    ) -> None:
        letter = _decode(Record(value, headers=[("traceparent", b"00-1-2-01")]))
        assert isinstance(letter, DeadLetter)
        assert letter.reason == reason
        assert letter.detail
        assert letter.input.offset == 41
        assert letter.headers == {"traceparent": "00-1-2-01"}

    def test_invalid_utf8_keeps_the_original_bytes_as_base64(self) -> None:
        raw = b'{"output": "\xff"}'
        letter = _decode(Record(raw))
        assert isinstance(letter, DeadLetter)
        assert letter.payload_text is None
        assert base64.b64decode(letter.payload_base64 or "") == raw

    def test_an_oversized_record_is_dead_lettered_with_its_first_bytes(self) -> None:
        raw = b'{"output": "' + b"y" * 500 + b'"}'
        letter = _decode(Record(raw), max_bytes=100)
        assert isinstance(letter, DeadLetter)
        assert letter.reason == "oversized"
        assert letter.payload_truncated is True
        assert letter.payload_bytes == len(raw)
        assert letter.payload_text == raw[:100].decode()


def _verdict(label: Label, reason: str | None = None) -> Verdict:
    return Verdict.model_validate(
        {
            "request_id": "r1",
            "label": label,
            "reason": reason,
            "threshold": 0.5,
            "mode": "scale5",
            "truncation": {
                "context": {"original_chars": 1, "kept_chars": 1, "truncated": False},
                "output": {"original_chars": 1, "kept_chars": 1, "truncated": False},
            },
            "source": "context",
            "judge": {"provider": "fake", "model": "m", "prompt_version": "v"},
        }
    )


class TestRouting:
    @pytest.mark.parametrize(
        ("label", "reason", "policy", "held"),
        [
            (Label.PASS, None, FailurePolicy.FAIL_CLOSED, False),
            (Label.FAIL, None, FailurePolicy.FAIL_OPEN, True),
            (Label.ERROR, "judge_timeout", FailurePolicy.FAIL_CLOSED, True),
            (Label.ERROR, "judge_timeout", FailurePolicy.FAIL_OPEN, False),
            (Label.SKIPPED, "budget_exhausted:hour", FailurePolicy.FAIL_CLOSED, True),
            (Label.SKIPPED, "not_sampled", FailurePolicy.FAIL_CLOSED, False),
        ],
    )
    def test_quarantine_holds_failures_and_undecided_under_fail_closed(
        self, label: Label, reason: str | None, policy: FailurePolicy, held: bool
    ) -> None:
        assert quarantined(_verdict(label, reason), policy) is held

    @pytest.mark.parametrize(
        ("budget", "reason", "held"),
        [
            (BudgetSettings(sample_rate=0.0), "not_sampled", False),
            (
                BudgetSettings(cost_per_day_usd=0.000001, on_budget_exhausted="skip"),
                "budget_exhausted:day",
                True,
            ),
        ],
    )
    async def test_the_skips_the_budget_layers_make_are_routed_by_their_cause(
        self, budget: BudgetSettings, reason: str, held: bool
    ) -> None:
        """Issue 29: the reason a budget layer gives (not one written by hand) is the one the
        routing reads: a message left out by sampling is never quarantined, one skipped by a
        spent budget is under fail_closed."""
        judge = build_budgeted_judge(FakeJudge(), budget, price=lambda model, usage: 0.02)
        guard = Guard(judge, JudgeSettings(provider="fake"))
        try:
            await guard.judge_payload({"output": "Paris.", "context": "Paris is in France."})
            verdict = await guard.judge_payload({"output": "Lyon.", "context": "Lyon is big."})
        finally:
            await guard.aclose()
        assert (verdict.label, verdict.reason) == (Label.SKIPPED, reason)
        assert quarantined(verdict, FailurePolicy.FAIL_CLOSED) is held
        assert not quarantined(verdict, FailurePolicy.FAIL_OPEN)

    def _decoded(self) -> Decoded:
        decoded = _decode(
            Record(
                b'{"id": "r1", "output": "x"}',
                headers=[("traceparent", b"tp"), ("x-b3-traceid", b"b3"), ("secret-header", b"s")],
            )
        )
        assert isinstance(decoded, Decoded)
        return decoded

    def test_a_failing_verdict_goes_to_verdicts_and_quarantine_with_the_payload(self) -> None:
        out = route_verdict(
            self._decoded(),
            _verdict(Label.FAIL),
            topics=TOPICS,
            policy=FailurePolicy.FAIL_CLOSED,
            key=b"user-1",
        )
        assert [(o.topic, o.kind) for o in out] == [("v", "verdict"), ("q", "quarantine")]
        verdict = orjson.loads(out[0].value)
        assert verdict["label"] == "fail"
        assert verdict["input"] == {
            "topic": "in",
            "partition": 2,
            "offset": 41,
            "timestamp_ms": 1_700_000_000_000,
            "key": "user-1",
        }
        assert orjson.loads(out[1].value)["payload"] == {"id": "r1", "output": "x"}
        assert all(o.key == b"user-1" for o in out)

    def test_tracing_headers_are_carried_and_others_are_not(self) -> None:
        out = route_verdict(
            self._decoded(),
            _verdict(Label.PASS),
            topics=TOPICS,
            policy=FailurePolicy.FAIL_CLOSED,
            key=None,
        )
        headers = dict(out[0].headers)
        assert headers["traceparent"] == b"tp"
        assert headers["x-b3-traceid"] == b"b3"
        assert "secret-header" not in headers
        assert headers["groundguard-label"] == b"pass"
        assert headers["groundguard-source-offset"] == b"41"

    def test_a_passing_verdict_is_approved_with_the_original_payload(self) -> None:
        out = route_verdict(
            self._decoded(),
            _verdict(Label.PASS),
            topics=TOPICS,
            policy=FailurePolicy.FAIL_CLOSED,
            key=None,
        )
        assert [(o.topic, o.kind) for o in out] == [("v", "verdict"), ("a", "approved")]
        assert out[1].value == b'{"id": "r1", "output": "x"}'

    def test_without_an_approved_topic_a_pass_only_publishes_the_verdict(self) -> None:
        topics = TOPICS.model_copy(update={"approved": None})
        out = route_verdict(
            self._decoded(),
            _verdict(Label.PASS),
            topics=topics,
            policy=FailurePolicy.FAIL_CLOSED,
            key=None,
        )
        assert [o.kind for o in out] == ["verdict"]

    def test_a_dead_letter_carries_reason_and_coordinates_in_headers(self) -> None:
        letter = _decode(Record(b"nope", headers=[("traceparent", b"tp")]))
        assert isinstance(letter, DeadLetter)
        out = route_dead_letter(
            letter, headers=(("traceparent", b"tp"),), topics=TOPICS, key=b"user-1"
        )
        headers = dict(out.headers)
        assert out.topic == "d"
        assert headers["groundguard-dlq-reason"] == b"invalid_json"
        assert headers["groundguard-source-partition"] == b"2"
        assert headers["traceparent"] == b"tp"
        assert orjson.loads(out.value)["payload_text"] == "nope"


_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


class TestRecordsAreTheModelsEncoding:
    """The verdict is serialized once and the payload copied as it came: the records must read
    back exactly as the models built the slow way would."""

    @settings(max_examples=60, deadline=None)
    @given(
        metadata=st.dictionaries(st.text(max_size=8), _JSON, max_size=4),
        label=st.sampled_from(list(Label)),
        spaces=st.sampled_from(["", " ", "\n\t "]),
    )
    def test_verdict_and_quarantine_records_match_the_models(
        self, metadata: dict[str, object], label: Label, spaces: str
    ) -> None:
        body = {"id": "r1", "output": "x", "context": "y", "metadata": metadata}
        payload = spaces + json.dumps(body) + spaces  # big integers exact, odd whitespace
        decoded = _decode(Record(payload.encode()), max_bytes=100_000)
        assert isinstance(decoded, Decoded)
        verdict = _verdict(label).model_copy(update={"metadata": decoded.request.metadata})
        out = route_verdict(
            decoded, verdict, topics=TOPICS, policy=FailurePolicy.FAIL_CLOSED, key=b"user-1"
        )
        expected = VerdictRecord(**verdict.model_dump(), input=decoded.source)
        assert VerdictRecord.model_validate_json(out[0].value) == expected
        assert json.loads(out[0].value) == json.loads(expected.model_dump_json())
        if out[1].kind != "quarantine":
            return
        held = QuarantineRecord.model_validate_json(out[1].value)
        assert held == QuarantineRecord(
            request_id="r1",
            input=decoded.source,
            payload=body,
            payload_bytes=len(payload.encode()),
            verdict=verdict,
        )
        assert json.loads(out[1].value)["payload"] == body  # integers beyond 64 bits exact


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=80)
    | st.text(alphabet="0123456789 ,.-e\u0660", max_size=80).map(lambda t: t.encode())
)
def test_the_long_digit_scan_finds_what_the_regular_expression_finds(value: bytes) -> None:
    assert has_long_digits(value) is (re.search(rb"[0-9]{19}", value) is not None)


_HUGE_INTS = st.integers(min_value=-(10**400), max_value=10**400) | st.integers(
    min_value=10**300, max_value=10**4000
)
_NUMBERS = st.recursive(
    _HUGE_INTS | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=10,
)


class TestNumbersBeyondTheDoubleRange:
    """Integers too large for a double (orjson refuses them as "infinity") are valid JSON: the
    request is decoded, and they come back exact in the verdict."""

    def test_a_400_digit_id_and_metadata_number_are_decoded_exactly(self) -> None:
        huge = int("9" * 400)
        payload = b'{"id": %d, "output": "x", "context": "y", "metadata": {"n": -%d}}' % (
            huge,
            huge,
        )
        decoded = _decode(Record(payload), max_bytes=100_000)
        assert isinstance(decoded, Decoded), decoded
        assert decoded.request.id == str(huge)
        assert decoded.request.metadata == {"n": -huge}

    def test_an_integer_past_the_digit_limit_is_an_invalid_request_saying_so(self) -> None:
        payload = b'{"output": "x", "context": "y", "metadata": {"n": %s}}' % (b"7" * 5000)
        letter = _decode(Record(payload), max_bytes=100_000)
        assert isinstance(letter, DeadLetter)
        assert letter.reason == "invalid_request"
        assert "4300 digits" in letter.detail
        assert "field 'n'" in letter.detail

    def test_a_float_beyond_the_double_range_stays_invalid(self) -> None:
        payload = b'{"output": "x", "context": "y", "id": "%s", "metadata": {"n": 1e400}}' % (
            b"1" * 30
        )
        letter = _decode(Record(payload), max_bytes=100_000)
        assert isinstance(letter, DeadLetter)
        assert letter.reason == "invalid_json"

    def test_lone_surrogates_stay_refused_beside_a_huge_integer(self) -> None:
        payload = b'{"output": "\\ud800", "context": "y", "metadata": {"n": %s}}' % (b"1" * 400)
        letter = _decode(Record(payload), max_bytes=100_000)
        assert isinstance(letter, DeadLetter)
        assert letter.reason == "invalid_json"

    @settings(max_examples=80, deadline=None)
    @given(
        metadata=st.dictionaries(st.text(max_size=6), _NUMBERS, max_size=4),
        label=st.sampled_from(list(Label)),
    )
    def test_number_heavy_requests_round_trip_to_the_verdict(
        self, metadata: dict[str, object], label: Label
    ) -> None:
        body = {"id": "r1", "output": "x", "context": "y", "metadata": metadata}
        payload = json.dumps(body).encode()
        decoded = _decode(Record(payload), max_bytes=1_000_000)
        assert isinstance(decoded, Decoded), decoded
        assert decoded.request.metadata == metadata
        verdict = _verdict(label).model_copy(update={"metadata": decoded.request.metadata})
        out = route_verdict(
            decoded, verdict, topics=TOPICS, policy=FailurePolicy.FAIL_CLOSED, key=b"user-1"
        )
        assert json.loads(out[0].value)["metadata"] == metadata
        if out[-1].kind == "quarantine":
            assert json.loads(out[-1].value)["payload"] == body
