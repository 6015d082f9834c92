"""More encodings a model reads and a regex does not, decoded only where text looks encoded
(issue 29), beside :mod:`guard.prepare.encodings` (base64, hex, rot13, reversed, leetspeak,
spaced letters).

:func:`hidden` returns the readable text hidden in a text as ``(encoding, text)`` pairs:

* **rot-N** (every letter shift): a run of 20+ ASCII letters and blanks whose share of vowels
  is below what any natural Latin-script language has (:data:`VOWEL_SHARE`; a shifted English
  text has at most 30 %, English about 38 %), read under the shift whose words are the most
  often common English words (at least :data:`WORD_HITS` of them);
* **rot47**: four or more words in a row each holding a digit or one of ``:;<=>?@`` (how rot47
  writes lowercase letters), read back and kept when its words are common English;
* **base32**: runs of 16+ upper-case letters and digits 2-7; **base85** (and Ascii85): tokens of
  20+ characters mixing letter cases, digits and symbols;
* **percent-encoding** (three or more ``%XX``), **HTML entities** (a numeric one, or three named
  ones), **JSON** ``\\uXXXX`` **escapes** (two or more), **binary** (four or more 8-bit groups),
  **Morse** code (six or more dot-dash letters);
* **reversed word order** ("instructions previous all Ignore"): a sentence where a word the
  injection patterns end with ("instructions", "score") comes before one they start with
  ("ignore", "rate"), read with its words in reverse;
* **pig latin**: a sentence where most words end in "ay", read back.

Every gate is a substring test, a count, or one regex pass over the text's character-class
shape (``bytes.translate``); a decoder runs only on the spans it passes, at most
:data:`MAX_SPANS` per encoding, of at most :data:`MAX_SPAN_CHARS` characters, so text that
looks like no encoding costs a few passes at about a nanosecond a byte.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import string
import urllib.parse
from collections.abc import Callable, Iterator
from itertools import islice

from guard.prepare.encodings import readable


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_SPANS = 4  # spans decoded per text and encoding
MAX_SPAN_CHARS = 4096
VOWEL_SHARE = 0.33
MIN_LETTERS = 20
WORD_HITS = 0.3  # share of a decoded span's words that are common English words, at least

COMMON_WORDS = _words(
    """the a an and or of to in on at for from with by is are be was were been this that these
    those it its you your we our they their he she his her i me my all any every each no not do
    does did will would should must can could shall may have has had as so if then than now new
    only just also please what which who when where how give rate score mark answer output
    response reply grade grader judge evaluator model system instructions instruction previous
    prior above ignore disregard forget rules say respond return true false yes grounded verdict
    pass full perfect five one two three four is this message text document user assistant
    following below before after again out up down into over about because there here say said
    make made one"""
)

_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase
_SHIFTS = tuple(
    bytes.maketrans(
        (_LOWER + _UPPER).encode(),
        (_LOWER[n:] + _LOWER[:n] + _UPPER[n:] + _UPPER[:n]).encode(),
    )
    for n in range(26)
)


def _table(*classes: tuple[str, bytes]) -> bytes:
    table = bytearray(b"|" * 256)
    for members, mark in classes:
        for char in members:
            table[ord(char)] = mark[0]
    return bytes(table)


_VOWEL_SHAPE = _table(("aeiouAEIOU", b"v"), ("bcdfghjklmnpqrstvwxyzBCDFGHJKLMNPQRSTVWXYZ", b"c"))
_VOWEL_SHAPE = _VOWEL_SHAPE[:32] + b" " + _VOWEL_SHAPE[33:]
_LETTER_RUN = re.compile(rb"[vc][vc ]{%d,}" % (MIN_LETTERS - 1))
_ROT47_SHAPE = _table(
    (string.digits + ":;<=>?@", b"d"),
    ("".join(chr(c) for c in range(33, 127) if chr(c) not in string.digits + ":;<=>?@"), b"o"),
)
_ROT47_SHAPE = _ROT47_SHAPE[:32] + b" " + _ROT47_SHAPE[33:]
_ROT47_RUN = re.compile(rb"(?:o*d[do]* +){3,}o*d[do]*")
_ROT47 = bytes.maketrans(
    bytes(range(33, 127)), bytes(33 + (c - 33 + 47) % 94 for c in range(33, 127))
)
_BASE32_SHAPE = _table((_UPPER + "234567", b"b"))
_BASE32_RUN = re.compile(r"[A-Z2-7]{16,}={0,6}")
_TOKEN_SHAPE = _table(("".join(chr(c) for c in range(33, 127)), b"x"))
_TOKEN_RUN = re.compile(rb"x{20,}")
MAX_TOKENS = 64  # long tokens read per text for base85, at most
_CLASS_SHAPE = _table(
    (_UPPER, b"U"),
    (_LOWER, b"l"),
    (string.digits, b"d"),
    ("".join(chr(c) for c in range(33, 127) if not chr(c).isalnum()), b"s"),
)
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z]{2,8});")
_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})")
_BINARY_SHAPE = _table(("01", b"b"))
_BINARY_RUN = re.compile(r"(?:[01]{8}[ ,]?){4,}")
_MORSE_RUN = re.compile(r"(?<![^\s/|])[.\-·−–]{1,6}(?:(?: {1,3}| ?[/|] ?)[.\-·−–]{1,6}){5,}")
_MORSE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g",
    "....": "h", "..": "i", ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n",
    "---": "o", ".--.": "p", "--.-": "q", ".-.": "r", "...": "s", "-": "t", "..-": "u",
    "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z", "-----": "0",
    ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9",
}  # fmt: skip
_MORSE_DASHES = str.maketrans("·−–", ".--")
_WORD = re.compile(r"[A-Za-z']+")
# words the injection patterns start with, and words they end with
_HEADS = ("ignore", "disregard", "forget", "rate", "score", "mark", "give", "respond", "output")
_TAILS = ("instructions", "guidance", "rules", "prompt", "grounded", "verdict", "score")
_PIG_WORD = re.compile(r"\b([A-Za-z]+?)(w?ay)\b")
_SENTENCE_BREAK = re.compile(r"\n|(?<=[.!?;])\s+")


def _hits(words: list[str]) -> float:
    if not words:
        return 0.0
    return sum(map(COMMON_WORDS.__contains__, words)) / len(words)


def _english(text: str) -> bool:
    words = _WORD.findall(text.lower())
    return len(words) >= 3 and _hits(words) >= WORD_HITS


def _readable(raw: bytes) -> str | None:
    """:func:`guard.prepare.encodings.readable` text that is at least half letters."""
    plain = readable(raw)
    return plain if plain and sum(ch.isalpha() for ch in plain) >= len(plain) // 2 else None


def _line_around(raw: bytes, start: int, end: int) -> bytes:
    left = raw.rfind(b"\n", 0, start) + 1
    right = raw.find(b"\n", end)
    return raw[left : len(raw) if right < 0 else right][:MAX_SPAN_CHARS]


def _rot_n(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    shape = raw.translate(_VOWEL_SHAPE)
    spans = 0
    for match in _LETTER_RUN.finditer(shape):
        run = match.group()
        letters = len(run) - run.count(b" ")
        if letters < MIN_LETTERS or run.count(b"v") >= VOWEL_SHARE * letters:
            continue
        spans += 1
        if spans > MAX_SPANS:
            return
        words = raw[match.start() : match.end()].lower().split()
        if _hits([w.decode() for w in words]) >= WORD_HITS:
            continue  # English already (names, abbreviations)
        best, shift = 0.0, 0
        for n in range(1, 26):
            hits = _hits([w.translate(_SHIFTS[n]).decode() for w in words])
            if hits > best:
                best, shift = hits, n
        if best >= WORD_HITS:
            line = _line_around(raw, match.start(), match.end()).translate(_SHIFTS[shift])
            yield f"rot{26 - shift}", line.decode("utf-8", "surrogatepass")


def _rot47(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    shape = raw.translate(_ROT47_SHAPE)
    if shape.count(b"d") < 8:
        return
    for match in islice(_ROT47_RUN.finditer(shape), MAX_SPANS):
        line = _line_around(raw, match.start(), match.end()).translate(_ROT47)
        plain = line.decode("utf-8", "surrogatepass")
        if _english(plain):
            yield "rot47", plain


def _base32(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    if b"b" * 16 not in raw.translate(_BASE32_SHAPE):
        return
    for match in islice(_BASE32_RUN.finditer(text), MAX_SPANS):
        run = match.group().rstrip("=")[:MAX_SPAN_CHARS]
        run = run[: len(run) - len(run) % 8 if len(run) % 8 in (1, 3, 6) else len(run)]
        try:
            plain = _readable(base64.b32decode(run + "=" * (-len(run) % 8)))
        except (binascii.Error, ValueError):
            continue
        if plain:
            yield "base32", plain


def _mixed(token: bytes) -> bool:
    """Whether ``token`` mixes three of: upper-case letters, lower-case ones, digits, symbols."""
    return len(set(token.translate(_CLASS_SHAPE))) >= 3


def _base85(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    spans = 0
    for match in islice(_TOKEN_RUN.finditer(raw.translate(_TOKEN_SHAPE)), MAX_TOKENS):
        token = raw[match.start() : match.end()][:MAX_SPAN_CHARS]
        if not _mixed(token):
            continue
        spans += 1
        if spans > MAX_SPANS:
            return
        for name, decode in (("base85", base64.b85decode), ("ascii85", _a85)):
            try:
                plain = _readable(decode(token))
            except (ValueError, binascii.Error):
                continue
            if plain:
                yield name, plain
                break


def _a85(token: bytes) -> bytes:
    if token.startswith(b"<~"):
        return base64.a85decode(token, adobe=True)
    return base64.a85decode(token)


def _substituted(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    if "%" in text and len(_PERCENT.findall(text, 0, MAX_SPAN_CHARS * 4)) >= 3:
        yield "percent", urllib.parse.unquote(text[: MAX_SPAN_CHARS * 4])
    if "&" in text and ("&#" in text or len(_ENTITY.findall(text)) >= 3):
        yield "html", html.unescape(text[: MAX_SPAN_CHARS * 4])
    if "\\u" in text and len(_UNICODE_ESCAPE.findall(text)) >= 2:
        plain = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text[: MAX_SPAN_CHARS * 4])
        yield "unicode-escape", plain


def _binary(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    if b"b" * 8 not in raw.translate(_BINARY_SHAPE):
        return
    for match in islice(_BINARY_RUN.finditer(text), MAX_SPANS):
        bits = re.sub(r"[ ,]", "", match.group())[: MAX_SPAN_CHARS * 8]
        data = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - 7, 8))
        plain = _readable(data)
        if plain:
            yield "binary", plain


def _morse(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    if ".-" not in text and "-." not in text and "·" not in text:
        return
    for match in islice(_MORSE_RUN.finditer(text), MAX_SPANS):
        code = match.group().translate(_MORSE_DASHES)[:MAX_SPAN_CHARS]
        words = re.split(r" ?[/|] ?| {3}", code)
        plain = " ".join("".join(_MORSE.get(letter, "?") for letter in w.split()) for w in words)
        if plain.count("?") <= len(plain) // 10:
            yield "morse", plain


def _reversed_words(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    lowered = text.lower()
    if not any(map(lowered.__contains__, _TAILS)) or not any(map(lowered.__contains__, _HEADS)):
        return
    lines = []
    for line in islice(_SENTENCE_BREAK.split(lowered), 256):
        tail = min((at for at in map(line.find, _TAILS) if at >= 0), default=-1)
        head = max((line.rfind(word) for word in _HEADS), default=-1)
        if 0 <= tail < head:
            lines.append(" ".join(reversed(line.split())))
            if len(lines) >= MAX_SPANS:
                break
    if lines:
        yield "reversed-words", "\n".join(lines)


def _pig_latin(text: str, raw: bytes) -> Iterator[tuple[str, str]]:
    if text.count("ay") < 3:
        return
    lines = []
    for line in islice(_SENTENCE_BREAK.split(text), 256):
        words = line.split()
        pig = _PIG_WORD.findall(line)
        if len(pig) >= 3 and len(pig) * 2 >= len(words):
            lines.append(_PIG_WORD.sub(_unpig, line))
            if len(lines) >= MAX_SPANS:
                break
    if lines:
        yield "pig-latin", "\n".join(lines)


def _unpig(match: re.Match[str]) -> str:
    stem, ending = match.groups()
    if ending == "way" and stem[:1].lower() in "aeiou":
        return stem
    core = stem + ending[:-2]  # a "w" before "ay" is the moved consonant
    cut = len(core)
    while cut and core[cut - 1].lower() not in "aeiou":
        cut -= 1
    return core[cut:] + core[:cut] if cut else core


_DECODERS: tuple[Callable[[str, bytes], Iterator[tuple[str, str]]], ...] = (
    _rot_n,
    _rot47,
    _base32,
    _base85,
    _substituted,
    _binary,
    _morse,
    _reversed_words,
    _pig_latin,
)


def hidden(text: str) -> list[tuple[str, str]]:
    """The readable texts hidden in ``text`` in these encodings, as ``(encoding, text)``."""
    raw = text.encode("utf-8", "surrogatepass")
    found: list[tuple[str, str]] = []
    for decoder in _DECODERS:
        found.extend(decoder(text, raw))
    return found
