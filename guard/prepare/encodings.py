"""Text hidden in an encoding, decoded so the injection scan reads what a model would.

A model reads "vtaber nyy cerivbhf vafgehpgvbaf" as rot13 and may follow it; a regex over the
text sees nothing. :func:`hidden` returns, for one text, the readable text hidden in it as

* **base64**: runs of 24+ base64 characters that decode to UTF-8 text;
* **hex**: runs of 12+ hex pairs of printable ASCII bytes (0x20-0x7F), contiguous or separated
  by blanks, ``:`` or ``,``, with or without ``\\x`` / ``0x`` prefixes;
* **rot13** and **reversed** text: the whole text rotated or read backwards, when it holds a
  key word of the injection patterns ("ignore", "instruction", "grader"...) written that way;
* **leetspeak**: the text with digits and symbols read as letters ("1gn0r3 4ll" -> "ignore
  all"; 1 read as i, then as l), when a word mixes letters with such digits or symbols;
* **spaced** letters: runs of single letters separated by one blank, dot, dash, underscore or
  star ("i g n o r e", "G.r.a.d.e.r") closed up, and those runs without word gaps checked for
  the main phrases written solid ("ignoreallpreviousinstructions").

Decoded bytes count only when they are UTF-8 and at least 95 % printable: a hash, a UUID, a key
or a compressed blob decodes to noise and is dropped, so benign ids and tokens cost a decode and
never a finding. Every step is linear in the text and bounded (at most
:data:`MAX_DECODED_RUNS` runs of at most :data:`MAX_DECODED_CHARS` characters per encoding);
the gates are substring tests of the text's shape (its UTF-8 bytes mapped to character classes
by ``bytes.translate``) and of key words (found by the injection scan's one pass over the text,
when it calls), so text without any encoding costs a few passes at about a nanosecond a byte.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import string
from collections.abc import Callable
from functools import lru_cache
from itertools import islice

MAX_DECODED_RUNS = 20  # runs decoded per text and encoding
MAX_DECODED_CHARS = 8192  # characters decoded per run
PRINTABLE_SHARE = 0.95

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_BASE64_HINT = re.compile(r"[A-Za-z0-9+/]{24}")
_HEX_PREFIX = re.compile(r"\\x|0x", re.IGNORECASE)
# hex of printable ASCII: every byte's first digit is 2 to 7, so a run starts at such a digit
# (the regex engine skips to one) and a hash or UUID (random digits) is almost never one
_HEX_RUN = re.compile(r"[2-7][0-9a-fA-F](?:[ :,]?[2-7][0-9a-fA-F]){11,}")
_HEX_SEPARATORS = re.compile(r"[ :,]")

# key words of the injection patterns, as an encoding writes them (5+ letters: short ones
# occur by chance in ordinary words)
_KEY_WORDS = (
    "ignore",
    "disregard",
    "instruction",
    "previous",
    "judge",
    "grader",
    "evaluator",
    "score",
    "verdict",
    "grounded",
    "system",
)
_ROT13 = bytes.maketrans(
    (string.ascii_lowercase + string.ascii_uppercase).encode(),
    (
        string.ascii_lowercase[13:]
        + string.ascii_lowercase[:13]
        + string.ascii_uppercase[13:]
        + string.ascii_uppercase[:13]
    ).encode(),
)
ROT13_KEY_WORDS = tuple(codecs.encode(word, "rot13") for word in _KEY_WORDS)
REVERSED_KEY_WORDS = tuple(word[::-1] for word in _KEY_WORDS)

# leetspeak: a letter next to a digit or symbol read as a letter ("!" only before a letter:
# after one it ends a sentence)
_LEET_HINT = re.compile(r"[0134579@$|!](?:(?<=[A-Za-z][0134579@$|])|(?=[A-Za-z]))")
_LEET_AS_I = bytes.maketrans(b"0134579@$!|", b"oieastgasil")
_LEET_AS_L = bytes.maketrans(b"0134579@$!|", b"oleastgasii")


def ascii_translate(text: str, table: bytes) -> str:
    """``text`` with its ASCII characters mapped by the ``bytes.translate`` ``table`` (which
    maps ASCII bytes to ASCII bytes), its other characters unchanged: the table applied to the
    UTF-8 bytes, where every byte of a non-ASCII character is 0x80 or more and stays. About a
    byte a nanosecond, where ``str.translate`` looks each character of a non-ASCII text up in
    its dict (about 60 ns each)."""
    return text.encode("utf-8", "surrogatepass").translate(table).decode("utf-8", "surrogatepass")


# spaced-out letters: single letters joined by one separator ("i g n o r e", "G.r.a.d.e.r")
_SPACED_RUN = re.compile(r"\w(?<!\w\w)(?:[ .\-_*]\w(?!\w)){2,}")
# three single letters in a row after a separator: the regex engine skips to separators
_SPACED_HINT = re.compile(r"[ .\-_*]\w[ .\-_*]\w[ .\-_*]\w(?!\w)")
SOLID_MIN_LETTERS = 12  # a closed-up run this long is also read as words written solid
_SOLID = (
    (
        "override_instructions",
        re.compile(
            r"(?:ignore|disregard|forget|override|bypass)(?:all|any)?(?:of)?"
            r"(?:the|your|my|these|those)?(?:previous|prior|above|earlier|preceding|original"
            r"|system)?(?:instructions?|prompts?|rules|directions|guidelines|directives)"
            r"|youarenow(?:an?|the)?[a-z]{0,20}(?:judge|evaluator|grader)",
            re.IGNORECASE,
        ),
    ),
    (
        "score_request",
        re.compile(
            r"(?:rate|score|grade|mark)(?:this|it)(?:answer|response|output)?(?:as|an?)?"
            r"(?:[0-9]+|perfect|grounded|faithful|pass)"
            r"|(?:respond|reply|answer|output)(?:only)?with(?:a|the)?(?:score|rating|grade)"
            r"(?:of)?[0-9]",
            re.IGNORECASE,
        ),
    ),
)


# Shape prefilters: ``bytes.translate`` maps every byte of the text's UTF-8 to its class (about
# 1 ns a byte, a tenth of a regex pass that tries a match at each letter), and a substring test
# of the shapes tells whether a decoder's run can occur at all. A text that passes is searched
# by the decoder's regex as before, so the prefilters change no result. The decoders' classes
# are ASCII: a non-ASCII character becomes bytes of 0x80 or more, in no class, so it breaks a
# run in the shape as it does in the text. The spaced-out letters' ``\w`` holds non-ASCII
# letters too, each 2 to 4 bytes of the shape.
def _shape_table(*classes: tuple[str, str]) -> bytes:
    """A ``bytes.translate`` table: each byte of a class's characters to its mark, any other
    byte to ``.``."""
    table = bytearray(b"." * 256)
    for members, mark in classes:
        for char in members:
            table[ord(char)] = ord(mark)
    return bytes(table)


_ALNUM = string.ascii_letters + string.digits
_BASE64_SHAPE = _shape_table((_ALNUM + "+/", "b"))
_BASE64_HINT_SHAPE = b"b" * 24  # what _BASE64_HINT matches
_HEX_SHAPE = _shape_table((string.hexdigits + " :,", "h"))
_HEX_RUN_SHAPE = b"h" * 24  # a _HEX_RUN match is at least 24 such characters
_LEET_SHAPE = _shape_table((string.ascii_letters, "a"), ("0134579@$|", "d"), ("!", "e"))
# _LEET_HINT matches where the shape holds "ad", "da" or "ea"
# "_" is a separator and a word character: a text holding one is not prefiltered
_SPACED_SHAPE = _shape_table((_ALNUM, "w"), (" .-*", "s"))
_SPACED_HINT_SHAPE = b"swswsw"  # _SPACED_HINT without its (?!\w), in an ASCII text
# the same in any text: a \w that is not ASCII is 2 to 4 bytes, each "." (and the last letter
# is followed by no ASCII one)
_SPACED_HINT_BYTES = re.compile(rb"s(?:w|\.{2,4})s(?:w|\.{2,4})s(?:w|\.{2,4})(?!w)")


@lru_cache(maxsize=8)
def utf8(text: str) -> bytes:
    """``text`` as UTF-8 (lone surrogates kept), encoded once for the gates that read it one
    after the other (a string's hash is computed once and kept, so the lookup is cheap)."""
    return text.encode("utf-8", "surrogatepass")


def _shape(text: str, table: bytes) -> bytes:
    """The shape of ``text``'s UTF-8 under ``table``."""
    return utf8(text).translate(table)


def readable(raw: bytes) -> str | None:
    """``raw`` as text when it is UTF-8 and nearly all printable (not the noise of a hash)."""
    try:
        plain = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch.isspace() for ch in plain)
    return plain if plain and printable >= PRINTABLE_SHARE * len(plain) else None


