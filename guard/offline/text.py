"""Text primitives shared by the offline checks: sentences with their spans, words, stems."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

from guard.offline.lexicon import EXONYMS
from guard.prepare.sanitize import drop_combining_marks

# A sentence ends at . ! or ? followed by space and a capital, digit, quote or bracket; or at a
# full stop glued to the next sentence ("...century.First for Women"), common in scraped text.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])[\"'”’)\]]?\s+(?=[A-Z0-9\"“'(\[])"
    r"|(?<=[a-z0-9)\]]{2}[.!?])(?=[A-Z][a-z])"
    r"|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)"
)
# Abbreviations whose full stop does not end a sentence.
_ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
        "vs",
        "etc",
        "inc",
        "ltd",
        "co",
        "corp",
        "no",
        "fig",
        "approx",
        "dept",
        "est",
        "e.g",
        "i.e",
        "u.s",
        "u.k",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "mt",
        "ft",
        "gen",
        "col",
        "lt",
    }
)
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿĀ-ſ][^\W_]*(?:['’-][^\W_]+)*|\d+(?:[.,]\d+)*")

STEM_CACHE_SIZE = 65536  # distinct words whose stems are remembered
WORD_CACHE_SIZE = 16384  # distinct words whose content stems are remembered (_word_stems)
TEXT_CACHE_SIZE = 64  # long texts whose words and stems are remembered (checks reread a claim)
CACHED_FROM = 256  # characters: a text this long is a long text
# short texts (claims, their clauses, sentences) whose words and stems are remembered: one
# decision reads ~19 distinct ones ~120 times (the rules of a claim each read it again)
SHORT_CACHE_SIZE = 2048


def word_set(text: str) -> frozenset[str]:
    """The words of a whitespace-separated list."""
    return frozenset(text.split())


STOPWORDS = word_set("""
a an the and or but if then else so than that this these those there here of in on at to for from
by with within without into onto over under about above below between among through during before
after since until upon as is are was were be been being am do does did doing done have has had
having can could may might must shall should will would it its it's itself he him his himself she
her hers herself they them their theirs themselves we us our ours ourselves you your yours i me my
mine who whom whose which what when where why how all any both each either every few more most
other some such own same just also only very too quite rather really much many lot lots not no nor
never none neither n't cannot can't don't doesn't didn't isn't aren't wasn't weren't won't wouldn't
shouldn't couldn't hasn't haven't hadn't one ones yes yeah ok okay well still even ever yet already
again further once like get gets got getting make makes made let lets via per please thank thanks
around approximately roughly nearly almost exactly just some because due although though
while whereas however therefore thus hundred thousand million billion trillion percent
two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty
sixty half dozen am pm a.m p.m uhr
""")

# Nouns and verbs so general that their absence from the evidence says little.
GENERIC = word_set("""
thing things item items stuff people person someone something anything everything way ways kind
kinds type types part parts lot number amount use used using include includes included including
known called named several various certain also come comes came go goes went take takes took
give gives gave put puts keep keeps seem seems become becomes need needs located situated
based made make makes
""")

# Small groups of words that say the same thing; each maps to its group's first word.
_SYNONYM_GROUPS = (
    ("population", "resident", "inhabitant", "people", "populace"),
    ("buy", "purchase", "bought"),
    ("refund", "reimbursement", "repayment"),
    ("start", "begin", "began", "begun", "commence"),
    ("found", "establish", "founded", "established"),
    ("die", "death", "died", "dead"),
    ("born", "birth"),
    ("film", "movie"),
    ("car", "automobile", "vehicle"),
    ("large", "big", "huge"),
    ("small", "little", "tiny"),
    ("begin", "start"),
    ("end", "finish"),
    ("cost", "price", "fee", "charge"),
    ("customer", "client"),
    ("employee", "staff", "worker"),
    ("allow", "permit", "let"),
    ("help", "assist", "support"),
    ("show", "display"),
    ("require", "need"),
    ("receive", "get"),
    ("deliver", "delivery", "arrive", "arrival"),
    ("increase", "rise", "rose", "grow", "grew", "growth", "gain"),
    ("decrease", "fall", "fell", "drop", "decline", "reduce", "reduction"),
    ("previous", "prior", "preceding"),
    ("write", "wrote", "written", "author"),
)
SYNONYMS: dict[str, str] = {}
for _group in (*_SYNONYM_GROUPS, *EXONYMS):
    for _word in _group:
        SYNONYMS.setdefault(_word, _group[0])


@dataclass(frozen=True)
class Span:
    """A piece of a text, with its offsets in that text."""

    text: str
    start: int
    end: int


def split_sentences(text: str) -> list[Span]:
    """Sentences of ``text``, each with its exact offsets, so a quote is a real span."""
    spans: list[Span] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if _ends_with_abbreviation(text, start, match.start()):
            continue
        _append_stripped(spans, text, start, match.start())
        start = match.end()
    _append_stripped(spans, text, start, len(text))
    return spans


def _ends_with_abbreviation(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` ends with an abbreviation and its dot ("Dr.", "e.g.", "J."):
    read backwards from ``end`` over the last word only, so a long run of them ("A. A. A. ...",
    each chunk growing) is read in linear time, not by copying and splitting every chunk."""
    i = end
    while i > start and text[i - 1] in _CLOSERS:
        i -= 1
    if i == start or text[i - 1] != ".":
        return False
    i -= 1
    while i > start and text[i - 1].isspace():
        i -= 1
    word_end = i
    while i > start and not text[i - 1].isspace():
        i -= 1
        if word_end - i > _LONGEST_ABBREVIATION:
            return False  # too long for an abbreviation, and no single letter
    last = text[i:word_end].lower()
    return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())


