"""Fetched batches with a header name that is not UTF-8 are read, not raised (issue 9)."""

from __future__ import annotations

import pytest
from aiokafka.errors import CorruptRecordException
from aiokafka.record import memory_records
from aiokafka.record.default_records import _DefaultRecordBatchBuilderPy, _DefaultRecordBatchPy
from aiokafka.record.memory_records import MemoryRecords, _MemoryRecordsPy
from hypothesis import given, settings
from hypothesis import strategies as st

from consumers.runtime import batches
from consumers.runtime.batches import LenientRecords
from tests.rawheaders import RawName


def batch(
    records: list[tuple[bytes, list[tuple[str, bytes]]]], *, base: int = 0, codec: int = 0
) -> bytes:
    builder = _DefaultRecordBatchBuilderPy(
        magic=2,
        compression_type=codec,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i, (value, headers) in enumerate(records):
        builder.append(
            base + i, timestamp=1_700_000_000_000, key=b"k", value=value, headers=headers
        )  # type: ignore[arg-type]
    return bytes(builder.build())


def read_all(records: object) -> list[tuple[int, bytes | None, list[tuple[str, bytes | None]]]]:
    out = []
    while records.has_next():  # type: ignore[attr-defined]
        for record in records.next_batch():  # type: ignore[attr-defined]
            out.append((record.offset, record.value, list(record.headers)))
    return out


@pytest.mark.parametrize("codec", [0, 1], ids=["plain", "gzip"])
def test_a_bad_header_name_is_decoded_leniently_and_every_record_is_read(codec: int) -> None:
    data = batch(
        [
            (b"good-0", [("traceparent", b"t0")]),
            (b"poison", [(RawName(b"bad\xff\xfename"), b"v")]),
            (b"good-2", []),
        ],
        codec=codec,
    )
    data += batch([(b"good-3", [])], base=3)
    with pytest.raises(UnicodeDecodeError):  # aiokafka's own reader: the whole fetch fails
        read_all(MemoryRecords(data))
    assert read_all(LenientRecords(data)) == [
        (0, b"good-0", [("traceparent", b"t0")]),
        (1, b"poison", [("bad\\xff\\xfename", b"v")]),
        (2, b"good-2", []),
        (3, b"good-3", []),
    ]


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.binary(max_size=12), min_size=1, max_size=8))
def test_any_header_name_bytes_read_like_aiokafka_would_when_valid(names: list[bytes]) -> None:
    records = [(f"v{i}".encode(), [(RawName(name), b"x")]) for i, name in enumerate(names)]
    got = read_all(LenientRecords(batch(records)))
    assert [offset for offset, _, _ in got] == list(range(len(names)))
    for (_, _, headers), name in zip(got, names, strict=True):
        assert headers == [(name.decode("utf-8", "backslashreplace"), b"x")]


def pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """aiokafka's readers as AIOKAFKA_NO_EXTENSIONS=1 picks them (at import)."""
    monkeypatch.setattr(memory_records, "DefaultRecordBatch", _DefaultRecordBatchPy)
    monkeypatch.setattr(batches, "FAST_RECORDS", _MemoryRecordsPy)
    monkeypatch.setattr(batches, "FAST_BATCH", _DefaultRecordBatchPy)


@pytest.mark.parametrize("codec", [0, 1], ids=["plain", "gzip"])
def test_the_pure_python_reader_reads_a_bad_header_name_leniently_too(
    codec: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29: with aiokafka's pure-Python reader (AIOKAFKA_NO_EXTENSIONS=1) the bad name
    raised CorruptRecordException, not UnicodeDecodeError: the partition held at that offset
    forever. It is read leniently like the C reader's, every record of the batch kept."""
    pure_python(monkeypatch)
    data = batch(
        [(b"good-0", []), (b"poison", [(RawName(b"n\xff\xfe"), b"v")]), (b"good-2", [])],
        codec=codec,
    )
    with pytest.raises(CorruptRecordException):  # aiokafka's own pure-Python reader
        read_all(_MemoryRecordsPy(data))
    assert read_all(LenientRecords(data)) == [
        (0, b"good-0", []),
        (1, b"poison", [("n\\xff\\xfe", b"v")]),
        (2, b"good-2", []),
    ]


def test_a_corrupt_batch_still_raises_with_either_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a bad name is read again: a batch corrupt otherwise holds its partition as before
    (consumers.runtime.fetch backs off and logs fetch.undecodable)."""
    pure_python(monkeypatch)
    data = bytearray(batch([(b"good-0", [("h", b"v")]), (b"good-1", [])]))
    data[-4:] = b"\x7f\x7f\x7f\x7f"  # the last record's bytes run past the batch
    with pytest.raises(CorruptRecordException):
        read_all(LenientRecords(bytes(data)))
