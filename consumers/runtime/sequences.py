"""An idempotent producer after the broker refused a batch as too large.

aiokafka numbers a partition's batches when it sends them (one batch in flight per partition,
``_pop_batch`` in ``aiokafka/producer/message_accumulator.py``) and never takes a number back.
A batch the broker refuses as too large (a topic's ``max.message.bytes`` lowered while the
service runs) is not written, so its numbers leave a gap: every later batch to that partition
failed with ``OutOfOrderSequenceNumber`` until the producer restarted, and the service stopped
(the dead letter replacing the refused record could never be followed by a verdict).

:func:`install` makes the produce-response handler give back the numbers of a batch the broker
refused as too large, as the Java producer does for a failed batch: the next batch to that
partition takes them, and the broker accepts it. Only the number of the one batch in flight is
given back, so no later batch holds a number beyond the gap.
"""

from __future__ import annotations

from typing import Any

from aiokafka.errors import MessageSizeTooLargeError, RecordListTooLargeError
from aiokafka.producer import sender

NOT_WRITTEN = (MessageSizeTooLargeError, RecordListTooLargeError)
HANDLER: Any = sender.SendProduceReqHandler
_original = HANDLER.handle_response


def _handle_response(self: Any, response: Any) -> Any:
    result = _original(self, response)
    manager = self._sender._txn_manager
    if manager is None:
        return result
    for tp, batch in self._batches.items():
        future = batch.future
        refused = future.done() and not future.cancelled()
        if refused and isinstance(future.exception(), NOT_WRITTEN):
            manager.increment_sequence_number(tp, -batch.record_count)
    return result


def install() -> None:
    """Patch aiokafka's produce-response handler (idempotent)."""
    HANDLER.handle_response = _handle_response
