"""Sentences of the output and evidence chunks sized to a model's window, MiniCheck-style.

A pair model reads one sentence of the output against one chunk of the evidence at a time. The
evidence is cut into chunks of at most ``budget`` tokens (whole sentences where they fit, a long
sentence at word boundaries, a long word at characters), counted by the model's tokenizer when
there is one and as characters / 4 otherwise (:func:`estimate_tokens`). A sentence's score is
the best chunk's (max over chunks: one chunk that supports it is enough), the output's the worst
sentence's (min over sentences: one unsupported sentence is enough), and the best chunk is the
sentence's evidence quote.

Pieces cover the text: each sentence runs from its start to the next one's (trailing whitespace
dropped), so nothing but whitespace is ever left out, even a closing quote the splitter skips.
Sentences come from :func:`guard.offline.text.split_sentences`, the offline judge's splitter.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from guard.offline.text import split_sentences

TokenCounter = Callable[[str], int]
# the token (start, end) character offsets of each text: one tokenizer call for many texts
TokenOffsets = Callable[[Sequence[str]], list[list[tuple[int, int]]]]
TokenStarts = Sequence[Sequence[int]]  # each text's token start offsets, ascending
# a chunk counted from its passages' tokens is counted again whole only above this share of
# the budget (a slice tokenized alone differs from the whole text by a token at its ends)
RECOUNT_ABOVE = 0.9
MIN_BUDGET = 8  # tokens: a chunk budget below this is raised to it (a character may be 4 tokens)
HORIZON = 64  # characters per token at most, when looking for where to cut a long sentence
_WORD_END = re.compile(r"\S\s")  # a word ends where a non-space meets a space


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` when no tokenizer is at hand: characters / 4, rounded up."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class Sentence:
    """A sentence of a text: ``text[start:end]``."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Run:
    """A contiguous slice of one passage: ``passages[passage][start:end]``."""

    passage: int
    start: int
    end: int


@dataclass(frozen=True)
class Chunk:
    """What the model reads as the premise: its runs' texts, one line per passage; ``quote``
    is the same text as an evidence quote (runs of different passages joined by an ellipsis,
    which the quote check reads as ordered parts)."""

    runs: tuple[Run, ...]
    text: str
    quote: str


def sentences(text: str) -> list[Sentence]:
    """The sentences of ``text``, covering every character but whitespace."""
    starts = [span.start for span in split_sentences(text)]
    ends = [*starts[1:], len(text)][: len(starts)]
    out = []
    for start, end in zip(starts, ends, strict=True):
        end = start + len(text[start:end].rstrip())
        if end > start:
            out.append(Sentence(text[start:end], start, end))
    return out


def token_starts(offsets: TokenOffsets, texts: Sequence[str]) -> list[list[int]]:
    """Where each text's tokens start, from one tokenizer call over all of them."""
    return [[start for start, _ in o] for o in offsets(texts)]


def tokens_in(starts: Sequence[int], start: int, end: int) -> int:
    """Tokens starting in ``[start, end)`` of a text whose tokens start at ``starts``."""
    return bisect_left(starts, end) - bisect_left(starts, start)


def pieces(text: str, budget: int, count: TokenCounter) -> list[Sentence]:
    """The sentences of ``text``, a sentence over ``budget`` tokens cut into parts that fit."""
    return [piece for piece, _ in _measured(text, max(budget, MIN_BUDGET), count, None)]


def _measured(
    text: str, budget: int, count: TokenCounter, starts: Sequence[int] | None
) -> list[tuple[Sentence, int]]:
    """:func:`pieces` with their tokens: counted from ``starts`` (the text's token starts, as
    the tokenizer read the whole text) when given, else one by one."""
    out: list[tuple[Sentence, int]] = []
    for sentence in sentences(text):
        if starts is None:
            tokens = count(sentence.text)
        else:
            tokens = tokens_in(starts, sentence.start, sentence.end)
        if tokens <= budget:
            out.append((sentence, tokens))
        else:
            cut = _cut(text, sentence.start, sentence.end, budget, count)
            out.extend((part, count(part.text)) for part in cut)
    return out


