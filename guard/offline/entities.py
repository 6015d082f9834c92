"""Names and quoted strings: the parts of a claim that must appear in the evidence as written.

A name is a run of capitalised words (with "of", "de", "the" ... inside it, as in "Bank of
America"); a capitalised word that opens a sentence counts only when the next word is
capitalised too, since any sentence opens with a capital. A quoted string is text inside double
quotes, curly quotes, or single quotes that are not apostrophes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from guard.offline.lexicon import MONTHS, WEEKDAYS
from guard.offline.text import STOPWORDS, content_stems, normalize

_CAPITALISED = re.compile(r"[A-ZÀ-ÖØ-Þ][\w'’.&-]*")
_NAME_JOINERS = frozenset(
    {
        "of",
        "de",
        "del",
        "der",
        "van",
        "von",
        "da",
        "di",
        "la",
        "le",
        "du",
        "the",
        "and",
        "for",
        "&",
        "bin",
        "al",
    }
)
_TOKEN = re.compile(r"[\w'’.&-]+|[^\w\s]")
_QUOTED = re.compile(
    r"\"([^\"]{2,200})\"|“([^”]{2,200})”|(?<![\w'’])['‘]([^'’]{2,200})['’](?![\w])"
)
_INITIALS = re.compile(r"(?:\b[A-Z]\.)+$")
_NOT_NAMES = (
    frozenset(
        {
            "am",
            "pm",
            "i",
            "i'm",
            "i've",
            "i'd",
            "i'll",
            "ok",
            "okay",
            "yes",
            "no",
            "mr",
            "mrs",
            "ms",
            "dr",
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
            "sunday",
            "celsius",
            "fahrenheit",
        }
    )
    | frozenset(MONTHS)
    | frozenset(WEEKDAYS)
)


NAMES_CACHE_SIZE = 64  # texts whose names are remembered (small: claims of recent windows)
_OPENERS = frozenset({".", "!", "?", ":", '"', "“", "(", "-", "•", "*", "–", "—", ";", "|"})


@dataclass(frozen=True)
class Name:
    """A proper noun as written, and the stems of its capitalised words."""

    text: str
    parts: tuple[str, ...]
    guessed: bool = False  # "Take 2", "Finally,": maybe no name, so never proof of absence

    @property
    def labelled(self) -> bool:
        """Whether a number or letter tells it from its siblings ("Reviewer 1", "Model A")."""
        return any(_LABEL.fullmatch(w) for w in self.text.split()[1:])

    def named_in(self, text: str, line: str | None = None) -> bool:
        """Whether ``text`` names it with its label ("reviewer 1", not "reviewer 2"): its
        words in order, apart only by non-word characters. ``line`` is ``word_line(text)``
        when the caller has it already."""
        wanted = self.line
        if wanted is not None:
            if wanted in (word_line(text) if line is None else line):
                return True
            return self._titled_in(text)
        return _named_pattern(self.text.lower()).search(text.lower()) is not None

    def _titled_in(self, text: str) -> bool:
        """ "Dr Osei" in "Dr Amara Osei", "Professor Hale" in "Professor J. Hale": a title
        and a surname with given names or initials between them."""
        words = self.text.lower().split()
        if len(words) != 2 or words[0].rstrip(".") not in _TITLES:
            return False
        title, surname = (re.escape(w) for w in words)
        pattern = rf"\b{title}\W+(?:[a-z]+\.?\s+){{1,2}}{surname}\b"
        return re.search(pattern, text.lower()) is not None

    @property
    def line(self) -> str | None:
        """Its :func:`word_line` when it is made of word characters only ("Dr Hughes", not
        "O'Brien"), for a plain substring search."""
        parts = self.text.lower().split()
        if parts and all(_WORDS.fullmatch(p) for p in parts):
            return f" {' '.join(parts)} "
        return None


_WORDS = re.compile(r"\w+")
_TITLES = frozenset({"dr", "prof", "professor", "mr", "mrs", "ms", "miss", "sir", "judge"})


def word_line(text: str) -> str:
    """The words of ``text`` in lower case, one space apart and around: " dr hughes said "."""
    return f" {' '.join(_WORDS.findall(text.lower()))} "


def first_word(text: str) -> str | None:
    """The lower-case word ``text`` opens with, when it opens with a word character."""
    match = _WORDS.match(text.lower())
    return match.group() if match else None


@lru_cache(maxsize=256)
def _named_pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"\b" + r"\W+".join(re.escape(w) for w in name.split()) + r"\b")


def names(text: str, *, whole_answer: bool = False) -> list[Name]:
    """The names in one sentence or clause of text. In a ``whole_answer`` (a bare short
    answer such as "Mumbai") an opening capitalised word is a name too."""
    return list(_names(text, whole_answer))


@lru_cache(maxsize=NAMES_CACHE_SIZE)
def _names(text: str, whole_answer: bool) -> tuple[Name, ...]:
    """:func:`names`, read once per text (the windows of one message repeat their claims)."""
    tokens = _TOKEN.findall(text)
    found: list[Name] = []
    run: list[str] = []
    guessed = False  # the run opens a sentence only because a label follows ("Take 2")
    for index, token in enumerate(tokens):
        joins = bool(run) and token.lower() in _NAME_JOINERS
        opening = whole_answer and index == 0 and token.lower() not in STOPWORDS
        regular = (
            (opening and bool(_CAPITALISED.fullmatch(token)))
            or _is_name_word(tokens, index)
            or (joins and _is_name_word(tokens, index + 1))
        )
        if regular or _numbered(tokens, index, run):
            guessed = guessed or (not run and not regular)
            run.append(token)
        else:
            _close(run, found, guessed)
            run, guessed = [], False
    _close(run, found, guessed)
    return tuple(found)


_LABEL = re.compile(r"\d{1,4}|[A-Z]")  # "Reviewer 1", "Model A", "Terminal 2"


def _numbered(tokens: list[str], index: int, run: list[str]) -> bool:
    """A capitalised word with a number or letter after it is a name ("Reviewer 1" even
    opening a sentence; the number or letter belongs to it), and so may be one opening a
    sentence before a comma ("Marco, your account manager, ...")."""
    token = tokens[index]
    if run and _LABEL.fullmatch(token) and len(run) <= 3:
        return True
    following = tokens[index + 1] if index + 1 < len(tokens) else ""
    opens = index == 0 or tokens[index - 1] in _OPENERS
    return (
        not run
        and bool(_CAPITALISED.fullmatch(token))
        and token.lower() not in STOPWORDS
        and token.lower().rstrip(".") not in _NOT_NAMES
        and (bool(_LABEL.fullmatch(following)) or (opens and following == ","))
    )


def _is_name_word(tokens: list[str], index: int) -> bool:
    if index >= len(tokens) or not _CAPITALISED.fullmatch(tokens[index]):
        return False
    word = tokens[index]
    bare = word.lower().rstrip(".")
    if bare in _NOT_NAMES or bare.rstrip("s") in _NOT_NAMES or bare.replace(".", "") in _NOT_NAMES:
        return False
    opens_sentence = index == 0 or tokens[index - 1] in _OPENERS
    if not opens_sentence:
        return word.lower() not in STOPWORDS or (word.isupper() and len(word) > 1)
    following = tokens[index + 1] if index + 1 < len(tokens) else ""
    return (
        word.lower() not in STOPWORDS
        and bool(_CAPITALISED.fullmatch(following))
        and following.lower() not in STOPWORDS
        and not _LABEL.fullmatch(following)  # "Size L ...", "Gate B ...": a guessed label
    )


def _close(run: list[str], found: list[Name], guessed: bool = False) -> None:
    while run and run[-1].lower() in _NAME_JOINERS:
        run.pop()
    if not run:
        return
    parts = tuple(part for w in run if w.lower() not in _NAME_JOINERS for part in content_stems(w))
    text = " ".join(run)
    if not _INITIALS.search(text):
        text = text.rstrip(".")
    found.append(Name(text, parts, guessed))


def quoted(text: str) -> list[str]:
    """The strings quoted in ``text``, without their quotes."""
    return [next(g for g in m.groups() if g).strip() for m in _QUOTED.finditer(text)]


def quote_in(quote: str, evidence_normalized: str) -> bool:
    """Whether a quoted string occurs in the (normalised) evidence, ignoring edge punctuation."""
    return normalize(quote).strip(" .,;:!?") in evidence_normalized


MAX_ABBREVIATION = 10  # letters of a name that may abbreviate a longer one


def abbreviates(short: str, name: str) -> bool:
    """Whether ``short`` is an abbreviation or acronym of the multi-word ``name``: it splits
    into one non-empty prefix of each word, in order ("Amex" / "American Express", "IBM" /
    "International Business Machines")."""
    letters = short.lower().replace(".", "")
    words = [w.lower() for w in name.split() if w.lower() not in _NAME_JOINERS]
    if len(words) < 2 or not letters.isalpha() or len(letters) > MAX_ABBREVIATION:
        return False
    return _splits(letters, tuple(words))


MAX_INITIALS = 6  # letters of an acronym looked for as the initials of evidence words


def initials_in(short: str, evidence_normalized: str) -> bool:
    """Whether the (normalised) evidence spells out the acronym ``short`` as consecutive
    words, "of", "and" or "for" allowed between them ("CFO" / "chief financial officer",
    "VP" / "vice president", "DPO" / "data protection officer")."""
    letters = short.lower().replace(".", "").removesuffix("s")
    if not 2 <= len(letters) <= MAX_INITIALS or not letters.isalpha():
        return False
    return _initials_pattern(letters).search(evidence_normalized) is not None


@lru_cache(maxsize=256)
def _initials_pattern(letters: str) -> re.Pattern[str]:
    gap = r"[\s-]+(?:(?:of|and|for|&)\s+)?"
    return re.compile(r"\b" + gap.join(re.escape(ch) + r"[a-z]*" for ch in letters) + r"\b")


def _splits(letters: str, words: tuple[str, ...]) -> bool:
    if not words:
        return not letters
    head, rest = words[0], words[1:]
    for cut in range(1, min(len(head), len(letters) - len(rest)) + 1):
        if head.startswith(letters[:cut]) and _splits(letters[cut:], rest):
            return True
    return False
