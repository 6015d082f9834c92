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
  ``assertion``, ``otp``, ``creds``, ``dsn`` (except the routing keys in ``ROUTING_KEY_HEADERS``);
  and any header whose value looks like a credential whatever its name (an HTTP auth scheme such
  as ``Bearer ...``/``Basic ...``, a JWT, a provider's key such as ``sk-...``/``ghp_...``/
  ``AKIA...`` anywhere in it, a URL with a password). Their names are listed in
  ``headers_withheld``.
* Verdicts and quarantine records carry tracing headers, with the same rule
  (:func:`safe_tracing`): a tracing header that holds a credential (``uberctx-authorization``) is
  not carried, and the members of a W3C ``baggage`` header that hold one are removed from it.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
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
        "cred",
        "creds",
        "dsn",
        "dsns",
    }
)
_WORD_SPLIT = re.compile(r"[-_.\s]+")
# a value that is a credential whatever the header is called: an HTTP auth scheme, or a JWT
_CREDENTIAL_VALUE = re.compile(
    rb"(?i)^\s*(?:bearer|basic|digest|token|negotiate|ntlm|hoba|mutual|aws4-hmac-sha256)\s+\S"
    rb"|^\s*eyJ[A-Za-z0-9_-]{8,}\."
)
# a credential anywhere in a value: a provider's key (OpenAI/Anthropic/Stripe ``sk-``/``sk_live_``,
# GitHub ``ghp_``, Slack ``xoxb-``, AWS ``AKIA``, Google ``AIza``) or a URL with a password
# (``postgres://app:PW@db``, a Sentry DSN ``https://KEY@o1.ingest.sentry.io/1``)
_CREDENTIAL_INSIDE = re.compile(
    rb"(?<![A-Za-z0-9])(?:(?:sk|pk|rk)[-_][A-Za-z0-9_-]{12,}"
    rb"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    rb"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,})"
    rb"|://[^/\s:@]+:[^/\s@]+@|://[0-9a-f]{32}@"
)
VALUE_SCANNED_BYTES = 4096  # a credential hidden deeper than this in one header is not looked for
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
    if value and _CREDENTIAL_INSIDE.search(value[:VALUE_SCANNED_BYTES]):
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


def _baggage_member_is_credential(member: bytes) -> bool:
    key, _, rest = member.partition(b"=")
    value = urllib.parse.unquote_to_bytes(rest.partition(b";")[0].strip())
    name = key.strip().decode("utf-8", "replace")
    return is_credential(name, value)


def safe_tracing(name: str, value: bytes) -> bytes | None:
    """A tracing header's value safe to carry onto verdicts (None: drop the header). Baggage
    (``baggage``, ``ot-baggage-*``, ``uberctx-*``) is application data propagated with a trace, so
    it may hold a credential: the header is dropped when its name or value is one, and a W3C
    ``baggage`` list loses the members that are."""
    lowered = name.lower()
    if lowered == "baggage":
        members = [m for m in value.split(b",") if m.strip()]
        kept = [m for m in members if not _baggage_member_is_credential(m)]
        if len(kept) == len(members):
            return value
        return b",".join(m.strip() for m in kept) or None
    for prefix in ("uberctx-", "ot-baggage-"):
        if lowered.startswith(prefix):
            return None if is_credential(lowered[len(prefix) :], value) else value
    return None if is_credential(name, value) else value
