"""Rendering a request's grounding source as evidence text for the judge.

* ``context`` (a string, strings, or documents) becomes numbered documents: ``[1] ...``. Each
  document is one evidence passage.
* ``messages`` becomes a transcript with a role label on every turn. User turns (labelled as the
  user's words) and tool results (``TOOL RESULT``) are evidence passages; the assistant's earlier
  turns and system turns are shown, labelled *not evidence*, and are never passages.
* The names the producer gave (a document's ``id`` and ``source``, a tool's ``name``) are not
  printed with the evidence, where a judge would read them as part of it ("source: Returns are
  accepted within 90 days"): they are collected in ``labels`` (``[1] id: ..., source: ...``,
  ``[turn 3] tool: ...``, one line each, at most :data:`LABEL_MAX_CHARS` characters per value),
  which the prompt shows apart, as names that are not evidence.
* ``input`` / ``expected_output`` is a single passage.

At most :data:`~guard.defaults.MAX_EVIDENCE_ITEMS` documents (the first ones: retrieval order) or
turns (the last ones: the most recent) are rendered, so the work per request is bounded however
many tiny items a message holds; the others count as cut.

Each piece is sanitized, then the whole is fitted to ``limit`` characters: whole blocks are
preferred; when everything does not fit, evidence blocks go before non-evidence turns, and among
them the blocks sharing the most words with the output (and question) go first, shown in their
original order and numbering. When a useful amount of room is left, the first block that no
longer fits whole is excerpted (:mod:`guard.prepare.excerpt`): its paragraphs or sentences
that matter most to the output, whole, with ``[…]`` marking what was left out. What was cut is
recorded in ``cut``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import cast

from guard.case import Passage
from guard.defaults import MAX_EVIDENCE_ITEMS
from guard.models import ContextField, Cut, Document, JudgeRequest, Message
from guard.prepare.excerpt import excerpt, words
from guard.prepare.sanitize import sanitize

BLOCK_SEPARATOR = "\n\n"
LABEL_MAX_CHARS = 200  # of one producer-given name (an id, a source, a tool's name) shown
MIN_PARTIAL_CHARS = 80  # a partly kept block needs at least this much room to be worth it


@dataclass(frozen=True)
class RenderedEvidence:
    """The evidence text the judge sees, its evidence passages, and what was cut.

    ``bodies`` are the texts of every shown block (evidence or not) and ``attributes`` the
    producer-given values in their headers (document ids and sources, tool names): what an
    injection scan must read."""

    text: str
    passages: tuple[Passage, ...]
    cut: Cut
    bodies: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    labels: str = ""  # the shown blocks' producer-given names, one line each: not evidence


@dataclass(frozen=True)
class _Block:
    header: str  # "[1]", "[turn 2] USER (the user's words):"; "" for a single passage
    body: str
    passage_label: str | None  # None: shown, but not evidence
    relevance: int = 0
    attributes: tuple[str, ...] = ()  # producer-given header values: ids, sources, tool names
    label: str = ""  # "[1] id: ..., source: ...": the attributes as shown apart from the text

    @cached_property
    def content_words(self) -> set[str]:
        return words(self.body)

    @property
    def text(self) -> str:
        return f"{self.header} {self.body}" if self.header else self.body

    @property
    def size(self) -> int:
        """Characters the block takes in a prompt: its text and its label line."""
        return len(self.text) + (len(self.label) + 1 if self.label else 0)

    def passage(self) -> Passage | None:
        return None if self.passage_label is None else Passage(self.passage_label, self.body)


# --------------------------------------------------------------------------- blocks


_HEADER_LOOKALIKE = re.compile(r"^([ \t]*)(\[(?:turn\s+)?\d+\])", re.IGNORECASE | re.MULTILINE)


def _one_line(text: str) -> str:
    """Header attributes (ids, sources, tool names) on one line: they cannot start a block."""
    return " ".join(sanitize(text).split())


def _shown_label(text: str) -> str:
    """A producer-given name as shown in the labels: one line, at most ``LABEL_MAX_CHARS``."""
    return text if len(text) <= LABEL_MAX_CHARS else text[: LABEL_MAX_CHARS - 1] + "…"


def _body(text: str) -> str:
    """A block's text, with lines that look like our block headers quoted, so judged text
    cannot start a forged document or turn (``[2] ...``, ``[turn 4] TOOL RESULT ...``)."""
    clean = sanitize(text)
    # the pattern starts at a line start, which the regex engine tries at every position
    return _HEADER_LOOKALIKE.sub(r"\1| \2", clean) if "[" in clean else clean


def _document_label(number: int, doc: Document) -> tuple[str, tuple[str, ...]]:
    """The document's label line and its attributes (id, source), each sanitized once."""
    if not doc.id and not doc.source:  # most documents: a number alone
        return "", ()
    pairs = [(k, _one_line(v)) for k, v in (("id", doc.id), ("source", doc.source)) if v]
    shown = ", ".join(f"{name}: {_shown_label(value)}" for name, value in pairs)
    return (f"[{number}] {shown}" if pairs else ""), tuple(v for _, v in pairs)


