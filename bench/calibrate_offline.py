"""Rebuild guard/data/offline_calibration.json: how often each kind of offline decision is right
on labelled answers it was not fitted on.

    .venv/bin/python bench/calibrate_offline.py [path ...]

Runs the offline judge's checks over labelled JSONL files (default: HaluEval QA dev,
bench/data/realistic-dev.jsonl and bench/data/realistic-holdout.jsonl, the last never read by
the rules' authors, so its counts are out of sample for the rules too) and decides every answer
with a table fitted without it (leave one category out of a set with categories; one of ten
folds of a set without, a question's answers kept together; the other sets whole). It counts per
decision basis ("fail:number_contradicted", "pass:verbatim", ...) how many answers of each set
got it out of fold and how many of those were right, and writes that table; the judge turns the
counts into the least, over the data sources that show the basis (HaluEval, realistic), of the
Wilson lower bound of its accuracy with a uniform prior, capped below the default threshold for
a basis seen on one source only (guard/offline/calibration.py). It prints each basis's counts
per source and its confidence, then, per set, the reliability table (stated confidence against
observed accuracy per bucket) of the out-of-fold decisions and of the new table on the set's
own rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from offline_quality import CALIBRATION_ONLY, REALISTIC, halueval_path, reliability_table

from guard.offline import quality
from guard.offline.registry import CALIBRATION_KEYS
from guard.settings import JudgeSettings

TABLE = Path(__file__).resolve().parents[1] / "guard" / "data" / "offline_calibration.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="labelled JSONL files")
    paths = parser.parse_args().paths or [halueval_path(), REALISTIC, CALIBRATION_ONLY]
    sets = {path.name: quality.check_rows(quality.load(path)) for path in paths}
    cross, table = quality.cross_validated(sets)
    TABLE.write_text(json.dumps(table.to_json(), indent=1) + "\n", encoding="utf-8")
    sources = table.sources
    print(f"{'basis':<36}" + "".join(f"{name:>12}" for name in sources) + "  confidence")
    for basis in sorted(table.tallies):
        counts = [sources[name].get(basis) for name in sources]
        cells = "".join(f"{f'{t.correct}/{t.total}' if t else '-':>12}" for t in counts)
        print(f"{basis:<36}{cells}  {table.confidence(basis):.3f}")
    unseen = sorted(CALIBRATION_KEYS - set(table.tallies))
    print(f"\nnever decided on these sets ({len(unseen)} keys of the registry):", *unseen)
    threshold = JudgeSettings().cascade_confidence
    for name, judged in cross.items():
        rows = [c.judged(table) for c in sets[name]]
        print(f"\nreliability on {name} with the new table (out of fold, then in sample):")
        reliability_table(judged, threshold)
        reliability_table(rows, threshold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
