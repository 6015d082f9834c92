"""The ``--check`` end of the commands that write checked-in files (``schemas``,
``settings-doc``, ``rules-doc``): the problems on stderr and exit 1, or one line and exit 0."""

from __future__ import annotations

import sys


def report(problems: list[str], *, stale: str, fresh: str) -> int:
    """Print ``problems`` and ``stale`` (what to do) to stderr and return 1; with none, print
    ``fresh`` and return 0."""
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(stale, file=sys.stderr)
        return 1
    print(fresh)
    return 0
