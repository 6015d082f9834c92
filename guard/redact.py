"""Redaction: secrets never leave the core in an error message, a log line or a verdict.

:func:`redact` replaces, in this order, every configured secret value (exact match), the value
(6+ characters) assigned to a label that names a credential (``password: ...``,
``client_secret=...``, ``Authorization: token ...``), the value (6+ characters, one a digit)
after such a label without ``:``/``=`` (``api key provided ...``, ``Bearer ...``), the password of
a URL (``://user:password@``) and credentials in its query (``?key=...``),
``sk-``/``pk-``/``rk-`` keys, and any key-like
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

_LABEL = (
    r"(?<![A-Za-z0-9])(?:api[_ -]?key|x-api-key|access[_ -]?token|auth[_ -]?token"
    r"|refresh[_ -]?token|client[_ -]?secret|private[_ -]?key|secret|password|passwd"
    r"|passphrase|pwd|credential|cookie|session[_ -]?(?:id|token|key))"
    r"|\b(?:token|bearer|authorization)"
)
_SCHEME = r"(?:(?:bearer|basic|token|digest)\s+)?"
_LABELLED = re.compile(
    rf"(?i)({_LABEL})(s?\b[^A-Za-z0-9\n]{{0,3}}"
    rf"(?:provided|is|was|given)?\s*[:=]?\s*[\"']?{_SCHEME})"
    r"((?=[^\s,;\"'<>]*[0-9])[^\s,;\"'<>]{6,})"
)
# a value assigned to a credential label ("password: hunter", "token=abc..."): no digit needed
_ASSIGNED = re.compile(
    rf"(?i)((?:{_LABEL})(?:[_-][a-z]+){{0,3}})(s?[\"']?\s*[:=]\s*[\"']?{_SCHEME})"
    r"([^\s,;\"'<>]{6,})"
)
_URL_PARTS = re.compile(  # user:password@ in a URL; key=... in its query
    r"(?i)(://)[^/\s:@]+:[^/\s@]+(@)"
    r"|([?&](?:key|api[_-]?key|access[_-]?token|token|sig|signature|code|auth)=)([^&#\s]+)"
)
_KEY_LIKE = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_*\-]{4,}"
    r"|\b(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{16,}"
    r"|[A-Za-z0-9_\-]{32,}"
)


def _labelled(match: re.Match[str]) -> str:
    return f"{match.group(1)}{match.group(2)}{REDACTED}"


def _url_part(match: re.Match[str]) -> str:
    if match.group(1):
        return f"{match.group(1)}{REDACTED}{match.group(2)}"
    return f"{match.group(3)}{REDACTED}"


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without secrets or anything key-like, at most :data:`MAX_REDACTED_CHARS` long."""
    secrets = [secret for secret in secrets if len(secret) >= _MIN_SECRET_CHARS]
    # a secret crossing the scanned length is replaced whole, not left as a prefix
    text = text[: _MAX_SCANNED_CHARS + max(map(len, secrets), default=0)]
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    text = _URL_PARTS.sub(_url_part, text[:_MAX_SCANNED_CHARS])
    text = _LABELLED.sub(_labelled, _ASSIGNED.sub(_labelled, text))
    return _KEY_LIKE.sub(REDACTED, text)[:MAX_REDACTED_CHARS]
