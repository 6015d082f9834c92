"""The decoders of :mod:`guard.prepare.encodings` that were given shape prefilters, as they
were before (commit 7d84c60): the reference the equivalence tests compare the module against.
The patterns and limits are the module's own; the rot13 and leetspeak tables are the
``str.translate`` ones the module had before it translated UTF-8 bytes."""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Callable
from itertools import islice

from guard.prepare import encodings as e

_ROT13 = str.maketrans(
    string.ascii_lowercase + string.ascii_uppercase,
    string.ascii_lowercase[13:]
    + string.ascii_lowercase[:13]
    + string.ascii_uppercase[13:]
    + string.ascii_uppercase[:13],
)
_LEET_AS_I = str.maketrans("0134579@$!|", "oieastgasil")
_LEET_AS_L = str.maketrans("0134579@$!|", "oleastgasii")


def _base64(text: str) -> list[str]:
    if e._BASE64_HINT.search(text) is None:
        return []
    found: list[str] = []
    for match in islice(e._BASE64_RUN.finditer(text), e.MAX_DECODED_RUNS):
        run = match.group()[: e.MAX_DECODED_CHARS]
        try:
            raw = base64.b64decode(run[: len(run) - len(run) % 4], validate=True)
        except binascii.Error:
            continue
        plain = e.readable(raw)
        if plain:
            found.append(plain)
    return found


def _hex(text: str) -> list[str]:
    if "\\x" in text or "0x" in text or "0X" in text:
        text = e._HEX_PREFIX.sub("", text)
    found: list[str] = []
    for match in islice(e._HEX_RUN.finditer(text), e.MAX_DECODED_RUNS):
        digits = e._HEX_SEPARATORS.sub("", match.group())[: e.MAX_DECODED_CHARS]
        plain = e.readable(bytes.fromhex(digits[: len(digits) - len(digits) % 2]))
        if plain:
            found.append(plain)
    return found


def _spaced(text: str) -> tuple[str, list[str]]:
    runs: list[str] = []

    def close_up(match: re.Match[str]) -> str:
        letters = match.group()[::2]
        if len(runs) < e.MAX_DECODED_RUNS and len(letters) >= e.SOLID_MIN_LETTERS:
            runs.append(letters[: e.MAX_DECODED_CHARS])
        return letters

    if e._SPACED_HINT.search(text) is None:
        return "", []
    closed, count = e._SPACED_RUN.subn(close_up, text)
    return (closed if count else ""), runs


def hidden(
    text: str, leet: Callable[[str], bool] | None = None
) -> tuple[list[tuple[str, str]], list[str]]:
    found: list[tuple[str, str]] = [("base64", plain) for plain in _base64(text)]
    found += [("hex", plain) for plain in _hex(text)]
    lowered = text.lower()
    if any(hint in lowered for hint in e.ROT13_KEY_WORDS):
        found.append(("rot13", text.translate(_ROT13)))
    if any(hint in lowered for hint in e.REVERSED_KEY_WORDS):
        found.append(("reversed", text[::-1]))
    if e._LEET_HINT.search(text) is not None and (leet is None or leet(text)):
        found.append(("leetspeak", f"{text.translate(_LEET_AS_I)}\n{text.translate(_LEET_AS_L)}"))
    closed, runs = _spaced(text)
    if closed:
        found.append(("spaced", closed))
    return found, runs
