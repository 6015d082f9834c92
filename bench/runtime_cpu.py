"""CPU the Kafka runtime spends on one hostile message, outside the judge.

Not a test: it prints figures. Each case is a record at or near the size limits (as issue 9's
attacker sent them) taken through the runtime's per-message pipeline
(:class:`consumers.runtime.message.Pipeline`: decode, route, serialize, fit the size limit, dead
letters) with a verdict already made by the in-process fake judge, so the figure is the
runtime's own work, the part that runs on the event loop beside heartbeats and /healthz. For
each case: the worst and the median of ``--repeat`` runs in ms, and the worst as a multiple of
a 1 KB ordinary message measured in the same run.

    .venv/bin/python bench/runtime_cpu.py                # default limits, 7 runs per case
    .venv/bin/python bench/runtime_cpu.py --repeat 21

See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from consumers.runtime.message import Finished, Pipeline
from consumers.settings import ServiceSettings
from guard.engine import Guard
from guard.models import Verdict
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

EVIDENCE = "The Eiffel Tower is in Paris. It was completed in 1889."
SETTINGS = ServiceSettings()
GUARD = Guard(FakeJudge(), JudgeSettings())
LIMIT = SETTINGS.max_message_bytes


@dataclass
class Record:
    value: bytes | None
    key: bytes | None = b"user-1"
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    topic: str = "rag.responses"
    partition: int = 0
    offset: int = 1
    timestamp: int = 1_700_000_000_000


def request(output: str = "The Eiffel Tower is in Paris", **fields: object) -> bytes:
    return json.dumps({"output": output, "context": EVIDENCE} | fields).encode()


def fill(make: Callable[[int], bytes], budget: int = LIMIT - 1024) -> bytes:
    """``make(n)`` for the largest n (found by doubling then bisection) within ``budget``."""
    low, high = 1, 2
    while len(make(high)) <= budget:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if len(make(mid)) <= budget else (low, mid)
    return make(low)


CASES: dict[str, Callable[[], Record]] = {
    "ordinary 1 KB (baseline)": lambda: Record(request(padding="p" * 900)),
    "value at max_message_bytes": lambda: Record(fill(lambda n: request(padding="p" * n))),
    "failing, metadata at the limit (quarantine shrunk)": lambda: Record(
        fill(lambda n: request("The Eiffel Tower is in Rome", metadata={"blob": "m" * n}))
    ),
    "big integers everywhere (exact parser)": lambda: Record(
        fill(lambda n: request(metadata={"n": [10**30] * n}))
    ),
    "metadata nested 256 deep (dead letter)": lambda: Record(
        request(metadata={"a": json.loads("[" * 256 + "]" * 256)})
    ),
    "600 KB key": lambda: Record(request(), key=b"k" * 600_000),
    "400 KB x-request-id header": lambda: Record(
        request(), headers=[("x-request-id", b"r" * 400_000)]
    ),
    "10,000 small headers": lambda: Record(
        request(), headers=[(f"h{i}", b"v") for i in range(10_000)]
    ),
    "500,000 empty headers, invalid JSON (dead letter)": lambda: Record(
        b"{bad", headers=[("", b"")] * 500_000
    ),
    "control bytes, invalid JSON (dead letter)": lambda: Record(b"\x01" * (LIMIT - 1)),
    "oversized value (dead letter)": lambda: Record(b"x" * (2 * LIMIT)),
}


def once(pipeline: Pipeline, record: Record, verdicts: dict[bytes, Verdict]) -> float:
    """ms for the runtime's work on ``record``; the judge's verdict is made beforehand."""
    start = time.perf_counter()
    decoded = pipeline.decode(record)  # a message's dead letter is built here
    if not isinstance(decoded, Finished):
        pipeline.outputs(decoded, verdicts[record.value or b""])
    return (time.perf_counter() - start) * 1000


def verdict_for(pipeline: Pipeline, record: Record) -> Verdict | None:
    decoded = pipeline.decode(record)
    if isinstance(decoded, Finished):
        return None
    return asyncio.run(GUARD.judge(decoded.request))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    pipeline = Pipeline(SETTINGS, GUARD.parse)
    rows = []
    for name, make in CASES.items():
        record = make()
        verdict = verdict_for(pipeline, record)
        verdicts = {record.value or b"": verdict} if verdict is not None else {}
        times = [once(pipeline, record, verdicts) for _ in range(args.repeat)]
        rows.append((name, len(record.value or b""), max(times), statistics.median(times)))
    baseline = rows[0][2]
    print(f"{'case':52} {'value B':>9} {'worst ms':>9} {'median ms':>10} {'x baseline':>11}")
    for name, size, worst, median in rows:
        print(f"{name:52} {size:>9} {worst:>9.2f} {median:>10.2f} {worst / baseline:>11.1f}")


if __name__ == "__main__":
    main()
