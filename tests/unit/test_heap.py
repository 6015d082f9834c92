"""Start-up's objects are frozen out of the garbage collector's way (in a child process: a
freeze would keep this test process's objects for good)."""

from __future__ import annotations

import subprocess
import sys

import orjson

PROBE = """
import gc, orjson
import consumers.cli.main  # what `groundguard run` imports
from consumers.heap import freeze_startup
frozen = freeze_startup()
left = len(gc.get_objects())
print(orjson.dumps({"frozen": frozen, "left": left, "count": gc.get_freeze_count()}).decode())
"""


def test_a_full_collection_after_the_freeze_walks_only_what_came_after() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, check=True, timeout=120
    ).stdout
    found = orjson.loads(out.splitlines()[-1])
    assert found["frozen"] > 10_000  # modules, classes, models: thousands of objects
    assert found["frozen"] == found["count"]
    assert found["left"] < found["frozen"] / 100  # a later full collection walks only these
