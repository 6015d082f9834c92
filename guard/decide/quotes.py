"""Checking that the evidence quotes a judge cites really occur in the evidence.

Matching ignores case, whitespace, quote and dash styles and punctuation (both sides are reduced
to lowercase words separated by single spaces). A quote may join two or more found parts with an
ellipsis (``...`` or ``…``); the parts must occur in order. A quote that is not found is
*fabricated*: it is reported, and the verdict's ``quote_check.trusted`` becomes false. A
fabricated quote does not change the score; consumers route on ``trusted``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from guard.models import ClaimVerdict, QuoteCheck

_ELLIPSIS = re.compile(r"\.\s*\.\s*\.|…|\[\s*(?:\.\s*){3}\]")
_NOT_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Lowercase words separated by single spaces; quotes, dashes and punctuation dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NOT_WORD.sub(" ", text).split())


def _find_in(haystack: str, needle: str, start: int) -> int:
    """End of the first whole-word occurrence of ``needle`` at or after ``start``, or -1."""
    padded = f" {haystack} "
    at = padded.find(f" {needle} ", start)
    return -1 if at < 0 else at + len(needle) + 1


def quote_occurs(quote: str, evidence: str) -> bool:
    """Whether ``quote`` occurs in ``evidence`` (normalised; ellipses join ordered parts)."""
    parts = [normalise(p) for p in _ELLIPSIS.split(quote)]
    parts = [p for p in parts if p]
    if not parts:
        return False
    haystack = normalise(evidence)
    position = 0
    for part in parts:
        position = _find_in(haystack, part, position)
        if position < 0:
            return False
    return True


def check_quotes(
    claims: Sequence[ClaimVerdict], evidence: str
) -> tuple[list[ClaimVerdict], QuoteCheck]:
    """Set ``quote_found`` on each claim that cites a quote, and count fabricated quotes."""
    checked: list[ClaimVerdict] = []
    quotes = fabricated = 0
    for claim in claims:
        if claim.evidence_quote is None or not claim.evidence_quote.strip():
            checked.append(claim.model_copy(update={"quote_found": None}))
            continue
        found = quote_occurs(claim.evidence_quote, evidence)
        quotes += 1
        fabricated += 0 if found else 1
        checked.append(claim.model_copy(update={"quote_found": found}))
    return checked, QuoteCheck(quotes=quotes, fabricated=fabricated, trusted=fabricated == 0)
