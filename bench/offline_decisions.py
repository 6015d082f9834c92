"""A digest of every offline decision on the labelled sets and the realistic pool: run it on
two checkouts to show a change to the offline judge decides everything as before.

Not a test: it prints a digest. Each case is decided by the offline judge; its label, rule,
confidence and every claim's status, rule and reason go into one SHA-256. The cases:
bench/data/halueval-qa-dev.jsonl, bench/data/realistic*.jsonl and the 1,000
requests of bench/harness.py::realistic_pool that bench/memory.py's drain cycles through.

    .venv/bin/python bench/offline_decisions.py
    PYTHONPATH=/tmp/base .venv/bin/python bench/offline_decisions.py   # another checkout's guard
    .venv/bin/python bench/offline_decisions.py --out decisions.txt    # one line per case, to diff
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any

import orjson
from harness import realistic_pool

from guard import Guard, JudgeSettings, PreparedCase
from guard.offline import OfflineJudge
from guard.testing import FakeJudge

ROOT = Path(__file__).resolve().parents[1]
SETS = [
    ROOT / "bench" / "data" / "halueval-qa-dev.jsonl",
    *sorted((ROOT / "bench" / "data").glob("realistic*.jsonl")),
]
FIELDS = ("question", "context", "messages", "output", "expected_output")


def requests() -> list[dict[str, Any]]:
    rows = []
    for path in SETS:
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    row = orjson.loads(line)
                    rows.append({k: row[k] for k in FIELDS if k in row})
    return rows + realistic_pool(1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write one line per case here")
    args = parser.parse_args()
    guards = {
        field: Guard(FakeJudge(), JudgeSettings(provider="fake", context_field=field))
        for field in ("context", "messages")
    }
    judge = OfflineJudge()
    lines = []
    cpu = 0.0
    for i, row in enumerate(requests()):
        guard = guards["messages" if "messages" in row and "context" not in row else "context"]
        case = guard.prepare(guard.parse(orjson.dumps(row | {"id": f"case-{i}"})))
        if not isinstance(case, PreparedCase):
            lines.append(f"{i} not prepared: {type(case).__name__}")
            continue
        started = time.process_time()
        decision = judge.decide(case)
        cpu += time.process_time() - started
        claims = [(r.status, r.basis, r.reason) for r in decision.results]
        lines.append(
            repr((i, decision.label, decision.basis, round(decision.confidence, 6), claims))
        )
    text = "\n".join(lines)
    if args.out:
        args.out.write_text(text + "\n")
    digest = hashlib.sha256(text.encode()).hexdigest()
    print(
        f"{len(lines)} cases, {cpu * 1000 / len(lines):.2f} ms CPU a decision, sha256 {digest[:16]}"
    )


if __name__ == "__main__":
    main()
