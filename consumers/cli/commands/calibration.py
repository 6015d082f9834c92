"""``groundguard calibration``: the learning cascade's table (tier, basis, direction, count,
agreement, bound, decided locally or not), from ``topics.calibration`` or a state file."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from aiokafka.errors import KafkaError

from consumers.config import load_settings
from consumers.errors import SettingsError
from guard.errors import ConfigError
from guard.learning import state, table
from guard.learning.build import make_learner


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "calibration",
        help="print what the learning cascade may decide locally, and why",
        description="Print the learning cascade's counts per tier, basis and direction, summed "
        "over the seed and every replica, with the Wilson lower bound of the agreement and "
        "whether the basis decides locally at judge.cascade's target. Read from "
        "topics.calibration, or --file (judge.cascade.state_file's format).",
    )
    parser.add_argument("--file", type=Path, help="a state file instead of the topic")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--config", type=Path, help="a YAML or JSON settings file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args.config, os.environ)
        judge = settings.judge
        if not judge.cascade.learn:
            judge = judge.model_copy(
                update={"cascade": judge.cascade.model_copy(update={"learn": True})}
            )
        if len(judge.tier_list()) < 2:
            raise ConfigError(
                "judge.tiers", "there is no screen tier to learn", "configure judge.tiers"
            )
        learner = make_learner(judge.model_copy(update={"cascade": _no_file(judge)}), "cli")
        assert learner is not None
        if args.file is not None:
            state.load(args.file, learner.ledger)
        else:
            from consumers.runtime.learning import read_counts

            asyncio.run(read_counts(settings, learner.ledger))
    except (SettingsError, ConfigError) as exc:
        print(f"groundguard calibration: bad setting {exc}", file=sys.stderr)
        return 2
    except (KafkaError, OSError, TimeoutError) as exc:
        print(f"groundguard calibration: cannot read the counts: {exc!r}", file=sys.stderr)
        return 1
    rows = table.rows(learner)
    if args.json:
        for row in rows:
            print(json.dumps(row.as_dict()))
    else:
        print(table.render(rows))
    return 0


def _no_file(judge: Any) -> Any:
    return judge.cascade.model_copy(update={"state_file": None})
