"""Rebuild guard/data/offline_calibration.json: how often each kind of offline decision is right.

    .venv/bin/python bench/calibrate_offline.py [path ...]

Runs the offline judge over labelled JSONL files (default: HaluEval QA dev and
bench/data/realistic-dev.jsonl), counts per decision basis ("fail:number_contradicted",
"pass:verbatim", ...) how many answers of each set got it and how many of those were right,
and writes the table the judge turns into confidences (guard/offline/calibration.py). Two
passes: the first with an empty table, the second with the first's, since the table picks
which failing claim decides an answer (and turns a distrusted proof into undecided).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from offline_quality import REALISTIC, halueval_path

from guard.offline import quality
from guard.offline.calibration import Calibration
from guard.offline.judge import OfflineJudge

TABLE = Path(__file__).resolve().parents[1] / "guard" / "data" / "offline_calibration.json"


def count(sets: dict[str, list[dict[str, Any]]],
          table: Calibration) -> dict[str, Calibration]:
    judge = OfflineJudge(calibration=table)
    return {name: quality.tallies(quality.judge_rows(rows, judge)) for name, rows in sets.items()}


def main() -> int:
    paths = [Path(p) for p in sys.argv[1:]] or [halueval_path(), REALISTIC]
    sets = {path.name: quality.load(path) for path in paths}
    first = count(sets, Calibration({}))
    second = count(sets, Calibration.combine(first))
    # a pass basis the first table distrusts turns undecided in the second: keep its count
    table = Calibration.combine({name: Calibration({**first[name].tallies,
                                                    **second[name].tallies})
                                 for name in sets})
    TABLE.write_text(json.dumps(table.to_json(), indent=1) + "\n", encoding="utf-8")
    for basis, tally in sorted(table.tallies.items()):
        print(f"{basis:<40} {tally.correct:>4}/{tally.total:<4} -> {table.confidence(basis):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
