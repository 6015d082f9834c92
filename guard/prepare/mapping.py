"""Mapping producers' own JSON shapes onto request fields, so producers need not change.

A :class:`FieldMap` maps a request field (``output``, ``context``, ...) to a path in the
producer's message: a JSON pointer (RFC 6901: ``/response/text``, ``/docs/0``, with ``~1`` for
``/`` and ``~0`` for ``~``) or a dotted path (``response.text``, ``docs.0``). Fields not in the
map pass through from the top level of the message. A mapped field whose path is missing is left
absent, so request validation reports it as missing. Paths are checked once, at construction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from guard.errors import ConfigError
from guard.models import JudgeRequest

_ALIASES = {
    "expected_output": ("expected_output", "expectedOutput"),
    "expectedOutput": ("expected_output", "expectedOutput"),
}
_INDEX = re.compile(r"0|[1-9][0-9]*")
_BAD_ESCAPE = re.compile(r"~(?![01])")


def request_field_names() -> frozenset[str]:
    """The names a field map may target: request fields and their accepted aliases."""
    return frozenset(JudgeRequest.model_fields) | {"expectedOutput"}


@dataclass(frozen=True)
class Path:
    """A parsed path: the reference tokens to follow, and how the user wrote it."""

    tokens: tuple[str, ...]
    written: str

    def resolve(self, obj: Any) -> tuple[bool, Any]:
        """``(True, value)`` when every token leads somewhere, else ``(False, None)``."""
        for token in self.tokens:
            if isinstance(obj, Mapping) and token in obj:
                obj = obj[token]
            elif isinstance(obj, list) and _INDEX.fullmatch(token) and int(token) < len(obj):
                obj = obj[int(token)]
            else:
                return False, None
        return True, obj


def parse_path(field: str, written: str) -> Path:
    """Parse a JSON pointer (leading ``/``) or a dotted path; :class:`ConfigError` if invalid."""
    if written.startswith("/"):
        if _BAD_ESCAPE.search(written):
            raise ConfigError(
                f"field_map.{field}",
                f"invalid JSON pointer {written!r}: '~' must be followed by 0 or 1",
                "write ~0 for '~' and ~1 for '/'",
            )
        raw = written[1:].split("/")
        return Path(tuple(t.replace("~1", "/").replace("~0", "~") for t in raw), written)
    tokens = tuple(written.split("."))
    if not written or any(not t for t in tokens):
        raise ConfigError(
            f"field_map.{field}",
            f"invalid path {written!r}: empty segment",
            "use a JSON pointer like /a/b/0 or a dotted path like a.b.0",
        )
    return Path(tokens, written)


class FieldMap:
    """Maps request fields onto paths in a producer's message."""

    def __init__(self, mapping: Mapping[str, str]) -> None:
        known = request_field_names()
        paths: dict[str, Path] = {}
        for field, written in mapping.items():
            if field not in known:
                raise ConfigError(
                    f"field_map.{field}",
                    "not a request field",
                    f"map one of: {', '.join(sorted(known))}",
                )
            paths[field] = parse_path(field, written)
        self.paths: Mapping[str, Path] = paths

    def __bool__(self) -> bool:
        return bool(self.paths)

    def apply(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """The request fields found in ``obj``: mapped ones by path, the rest passed through."""
        result = dict(obj)
        for field, path in self.paths.items():
            found, value = path.resolve(obj)
            for name in _ALIASES.get(field, (field,)):
                result.pop(name, None)
            if found:
                result[field] = value
        return result
