# Types of groundguard_native (src/lib.rs), for mypy and editors.

class Words:
    """The words, searched together by the aho-corasick crate's DFA."""

    def __init__(self, words: list[str]) -> None: ...
    def find(self, text: str) -> list[tuple[int, int]]:
        """``(word index, start)`` of every occurrence, overlapping ones too, the start in
        characters; raises UnicodeEncodeError on a text with a lone surrogate."""
    def __len__(self) -> int: ...
