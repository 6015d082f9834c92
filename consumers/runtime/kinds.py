"""The kinds of record a message produces (:class:`consumers.runtime.envelope.OutRecord`).

A ``StrEnum``: a kind is its text wherever it is written (log lines, error messages), and
the counters of :class:`consumers.runtime.stats.ServiceStats` are keyed by it.
"""

from __future__ import annotations

from enum import StrEnum


class OutputKind(StrEnum):
    VERDICT = "verdict"  # the verdict record, on the verdicts topic
    QUARANTINE = "quarantine"  # the payload held back with its verdict
    APPROVED = "approved"  # the payload copied on, not quarantined
    REPLY = "reply"  # the verdict record on the requester's reply topic
    DEAD_LETTER = "dead_letter"  # a message that could not be judged, with why
    RELEASE = "release"  # how far a streamed answer is released (topics.releases)
