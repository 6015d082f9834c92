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


async def test_large_work_sees_the_callers_context_variables() -> None:
    """Log context bound by the caller (the message's request id) travels into the worker."""
    import contextvars

    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")
    request_id.set("r-42")
    assert await off_loop(OFFLOAD_MIN_CHARS, request_id.get) == "r-42"
