"""Running the CPU-heavy work of one message where it cannot starve the event loop.

:func:`off_loop` runs a synchronous function inline when its input is small (a thread hop
costs more than the work) and in a small shared pool of worker threads
(:data:`~guard.defaults.PREPARE_THREADS`) when it is large. A worker thread still shares the GIL,
but the interpreter switches threads every few milliseconds, so heartbeats, health checks and
other messages keep running; the loop then waits at most for the longest single C call (a regex
or normalisation over one bounded text). Both the preparation of a request (:class:`guard.Guard`)
and a CPU-bound judge's checks can use it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from guard.defaults import OFFLOAD_MIN_CHARS, PREPARE_THREADS

P = ParamSpec("P")
T = TypeVar("T")

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool  # one pool per process, made on first use
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(PREPARE_THREADS, thread_name_prefix="guard-cpu")
        return _pool


async def off_loop(size: int, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)``: inline when ``size`` (characters of input) is below
    :data:`~guard.defaults.OFFLOAD_MIN_CHARS`, else in a worker thread. Work that is costly
    even on small inputs (the offline judge's checks) passes a larger ``size``, e.g. its
    estimated cost in characters of a linear scan."""
    if size < OFFLOAD_MIN_CHARS:
        return fn(*args, **kwargs)
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()  # log context (request id...) travels with the work
    call = functools.partial(fn, *args, **kwargs)
    return await loop.run_in_executor(_executor(), context.run, call)
