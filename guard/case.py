"""A request made ready for a judge: sanitized, truncated, rendered and fenced."""

from __future__ import annotations

from dataclasses import dataclass

from guard.batch.items import ItemRef
from guard.models import ContextField, InjectionFinding, OutputCoverage, ScoringMode, Truncation


@dataclass(frozen=True)
class Passage:
    """One unit of evidence: a numbered document, or a user/tool turn of a conversation."""

    label: str  # "[1]", "tool lookup_policy", "user"
    text: str


@dataclass(frozen=True)
class PreparedCase:
    """Everything a judge needs, and nothing it must not see.

    ``evidence`` is the rendered evidence text (numbered documents, or a transcript with a role
    label on every turn); ``passages`` are its evidence units, for the offline judge and the quote
    check. Earlier assistant turns stay in ``evidence``, labelled as not evidence, and are never
    passages.
    """

    request_id: str
    output: str
    evidence: str
    passages: tuple[Passage, ...]
    source: ContextField
    mode: ScoringMode
    threshold: float
    question: str | None
    truncation: Truncation
    injections: tuple[InjectionFinding, ...]
    message_key: str | None = None  # the Kafka message key, when judged from a stream
    item: ItemRef | None = None  # the message's stream position (batch items' custom_id)
    coverage: OutputCoverage | None = None  # which part of the output the cases of a request see
    window: int = 1  # which window of the output ``output`` is (1-based; see coverage.chunks)
    display_reordered: bool = False
    labels: str = (
        ""  # producer-given names of the shown evidence (ids, sources, tools): not evidence
    )
