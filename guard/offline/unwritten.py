"""Names a short answer writes that the evidence never writes, though it has their words.

The name check (:mod:`guard.offline.details`) fails a name whose words the evidence lacks.
A short answer built from words the evidence has elsewhere ("The Singer and the Producer"
where the evidence names "The Producers"; "The Best of U2 album" where it speaks of U2's
best-known cover; "Assyrians" where it says "Assyriology") passes that check, yet names
nothing the evidence names. A short answer is all answer: the name it gives is what it
claims. Here a name is *written* when its words occur in the evidence (or the question) in
its order, as whole words, apart only by other capitalised words or name joiners ("Carl Orff"
in "Carl Heinrich Maria Orff"), each word as written or in a form the project already reads
as the same: a plural, possessive or adjective ending ("Midwestern"), accents folded, British
or American spelling ("Centre"), a shortening with a dot ("Corp."), a known abbreviation or
nickname ("Bill" / "William"), a legal form left out ("GmbH"), other separators
("berlin_mitte"). Two bases:

- ``short_name_unwritten``: a short answer that is a name (or a title: every word
  capitalised), written nowhere;
- ``name_unwritten``: a short answer that contains a name written nowhere.

Left alone: a name in a longer claim (a name assembled from two evidence names there is
:mod:`guard.offline.chimeras`' ``name_assembled``; one restated with common words may be a
paraphrase); a name the question writes (the user's spelling); codes and acronyms ("ICE
578", "UK PO"); a name one evidence name abbreviates; names joined by "and", read apart; a
negated name; evidence or an answer in another language (names translate).
"""

from __future__ import annotations

import re
from functools import lru_cache

from guard.offline import entities
from guard.offline.align import EvidenceIndex, related
from guard.offline.details import COMMON_ABBREVIATIONS, denied, short
from guard.offline.lexicon import ABBREVIATIONS, NAME_DECORATIONS, NICKNAMES, foreign_words
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
    if not short_answer or index.foreign() or foreign_words(text):
        return None  # a name in a longer claim is guarded.offline.chimeras' business
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
        whole = _TITLE.sub("", text.strip(" .!?\"'“”")) == name.text
        basis = "short_name_unwritten" if whole else "name_unwritten"
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
        if plain and len(max(plain, key=len)) >= MIN_LETTERS:
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


def written(name: str, index: EvidenceIndex) -> bool:
    """Whether the evidence writes ``name``: its words in order, apart only by capitalised
    words, name joiners or punctuation (see the module's docstring for the forms read)."""
    return _written(name, _evidence(index))


def _written(name: str, text: str) -> bool:
    """Whether ``text`` writes the name (its legal form, "GmbH", "Ltd", may go unwritten)."""
    words = [w for w in _words(name) if w.lower() not in NAME_DECORATIONS] or _words(name)
    return bool(words) and _pattern(tuple(words)).search(text) is not None


@lru_cache(maxsize=256)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    parts = [rf"(?i:{'|'.join(_forms(w))})" for w in words]
    return re.compile(r"\b" + _GAP.join(parts) + r"(?![^\W_])")


_SUFFIXES = r"(?:e?s|['’]s?|ern|ese|ish|i?an|n|i)?"
# British and American endings: "Centre" / "center", "Colour" / "color", "-ise" / "-ize"
_SPELLINGS = (
    ("re", "er"),
    ("er", "re"),
    ("our", "or"),
    ("or", "our"),
    ("ise", "ize"),
    ("ize", "ise"),
)
MIN_ABBREVIATED = 3  # letters of a word kept by an abbreviation with a dot ("Corp.")


def _forms(word: str) -> list[str]:
    """How the evidence may write one word of a name: as it is (a plural, possessive or
    adjective ending aside), shortened with a dot ("Corp." for "Corporation", "Prof."), a
    known abbreviation of it or what it abbreviates ("Corporation" for "Corp")."""
    lower = word.lower()
    forms = [re.escape(word) + _SUFFIXES]
    if len(word) > MIN_ABBREVIATED:
        forms.append(re.escape(word[:MIN_ABBREVIATED]) + r"[a-z]*\.")
        forms.append(re.escape(word) + r"[a-z]+")  # the claim shortened it: "Corp" / "Corporation"
    for a, b in _SPELLINGS:
        if lower.endswith(a):
            forms.append(re.escape(word[: -len(a)]) + b + _SUFFIXES)
    for group in NICKNAMES:
        if lower in group:
            forms.extend(re.escape(other) for other in group if other != lower)
    for short_, expansions in ABBREVIATIONS.items():
        if lower in expansions:
            forms.append(re.escape(short_) + r"\.?")
        if lower == short_:
            forms.extend(re.escape(e) for e in expansions)
    return forms
