"""The steps of :mod:`guard.prepare.sanitize` that were made cheaper, as they were before
(commit 06efd61): the reference the equivalence tests compare the module against. The tables
are the module's own."""

from __future__ import annotations

import re
import unicodedata

from guard.prepare.sanitize import (
    _HIDDEN_TAGS,
    _LINE_BREAKS,
    _LONG_MARK_RUN,
    _MANY_NEWLINES,
    _RUN_OF_SPACES,
    _SURROGATES,
    _TABLE,
    _UNTAG,
    fold_lookalikes,  # a step of its own, not made cheaper
)

_RUN_WITH_TAB = re.compile(r"[ \t]*\t[ \t]*")
_TRAILING_BLANKS = re.compile(r"[ \t]+\n")


def _reveal_tags(text: str) -> str:
    if not text or max(text) < "\U000e0000":
        return text
    return _HIDDEN_TAGS.sub(lambda m: m.group().translate(_UNTAG), text)


def collapse_whitespace(text: str) -> str:
    text = _RUN_WITH_TAB.sub("\t", _RUN_OF_SPACES.sub(" ", text))
    text = _TRAILING_BLANKS.sub("\n", text)
    text = _MANY_NEWLINES.sub("\n\n", text)
    return text.strip()


def sanitize(text: str) -> str:
    text = text.replace("\r\n", "\n").translate(_LINE_BREAKS)
    text = fold_lookalikes(_SURROGATES.sub("", _reveal_tags(text).translate(_TABLE)))
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", _LONG_MARK_RUN.sub(r"\1", text))
    return collapse_whitespace(text)