_CLOSERS = frozenset("\"'”’)] ")
_LONGEST_ABBREVIATION = max(map(len, _ABBREVIATIONS))


def _append_stripped(spans: list[Span], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    left = len(piece) - len(piece.lstrip())
    right = len(piece.rstrip())
    if right > left:
        spans.append(Span(piece[left:right], start + left, start + right))


def words(text: str) -> list[str]:
    """The words and numbers of ``text``, in order, as written."""
    if len(text) < CACHED_FROM:
        return list(_short_words(text))
    return list(_words(text))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _words(text: str) -> tuple[str, ...]:
    """:func:`words` of a long text, read once (the checks of one claim read it again and
    again)."""
    return tuple(_read_words(text))


@lru_cache(maxsize=SHORT_CACHE_SIZE)
def _short_words(text: str) -> tuple[str, ...]:
    """:func:`words` of a short text, remembered (see ``SHORT_CACHE_SIZE``)."""
    return tuple(_read_words(text))


def _read_words(text: str) -> list[str]:
    # a word starts and ends with a letter or a digit (see _WORD): nothing to strip from it
    words: list[str] = _WORD.findall(text)
    return words


@lru_cache(maxsize=STEM_CACHE_SIZE)
def stem(word: str) -> str:
    """A light, rule-based stem: lower case, no possessive, no plural or common inflection."""
    w = word.lower().replace("’", "'")
    if not w.isascii():
        w = fold(w)
    if w.endswith("'s"):
        w = w[:-2]
    w = w.rstrip("'")
    if w in SYNONYMS:
        return SYNONYMS[w]
    w = _strip_suffix(w)
    if w in SYNONYMS:
        return SYNONYMS[w]
    w = _american(w)
    return w[:-1] if len(w) > 4 and w.endswith("e") and w.isalpha() else w


# endings only: "-ise"/"-ize" are left alone, since "organised" and "promised" lose their
# ending before this runs and would part from "organise" and "promise"
_BRITISH = (("tre", "ter"), ("bre", "ber"), ("our", "or"), ("ogue", "og"))
_NOT_BRITISH = frozenset(
    {
        "four",
        "hour",
        "your",
        "tour",
        "pour",
        "sour",
        "flour",
        "devour",
        "detour",
        "contour",
        "troubadour",
        "lettre",
        "genre",
        "acre",
        "massacre",
        "mediocre",
        "ogre",
        "lucre",
        "timbre",
        "sabre",
    }
)


def _american(w: str) -> str:
    """One spelling for British and American forms: centre/center, colour/color,
    catalogue/catalog."""
    if len(w) < 5 or w in _NOT_BRITISH or not w.isalpha():
        return w
    for british, american in _BRITISH:
        if w.endswith(british):
            return w[: -len(british)] + american
    return w


def _strip_suffix(w: str) -> str:
    if len(w) <= 3 or not w.isalpha():
        return w
    for suffix, keep in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ness", ""),
        ("ing", ""),
        ("ed", ""),
        ("es", "e"),
        ("s", ""),
        ("ly", ""),
    ):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            if suffix == "s" and w.endswith(("ss", "us", "is")):
                return w
            if suffix == "es" and not w.endswith(("ses", "xes", "zes", "ches", "shes")):
                return w[:-1]
            return _undoubled(w[: len(w) - len(suffix)] + keep, suffix)
    return w