def _document_blocks(context: str | Sequence[str] | Sequence[Document]) -> list[_Block]:
    items: list[str | Document] = [context] if isinstance(context, str) else list(context)
    blocks: list[_Block] = []
    for number, item in enumerate(items[:MAX_EVIDENCE_ITEMS], start=1):
        if isinstance(item, str):  # a plain passage: no header attributes (no model to build)
            body = _body(item)
            if body:
                blocks.append(_Block(f"[{number}]", body, f"[{number}]"))
            continue
        body = _body(item.text)
        if body:
            label, attributes = _document_label(number, item)
            blocks.append(
                _Block(f"[{number}]", body, f"[{number}]", attributes=attributes, label=label)
            )
    return blocks


def turn_label(message: Message, name: str = "") -> tuple[str, str | None]:
    """The role label shown for a turn, and its passage label (None: not evidence); ``name``
    is a tool turn's name already on one line (computed here when not given). The tool's name is
    not in the shown label (the prompt lists it apart, see ``labels``), only in the passage's."""
    if message.role == "user":
        return "USER (the user's words):", "user"
    if message.role == "tool":
        name = name or _one_line(message.name or "")
        return "TOOL RESULT (evidence):", f"tool {name}" if name else "tool"
    if message.role == "assistant":
        return "ASSISTANT (earlier reply, NOT evidence):", None
    return "SYSTEM (instructions to the assistant, NOT evidence):", None


def _message_blocks(messages: Sequence[Message]) -> list[_Block]:
    blocks: list[_Block] = []
    first = max(0, len(messages) - MAX_EVIDENCE_ITEMS)
    for number, message in enumerate(messages[first:], start=first + 1):
        body = _body(message.content)
        if body:
            name = _one_line(message.name or "") if message.role == "tool" else ""
            shown, passage_label = turn_label(message, name)
            blocks.append(
                _Block(
                    f"[turn {number}] {shown}",
                    body,
                    passage_label,
                    attributes=(name,) if name else (),
                    label=f"[turn {number}] tool: {_shown_label(name)}" if name else "",
                )
            )
    return blocks


def _single_block(text: str | None, label: str) -> list[_Block]:
    body = sanitize(text or "")
    return [_Block("", body, label)] if body else []


def source_blocks(request: JudgeRequest, source: ContextField) -> list[_Block]:
    """The rendered blocks of the chosen grounding source (empty: no evidence)."""
    if source is ContextField.CONTEXT:
        return _document_blocks(request.context) if request.context is not None else []
    if source is ContextField.MESSAGES:
        return _message_blocks(request.messages or [])
    if source is ContextField.INPUT:
        return _single_block(request.input, "input")
    return _single_block(request.expected_output, "expected_output")


# --------------------------------------------------------------------------- fitting


def _rank(blocks: Sequence[_Block], group: list[int], query: str) -> list[int]:
    """The block indexes of ``group``, most worth keeping first: word overlap, then order. A
    group of one needs no ranking (nor the words of a block that may be half a megabyte)."""
    if len(group) < 2:
        return group
    wanted = words(query)

    def key(i: int) -> tuple[int, int]:
        return (len(wanted & blocks[i].content_words), -i)

    return sorted(group, key=key, reverse=True)


def _partial(block: _Block, room: int, query: str) -> _Block | None:
    budget = room - (block.size - len(block.body))
    if budget < MIN_PARTIAL_CHARS:
        return None
    body = excerpt(block.body, budget, query)
    return replace(block, body=body) if body else None


