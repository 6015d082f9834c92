"""Judging an answer while it streams: hold and release.

Map (one concept per module):

* :mod:`~guard.stream.spans`: where the spans (sentences) of a growing answer end;
* :mod:`~guard.stream.release`: :class:`~guard.stream.release.HoldAndRelease`, which judges each
  span as it completes (concurrently with generation, verdicts applied in order) and releases
  text only up to the end of the last span judged not to fail;
* :mod:`~guard.stream.chat`: the evidence of an OpenAI or Anthropic chat request (user turns,
  tool results, optionally the system message, an explicit context) as a
  :class:`~guard.models.JudgeRequest`;
* :mod:`~guard.stream.sse`: server-sent events read from bytes split anywhere (mid UTF-8
  sequence included).

Nothing here knows HTTP or Kafka: ``serve``'s proxy (:mod:`consumers.serve.proxy`) feeds it
upstream deltas and writes what it releases in the client's wire format.
"""

from __future__ import annotations

from guard.stream.release import HoldAndRelease, Release, StreamEvent
from guard.stream.spans import SpanSplitter

__all__ = ["HoldAndRelease", "Release", "SpanSplitter", "StreamEvent"]
