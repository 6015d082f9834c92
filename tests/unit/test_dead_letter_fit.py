"""Dead letters are shrunk to fit the producer's limit, whatever the payload looks like."""

from __future__ import annotations

import base64

import orjson

from consumers.records import DeadLetter
from consumers.runtime.codec import decode
from consumers.runtime.deadletters import shrink as fit_dead_letter
from consumers.runtime.deadletters import size as dead_letter_size
from consumers.runtime.kinds import OutputKind
from tests.unit.test_codec_routing import GUARD, Record

LIMIT = 1_000_000  # the default max_output_bytes


def test_control_bytes_that_grow_sixfold_in_json_are_kept_as_a_base64_prefix_that_fits() -> None:
    """200 KB of \\x01 (valid UTF-8, invalid JSON) is a ~1.2 MB invalid_json dead letter; the
    fitted one is at most the limit, keeps the reason, and carries a truncated base64 prefix."""
    value = b"\x01" * 200_000
    letter = decode(Record(value), parse=GUARD.parse, max_bytes=512 * 1024)
    assert isinstance(letter, DeadLetter)
    assert letter.reason == "invalid_json"
    assert dead_letter_size(letter) > LIMIT

    fitted = fit_dead_letter(letter, value, LIMIT)
    assert dead_letter_size(fitted) <= LIMIT
    assert fitted.reason == "invalid_json"
    assert fitted.payload_text is None
    assert fitted.payload_bytes == len(value)
    assert fitted.payload_base64 is not None
    kept = base64.b64decode(fitted.payload_base64)
    assert value.startswith(kept)
    assert len(kept) == (LIMIT - 65_536) * 3 // 4 or not fitted.payload_truncated
    assert fitted.payload_truncated is (len(kept) < len(value))


def test_a_dead_letter_that_fits_is_left_unchanged() -> None:
    value = b'{"output": '
    letter = decode(Record(value), parse=GUARD.parse, max_bytes=1000)
    assert isinstance(letter, DeadLetter)
    assert fit_dead_letter(letter, value, LIMIT) is letter


def test_huge_headers_are_capped_and_a_tiny_limit_drops_the_payload() -> None:
    """Headers are capped in count and length; when even a base64 prefix cannot fit, the dead
    letter goes without payload, still marked truncated, still under the limit."""
    value = b"\x01" * 50_000
    headers = [(f"h{i}", b"\x02" * 10_000) for i in range(100)]
    letter = decode(Record(value, headers=headers), parse=GUARD.parse, max_bytes=100_000)
    assert isinstance(letter, DeadLetter)
    for limit in (1024, 4096, 100_000, 300_000):
        fitted = fit_dead_letter(letter, value, limit)
        assert dead_letter_size(fitted) <= limit
        assert len(fitted.headers) <= 32
        assert all(len(v) <= 512 for v in fitted.headers.values())
        assert fitted.payload_bytes == len(value)
        kept = base64.b64decode(fitted.payload_base64 or "")
        assert value.startswith(kept)
        assert fitted.payload_truncated is (len(kept) < len(value))
    bare = fit_dead_letter(letter, value, 1024)
    assert bare.payload_base64 is None
    assert bare.payload_text is None
    assert bare.payload_truncated is True
    assert orjson.loads(bare.model_dump_json())["reason"] == "invalid_json"


def test_a_refused_dead_letter_is_replaced_by_its_bare_version_once() -> None:
    """On MessageSizeTooLargeError, dead letters lose payload and headers; a second refusal
    changes nothing, so the caller's fatal path still ends."""
    from aiokafka.errors import KafkaConnectionError, MessageSizeTooLargeError

    from consumers.runtime.envelope import OutRecord
    from consumers.runtime.publisher import replace_refused

    value = b"x" * 5000
    letter = decode(Record(value, headers=[("h", b"v")]), parse=GUARD.parse, max_bytes=10_000)
    assert isinstance(letter, DeadLetter)
    dead = OutRecord("d", None, letter.model_dump_json().encode(), [], OutputKind.DEAD_LETTER, "x")
    outputs = [dead]
    assert replace_refused(outputs, [(dead, KafkaConnectionError())], None, 16_384) is False
    assert replace_refused(outputs, [(dead, MessageSizeTooLargeError())], None, 16_384) is True
    bare = orjson.loads(outputs[0].value)
    assert bare["payload_text"] is None
    assert bare["payload_base64"] is None
    assert bare["headers"] == {}
    assert bare["payload_truncated"] is True
    assert bare["payload_bytes"] == len(value)
    assert bare["reason"] == "invalid_json"
    assert (
        replace_refused(outputs, [(outputs[0], MessageSizeTooLargeError())], None, 16_384) is False
    )


def test_a_refused_verdict_or_quarantine_record_becomes_one_dead_letter() -> None:
    """The broker may refuse a record its topic's max.message.bytes cannot hold: the message
    gets one dead letter instead of stopping the service; records not refused stay. A record
    small enough to share a batch was refused for its batch: a setting to fix, left alone."""
    from aiokafka.errors import MessageSizeTooLargeError

    from consumers.runtime.envelope import OutRecord
    from consumers.runtime.publisher import replace_refused

    verdict = OutRecord("v", None, b"{}" * 10, [], OutputKind.VERDICT, "fail")
    quarantine = OutRecord("q", None, b"x" * 20_000, [], OutputKind.QUARANTINE, "fail")
    letter = OutRecord("d", None, b"{}", [], OutputKind.DEAD_LETTER, "oversized")
    details: list[str] = []

    def refused(detail: str) -> OutRecord:
        details.append(detail)
        return letter

    outputs = [verdict, quarantine]
    refusal = MessageSizeTooLargeError()
    assert not replace_refused(outputs, [(verdict, refusal)], refused, 16_384)
    assert replace_refused(outputs, [(quarantine, refusal)], refused, 16_384)
    assert outputs == [verdict, letter]
    assert details == ["the broker refused the quarantine record (20000 bytes) as too large"]
