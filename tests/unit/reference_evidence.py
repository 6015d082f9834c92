"""The block ranking of :mod:`guard.prepare.evidence` as it was before (commit 06efd61): the
reference the equivalence tests compare the module against."""

from __future__ import annotations

from collections.abc import Sequence

from guard.prepare.evidence import _Block, _fill
from guard.prepare.excerpt import words


def _rank(blocks: Sequence[_Block], query: str) -> list[int]:
    wanted = words(query)

    def key(i: int) -> tuple[bool, int, int]:
        block = blocks[i]
        return (block.passage_label is not None, len(wanted & block.content_words), -i)

    return sorted(range(len(blocks)), key=key, reverse=True)


def fit_blocks(blocks: Sequence[_Block], limit: int, query: str) -> list[_Block]:
    sep = 2
    if sum(len(b.text) for b in blocks) + sep * max(0, len(blocks) - 1) <= limit:
        return list(blocks)
    chosen: dict[int, _Block] = {}
    order = _rank(blocks, query)
    evidence = [i for i in order if blocks[i].passage_label is not None]
    other = [i for i in order if blocks[i].passage_label is None]
    used = _fill(blocks, evidence, chosen, 0, limit, query)
    _fill(blocks, other, chosen, used, limit, query)
    return [chosen[i] for i in sorted(chosen)]