def _base64(text: str) -> list[str]:
    if _BASE64_HINT_SHAPE not in _shape(text, _BASE64_SHAPE):  # no _BASE64_HINT
        return []
    found: list[str] = []
    for match in islice(_BASE64_RUN.finditer(text), MAX_DECODED_RUNS):
        run = match.group()[:MAX_DECODED_CHARS]
        try:
            raw = base64.b64decode(run[: len(run) - len(run) % 4], validate=True)
        except binascii.Error:
            continue
        plain = readable(raw)
        if plain:
            found.append(plain)
    return found


def _hex(text: str) -> list[str]:
    if "\\x" in text or "0x" in text or "0X" in text:
        text = _HEX_PREFIX.sub("", text)
    if _HEX_RUN_SHAPE not in _shape(text, _HEX_SHAPE):
        return []
    found: list[str] = []
    for match in islice(_HEX_RUN.finditer(text), MAX_DECODED_RUNS):
        digits = _HEX_SEPARATORS.sub("", match.group())[:MAX_DECODED_CHARS]
        plain = readable(bytes.fromhex(digits[: len(digits) - len(digits) % 2]))
        if plain:
            found.append(plain)
    return found


def _may_be_spaced(text: str) -> bool:
    """Whether :data:`_SPACED_HINT` may match ``text``, as its shape tells ("_" is a separator
    and a word character: a text holding one is not prefiltered)."""
    if "_" in text:
        return True
    shape = _shape(text, _SPACED_SHAPE)
    if text.isascii():
        return _SPACED_HINT_SHAPE in shape
    return _SPACED_HINT_BYTES.search(shape) is not None


