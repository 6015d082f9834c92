"""Reading a request's JSON so that every reader sees the same request.

RFC 8259 leaves an object naming a key twice to the reader: most keep the last value, some the
first, some refuse. The guard would judge one ``output`` and a subscriber of the approved topic,
reading the same bytes, could see the other. :func:`loads` therefore refuses such a payload
(:class:`~guard.errors.InvalidRequest`, reason ``invalid_json``).

Cost: a payload is parsed by orjson; the duplicate check parses it a second time only when it
could hide a duplicate the guard would read: when request keys (``output``, ``text``,
``content``...) occur in its bytes more often than in the objects the guard reads, counting
every spelling of them (any character may be a ``\\u`` escape) when the payload holds a
``\\u``. Other payloads, the common case (an escaped value, ``"caf\\u00e9"``, included), cost
one scan of their bytes for the quoted keys. A repeated key anywhere else (inside ``metadata``)
is refused too when the second parse runs, which is then a full check.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from guard.errors import InvalidRequest

REQUEST_KEYS = (
    "output",
    "context",
    "messages",
    "question",
    "input",
    "expected_output",
    "expectedOutput",
    "context_field",
    "id",
    "metadata",
)
ITEM_KEYS = ("text", "id", "source", "role", "content", "name")  # of documents and turns


class _DuplicateKey(ValueError):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    seen: set[str] = set()
    for name, _ in pairs:
        if name in seen:
            raise _DuplicateKey(f"duplicate key {name[:64]!r}")
        seen.add(name)
    return found  # not reached: a shorter dict means a repeated name


def reject_duplicate_keys(payload: bytes | str) -> None:
    """:class:`InvalidRequest` when an object of the valid JSON ``payload`` names a key twice."""
    try:
        json.loads(payload, object_pairs_hook=_unique)
    except _DuplicateKey as exc:
        raise InvalidRequest(f"invalid JSON: {exc}", reason="invalid_json") from exc
    except RecursionError as exc:
        raise InvalidRequest("invalid JSON: nested too deeply", reason="invalid_json") from exc


_KEYS = frozenset({*REQUEST_KEYS, *ITEM_KEYS})


def _read_keys(obj: Any) -> int:
    """How many keys of :data:`_KEYS` the objects the guard reads (the request and its
    documents and turns) hold: each is a distinct quoted key in the payload's bytes."""
    if not isinstance(obj, dict):
        return 0
    count = len(obj.keys() & _KEYS)
    for field in ("context", "messages"):
        items = obj.get(field)
        if isinstance(items, list):
            count += sum(len(item.keys() & _KEYS) for item in items if isinstance(item, dict))
    return count


def _spelled(key: str) -> bytes:
    """A regex of every JSON spelling of the ASCII ``key``: each character as itself or as a
    ``\\u`` escape (hex digits in either case)."""

    def char(c: str) -> bytes:
        digits = b"".join(b"[%s%s]" % (h.encode(), h.upper().encode()) for h in f"{ord(c):04x}")
        return b"(?:%s|\\\\u%s)" % (re.escape(c.encode()), digits)

    return b"".join(map(char, key))


# every quoted request or item key in one pass (16 ``bytes.count`` scans cost more than the
# second parse they spare: 60-80 us against 25-50 us on a 6.6 KB request); with ``\u`` escapes
# in the payload, every spelling of them
_QUOTED_KEYS = re.compile(b'"(?:%s)"' % b"|".join(re.escape(key.encode()) for key in _KEYS))
_SPELLED_KEYS = re.compile(b'"(?:%s)"' % b"|".join(_spelled(key) for key in _KEYS))


def may_hide_duplicates(payload: bytes, obj: Any) -> bool:
    """Whether ``payload`` (parsed as ``obj``) could name a key the guard reads twice.

    Every key the guard reads stands quoted in the bytes (spelled with ``\\u`` escapes or not),
    so the bytes hold at least as many quoted keys as the objects read; more means one of them
    is named again (or occurs in other objects or in a value): then the full check runs."""
    quoted = _SPELLED_KEYS if b"\\u" in payload else _QUOTED_KEYS
    return len(quoted.findall(payload)) > _read_keys(obj)


def loads(payload: bytes | str, *, full_check: bool = False) -> Any:
    """The JSON value of ``payload``; :class:`InvalidRequest` when it is not UTF-8, not JSON, or
    names a key twice. ``full_check`` always runs the second parse (a field map reads objects
    anywhere in the payload)."""
    if isinstance(payload, bytes):
        try:
            payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequest(
                f"invalid UTF-8 at byte {exc.start}", reason="invalid_utf8"
            ) from exc
    try:
        found = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"invalid JSON: {exc}", reason="invalid_json") from exc
    data = payload if isinstance(payload, bytes) else payload.encode("utf-8", "surrogatepass")
    if full_check or may_hide_duplicates(data, found):
        reject_duplicate_keys(payload)
    return found
