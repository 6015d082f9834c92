"""One message can never stop the guard: every record, however hostile, ends as records that fit
the size limit, a verdict or a dead letter with its reason (issue 9)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from consumers.runtime import codec, envelope
from consumers.runtime.envelope import OutRecord
from consumers.runtime.fitting import KEY_HASHED_HEADER, record_size
from consumers.runtime.headers import DROPPED_HEADER, is_credential
from consumers.runtime.message import Finished, Pipeline
from consumers.settings import FailurePolicy, ServiceSettings, TopicSettings
from guard.defaults import OFFLOAD_MIN_CHARS
from guard.engine import Guard
from guard.models import Verdict
from guard.settings import JudgeSettings
from guard.testing import FakeJudge
from tests.unit.test_codec_routing import Record

LIMIT = 300_000
SETTINGS = ServiceSettings.model_validate(
    {
        "topics": TopicSettings(requests="in", verdicts="v", quarantine="q", dlq="d", approved="a"),
        "max_message_bytes": 200_000,
        "max_output_bytes": LIMIT,
        "failure_policy": FailurePolicy.FAIL_CLOSED,
    }
)
GUARD = Guard(FakeJudge(), JudgeSettings())
PIPELINE = Pipeline(SETTINGS, GUARD.parse)
EVIDENCE = "The Eiffel Tower is in Paris. It was completed in 1889."


def request(**fields: Any) -> bytes:
    """A request as JSON (the standard library's writer: integers of any size)."""
    base = {"output": "The Eiffel Tower is in Paris", "context": EVIDENCE}
    return json.dumps(base | fields).encode()


def handle(record: Record, pipeline: Pipeline = PIPELINE) -> list[OutRecord]:
    """What the service does with one record, minus the broker."""

    async def judge(decoded: codec.Decoded) -> Verdict:
        return await GUARD.judge(decoded.request, message_key=decoded.source.key)

    outcome = asyncio.run(pipeline.process(record, judge))
    assert isinstance(outcome, Finished)
    return outcome.outputs


def by_kind(outputs: list[OutRecord]) -> dict[str, dict[str, Any]]:
    """Each output's JSON, read with the standard library (exact big integers)."""
    return {out.kind: json.loads(out.value) for out in outputs}


def check_publishable(outputs: list[OutRecord], record: Record) -> None:
    """The guarantees every message's outputs keep."""
    kinds = [out.kind for out in outputs]
    assert "verdict" in kinds or "dead_letter" in kinds
    for out in outputs:
        assert record_size(out) <= LIMIT, (out.kind, record_size(out))
        assert len(out.key or b"") <= envelope.KEY_MAX_BYTES
        orjson.loads(out.value)
        for name, value in out.headers:
            name.encode("utf-8")
            assert isinstance(value, bytes)
        if out.kind == "dead_letter":
            letter = orjson.loads(out.value)
            assert letter["reason"]
            assert letter["input"]["offset"] == record.offset
            assert not any(is_credential(name) for name in letter["headers"])


class TestCrashLoopsFromOneMessage:
    def test_metadata_nested_256_levels_is_dead_lettered_not_raised(self) -> None:
        """618 bytes of nested metadata made building the verdict raise
        PydanticSerializationError, which stopped the service."""
        value = (
            b'{"output":"The Eiffel Tower is in Paris","context":"'
            + EVIDENCE.encode()
            + b'","metadata":{"a":'
            + b"[" * 256
            + b"]" * 256
            + b"}}"
        )
        outputs = handle(Record(value))
        assert [out.kind for out in outputs] == ["dead_letter"]
        letter = orjson.loads(outputs[0].value)
        assert letter["reason"] == "internal_error"
        assert "building the verdict records" in letter["detail"]
        assert "serializ" in letter["detail"].lower()
        assert letter["payload_text"] == value.decode()

    def test_a_600kb_key_is_hashed_in_every_output_which_fits(self) -> None:
        key = b"k" * 600_000
        outputs = handle(Record(request(id="r1"), key=key))
        check_publishable(outputs, Record(b""))
        verdict = next(out for out in outputs if out.kind == "verdict")
        assert verdict.key is not None
        assert verdict.key.startswith(b"sha256:")
        assert (KEY_HASHED_HEADER, b"600000") in verdict.headers
        assert orjson.loads(verdict.value)["input"]["key"] == verdict.key.decode()
        again = handle(Record(request(id="r2"), key=key))
        assert {out.key for out in again} == {verdict.key}  # same key, same partition

    def test_a_400kb_request_id_header_is_dropped_named_and_not_used_as_id(self) -> None:
        huge = b"r" * 400_000
        outputs = handle(
            Record(request(), headers=[("x-request-id", huge), ("traceparent", b"00-ab-cd-01")])
        )
        check_publishable(outputs, Record(b""))
        verdict = next(out for out in outputs if out.kind == "verdict")
        headers = dict(verdict.headers)
        assert "x-request-id" not in headers
        assert headers[DROPPED_HEADER] == b"x-request-id"
        assert headers["traceparent"] == b"00-ab-cd-01"
        assert orjson.loads(verdict.value)["request_id"] == "in-2-41"  # the coordinates

    def test_only_the_first_256_headers_are_read_however_many_a_record_carries(self) -> None:
        """A 1 MB record can carry 500,000 empty headers; copying them all into a dead letter
        held the event loop for seconds."""
        headers = [(f"h{i}", b"") for i in range(300_000)] + [("traceparent", b"late")]
        outputs = handle(Record(b"{not json", headers=headers))
        letter = orjson.loads(outputs[0].value)
        assert len(letter["headers"]) == envelope.MAX_HEADERS
        assert "traceparent" not in dict(outputs[0].headers)


class TestDegraded:
    @pytest.mark.parametrize("rid", [42, 123456789012345678901234567890])
    def test_an_integer_id_is_judged_with_the_id_as_text(self, rid: int) -> None:
        outputs = handle(Record(request(id=rid)))
        assert by_kind(outputs)["verdict"]["request_id"] == str(rid)

    def test_big_integers_in_metadata_come_back_exact_in_verdict_and_quarantine(self) -> None:
        big = 123456789012345678901234567890
        value = request(
            output="The Eiffel Tower is in Rome",
            metadata={"n": big, "neg": -big, "ok": 7, "s": "1234567890123456789012"},
        )
        outputs = handle(Record(value))
        records = by_kind(outputs)
        for meta in (records["verdict"]["metadata"], records["quarantine"]["payload"]["metadata"]):
            assert meta == {"n": big, "neg": -big, "ok": 7, "s": "1234567890123456789012"}
            assert isinstance(meta["n"], int)

    def test_a_quarantine_record_too_large_loses_its_payload_not_its_route(self) -> None:
        """A failing answer whose metadata (copied into the verdict) makes payload plus verdict
        exceed the limit used to go to the dead-letter topic."""
        small = SETTINGS.model_copy(update={"max_output_bytes": 150_000})
        value = request(output="The Eiffel Tower is in Rome", metadata={"blob": "p" * 80_000})
        outputs = handle(Record(value), Pipeline(small, GUARD.parse))
        assert [out.kind for out in outputs] == ["verdict", "quarantine"]
        held = orjson.loads(outputs[1].value)
        assert held["payload"] is None
        assert held["payload_omitted"] is True
        assert held["payload_bytes"] == len(value)
        assert held["verdict"]["label"] == "fail"


class TestDeadLetterHeaders:
    def test_credentials_are_withheld_and_named_routing_keys_kept(self) -> None:
        headers = [
            ("authorization", b"Bearer sk-live"),
            ("Cookie", b"sid=1"),
            ("x-api-key", b"k"),
            ("x-auth-token", b"t"),
            ("client_secret", b"s"),
            ("traceparent", b"tp"),
            ("idempotency-key", b"i-1"),
            ("source", b"app"),
        ]
        outputs = handle(Record(b"{not json", headers=headers))
        letter = orjson.loads(outputs[0].value)
        assert letter["headers"] == {"traceparent": "tp", "idempotency-key": "i-1", "source": "app"}
        assert letter["headers_withheld"] == [
            "authorization",
            "Cookie",
            "x-api-key",
            "x-auth-token",
            "client_secret",
        ]
        assert b"sk-live" not in outputs[0].value

    @pytest.mark.parametrize(
        "name",
        [
            "x-auth",
            "auth",
            "jwt",
            "bearer",
            "x-goog-iap-jwt-assertion",
            "x-auth-user",
            "x-forwarded-user",
            "x-ms-client-principal",
            "x-client-cert",
            "x-forwarded-client-cert",
            "x-pass",
            "x-private",
            "x-sig",
            "x-shopify-hmac-sha256",
            "Proxy-Authorization",
            "X-CSRF-Token",
            "x-amz-security-token",
            "private_key",
            "x-creds",
            "sentry-dsn",
            "x-db-cred",
        ],
    )
    def test_credential_names_of_every_shape_are_withheld(self, name: str) -> None:
        outputs = handle(
            Record(b"{not json", headers=[(name, b"hunter2-secret"), ("traceparent", b"tp")])
        )
        letter = orjson.loads(outputs[0].value)
        assert letter["headers_withheld"] == [name]
        assert letter["headers"] == {"traceparent": "tp"}
        assert b"hunter2" not in outputs[0].value

    @pytest.mark.parametrize(
        "value",
        [
            b"Basic dXNlcjpodW50ZXI=",
            b"Bearer abc.def",
            b"  digest username=x",
            b"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
            b"sk-proj-Abc123def456ghi789",
            b"region=eu; key=sk-ant-api03-abcdefghijklmnop",
            b"sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            b"ghp_16C7e42F292c6912E7710c838347Ae178B4a",
            b"xoxb-2048-abcdefghij-XYZ",
            b"AKIAIOSFODNN7EXAMPLE",
            b"postgres://app:hunter2@db.internal:5432/prod",
            b"https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42",
        ],
    )
    def test_a_credential_value_is_withheld_whatever_its_header_is_called(
        self, value: bytes
    ) -> None:
        outputs = handle(Record(b"{not json", headers=[("x-upstream", value)]))
        letter = orjson.loads(outputs[0].value)
        assert letter["headers_withheld"] == ["x-upstream"]
        assert value not in outputs[0].value

    @pytest.mark.parametrize(
        "name",
        [
            "traceparent",
            "x-request-id",
            "content-type",
            "source",
            "x-tenant",
            "monkey-id",
            "idempotency-key",
            "x-b3-spanid",
            "x-source-url",
            "x-risk-score",
        ],
    )
    def test_ordinary_headers_are_still_copied(self, name: str) -> None:
        outputs = handle(Record(b"{not json", headers=[(name, b"v-1")]))
        letter = orjson.loads(outputs[0].value)
        assert letter["headers"] == {name: "v-1"}
        assert letter["headers_withheld"] == []

    @pytest.mark.parametrize(
        "value",
        [
            b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            b"https://shop.example.com/returns?lang=en&page=2",
            b"risk-assessment-2024-ledger-entry-000042",
            b"3f2b8c1e-9d4a-4c6b-8e2f-1a7d5c9b0e33",
        ],
    )
    def test_ordinary_values_are_still_copied(self, value: bytes) -> None:
        outputs = handle(Record(b"{not json", headers=[("x-info", value)]))
        letter = orjson.loads(outputs[0].value)
        assert letter["headers_withheld"] == []
        assert letter["headers"] == {"x-info": value.decode()}


class TestTracingHeadersOnVerdicts:
    def outputs(self, headers: list[tuple[str, bytes]]) -> list[OutRecord]:
        return handle(Record(request(), headers=headers))

    def test_credential_baggage_members_are_removed_and_the_rest_carried(self) -> None:
        baggage = b"tenant=acme, token=abc123xyz789 , user.id=42;prop, region=eu"
        outputs = self.outputs([("baggage", baggage), ("traceparent", b"00-ab-cd-01")])
        for out in outputs:
            headers = dict(out.headers)
            assert headers["traceparent"] == b"00-ab-cd-01"
            assert headers["baggage"] == b"tenant=acme,region=eu"
            assert b"abc123xyz789" not in out.value

    def test_baggage_of_only_credentials_is_not_carried(self) -> None:
        outputs = self.outputs([("baggage", b"auth=Bearer%20sk-live-0123456789abcd")])
        assert all("baggage" not in dict(out.headers) for out in outputs)

    @pytest.mark.parametrize(
        ("name", "value"),
        [
            ("uberctx-authorization", b"Bearer sk-live-0123456789abcd"),
            ("uberctx-note", b"key=sk-proj-0123456789abcdef"),
            ("ot-baggage-session", b"s-1"),
            ("x-request-id", b"Bearer abc"),
        ],
    )
    def test_tracing_headers_holding_credentials_are_not_carried(
        self, name: str, value: bytes
    ) -> None:
        outputs = self.outputs([(name, value), ("uberctx-tenant", b"acme")])
        assert outputs
        for out in outputs:
            headers = dict(out.headers)
            assert name not in headers
            assert headers["uberctx-tenant"] == b"acme"


class TestExactIntegersKeepTheCoresRules:
    def test_a_duplicate_output_key_beside_a_big_integer_is_a_dead_letter(self) -> None:
        """The exact-integer path parses with the standard library and hands the core an
        object: it must refuse a repeated key as the core's own reader does."""
        value = (
            b'{"output": "The moon is cheese.", "output": "Paris is in France.", '
            b'"context": "Paris is in France.", "metadata": {"n": 12345678901234567890}}'
        )
        outputs = handle(Record(value))
        assert [out.kind for out in outputs] == ["dead_letter"]
        letter = orjson.loads(outputs[0].value)
        assert letter["reason"] == "invalid_json"
        assert "duplicate key 'output'" in letter["detail"]


class TestAnyExceptionDeadLetters:
    def test_a_parser_that_raises_anything_dead_letters_the_message(self) -> None:
        def broken(_: Any) -> Any:
            raise RecursionError("maximum recursion depth exceeded")

        outputs = handle(Record(request()), Pipeline(SETTINGS, broken))
        letter = orjson.loads(outputs[0].value)
        assert (letter["reason"], letter["detail"]) == (
            "internal_error",
            "decoding raised RecursionError: maximum recursion depth exceeded",
        )

    def test_routing_that_raises_dead_letters_the_message(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def broken(*_: Any, **__: Any) -> Any:
            raise ValueError("boom")

        monkeypatch.setattr("consumers.runtime.routing.route_verdict", broken)
        outputs = handle(Record(request()))
        assert [out.kind for out in outputs] == ["dead_letter"]
        assert "ValueError: boom" in orjson.loads(outputs[0].value)["detail"]

    def test_fitting_that_raises_dead_letters_the_message(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def broken(*_: Any, **__: Any) -> Any:
            raise OverflowError("size")

        monkeypatch.setattr("consumers.runtime.message.fit_outputs", broken)
        outputs = handle(Record(request()))
        letter = orjson.loads(outputs[0].value)
        assert (letter["reason"], letter["detail"]) == (
            "internal_error",
            "building the verdict records raised OverflowError: size",
        )

    def test_a_judge_core_that_raises_anything_dead_letters_the_message(self) -> None:
        """Not a JudgeError (those make an ``error`` verdict): a bug in the judge core."""

        def bug(_: Any) -> Any:
            raise ZeroDivisionError("a bug in a judge")

        guard = Guard(FakeJudge(bug), JudgeSettings())

        async def judge(decoded: codec.Decoded) -> Verdict:
            return await guard.judge(decoded.request, message_key=decoded.source.key)

        outcome = asyncio.run(PIPELINE.process(Record(request()), judge))
        assert isinstance(outcome, Finished)
        (letter,) = [orjson.loads(out.value) for out in outcome.outputs]
        assert (letter["reason"], letter["detail"]) == (
            "internal_error",
            "the judge raised ZeroDivisionError: a bug in a judge",
        )
        assert letter["input"]["offset"] == Record(b"").offset


HEADER_NAMES = st.sampled_from(
    [
        "x-request-id",
        "traceparent",
        "baggage",
        "authorization",
        "cookie",
        "x-api-key",
        "b3",
        "content-type",
        "x-b3-traceid",
    ]
)
BIG = st.builds(lambda n, b: b * n, st.integers(1, 450_000), st.binary(min_size=1, max_size=2))
# any name, lone surrogates and the escaped form of a name that was not UTF-8 included
NAMES = HEADER_NAMES | st.text(st.characters(exclude_categories=()), max_size=30)
HEADERS = st.lists(st.tuples(NAMES, st.binary(max_size=40) | BIG), max_size=6)
JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(10**40), 10**40)
    | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False)
)


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "id": st.integers(-(10**30), 10**30) | st.text(max_size=50) | BIG.map(bytes.hex),
        "metadata": st.dictionaries(st.text(max_size=5), JSON_LEAF, max_size=4)
        | st.integers(0, 300).map(lambda d: {"deep": nested(d)}),
        "output": st.text(max_size=200) | st.sampled_from(["The Eiffel Tower is in Rome"]),
        "question": st.text(max_size=50),
    },
)
ENDS = b',"context":"a"}'
# bodies that parsers and serializers have choked on: repeated keys, NaN, lone surrogates,
# nesting, numbers past every limit, a BOM, trailing data, ids of every JSON type
HOSTILE_JSON = st.sampled_from(
    [
        b'{"output": "x", "output": "y"' + ENDS,
        b'{"output": NaN' + ENDS,
        b'{"output": "\\ud800"' + ENDS,
        b"[" * 100_000,
        b'{"output":"a","context":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"output":"a","metadata":1e999' + ENDS,
        b'{"output":"a","metadata":{"x":' + b"1" * 4500 + b"}" + ENDS,
        b'{"output":"a","id":' + b"9" * 5000 + ENDS,
        b'\xef\xbb\xbf{"output":"a"' + ENDS,
        b'{"output":"a\\u0000b"' + ENDS,
        b'{"output":"a","id":1.5' + ENDS,
        b'{"output":"a","id":true' + ENDS,
        b'{"output":"a","id":"' + "é".encode() * 100_000 + b'"' + ENDS,
        b'{"output":"a","context_field":"nope"' + ENDS,
        b'{"output":"a","context_field":"messages","messages":[{"role":"tool","content":"a",'
        b'"name":"' + b"n" * 200_000 + b'"}]}',
        b'"a string"',
        b'{"output":"a"' + ENDS + b" trailing",
    ]
)
VALUES = (
    st.none()
    | st.binary(max_size=300)
    | HOSTILE_JSON
    | FIELDS.map(lambda fields: request(**fields))
    | st.builds(lambda n: request(padding="p" * n), st.integers(0, 250_000))
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(key=st.none() | st.binary(max_size=40) | BIG, headers=HEADERS, value=VALUES)
def test_any_record_ends_as_publishable_records_never_as_an_exception(
    key: bytes | None, headers: list[tuple[str, bytes]], value: bytes | None
) -> None:
    record = Record(value, key=key, headers=headers)
    outputs = handle(record)
    check_publishable(outputs, record)
    if key is not None and len(key) > envelope.KEY_MAX_BYTES:
        assert all(dict(out.headers).get(KEY_HASHED_HEADER) for out in outputs)


class TestBigMessagesLeaveTheEventLoop:
    """Parsing and building the outputs of a big message (up to ``max_message_bytes``) runs in
    the core's worker threads, so heartbeats and health are served meanwhile; small messages
    stay on the loop, where a thread hop would cost more than the work."""

    @staticmethod
    def _threads(value: bytes) -> set[str]:
        seen: set[str] = set()

        def parse(payload: Any) -> Any:
            seen.add(threading.current_thread().name)
            return GUARD.parse(payload)

        outputs = handle(Record(value), Pipeline(SETTINGS, parse))
        assert outputs[0].kind == "verdict"
        return seen

    def test_a_big_message_is_parsed_in_a_worker_thread(self) -> None:
        big = request(context=[EVIDENCE] + [f"Filler sentence number {i}." for i in range(4000)])
        assert len(big) > OFFLOAD_MIN_CHARS
        threads = self._threads(big)
        assert len(threads) == 1
        assert next(iter(threads)).startswith("guard-cpu")

    def test_a_small_message_is_parsed_on_the_loop(self) -> None:
        assert self._threads(request()) == {threading.main_thread().name}
