"""Names a claim writes that the evidence never writes, though it has their words.

The name check (:mod:`guard.offline.details`) fails a name whose words the evidence lacks.
A name assembled from words the evidence has elsewhere ("Rainbow Terrace Estate" where the
evidence says "Rainbow Terrace, now known as Lullwater Estate"; "The Singer and the Producer"
where it names "The Producers"; "Assyrians" where it says "Assyriology") passes that check,
yet names nothing the evidence names. Here a name is *written* when its words occur in the
evidence in its order, as whole words (a plural or possessive "s" aside, accents folded),
apart only by other capitalised words or name joiners ("Carl Orff" in "Carl Heinrich Maria
Orff", "Bank America" in "Bank of America"). Two bases:

- ``short_name_unwritten``: a short answer that is a name, written nowhere;
- ``name_unwritten``: a claim's name of two or more words, written nowhere.

Left alone: a name the question writes (the user's spelling, which the evidence may write
otherwise); a single word in a longer claim (demonyms and adjectives: "British" for
"Britain"); a known abbreviation or nickname; a name one evidence name abbreviates; a
negated name ("not Dennis Marks"); evidence in another language (names translate).
"""

from __future__ import annotations

import re
from functools import lru_cache

from guard.offline import entities
from guard.offline.align import EvidenceIndex, related
from guard.offline.details import COMMON_ABBREVIATIONS, denied, short
from guard.offline.lexicon import NICKNAMES, foreign_words
from guard.offline.text import STOPWORDS, fold, stem

_JOINERS = r"(?:of|the|de|del|der|van|von|da|di|la|le|du|and|for|&|bin|al)"
# what may stand between two words of one name: capitalised words, initials, joiners
_GAP = rf"(?:[\W_]+(?:[A-Z][\w'’.-]*|{_JOINERS}))" + r"{0,3}[\W_]+"
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s?$")
MIN_LETTERS = 3  # a one-word name shorter than this is an initial or a code
_NICKNAME_STEMS = frozenset(stem(n) for group in NICKNAMES for n in group)


def unwritten(
    names: list[entities.Name],
    text: str,
    index: EvidenceIndex,
    question: str,
    *,
    short_answer: bool,
) -> tuple[str, str] | None:
    """The basis and reason of the first name of ``text`` the evidence never writes; or
    None. ``names`` are the claim's names; ``question`` the user's question (may be "")."""
    if index.foreign() or foreign_words(text):
        return None
    evidence = _evidence(index)
    for name in _checked(names, text, short_answer):
        if (
            _written(name.text, evidence)
            or _written(name.text, fold(question))
            or index.writes(name.text)
        ):
            continue
        if _known(name, index):
            continue
        basis = "short_name_unwritten" if short_answer else "name_unwritten"
        return basis, (
            f"the name '{name.text}' is written nowhere in the evidence (its words are there, "
            f"not as this name{_nearest(name, index)})"
        )
    return None


def _checked(names: list[entities.Name], text: str, short_answer: bool) -> list[entities.Name]:
    """The names to look for: several words each, or any one in a short answer; never a
    guessed, negated or abbreviated one."""
    kept = []
    whole = _TITLE.sub("", text.strip(" .!?\"'“”")) if short_answer else ""
    if whole and _titled(whole):
        kept.append(entities.Name(whole, tuple(stem(w.lower()) for w in _words(whole))))
    for name in (piece for whole_name in names for piece in _pieces(whole_name)):
        words = _words(name.text)
        if name.guessed or name.text in COMMON_ABBREVIATIONS or denied(name, text):
            continue
        plain = [w for w in words if w.lower() not in STOPWORDS and not _code(w)]
        if len(plain) >= 2 or (short_answer and plain and len(plain[0]) >= MIN_LETTERS):
            kept.append(name)
    return kept


_AND = re.compile(r"\s+(?:and|&)\s+")


def _pieces(name: entities.Name) -> list[entities.Name]:
    """A run of names joined by "and" ("Go and Java", "Harper & Cole") as its pieces: the
    evidence may list them apart."""
    texts = _AND.split(name.text)
    if len(texts) == 1:
        return [name]
    return [entities.Name(t, tuple(stem(w.lower()) for w in _words(t))) for t in texts]


_TITLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def _titled(text: str) -> bool:
    """Whether every word of ``text`` but its joiners is capitalised, two words at least
    ("The Singer and the Producer")."""
    words = _WORD.findall(text)
    content = [w for w in words if w.lower() not in STOPWORDS]
    return len(content) >= 2 and all(w[:1].isupper() or w.lower() in STOPWORDS for w in words)


def _code(word: str) -> bool:
    """An acronym or code ("UK", "SSO", "578", "U2"): written with other separators or
    spelled out elsewhere, read by the other checks."""
    return word.isupper() or any(ch.isdigit() for ch in word)


def _known(name: entities.Name, index: EvidenceIndex) -> bool:
    """A nickname, an abbreviation of an evidence name, an all-capitals code or a word
    with no letters the evidence could write otherwise."""
    words = _words(name.text)
    if len(words) == 1 and (words[0].isupper() or any(ch.isdigit() for ch in words[0])):
        return True  # "NHS", "U2": codes and acronyms, read by the other checks
    if len(words) == 1 and stem(words[0].lower()) in _NICKNAME_STEMS:
        return True
    return any(entities.abbreviates(name.text, other.text) for other in index.names())


def _nearest(name: entities.Name, index: EvidenceIndex) -> str:
    parts = set(name.parts)
    for other in index.names():
        if parts & set(other.parts) or any(related(p, o) for p in parts for o in other.parts):
            return f"; the evidence names '{short(other.text, 60)}'"
    return ""


def _words(text: str) -> list[str]:
    """The words of a name as it writes them, without the article it opens with."""
    found = [_POSSESSIVE.sub("", w) for w in _WORD.findall(fold(text))]
    while found and found[0].lower() in ("the", "a", "an"):
        found.pop(0)
    return [w for w in found if w]


def _evidence(index: EvidenceIndex) -> str:
    """The evidence as written, with its passages' headers (a source names its author)."""
    texts = list(index.texts.values()) or [s.text for s in index.sentences]
    return fold(" ".join(texts))


def _written(name: str, text: str) -> bool:
    words = _words(name)
    return bool(words) and _pattern(tuple(words)).search(text) is not None


@lru_cache(maxsize=256)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    parts = [rf"(?i:{re.escape(w)}(?:e?s|['’]s?|ern|ese|ish|i?an|n|i)?)" for w in words]
    return re.compile(r"\b" + _GAP.join(parts) + r"\b")
