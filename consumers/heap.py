"""The garbage collector of a long-running service (``run``, ``serve``): start-up moved aside.

Python's full (generation 2) collection walks every tracked object. After start-up a replica
holds ~100,000 of them (modules, pydantic models and validators, aiokafka, the provider SDK),
and a full collection took 50-150 ms on a loaded 2-core machine: a pause of every message in
flight, whose replies (request-reply) a caller waits for. Full collections come every few
thousand messages (objects alive across awaits reach the old generation), so they made the
tail of the latency (``bench/request_reply.py``).

:func:`freeze_startup` collects once, then moves every object alive to the permanent
generation (``gc.freeze``): later collections walk only what was allocated since. The objects
frozen are those start-up made and the service keeps; a cycle among them that becomes garbage
later is never freed (there is none of size: they live as long as the process).
"""

from __future__ import annotations

import gc


def freeze_startup() -> int:
    """Collect, then freeze what is left (see the module docstring); the objects frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
