"""Files generated from the code and checked in (``docs/settings.md``, ``docs/rules.md``,
``schemas/*.json``): written the one way, and checked for drift the one way."""

from __future__ import annotations

import difflib
from pathlib import Path

DIFF_LINES = 40  # a drifted file's diff is cut to this many lines


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (its directory created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def drift(path: Path, want: str, source: str) -> list[str]:
    """How the checked-in ``path`` differs from ``want`` (generated from ``source``, e.g.
    "rules.md (from the registry)"): nothing, "missing", or the first lines of the diff."""
    have = path.read_text(encoding="utf-8") if path.exists() else None
    if have is None:
        return [f"{path}: missing"]
    if have == want:
        return []
    diff = difflib.unified_diff(
        have.splitlines(), want.splitlines(), f"{path} (checked in)", source, lineterm="", n=1
    )
    return ["\n".join(list(diff)[:DIFF_LINES])]
