"""Which input headers travel where, and at what size.

* Output records carry the input's tracing headers (W3C, B3, Jaeger, request ids) and
  groundguard's own; :func:`fit_headers` drops any header larger than ``HEADER_MAX_BYTES`` and
  stops at ``HEADERS_MAX_BYTES`` in all, naming what it dropped in a
  ``groundguard-headers-dropped`` header, so a huge header can never make an output too large.
* Dead letters copy the input headers for diagnosis, except credentials
  (:func:`is_credential`): any name containing ``auth`` (``authorization``, ``x-auth``),
  ``cookie``, ``token``, ``secret``, ``password``, ``passwd``, ``credential``, ``session``,
  ``signature``, ``jwt``, ``bearer``, ``hmac``, ``apikey``, or a word (between ``-``, ``_``,
  ``.``) such as ``key``, ``pass``, ``sig``, ``cert``, ``user``, ``principal``, ``private``,
  ``assertion``, ``otp`` (except the routing keys in ``ROUTING_KEY_HEADERS``); and any header
  whose value looks like a credential whatever its name (an HTTP auth scheme such as
  ``Bearer ...``/``Basic ...``, or a JWT). Their names are listed in ``headers_withheld``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

HEADER_MAX_BYTES = 8192  # W3C baggage may be 8192 bytes; nothing legitimate is larger
HEADERS_MAX_BYTES = 32_768
DROPPED_HEADER = "groundguard-headers-dropped"
DROPPED_NAMES_SHOWN = 16
NAME_CHARS_SHOWN = 64
NAMES_CACHED = 1024  # header names whose credential check is remembered
CREDENTIAL_PARTS = (
    "auth",
    "cookie",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "session",
    "signature",
    "jwt",
    "bearer",
    "hmac",
    "apikey",
)
CREDENTIAL_WORDS = frozenset(
    {
        "key",
        "pass",
        "pwd",
        "sig",
        "cert",
        "user",
        "principal",
        "private",
        "assertion",
        "otp",
        "pin",
        "csrf",
        "xsrf",
    }
)
_WORD_SPLIT = re.compile(r"[-_.\s]+")
# a value that is a credential whatever the header is called: an HTTP auth scheme, or a JWT
_CREDENTIAL_VALUE = re.compile(
    rb"(?i)^\s*(?:bearer|basic|digest|token|negotiate|ntlm|hoba|mutual|aws4-hmac-sha256)\s+\S"
    rb"|^\s*eyJ[A-Za-z0-9_-]{8,}\."
)
ROUTING_KEY_HEADERS = frozenset(
    {
        "idempotency-key",
        "x-idempotency-key",
        "partition-key",
        "x-partition-key",
        "message-key",
        "x-message-key",
        "routing-key",
        "x-routing-key",
        "kafka_messagekey",
    }
)

Header = tuple[str, bytes]


def name_bytes(name: str) -> bytes:
    """A header name as the producer encodes it (never raises, even on lone surrogates)."""
    return name.encode("utf-8", "backslashreplace")


def header_size(name: str, value: bytes | None) -> int:
    return (len(name) if name.isascii() else len(name_bytes(name))) + len(value or b"")


def shown_names(names: Iterable[str]) -> list[str]:
    """Names to report, each cut short, at most ``DROPPED_NAMES_SHOWN`` of them."""
    return [name[:NAME_CHARS_SHOWN] for name in list(names)[:DROPPED_NAMES_SHOWN]]


def fit_headers(headers: Sequence[Header]) -> list[Header]:
    """``headers`` without those too large to publish; what was dropped is named in a
    ``groundguard-headers-dropped`` header (names cut to 64 characters, at most 16)."""
    kept: list[Header] = []
    dropped: list[str] = []
    total = 0
    for name, value in headers:
        size = header_size(name, value)
        if size > HEADER_MAX_BYTES or total + size > HEADERS_MAX_BYTES:
            dropped.append(name)
            continue
        kept.append((name, value))
        total += size
    if dropped:
        kept.append(
            (DROPPED_HEADER, ",".join(shown_names(dropped)).encode("utf-8", "backslashreplace"))
        )
    return kept


def is_credential(name: str, value: bytes | None = None) -> bool:
    """Whether a header may hold a credential, so it must not be copied into a dead letter."""
    if value and _CREDENTIAL_VALUE.match(value[:64]):
        return True
    return _credential_name(name)


@functools.lru_cache(maxsize=NAMES_CACHED)
def _credential_name(name: str) -> bool:
    """Whether the name alone marks a credential: the same few names come with every message,
    and splitting one into words cost more than the rest of the check."""
    lowered = name.lower()
    if lowered in ROUTING_KEY_HEADERS:
        return False
    if any(part in lowered for part in CREDENTIAL_PARTS):
        return True
    return not CREDENTIAL_WORDS.isdisjoint(_WORD_SPLIT.split(lowered))


def safe_headers(headers: Sequence[Header]) -> tuple[list[Header], list[str]]:
    """The headers a dead letter may copy, and the names of those withheld."""
    kept: list[Header] = []
    withheld: list[str] = []
    for name, value in headers:
        if is_credential(name, value):
            withheld.append(name)
        else:
            kept.append((name, value))
    return kept, withheld