def _cut(text: str, start: int, end: int, budget: int, count: TokenCounter) -> list[Sentence]:
    """``text[start:end]`` in parts of at most ``budget`` tokens, cut after a word if one fits,
    else inside the word (at least one character a part, so the loop always advances). A part
    is looked for within ``budget * HORIZON`` characters, which bounds the counting."""
    parts = []
    while start < end:
        horizon = min(end, start + budget * HORIZON)
        words = [m.start() + 1 for m in _WORD_END.finditer(text, start, horizon)] + [horizon]
        stop = _longest_fit(text, start, words, budget, count)
        if stop is None:
            stop = _longest_fit(text, start, range(start + 1, horizon + 1), budget, count)
        stop = stop or start + 1
        parts.append(Sentence(text[start:stop], start, stop))
        start = stop + len(text[stop:end]) - len(text[stop:end].lstrip())
    return parts


def _longest_fit(
    text: str, start: int, stops: Sequence[int], budget: int, count: TokenCounter
) -> int | None:
    """The last of ``stops`` (ascending) with ``text[start:stop]`` within ``budget``, by
    bisection; None when not even the first fits."""
    low, high, best = 0, len(stops) - 1, None
    while low <= high:
        middle = (low + high) // 2
        if count(text[start : stops[middle]]) <= budget:
            best, low = stops[middle], middle + 1
        else:
            high = middle - 1
    return best


@dataclass(frozen=True)
class _Piece:
    passage: int
    sentence: Sentence
    tokens: int


def evidence_chunks(
    passages: Sequence[str],
    budget: int,
    count: TokenCounter,
    starts: TokenStarts | None = None,
) -> list[Chunk]:
    """The passages in chunks of at most ``budget`` tokens each, in order, covering them.

    With ``starts`` (:func:`token_starts` of the passages, one tokenizer call), sentences are
    counted from them, and a chunk is counted again whole only above :data:`RECOUNT_ABOVE` of
    the budget; without, every piece and every chunk is counted (none is over the budget)."""
    budget = max(budget, MIN_BUDGET)
    queue = [
        _Piece(i, piece, tokens)
        for i, text in enumerate(passages)
        for piece, tokens in _measured(text, budget, count, starts[i] if starts else None)
    ]
    chunks: list[Chunk] = []
    start = 0
    while start < len(queue):
        taken = _fill(queue, start, budget)
        recount = starts is None or sum(p.tokens for p in taken) > budget * RECOUNT_ABOVE
        while recount and len(taken) > 1 and count(_chunk(passages, taken).text) > budget:
            taken.pop()  # the estimate was short: leave the last piece to the next chunk
        chunks.append(_chunk(passages, taken))
        start += len(taken)
    return chunks


def _fill(queue: list[_Piece], start: int, budget: int) -> list[_Piece]:
    """The longest run of ``queue`` from ``start`` whose tokens (one more per new passage, for
    the line break) fit in ``budget``; at least one piece."""
    taken: list[_Piece] = []
    used = 0
    for piece in queue[start:]:
        cost = piece.tokens + (1 if taken and taken[-1].passage != piece.passage else 0)
        if taken and used + cost > budget:
            break
        taken.append(piece)
        used += cost
    return taken


def _chunk(passages: Sequence[str], taken: list[_Piece]) -> Chunk:
    runs: list[Run] = []
    for piece in taken:
        index, sentence = piece.passage, piece.sentence
        if runs and runs[-1].passage == index:
            runs[-1] = Run(index, runs[-1].start, sentence.end)
        else:
            runs.append(Run(index, sentence.start, sentence.end))
    texts = [passages[r.passage][r.start : r.end] for r in runs]
    return Chunk(tuple(runs), "\n".join(texts), " … ".join(texts))


def windows(
    text: str, budget: int, count: TokenCounter, starts: Sequence[int] | None = None
) -> list[Sentence]:
    """``text`` in consecutive windows of whole sentences of at most ``budget`` tokens (a
    longer sentence cut in parts): how a span model reads an answer longer than its window."""
    return [
        Sentence(text[c.runs[0].start : c.runs[-1].end], c.runs[0].start, c.runs[-1].end)
        for c in evidence_chunks([text], budget, count, None if starts is None else [starts])
    ]


@dataclass(frozen=True)
class Best:
    """A sentence's best chunk and its probability of support."""

    chunk: int
    p: float


def best_chunk(row: Sequence[float]) -> Best:
    """Max over chunks: the chunk that supports the sentence most."""
    index = max(range(len(row)), key=row.__getitem__)
    return Best(index, row[index])


def grounded_p(rows: Sequence[Sequence[float]]) -> float:
    """Min over sentences of max over chunks: the output is as grounded as its worst sentence."""
    return min(best_chunk(row).p for row in rows)