_DOUBLED = frozenset("bdgmnprt")  # "starring", "planned": "star", "plan" (not "called")
MIN_UNDOUBLED = 3  # letters left after undoubling ("added" stays "add")


def _undoubled(w: str, suffix: str) -> str:
    """The stem of an "-ing" or "-ed" form that doubled its last consonant."""
    if suffix not in ("ing", "ed") or len(w) <= MIN_UNDOUBLED or w[-1] != w[-2]:
        return w
    return w[:-1] if w[-1] in _DOUBLED else w


def is_content(word: str) -> bool:
    """Whether a word carries content (not a stop word, not punctuation, not a bare number)."""
    lower = word.lower().replace("’", "'")
    return lower not in STOPWORDS and not lower[:1].isdigit() and len(lower) > 1


def content_stems(text: str) -> list[str]:
    """The stems of the content words of ``text``, in order, without repeats."""
    if len(text) < CACHED_FROM:
        return list(_short_content_stems(text))
    return list(_content_stems(text))


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _content_stems(text: str) -> tuple[str, ...]:
    """:func:`content_stems` of a long text, read once."""
    return tuple(_read_content_stems(text))


@lru_cache(maxsize=SHORT_CACHE_SIZE)
def _short_content_stems(text: str) -> tuple[str, ...]:
    """:func:`content_stems` of a short text, remembered (see ``SHORT_CACHE_SIZE``)."""
    return tuple(_read_content_stems(text))


def _read_content_stems(text: str) -> list[str]:
    return list(dict.fromkeys(chain.from_iterable(map(_word_stems, words(text)))))


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _word_stems(word: str) -> tuple[str, ...]:
    """The stems of the content parts of one word ("well-known" has two parts), remembered:
    texts repeat their words, and this is the inner loop of reading every sentence."""
    if word[0].isdigit():
        return ()  # a number (its only part): never content (is_content)
    parts = word.split("-") if "-" in word and word[0].isalpha() else [word]
    return tuple(stem(part) for part in parts if is_content(part))


def fold(text: str) -> str:
    """``text`` without accents ("María González" -> "Maria Gonzalez", "Köln" -> "Koln"); "ß"
    becomes "ss". Both sides of every comparison are folded, so an answer that drops the
    accents of the evidence (or adds them) says the same thing."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text.replace("ß", "ss"))
    return drop_combining_marks(decomposed)  # by regex, not a Python call a character


def normalize(text: str) -> str:
    """Lower case, accents folded, quotes unified and runs of space collapsed, for substring
    checks."""
    text = fold(text.lower())
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return " ".join(text.split())  # str.split's blanks are the engine's \s: runs become one


GENERIC_STEMS = frozenset(stem(w) for w in GENERIC)  # GENERIC as content_stems() gives them
