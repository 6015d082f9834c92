"""off_loop runs small work inline and large work in a shared worker thread."""

from __future__ import annotations

import threading

from guard.defaults import OFFLOAD_MIN_CHARS
from guard.offload import off_loop


def _thread_name(tag: str, *, suffix: str = "") -> str:
    return f"{tag}{suffix}:{threading.current_thread().name}"


async def test_small_work_runs_inline_with_its_arguments() -> None:
    here = threading.current_thread().name
    assert await off_loop(10, _thread_name, "a", suffix="!") == f"a!:{here}"


async def test_large_work_runs_in_a_worker_thread() -> None:
    name = await off_loop(OFFLOAD_MIN_CHARS, _thread_name, "b")
    assert name.startswith("b:guard-cpu")