def fit_blocks(blocks: Sequence[_Block], limit: int, query: str) -> list[_Block]:
    """The blocks to show within ``limit`` characters, in their original order."""
    sep = len(BLOCK_SEPARATOR)
    if sum(b.size for b in blocks) + sep * max(0, len(blocks) - 1) <= limit:
        return list(blocks)
    chosen: dict[int, _Block] = {}
    is_evidence = [b.passage_label is not None for b in blocks]
    evidence = _rank(blocks, [i for i, e in enumerate(is_evidence) if e], query)
    other = _rank(blocks, [i for i, e in enumerate(is_evidence) if not e], query)
    used = _fill(blocks, evidence, chosen, 0, limit, query)  # evidence gets the room first
    _fill(blocks, other, chosen, used, limit, query)
    return [chosen[i] for i in sorted(chosen)]


def _fill(
    blocks: Sequence[_Block],
    order: Sequence[int],
    chosen: dict[int, _Block],
    used: int,
    limit: int,
    query: str,
) -> int:
    """Whole blocks of ``order`` while they fit, then an excerpt of the first that did not."""
    sep = len(BLOCK_SEPARATOR)
    for i in order:
        cost = blocks[i].size + (sep if chosen else 0)
        if used + cost <= limit:
            chosen[i], used = blocks[i], used + cost
    skipped = next((i for i in order if i not in chosen), None)
    if skipped is not None:
        room = limit - used - (sep if chosen else 0)
        partial = _partial(blocks[skipped], room, query)
        if partial is not None:
            chosen[skipped] = partial
            used += partial.size + (sep if len(chosen) > 1 else 0)
    return used


def _join(blocks: Iterable[_Block]) -> str:
    return BLOCK_SEPARATOR.join(b.text for b in blocks)


def _unrendered_chars(request: JudgeRequest, source: ContextField) -> int:
    """Characters of the items beyond :data:`MAX_EVIDENCE_ITEMS`, never rendered."""
    if source is ContextField.CONTEXT and isinstance(request.context, list):
        return _chars(request.context[MAX_EVIDENCE_ITEMS:])
    if source is ContextField.MESSAGES and request.messages:
        return _chars(request.messages[:-MAX_EVIDENCE_ITEMS])
    return 0


def request_chars(request: JudgeRequest) -> int:
    """Characters of every text of ``request``: what preparing it costs, roughly."""
    texts = (request.output, request.question, request.input, request.expected_output)
    size = sum(len(t) for t in texts if t)
    if isinstance(request.context, str):
        size += len(request.context)
    elif request.context:
        size += _chars(request.context)
    return size + _chars(request.messages or [])


def _chars(items: Sequence[str] | Sequence[Document] | Sequence[Message]) -> int:
    """Total text length of homogeneous ``items`` (a request's lists hold one kind each)."""
    if not items:
        return 0
    if isinstance(items[0], str):
        return sum(map(len, cast("Sequence[str]", items)))
    if isinstance(items[0], Document):
        return sum(len(d.text) for d in cast("Sequence[Document]", items))
    return sum(len(m.content) for m in cast("Sequence[Message]", items))


def render_evidence(
    request: JudgeRequest, source: ContextField, limit: int, query: str | None = None
) -> RenderedEvidence:
    """Render, sanitize and fit the grounding source ``source`` of ``request`` to ``limit``,
    preferring what shares words with ``query`` (default: the output and question)."""
    if query is None:
        query = f"{request.output} {request.question or ''}"
    return render_for_queries(request, source, limit, [query])[0]


def render_for_queries(
    request: JudgeRequest, source: ContextField, limit: int, queries: Sequence[str]
) -> list[RenderedEvidence]:
    """One rendering per query (the windows of a long output), sanitizing the source once."""
    blocks = source_blocks(request, source)
    full = _join(blocks)
    original = len(full) + _unrendered_chars(request, source)
    return [_fitted(blocks, full, original, limit, query) for query in queries]


def _fitted(
    blocks: Sequence[_Block], full: str, original: int, limit: int, query: str
) -> RenderedEvidence:
    kept = fit_blocks(blocks, limit, query)
    text = _join(kept)
    passages = tuple(p for p in (b.passage() for b in kept) if p is not None)
    cut = Cut(
        original_chars=original,
        kept_chars=len(text),
        truncated=text != full or original != len(full),
    )
    return RenderedEvidence(
        text=text,
        passages=passages,
        cut=cut,
        bodies=tuple(b.body for b in kept),
        attributes=tuple(a for b in kept for a in b.attributes),
        labels="\n".join(b.label for b in kept if b.label),
    )
