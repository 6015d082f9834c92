"""Every occurrence of any of a list of words in a text, in one pass: the injection scan's word
search (:mod:`guard.prepare.injection`).

Two engines give the same pairs ``(word index, start)``, overlapping occurrences too, the
start in characters:

* ``groundguard_native`` (``native/``: the Rust ``aho-corasick`` crate's DFA, about 1 ns a
  character), when it is installed (``scripts/bootstrap`` builds it where a Rust toolchain
  is present). It holds the GIL for the whole call: a search that released it on every call
  (``ahocorasick-rs``) waited for it again behind any busy thread, and the service's p99
  outside the judge call went from ~45 to ~130 ms (docs/performance.md).
* pyahocorasick's trie (C, about 18 ns a character) otherwise, and for a text the DFA cannot
  read (one holding a lone surrogate, which has no UTF-8).

:data:`NATIVE` says which one searches; the tests compare the two on any text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import ahocorasick


class _Engine(Protocol):
    def find(self, text: str) -> list[tuple[int, int]]: ...


def _native_engine() -> Callable[[list[str]], _Engine] | None:
    try:
        from groundguard_native import Words  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # not built here (no Rust toolchain): the trie searches
        return None
    engine: Callable[[list[str]], _Engine] = Words
    return engine


_NATIVE = _native_engine()
NATIVE = _NATIVE is not None  # whether groundguard_native searches (else pyahocorasick)
ENGINE = "native" if NATIVE else "pyahocorasick"  # the start logs name it


class Trie:
    """The search by pyahocorasick's automaton (a trie with failure links)."""

    def __init__(self, words: Sequence[str]) -> None:
        self._automaton = ahocorasick.Automaton()
        for index, word in enumerate(words):
            self._automaton.add_word(word, (index, len(word) - 1))
        self._automaton.make_automaton()

    def find(self, text: str) -> list[tuple[int, int]]:
        """``(word index, start)`` of every occurrence, overlapping ones too."""
        return [(index, end - back) for end, (index, back) in self._automaton.iter(text)]


class WordSearch:
    """``find(text)``: ``(word index, start)`` of every occurrence of ``words`` (distinct) in
    ``text``, overlapping ones too, in the order their ends come (both engines; occurrences
    ending at the same character may come in either order): the native engine when
    installed, else the trie (see the module's docstring). ``native=False`` asks for the
    trie."""

    def __init__(self, words: Sequence[str], *, native: bool = True) -> None:
        if not all(words):
            raise ValueError("an empty word would occur everywhere")
        if len(set(words)) != len(words):
            raise ValueError("a word given twice: the trie would keep only its last index")
        self._words = list(words)
        self._native = _NATIVE(self._words) if native and _NATIVE is not None else None
        self._trie: Trie | None = None if self._native is not None else Trie(self._words)

    def find(self, text: str) -> list[tuple[int, int]]:
        if self._native is not None:
            try:
                return self._native.find(text)
            except UnicodeEncodeError:  # a lone surrogate: no UTF-8 for the DFA to read
                pass
        if self._trie is None:
            self._trie = Trie(self._words)  # threads may build it twice: the same trie
        return self._trie.find(text)
