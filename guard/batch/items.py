"""The identity of a batch item: the stream position it comes from, and its ``custom_id``.

The runtime passes each message's :class:`ItemRef` to :meth:`guard.engine.Guard.judge`
(``item=``; ``guard`` never learns it is Kafka), and it travels on the prepared case
(:attr:`guard.case.PreparedCase.item`) to the batching judge; the ``custom_id`` is derived from
it, so a replica that takes a partition over finds the items an earlier owner submitted under
the same ids.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class ItemRef:
    """A message's place in its stream: ``stream`` (e.g. ``topic-partition``) and position."""

    stream: str
    position: int


def custom_id(ref: ItemRef | None, window: int) -> str:
    """``[A-Za-z0-9_-]{1,64}`` as both providers accept: a hash of the stream, the position and
    the output window; a fresh random id for a case that comes from no stream."""
    if ref is None:
        return f"r{uuid.uuid4().hex}-w{window}"
    return f"{stream_prefix(ref.stream)}{ref.position}-w{window}"


def stream_prefix(stream: str) -> str:
    """How the ``custom_id`` of every item of ``stream`` starts."""
    return f"s{hashlib.sha256(stream.encode()).hexdigest()[:16]}-"