def _spaced(text: str) -> tuple[str, list[str]]:
    """``text`` with its runs of spaced-out letters closed up ("" when it has none), and the
    closed-up runs long enough to be words written solid."""
    runs: list[str] = []

    def close_up(match: re.Match[str]) -> str:
        letters = match.group()[::2]
        if len(runs) < MAX_DECODED_RUNS and len(letters) >= SOLID_MIN_LETTERS:
            runs.append(letters[:MAX_DECODED_CHARS])
        return letters

    if not _may_be_spaced(text) or _SPACED_HINT.search(text) is None:
        return "", []
    closed, count = _SPACED_RUN.subn(close_up, text)
    return (closed if count else ""), runs


def solid_phrases(runs: list[str]) -> list[tuple[str, str]]:
    """``(kind, excerpt)`` of each main injection phrase written solid in closed-up ``runs``."""
    found: list[tuple[str, str]] = []
    for run in runs:
        for kind, pattern in _SOLID:
            match = pattern.search(run)
            if match is not None:
                found.append((kind, match.group()))
    return found


def leetspeak(text: str) -> str:
    """The leetspeak reading of ``text``: every digit and symbol read as the letter it may
    stand for, 1 and | as i, then (a second line) as l."""
    return f"{ascii_translate(text, _LEET_AS_I)}\n{ascii_translate(text, _LEET_AS_L)}"


def _leet_hint(text: str) -> bool:
    """Whether ``text`` holds a letter next to a digit or symbol read as one (_LEET_HINT)."""
    shape = _shape(text, _LEET_SHAPE)
    return b"ad" in shape or b"da" in shape or b"ea" in shape


def hidden(
    text: str,
    key_words: tuple[bool, bool] | None = None,
    leet: Callable[[str], bool] | None = None,
) -> tuple[list[tuple[str, str]], list[str]]:
    """The readable texts hidden in ``text`` as ``(encoding, text)`` pairs, and the closed-up
    runs of spaced-out letters (for :func:`solid_phrases`). ``key_words``: whether one of
    :data:`ROT13_KEY_WORDS` and one of :data:`REVERSED_KEY_WORDS` occur in ``text.lower()``,
    when the caller knows (the injection scan's one pass over the text finds them). ``leet``:
    whether the leetspeak reading of a hinted ``text`` can say more than ``text`` (the
    injection scan's gate, :func:`guard.prepare.injection.leet_may_matter`); None: always."""
    found: list[tuple[str, str]] = [("base64", plain) for plain in _base64(text)]
    found += [("hex", plain) for plain in _hex(text)]
    if key_words is None:
        lowered = text.lower()  # map: no Python frame per word
        rot13 = any(map(lowered.__contains__, ROT13_KEY_WORDS))
        key_words = rot13, any(map(lowered.__contains__, REVERSED_KEY_WORDS))
    if key_words[0]:
        found.append(("rot13", ascii_translate(text, _ROT13)))
    if key_words[1]:
        found.append(("reversed", text[::-1]))
    if _leet_hint(text) and (leet is None or leet(text)):
        found.append(("leetspeak", leetspeak(text)))
    closed, runs = _spaced(text)
    if closed:
        found.append(("spaced", closed))
    return found, runs
