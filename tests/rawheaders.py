"""Header names that are not UTF-8, as a careless producer writes them (aiokafka only takes
text): :class:`RawName` and :func:`python_builder`, which makes aiokafka's producer write them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from aiokafka.producer import message_accumulator, producer
from aiokafka.record.default_records import _DefaultRecordBatchBuilderPy


class RawName(str):
    """A header name written as arbitrary bytes by aiokafka's pure-Python batch builder."""

    raw: bytes

    def __new__(cls, raw: bytes) -> RawName:
        name = super().__new__(cls, raw.decode("utf-8", "backslashreplace"))
        name.raw = raw
        return name

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return self.raw


@contextlib.contextmanager
def python_builder(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """aiokafka's producer with its pure-Python batch builder (which writes RawName's bytes)."""
    with monkeypatch.context() as patch:
        for module in (message_accumulator, producer):
            patch.setattr(module, "DefaultRecordBatchBuilder", _DefaultRecordBatchBuilderPy)
        yield
