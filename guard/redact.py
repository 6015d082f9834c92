"""Redaction: secrets never leave the core in an error message, a log line or a verdict.

:func:`redact` replaces, in this order, every configured secret value (exact match), the value
(6+ characters, one a digit) after a label that names a credential (``api key: ...``,
``token=...``, ``Bearer ...``, ``password ...``), ``sk-``/``pk-``/``rk-`` keys, and any key-like
token (16+ letters and digits without a separator, mixing both, or 32+ characters of
``[A-Za-z0-9_-]``), then bounds the text to :data:`MAX_REDACTED_CHARS` characters. Redacting
twice changes nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_REDACTED_CHARS = 300
_MAX_SCANNED_CHARS = 4 * MAX_REDACTED_CHARS  # only this much is kept anyway
_MIN_SECRET_CHARS = 4
REDACTED = "[redacted]"

_LABELLED = re.compile(
    r"(?i)\b(api[_ -]?key|x-api-key|access[_ -]?token|auth[_ -]?token|token|secret|password"
    r"|passwd|bearer|authorization|credential)(s?\b[^A-Za-z0-9\n]{0,3}"
    r"(?:provided|is|was|given)?\s*[:=]?\s*[\"']?(?:(?:bearer|basic)\s+)?)"
    r"((?=[^\s,;\"'<>]*[0-9])[^\s,;\"'<>]{6,})")
_KEY_LIKE = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_*\-]{4,}"
    r"|\b(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{16,}"
    r"|[A-Za-z0-9_\-]{32,}")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without secrets or anything key-like, at most :data:`MAX_REDACTED_CHARS` long."""
    text = text[:_MAX_SCANNED_CHARS]
    for secret in secrets:
        if len(secret) >= _MIN_SECRET_CHARS:
            text = text.replace(secret, REDACTED)
    text = _LABELLED.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _KEY_LIKE.sub(REDACTED, text)[:MAX_REDACTED_CHARS]
