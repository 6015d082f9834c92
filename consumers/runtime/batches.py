"""Fetched record batches whose header names need not be valid UTF-8.

aiokafka decodes every header *name* as strict UTF-8 while it iterates a fetched batch
(``aiokafka/record/default_records.py``, ``_read_msg``: ``h_key = ....decode("utf-8")``, and the
same in its C extension), inside ``getmany()``. One record with a bad header name used to raise
``UnicodeDecodeError`` out of every fetch of its partition: the records fetched with it were
lost from that call and the same batch came back forever, so nothing behind it was ever judged.
Skipping the offset cannot help either: a batch is fetched and decoded whole.

:func:`install` makes the fetcher read batches through :class:`LenientRecords`: batches are read
by aiokafka's fast reader as before; only when it fails on a header name is the rest of that
batch read again by aiokafka's pure-Python reader with header names decoded leniently (invalid
bytes as ``\\xNN``). The message is then judged like any other; its odd header is only carried
(named so) into a dead letter. The rest of the record (key, value, header values) is bytes and
untouched.

The "fast" reader is aiokafka's C extension, or its pure-Python reader when the extension is
off (``AIOKAFKA_NO_EXTENSIONS=1``, a platform without it). The two fail differently on a bad
name: the C reader raises ``UnicodeDecodeError``, the pure-Python one wraps it in
``CorruptRecordException`` (which used to hold the partition at that offset for good, as
:mod:`consumers.runtime.fetch` treats a corrupt batch); both are read again leniently.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from aiokafka.consumer import fetcher
from aiokafka.errors import CorruptRecordException
from aiokafka.record import default_records, memory_records

FAST_RECORDS: Any = memory_records.MemoryRecords
FAST_BATCH: Any = default_records.DefaultRecordBatch
PY_BATCH: Any = default_records._DefaultRecordBatchPy  # aiokafka's pure-Python reader
LENGTH = struct.Struct(">i")
LENGTH_OFFSET = 8  # batch layout: base offset (8 bytes), then the length (4 bytes)
LOG_OVERHEAD = 12


class _LenientBytes(bytearray):
    """A batch buffer whose slices decode invalid UTF-8 as ``\\xNN`` instead of raising."""

    def __getitem__(self, item: Any) -> Any:
        got = bytearray.__getitem__(self, item)
        return _LenientBytes(got) if isinstance(item, slice) else got

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return bytearray.decode(self, encoding, "backslashreplace")


class _LenientPyBatch(PY_BATCH):  # type: ignore[misc]
    def __iter__(self) -> Any:
        self._maybe_uncompress()
        self._buffer = _LenientBytes(getattr(self, "_buffer"))  # noqa: B009 - set by aiokafka
        return self


class _Batch:
    """A v2 batch read fast; read again leniently from the failing record on a bad header."""

    def __init__(self, fast: Any, raw: memoryview) -> None:
        self._fast = fast
        self._raw = raw

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fast, name)

    def __next__(self) -> Any:  # control batches: the fetcher reads their one record directly
        return next(self._fast)

    def __iter__(self) -> Iterator[Any]:
        last: int | None = None
        try:
            for record in self._fast:
                last = record.offset
                yield record
        except (UnicodeDecodeError, CorruptRecordException) as exc:
            if not _bad_name(exc):
                raise  # a corrupt batch: the partition holds (consumers.runtime.fetch)
            for record in _LenientPyBatch(bytes(self._raw)):
                if last is None or record.offset > last:
                    yield record


def _bad_name(exc: BaseException) -> bool:
    """Whether reading failed on text that is not UTF-8 (the C reader raises it, the
    pure-Python reader wraps it in ``CorruptRecordException``)."""
    return isinstance(exc, UnicodeDecodeError) or isinstance(exc.__cause__, UnicodeDecodeError)


class LenientRecords:
    """Drop-in for aiokafka's ``MemoryRecords`` (the batches of one fetch response)."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self._fast = FAST_RECORDS(data)

    def size_in_bytes(self) -> int:
        return int(self._fast.size_in_bytes())

    def has_next(self) -> bool:
        return bool(self._fast.has_next())

    def next_batch(self) -> Any:
        batch = self._fast.next_batch()
        if batch is None:
            return None
        start = self._pos
        (length,) = LENGTH.unpack_from(self._data, start + LENGTH_OFFSET)
        self._pos = start + LOG_OVERHEAD + length
        if not isinstance(batch, FAST_BATCH):
            return batch  # message format v0/v1: no headers
        return _Batch(batch, self._data[start : self._pos])


def install() -> None:
    """Make aiokafka's fetcher read batches through :class:`LenientRecords` (idempotent)."""
    fetcher.MemoryRecords = LenientRecords
