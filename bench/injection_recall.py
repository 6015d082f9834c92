"""Prompt-injection detection recall on a held-out set written after the detector (issue 29).

    .venv/bin/python bench/injection_recall.py [path] [--misses]

Default path: bench/data/injections-heldout.jsonl. Each row is ``id``, ``label``
(``injection`` or ``benign``), ``class``, ``where`` (``output`` or ``context``) and ``text``.
A row's text is put where it says: as the output judged against a benign context, or as a
second context document behind a benign one, with a benign output. The request is prepared
as the guard prepares it for an LLM judge (a fake one: nothing is judged), and a row counts
as detected when its prepared case carries injection findings. It prints recall per class
and overall on the injections, the false-positive rate on the benign rows, and with
``--misses`` the ids of the rows it got wrong. A measurement only: never tune the detector on
this set.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guard.case import PreparedCase
from guard.engine import Guard
from guard.models import JudgeRequest, Verdict
from guard.settings import JudgeSettings
from guard.testing import FakeJudge

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "bench" / "data" / "injections-heldout.jsonl"
QUESTION = "What does the help centre say about orders and returns?"
BENIGN_CONTEXT = (
    "Help centre, orders and returns. Orders placed before 2pm ship the same business day. "
    "Returns are accepted within 30 days of delivery with the receipt; refunds reach the "
    "original payment method within 5 business days."
)
BENIGN_OUTPUT = "Orders placed before 2pm ship the same day, and returns are accepted for 30 days."


@dataclass(frozen=True)
class Scored:
    id: str
    label: str
    cls: str
    detected: bool


def load(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def request_for(row: dict[str, str]) -> JudgeRequest:
    """The row's text as the output, or as a second context document."""
    if row["where"] == "output":
        return JudgeRequest(
            id=row["id"], question=QUESTION, context=[BENIGN_CONTEXT], output=row["text"]
        )
    return JudgeRequest(
        id=row["id"],
        question=QUESTION,
        context=[BENIGN_CONTEXT, row["text"]],
        output=BENIGN_OUTPUT,
    )


def detected(prepared: PreparedCase | Verdict | list[PreparedCase]) -> bool:
    """Injection findings on the prepared case (on any case, or on the early verdict)."""
    cases = prepared if isinstance(prepared, list) else [prepared]
    return any(case.injections for case in cases)


def score(rows: list[dict[str, str]]) -> list[Scored]:
    guard = Guard(FakeJudge(), JudgeSettings(provider="fake"))
    return [
        Scored(row["id"], row["label"], row["class"], detected(guard.prepare(request_for(row))))
        for row in rows
    ]


def report(scored: list[Scored], misses: bool) -> None:
    attacks = [s for s in scored if s.label == "injection"]
    benign = [s for s in scored if s.label == "benign"]
    print(f"{len(scored)} rows: {len(attacks)} injections, {len(benign)} benign")
    print("recall per class (detected/total):")
    for cls, rows in by_class(attacks).items():
        found = sum(s.detected for s in rows)
        print(f"  {cls:<20} {found:>3}/{len(rows):<3} {found / len(rows):.2f}")
    found = sum(s.detected for s in attacks)
    print(f"overall recall: {found}/{len(attacks)} {found / max(len(attacks), 1):.3f}")
    print("false positives per benign class (flagged/total):")
    for cls, rows in by_class(benign).items():
        print(f"  {cls:<20} {sum(s.detected for s in rows):>3}/{len(rows):<3}")
    flagged = sum(s.detected for s in benign)
    print(f"false-positive rate: {flagged}/{len(benign)} {flagged / max(len(benign), 1):.3f}")
    if misses:
        print("missed injections: " + " ".join(s.id for s in attacks if not s.detected))
        print("flagged benign: " + " ".join(s.id for s in benign if s.detected))


def by_class(scored: list[Scored]) -> dict[str, list[Scored]]:
    classes: dict[str, list[Scored]] = defaultdict(list)
    for s in scored:
        classes[s.cls].append(s)
    return dict(sorted(classes.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=HELDOUT)
    parser.add_argument("--misses", action="store_true", help="list the rows got wrong")
    args = parser.parse_args()
    report(score(load(args.path)), args.misses)


if __name__ == "__main__":
    main()
